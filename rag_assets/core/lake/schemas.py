"""The records each stage produces and the Parquet schemas they are stored with (docs/design.md).

Every stage writes one Parquet file per partition; these schemas are the contract between
stages, the eval and the CLI, so they live in one place.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

DOCUMENTS = pa.schema(
    [
        ("partition_key", pa.string()),
        ("doc_id", pa.string()),
        ("version", pa.string()),
        ("title", pa.string()),
        ("source_path", pa.string()),
        ("sha256", pa.string()),
        ("n_pages", pa.int32()),
        ("status", pa.string()),
        ("valid_from", pa.date32()),
        ("valid_to", pa.date32()),
        ("ingested_at", pa.timestamp("us", tz="UTC")),
        ("doc_type", pa.string()),
        ("metadata_json", pa.string()),
    ]
)

LINE = pa.struct(
    [
        ("text", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("x0", pa.float64()),
        ("top", pa.float64()),
        ("bottom", pa.float64()),
        ("size", pa.float64()),
        ("bold", pa.bool_()),
        ("table", pa.int32()),
        ("x1", pa.float64()),
        ("lead", pa.int32()),  # characters of a bold run opening the line (a run-in heading)
    ]
)

OUTLINE_ENTRY = pa.struct(
    [
        ("title", pa.string()),
        ("level", pa.int32()),
        ("top", pa.float64()),  # where on the page it points (top-down points), or null
        ("source", pa.string()),  # "outline" (bookmarks) or "tagged" (structure tree)
    ]
)

PAGE_TABLE = pa.struct(
    [
        ("index", pa.int32()),
        ("bbox", pa.list_(pa.float64())),
        ("rows", pa.list_(pa.list_(pa.string()))),
        ("row_spans", pa.list_(pa.list_(pa.int64()))),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("header_rows", pa.int32()),  # leading rows that are not data (title, header)
        ("header", pa.list_(pa.string())),  # column names; empty when none printed
        ("title", pa.string()),  # a first row spanning the table that names it
        ("continues", pa.bool_()),  # continues the last table of the previous page
    ]
)

LOGICAL_TABLE = pa.struct(
    [
        ("parts", pa.list_(pa.struct([("page", pa.int32()), ("index", pa.int32())]))),
        ("header", pa.list_(pa.string())),
        ("has_header", pa.bool_()),
        ("title", pa.string()),
        (
            "rows",
            pa.list_(
                pa.struct(
                    [
                        ("index", pa.int32()),
                        ("cells", pa.list_(pa.string())),
                        ("page", pa.int32()),
                        ("char_start", pa.int64()),
                        ("char_end", pa.int64()),
                    ]
                )
            ),
        ),
    ]
)
"""A table joined across pages (`tables.LogicalTable`): its pieces by (page, index) in
the pages' `tables`, its header and title, and its rows with their spans."""

PAGES = pa.schema(
    [
        ("partition_key", pa.string()),
        ("page", pa.int32()),
        ("text", pa.string()),
        ("char_start", pa.int64()),
        ("has_text_layer", pa.bool_()),
        ("ocr", pa.bool_()),
        ("lines", pa.list_(LINE)),
        ("tables", pa.list_(PAGE_TABLE)),
        ("rotation", pa.int32()),  # degrees the page was turned to read its text upright
        ("columns", pa.bool_()),  # set in columns, read column by column
        ("outline", pa.list_(OUTLINE_ENTRY)),  # the PDF's own sections pointing here
        ("logical_tables", pa.list_(LOGICAL_TABLE)),  # the tables that start here, joined
    ]
)

NODES = pa.schema(
    [
        ("node_id", pa.string()),
        ("partition_key", pa.string()),
        ("parent_id", pa.string()),
        ("kind", pa.string()),
        ("label", pa.string()),
        ("title", pa.string()),
        ("level", pa.int32()),
        ("ordinal", pa.int32()),
        ("text", pa.string()),
        ("page_start", pa.int32()),
        ("page_end", pa.int32()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
    ]
)

TABLE_ROWS = pa.schema(
    [
        ("partition_key", pa.string()),
        ("table_id", pa.string()),
        ("caption", pa.string()),
        ("path", pa.string()),
        ("row_index", pa.int32()),
        ("header", pa.list_(pa.string())),
        ("cells", pa.list_(pa.string())),
        ("text", pa.string()),
        ("page", pa.int32()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        # a table read without named columns (header empty): its printed header lines
        ("header_lines", pa.list_(pa.string())),
    ]
)

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("partition_key", pa.string()),
        ("doc_id", pa.string()),
        ("version", pa.string()),
        ("strategy", pa.string()),
        ("parent_id", pa.string()),
        ("ordinal", pa.int32()),
        ("kind", pa.string()),
        ("path", pa.string()),
        ("header", pa.string()),
        ("body", pa.string()),
        ("text", pa.string()),
        ("token_count", pa.int32()),
        ("truncated", pa.bool_()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        ("page_start", pa.int32()),
        ("page_end", pa.int32()),
        ("content_hash", pa.string()),
    ]
)


def content_hash(text: str) -> str:
    """Short sha256 of a text: tells whether a chunk changed between versions."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass
class Node:
    """One unit of a document's structure tree.

    `text` is the unit's own text (its heading or lead line and what precedes its first
    child); `char_start`/`char_end` span the whole unit, children included, in the
    document text.
    """

    node_id: str
    partition_key: str
    parent_id: str | None
    kind: str
    label: str
    title: str
    level: int
    ordinal: int
    text: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int

    def as_row(self) -> dict[str, Any]:
        """The node as a Parquet row."""
        return asdict(self)


@dataclass
class Chunk:
    """One retrievable unit: `text` (header + body) is exactly what gets embedded."""

    chunk_id: str
    partition_key: str
    doc_id: str
    version: str
    strategy: str
    parent_id: str | None
    ordinal: int
    kind: str
    path: str
    header: str
    body: str
    text: str
    token_count: int
    truncated: bool
    char_start: int
    char_end: int
    page_start: int
    page_end: int
    content_hash: str = ""

    def __post_init__(self) -> None:
        if not self.content_hash:
            self.content_hash = content_hash(self.text)

    def as_row(self) -> dict[str, Any]:
        """The chunk as a Parquet row."""
        return asdict(self)


@dataclass
class DocText:
    """A document's extracted text with the offset where each page starts.

    Pages are joined by a newline; every char span in nodes, tables and chunks points
    into `text`, which is what lets the eval judge any strategy by overlap.
    """

    text: str
    page_starts: list[int] = field(default_factory=list)

    def page_at(self, offset: int) -> int:
        """1-based page number holding a character offset."""
        if not self.page_starts:
            return 1
        return max(1, bisect.bisect_right(self.page_starts, offset))

    def pages_of(self, start: int, end: int) -> tuple[int, int]:
        """First and last page of a span."""
        return self.page_at(start), self.page_at(max(start, end - 1))
