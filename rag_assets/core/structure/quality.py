"""How far a built tree's section paths can be trusted, without knowing the truth: the
share of units whose path holds a segment that is no heading (a fragment of prose, a
table-of-contents line, a table named in another language), and how many of
the PDF's own bookmark titles the tree carries as headings.

The `structure_tree` stage records both (metadata and a warning check) and the eval report
shows them: a sudden rise means headings stopped being recognised on a kind of PDF.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rag_assets.core.extract import OutlineEntry
from rag_assets.core.lake import Chunk, Node
from rag_assets.core.structure.headings import text_veto
from rag_assets.core.structure.language import TABLE_WORD, detect_language, table_word
from rag_assets.core.structure.markers import STRUCTURAL_KINDS
from rag_assets.core.structure.outline import heading_text, outline_found
from rag_assets.core.structure.paths import TABLE_KINDS, display_name, path_of

PATH_THRESHOLD = 0.02  # the share of units with a non-heading segment a check warns above
LABEL = re.compile(r"^(\S+) \d+$")


@dataclass
class PathQuality:
    """What a tree's paths hold: units, those whose path holds a segment that is no
    heading (and the first few such segments by node id and page, with why: never their
    text, which would outlive a revoked version in Dagster's run history), bookmark titles
    found."""

    units: int = 0
    bad_units: int = 0
    examples: list[str] = field(default_factory=list)
    bookmarks: int = 0
    bookmarks_found: int = 0

    @property
    def share(self) -> float:
        """Share of units whose path holds a segment that is no heading."""
        return self.bad_units / self.units if self.units else 0.0

    @property
    def bookmarks_share(self) -> float | None:
        """Share of the outline's titles carried as headings (None: no outline)."""
        return self.bookmarks_found / self.bookmarks if self.bookmarks else None


def segment_problem(node: Node, language: str) -> str | None:
    """Why a path segment is no heading (None when it is one)."""
    if node.kind in STRUCTURAL_KINDS:
        return text_veto(heading_text(node))
    if node.kind in TABLE_KINDS and not node.title:
        match = LABEL.match(node.label)
        words = set(TABLE_WORD.values())
        if match and match.group(1) in words and match.group(1) != table_word(language):
            return f"a table named in another language than the document's ({language})"
    return None


def path_quality(
    nodes: Sequence[Node], language: str, outline: Sequence[OutlineEntry] = ()
) -> PathQuality:
    """The trust a tree's paths deserve (`PathQuality`): every unit but the document root
    and table rows (which carry their table's path) is counted once."""
    by_id = {n.node_id: n for n in nodes}
    verdicts: dict[str, str | None] = {}
    seen: set[str] = set()
    quality = PathQuality()
    for node in nodes:
        if node.kind in ("document", "table_row"):
            continue
        quality.units += 1
        bad = first_off_heading(node, by_id, language, verdicts)
        if bad is not None:
            quality.bad_units += 1
            if len(quality.examples) < 3 and bad.node_id not in seen:
                # by id and page, not by its text: no document text in Dagster's storage
                seen.add(bad.node_id)
                quality.examples.append(
                    f"{bad.node_id} on page {bad.page_start} ({verdicts[bad.node_id]})"
                )
    quality.bookmarks_found, quality.bookmarks = outline_found(nodes, outline)
    return quality


def first_off_heading(
    node: Node, by_id: dict[str, Node], language: str, verdicts: dict[str, str | None]
) -> Node | None:
    """The first segment of `node`'s printed path that is no heading (None: all are);
    `verdicts` caches each segment's `segment_problem` across the units of a version."""
    for segment in path_of(node, by_id):
        if not display_name(segment):
            continue  # printed nowhere in the path (a text unit, an untitled one)
        if segment.node_id not in verdicts:
            verdicts[segment.node_id] = segment_problem(segment, language)
        if verdicts[segment.node_id]:
            return segment
    return None


def chunks_off_headings(
    chunks: Sequence[Chunk], nodes: Mapping[str, Sequence[Node]], texts: Mapping[str, str]
) -> int:
    """How many chunks carry a section path holding a segment that is no heading: each
    chunk judged by the path of the unit it was cut from (its `parent_id`); `nodes` and
    `texts` (for the language) by version. A chunk cut by size, from no unit, counts 0."""
    by_version: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        if chunk.parent_id and chunk.partition_key in nodes:
            by_version.setdefault(chunk.partition_key, []).append(chunk)
    count = 0
    for key, mine in by_version.items():
        by_id = {n.node_id: n for n in nodes[key]}
        language = detect_language(texts.get(key, ""))
        verdicts: dict[str, str | None] = {}
        for chunk in mine:
            node = by_id.get(chunk.parent_id or "")
            count += (
                node is not None and first_off_heading(node, by_id, language, verdicts) is not None
            )
    return count
