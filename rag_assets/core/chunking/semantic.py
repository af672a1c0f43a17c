"""Semantic chunking: cut where the meaning of consecutive sentences changes most.

The recipe popularised by LangChain's `SemanticChunker` / LlamaIndex's
`SemanticSplitterNodeParser`: split the text into sentences, embed every sentence, and
break between two consecutive sentences when their cosine distance is above a percentile
of all such distances in the document. Here it is kept honest for the eval:

- every chunk's body is the document's exact text over its span (`char_start:char_end`),
  so the eval judges it by overlap like any other strategy;
- a chunk also closes before it would exceed the model's maximum (context header and
  model prefix included), and a single sentence too long for the model is split at
  printed lines, then words (structural's helpers): nothing is ever truncated;
- sentences never straddle the start of a structural unit (a section heading, an
  article, a table) when the source has a structure tree, and a table stays one unit
  unless it is too long: the tree sharpens the sentence split only, the cut points
  themselves come from the embeddings.

Cost: one embedding per sentence (e.g. ~40 for the 4-page operations manual, thousands
for a long law), computed in one batch with the same model that later embeds the chunks,
on top of the chunk embeddings themselves. Chunk ids are ordinals
(`<key>#semantic/<n>`), so unlike structural ids they do not survive a new version.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag_assets.core.chunking.base import ChunkBuilder, Chunker, Source, chunk_text, make_header
from rag_assets.core.chunking.units import Unit, fit_to_budget, sentence_units
from rag_assets.core.embedding import Embedder, TokenCounter
from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import Chunk, DocText, Node

# a printed line that ends a sentence (. ! ? ; :) followed by a line that does not start
# in lower case (a numbered heading, a capital): structural's SENTENCE_END needs a capital
LINE_END = re.compile(r"(?<=[^\s][.!?;:])[ \t]*\n\s*(?=[^\sa-zà-ÿ])")
TABLE_KINDS = ("table",)


def _cut_points(doc: DocText, nodes: Sequence[Node]) -> tuple[list[int], list[tuple[int, int]]]:
    """Offsets where a new sentence must start, and the spans no cut may enter (tables)."""
    text = doc.text
    cuts = {m.end() for m in LINE_END.finditer(text)}
    tables: list[tuple[int, int]] = []
    for node in nodes:
        if node.kind == "document":
            continue
        if node.kind == "table_row":
            continue  # a row stays with its table (its header line says what values mean)
        if 0 < node.char_start < len(text):
            cuts.add(node.char_start)
        if node.kind in TABLE_KINDS and node.char_start < node.char_end:
            tables.append((node.char_start, min(node.char_end, len(text))))
            cuts.add(min(node.char_end, len(text)))
    inside = [c for c in cuts if any(s < c < e for s, e in tables)]
    return sorted(set(cuts) - set(inside) | {0, len(text)}), tables


def sentences_of(doc: DocText, nodes: Sequence[Node] = ()) -> list[Unit]:
    """The document's sentences as units with exact spans (whitespace trimmed off).

    A sentence may hold printed line breaks; a table (when the tree names one) is one
    unit, since its rows mean nothing without its header line.
    """
    text = doc.text
    cuts, tables = _cut_points(doc, nodes)
    units: list[Unit] = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        block = text[start:end]
        lead = len(block) - len(block.lstrip())
        body = block.strip()
        if not body:
            continue
        s = start + lead
        seg = f"s{len(units)}"
        if any(ts <= s and s + len(body) <= te for ts, te in tables):
            units.append(Unit(seg, body, s, s + len(body)))
        else:
            units.extend(sentence_units(seg, body, s))
    return units


def _distances(vectors: np.ndarray) -> np.ndarray:
    """Cosine distance between each pair of consecutive (unit) vectors."""
    if len(vectors) < 2:
        return np.zeros(0, dtype=np.float32)
    return 1.0 - np.sum(vectors[:-1] * vectors[1:], axis=1)


def breaks_at(distances: np.ndarray, percentile: float) -> list[bool]:
    """For each gap, whether the distance is strictly above the given percentile."""
    if len(distances) == 0:
        return []
    threshold = float(np.percentile(distances, percentile))
    return [bool(d > threshold) for d in distances]


@dataclass(frozen=True)
class SemanticChunker(Chunker):
    """Cuts by embedding distance (strategy `semantic-p{percentile:g}`).

    Costs one embedding per sentence of the document with `embedder` (the real model).
    """

    embedder: Embedder
    percentile: float = 90.0
    max_tokens: int | None = None
    header_mode: str = "full"

    def __post_init__(self) -> None:
        if not 0.0 <= self.percentile <= 100.0:
            raise ConfigError(f"percentile must be in [0, 100], got {self.percentile}")

    @property
    def name(self) -> str:
        """`semantic-p{percentile:g}`, with `-max{n}` under a size cap."""
        name = f"semantic-p{self.percentile:g}"
        return name if self.max_tokens is None else f"{name}-max{self.max_tokens}"

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """Sentences grouped between the largest similarity drops.

        `max_tokens` caps a chunk's size (header included) below the model's maximum; the
        model's maximum (`counter.max_tokens`) always applies.
        """
        embedder, percentile, max_tokens = self.embedder, self.percentile, self.max_tokens
        header_mode, strategy = self.header_mode, self.name
        limit = counter.max_tokens if max_tokens is None else min(max_tokens, counter.max_tokens)
        doc, info = source.doc, source.info
        build = ChunkBuilder.of(info, doc, counter, strategy)
        header = make_header(info, "", header_mode)
        fixed = counter.count(f"{header}\n") if header else counter.overhead
        room = limit - fixed
        if room < 8:
            raise ConfigError(f"max_tokens {limit} leaves no room for text after the header")
        units: list[Unit] = []
        for unit in sentences_of(doc, source.nodes):
            units.extend(fit_to_budget(unit, room, counter))
        if not units:
            return []
        sizes = [n - counter.overhead for n in counter.count_many([u.text for u in units])]
        vectors = embedder.embed_passages([u.text for u in units])
        cut = breaks_at(_distances(vectors), percentile)

        groups: list[list[Unit]] = [[units[0]]]
        size = sizes[0]
        for i in range(1, len(units)):
            if cut[i - 1] or size + sizes[i] > room:
                groups.append([units[i]])
                size = sizes[i]
            else:
                groups[-1].append(units[i])
                size += sizes[i]

        chunks: list[Chunk] = []
        pending = list(reversed(groups))
        while pending:  # each pass either emits a group or splits it in two: bounded
            group = pending.pop()
            start, end = group[0].start, group[-1].end
            body = doc.text[start:end]
            n_tokens = counter.count(chunk_text(header, body))
            if n_tokens > limit and len(group) > 1:  # tokens are not quite additive
                half = len(group) // 2
                pending.extend([group[half:], group[:half]])
                continue
            if n_tokens > limit:  # one piece, still too long: cut it shorter
                unit = group[0]
                budget = max(
                    8, counter.count(unit.text) - counter.overhead - (n_tokens - limit) - 2
                )
                pieces = fit_to_budget(unit, budget, counter)
                if len(pieces) > 1 or (pieces[0].start, pieces[0].end) != (unit.start, unit.end):
                    pending.extend([[p] for p in reversed(pieces)])
                    continue
            chunks.append(build.chunk("", start, end, header, body, tokens=n_tokens))
        for ordinal, chunk in enumerate(chunks):
            chunk.ordinal = ordinal
            chunk.chunk_id = f"{info.partition_key}#semantic/{ordinal}"
        return chunks
