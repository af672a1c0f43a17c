"""Measures of retrieval (hit@k, MRR, abstention under a min_score) and of chunk damage
(orphan table values, mid-line starts, truncation, twin confusion, tables read without
named columns), shared by the chunks stage and the eval.

Relevance is judged by character spans: a retrieved chunk is relevant when its span
overlaps the span of a node carrying an expected label in the same document, which lets
the same judge score structure-aware chunks and size-based baselines alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.lake import Chunk, Node
from rag_assets.core.structure import chunks_off_headings, normalize_label
from rag_assets.core.tables import TableRow

Span = tuple[int, int]
Located = tuple[str, int, int]  # (partition_key, char_start, char_end) of a retrieved chunk


def overlaps(a: Span, b: Span) -> bool:
    """Whether two half-open character spans share at least one character."""
    return a[0] < b[1] and b[0] < a[1]


def label_spans(nodes: Iterable[Node], labels: Iterable[str]) -> list[Span]:
    """Spans of every node whose label matches one of `labels` (normalized)."""
    wanted = {normalize_label(label) for label in labels}
    return [
        (n.char_start, n.char_end) for n in nodes if n.label and normalize_label(n.label) in wanted
    ]


def first_relevant_rank(
    hits: Sequence[Located], relevant: Mapping[str, Sequence[Span]]
) -> int | None:
    """1-based rank of the first hit overlapping a relevant span of its own version
    (None: never). `hits` are (partition_key, char_start, char_end) in rank order."""
    for rank, (key, start, end) in enumerate(hits, start=1):
        if any(overlaps((start, end), r) for r in relevant.get(key, ())):
            return rank
    return None


def rank_above(
    relevant: Sequence[bool], cosines: Sequence[float | None], min_score: float | None
) -> int | None:
    """1-based rank of the first relevant hit once the hits whose cosine is below
    `min_score` are dropped (what a search with that `min_score` returns; None: no
    threshold); None when no relevant hit is left."""
    kept = [r for r, c in zip(relevant, cosines, strict=True) if _kept(c, min_score)]
    return next((rank for rank, r in enumerate(kept, start=1) if r), None)


def answers(cosines: Sequence[float | None], min_score: float | None) -> bool:
    """Whether a search with `min_score` returns at least one of these hits (else it
    abstains: "not in the documents")."""
    return any(_kept(c, min_score) for c in cosines)


def _kept(cosine: float | None, min_score: float | None) -> bool:
    return min_score is None or cosine is None or cosine >= min_score


def hit_at(rank: int | None, k: int) -> float:
    """1.0 when the first relevant hit is within the top k."""
    return 1.0 if rank is not None and rank <= k else 0.0


def reciprocal_rank(rank: int | None, k: int = 10) -> float:
    """1/rank of the first relevant hit within the top k, else 0."""
    return 1.0 / rank if rank is not None and rank <= k else 0.0


def _contains_word(text: str, value: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


@dataclass(frozen=True)
class Orphan:
    """A table value found in a chunk without its column header: where it is."""

    page: int
    table: str  # the table's caption (or label)
    header: str
    value: str
    table_id: str = ""  # the table's node id
    row: int = 0  # the row's index in its table
    column: int = 0  # 1-based; 0: a table read without named columns
    # the reader's limit, not the chunker's fault: the table's printed header lines are
    # more than a chunk holds beside a row (its chunk holds the first of them)
    reader: bool = False

    def describe(self) -> str:
        """`page 3, table 'Schedule A': '1,200' without its header 'Amount'`."""
        return (
            f"page {self.page}, table {self.table!r}: {self.value!r} without its header "
            f"{self.header!r}"
        )

    def locate(self) -> str:
        """Where the value is, by page and ids, without a word of the document (what a
        Dagster check may keep: its run history outlives a revoked version):
        `page 3, table doc@v1#sec-2/tab-1, row 4, column 2: a value without its header`."""
        column = f", column {self.column}" if self.column else ""
        return (
            f"page {self.page}, table {self.table_id}, row {self.row}{column}: a value "
            "without its header"
        )


def _masked(text: str, headers: Iterable[str], caption: str) -> str:
    """A chunk body with what cannot be a loose table value blanked: the values of its
    `Header: value` pairs (a `13` inside `Matter: ... day 13 ...` is that cell's text)
    and the table's caption (`Table 7`)."""
    chars = list(text)
    spans: list[tuple[int, int]] = []
    for header in {h for h in headers if h}:
        for match in re.finditer(rf"(?<!\w){re.escape(header)}: ", text):
            ends = [
                e for e in (text.find("; ", match.end()), text.find("\n", match.end())) if e >= 0
            ]
            spans.append((match.end(), min(ends) if ends else len(text)))
    if caption:
        spans += [(m.start(), m.end()) for m in re.finditer(re.escape(caption), text)]
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def orphans(chunks: Sequence[Chunk], rows: Sequence[TableRow]) -> list[Orphan]:
    """Table values found in a chunk without their column header in the same chunk.

    A chunk holds a value when its span overlaps the value's row and its body contains
    the value as a word of its own: not inside another cell's `Header: value` pair, nor
    in the table's caption or the chunk's context header. The value is an orphan when
    the chunk text lacks the column's header; in a table read without named columns,
    when it lacks one of the table's printed header lines (`TableRow.header_lines`). One
    entry per (chunk, value).
    """
    out: list[Orphan] = []
    for chunk in chunks:
        span = (chunk.char_start, chunk.char_end)
        body = chunk.body or chunk.text
        flat = ""
        for row in rows:
            if row.partition_key != chunk.partition_key or not overlaps(
                span, (row.char_start, row.char_end)
            ):
                continue
            if not row.header and row.header_lines:
                flat = flat or " ".join(chunk.text.split())
                missing = [line for line in row.header_lines if line not in flat]
                if missing:
                    loose_text = _masked(body, (), row.caption)
                    reader = _lead_cut(chunk, row, missing)
                    out += [
                        Orphan(
                            row.page,
                            row.table_name or row.table_id,
                            missing[0],
                            value.strip(),
                            row.table_id,
                            row.row_index,
                            reader=reader,
                        )
                        for value in row.cells
                        if value.strip() and _contains_word(loose_text, value.strip())
                    ]
                continue
            loose = None
            for column, (header, value) in enumerate(zip(row.header, row.cells, strict=False)):
                value = value.strip()
                if not value or not header or value == header:
                    continue  # a row label under an unnamed stub column has no header
                if _contains_word(chunk.text, header):
                    continue
                loose = loose if loose is not None else _masked(body, row.header, row.caption)
                if _contains_word(loose, value):
                    out.append(
                        Orphan(
                            row.page,
                            row.table_name or row.table_id,
                            header,
                            value,
                            row.table_id,
                            row.row_index,
                            column + 1,
                        )
                    )
    return out


def _lead_cut(chunk: Chunk, row: TableRow, missing: Sequence[str]) -> bool:
    """Whether a row of a table read without named columns lacks some of its header
    lines only because they are more than its chunk holds: the chunk is its table's own
    and holds the lines up to where the chunker stopped (`structural.table_lead`)."""
    if chunk.kind != "table" or chunk.parent_id != row.table_id:
        return False
    kept = [line for line in row.header_lines if line not in missing]
    return bool(kept) and row.header_lines[: len(kept)] == kept


SENTENCE_START_BEFORE = re.compile(r"[.!?;:]\s*$")


def starts_mid_line(chunk: Chunk, doc_text: str) -> bool:
    """Whether a chunk's body starts inside a line and inside a sentence.

    A clean start is the beginning of a line, or of a sentence within a line; anything
    else means the cut fell inside running text and the chunk reads as a fragment.
    """
    start = chunk.char_start
    if start <= 0:
        return False
    line_start = doc_text.rfind("\n", 0, start) + 1
    before = doc_text[line_start:start]
    if not before.strip():
        return False
    return SENTENCE_START_BEFORE.search(before) is None


def mid_line_starts(chunks: Sequence[Chunk], doc_texts: dict[str, str]) -> int:
    """How many chunks start mid-line (see `starts_mid_line`)."""
    return sum(
        1
        for c in chunks
        if c.partition_key in doc_texts and starts_mid_line(c, doc_texts[c.partition_key])
    )


def truncated_chunks(chunks: Sequence[Chunk]) -> int:
    """How many chunks the model will not read to the end."""
    return sum(1 for c in chunks if c.truncated)


def answer_complete(texts: Sequence[str], needles: Sequence[str]) -> bool:
    """Whether one single retrieved text holds every expected answer string."""
    wanted = [n.casefold() for n in needles]
    return any(all(n in t.casefold() for n in wanted) for t in texts)


def twin_confused(
    hits: Sequence[Located],
    relevant: Mapping[str, Sequence[Span]],
    twins: Mapping[str, Sequence[Span]],
    k: int = 3,
) -> bool:
    """A twin (not_relevant) chunk ranks in the top k above every relevant chunk."""
    top = list(hits[:k])
    first_twin = first_relevant_rank(top, twins)
    if first_twin is None:
        return False
    first_good = first_relevant_rank(top, relevant)
    return first_good is None or first_twin < first_good


@dataclass
class ChunkDamage:
    """Damage counts of one set of chunks."""

    chunks: int
    orphans: int
    mid_line_starts: int
    truncated: int
    unnamed_tables: int = 0  # tables read without named columns (rows under header lines)
    off_heading_paths: int = 0  # chunks whose section path holds a segment that is no heading
    flagged_tables: int = 0  # tables with values left without their header by the reader

    def as_dict(self) -> dict[str, int]:
        """Plain dict, for metadata and JSON."""
        return {
            "chunks": self.chunks,
            "orphans": self.orphans,
            "mid_line_starts": self.mid_line_starts,
            "truncated": self.truncated,
            "unnamed_tables": self.unnamed_tables,
            "off_heading_paths": self.off_heading_paths,
            "flagged_tables": self.flagged_tables,
        }


def unnamed_tables(rows: Sequence[TableRow]) -> int:
    """How many tables were read without named columns: their values are indexed under
    the table's printed header lines, not each under its column's name (a reading
    damage, the same whatever the chunking)."""
    return len({(r.partition_key, r.table_id) for r in rows if not r.header})


def chunk_damage(
    chunks: Sequence[Chunk],
    rows: Sequence[TableRow],
    doc_texts: dict[str, str],
    nodes: Mapping[str, Sequence[Node]] | None = None,
    found: Sequence[Orphan] | None = None,
) -> ChunkDamage:
    """Orphan table values (the chunker's), mid-line starts and truncation of a set of
    chunks, the tables of their rows read without named columns and those flagged for
    values the reader left without their header (`flagged_tables`), and (given each
    version's `nodes`) the chunks whose section path holds a segment that is no heading.
    `found`: `orphans(chunks, rows)` when the caller has it already (it lists them)."""
    found = orphans(chunks, rows) if found is None else found
    return ChunkDamage(
        chunks=len(chunks),
        orphans=sum(1 for orphan in found if not orphan.reader),
        flagged_tables=len({(o.table_id, o.table) for o in found if o.reader}),
        mid_line_starts=mid_line_starts(chunks, doc_texts),
        truncated=truncated_chunks(chunks),
        unnamed_tables=unnamed_tables(rows),
        off_heading_paths=chunks_off_headings(chunks, nodes, doc_texts) if nodes else 0,
    )
