"""Loading what the stages wrote for one document version back into core objects."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from rag_assets.core.chunking import DocInfo, Source
from rag_assets.core.extract import OutlineEntry, outline_from_pages
from rag_assets.core.lake import (
    Chunk,
    DocText,
    Lake,
    Node,
    Sidecar,
    read_stage,
    read_stages,
    split_key,
)
from rag_assets.core.stages import (
    CHUNKS,
    FOLDERS,
    LINEARIZED_TABLES,
    PAGE_TEXT,
    RAW_PDF,
    READS,
    STRUCTURE_TREE,
)
from rag_assets.core.structure import DEFAULT_STRUCTURE, StructureSettings
from rag_assets.core.tables import TableRow

if TYPE_CHECKING:
    from rag_assets.core.extract import Extraction


@dataclass
class Version(Source):
    """One document version as the later stages and the eval see it: what chunkers read,
    plus its lifecycle (status, end of validity)."""

    status: str = "active"
    valid_to: dt.date | None = None
    sha256: str = ""
    """The file's sha256 (the documents row's), as the stages that read it recorded it."""
    outline: list[OutlineEntry] = field(default_factory=list)
    """The sections the PDF states (its bookmarks or tagged headings), as `page_text`
    stored them: what the eval reports as bookmark titles found as headings."""

    @cached_property
    def bookmarks(self) -> tuple[int, int]:
        """(titles found as headings, titles) of the PDF's outline: the same for every
        strategy the eval measures, so counted once a version."""
        from rag_assets.core.structure import outline_found

        return outline_found(self.nodes, self.outline)


def source_from_pdf(pdf: Path, key: str, sidecar: Sidecar | None = None) -> Source:
    """One PDF through the stages up to the linearized tables, in memory (no lake, no
    Parquet, no OCR): what a chunker reads. For benches and tests that compare chunkers
    or embedding backends on real documents without running the pipeline."""
    return read_pdf(pdf, key, sidecar)[0]


def read_pdf(
    pdf: Path,
    key: str,
    sidecar: Sidecar | None = None,
    structure: StructureSettings | None = None,
) -> tuple[Source, Extraction]:
    """`source_from_pdf` with the extraction it came from (pages, table regions);
    `structure` tunes the heading decider (a bench's knob; the defaults otherwise)."""
    from rag_assets.core.extract import OcrSettings, extract
    from rag_assets.core.structure import build_tree, table_paths, tables_by_piece
    from rag_assets.core.tables import linearize_tables

    doc_id, version = split_key(key)
    sidecar = sidecar or Sidecar()
    extraction = extract(pdf, ocr=OcrSettings(enabled=False))
    logical = extraction.logical_tables()
    lines = [line for page in extraction.pages for line in page.lines]
    title = sidecar.title or key
    nodes = build_tree(
        key,
        extraction.doc,
        lines,
        tables_by_piece(logical),
        title,
        outline=extraction.outline,
        structure=structure or DEFAULT_STRUCTURE,
    )
    rows = linearize_tables(key, nodes, logical, table_paths(nodes), extraction.doc.text)
    info = DocInfo(key, doc_id, version, title, sidecar.valid_from)
    source = Source(info=info, doc=extraction.doc, nodes=nodes, rows=rows, doc_type=sidecar.type)
    return source, extraction


def load_info(lake: Lake, key: str) -> tuple[DocInfo, str, dt.date | None]:
    """The document row of a version: header info, status and end of validity."""
    row = _documents_row(lake, key)
    return _doc_info(key, row), row["status"], row["valid_to"]


def load_document(lake: Lake, key: str) -> tuple[DocInfo, str, dt.date | None, str]:
    """`load_info` and the file's sha256 the documents row recorded, in one read."""
    row = _documents_row(lake, key)
    return _doc_info(key, row), row["status"], row["valid_to"], row["sha256"]


def _documents_row(lake: Lake, key: str) -> dict[str, Any]:
    """A version's documents row (the raw stage's one row), by column name."""
    return read_stage(lake, FOLDERS[RAW_PDF], key).row(0, named=True)


def _doc_info(key: str, row: dict[str, Any]) -> DocInfo:
    """The header info a documents `row` gives its version `key`."""
    return DocInfo(key, row["doc_id"], row["version"], row["title"], row["valid_from"])


def nodes_of(frame: pl.DataFrame) -> list[Node]:
    """A structure tree file's rows as nodes, in document order."""
    return [Node(**r) for r in frame.iter_rows(named=True)]


def _table_rows(frame: pl.DataFrame) -> list[TableRow]:
    """A linearized tables stage's rows as table rows."""
    return [TableRow(**r) for r in frame.iter_rows(named=True)]


DOC_COLUMNS = ("page", "text", "char_start")
"""What `doc_from_pages` reads of the pages file (not its lines, tables, outline)."""


def load_doc(lake: Lake, key: str) -> DocText:
    """The extracted text of a version with its page offsets (the pages file's text
    columns alone: a served search with parents reads it per hit's version)."""
    return doc_from_pages(read_stage(lake, FOLDERS[PAGE_TEXT], key, DOC_COLUMNS))


def doc_from_pages(pages: pl.DataFrame) -> DocText:
    """The document text rebuilt from the pages stage's rows."""
    pages = pages.sort("page")
    text = "\n".join(t for t in pages["text"].to_list() if t)  # as pdf.extract joined them
    return DocText(text=text, page_starts=pages["char_start"].to_list())


def load_nodes(lake: Lake, key: str) -> list[Node]:
    """The structure tree of a version, in document order."""
    return nodes_of(read_stage(lake, FOLDERS[STRUCTURE_TREE], key))


def load_rows(lake: Lake, key: str) -> list[TableRow]:
    """The linearized table rows of a version."""
    return _table_rows(read_stage(lake, FOLDERS[LINEARIZED_TABLES], key))


def load_chunks(lake: Lake, key: str) -> list[Chunk]:
    """The chunks of a version as written by the chunks stage."""
    return [Chunk(**r) for r in read_stage(lake, FOLDERS[CHUNKS], key).iter_rows(named=True)]


VERSION_STAGES = READS[CHUNKS]
"""The stages a `Version` is read from: the documents row, pages, tree and table rows
(what the chunks stage reads, `stages.READS`)."""


def read_inputs(lake: Lake, stage: str, key: str) -> dict[str, pl.DataFrame]:
    """The files of the stages `stage` reads (`stages.READS`, those with a folder), read
    in one call, at once: a stage reads its inputs from the table its lineage is drawn
    from."""
    wanted = [s for s in READS[stage] if s in FOLDERS]
    return dict(zip(wanted, read_stages(lake, [FOLDERS[s] for s in wanted], key), strict=True))


def documents_info(documents: pl.DataFrame, key: str) -> DocInfo:
    """The header info of a version from its documents file (the raw stage's one row)."""
    return _doc_info(key, documents.row(0, named=True))


def load_version(lake: Lake, key: str) -> Version:
    """Everything the chunkers and the eval need about one version: its four stage files
    (`VERSION_STAGES`) read in one call, at once (`read_stages`), not one after another."""
    inputs = read_inputs(lake, CHUNKS, key)
    documents, pages = inputs[RAW_PDF], inputs[PAGE_TEXT]
    nodes, tables = inputs[STRUCTURE_TREE], inputs[LINEARIZED_TABLES]
    row = documents.row(0, named=True)
    return Version(
        info=_doc_info(key, row),
        doc=doc_from_pages(pages),
        nodes=nodes_of(nodes),
        rows=_table_rows(tables),
        doc_type=row.get("doc_type"),
        status=row["status"],
        valid_to=row["valid_to"],
        sha256=row["sha256"],
        outline=outline_from_pages(pages.iter_rows(named=True)),
    )
