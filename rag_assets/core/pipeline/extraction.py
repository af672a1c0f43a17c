"""The extraction stages' bodies, free of Dagster: one function a stage, each reading
what `stages.READS` says the stage reads, writing the stage's one Parquet file and
returning what its asset turns into metadata and checks.

- `register_version` (raw_pdf): the file's sha256, page count and sidecar.
- `extract_pages` (page_text): every page's lines and tables, OCR where there is no text.
- `build_structure` (structure_tree): the tree of units with their spans.
- `linearize_version` (linearized_tables): every table row with its header.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

from rag_assets.core.corpus import doc_from_pages, documents_info, nodes_of, read_inputs
from rag_assets.core.extract import (
    Extraction,
    Line,
    OcrSettings,
    OutlineEntry,
    count_pages,
    extract,
    outline_from_pages,
)
from rag_assets.core.lake import (
    DOCUMENTS,
    NODES,
    PAGES,
    TABLE_ROWS,
    DocText,
    Lake,
    LakePath,
    Node,
    Sidecar,
    sha256_file,
    split_key,
    write_stage,
)
from rag_assets.core.layout import LayoutSettings
from rag_assets.core.stages import FOLDERS, LINEARIZED_TABLES, PAGE_TEXT, RAW_PDF, STRUCTURE_TREE
from rag_assets.core.structure import (
    PathQuality,
    build_tree,
    detect_language,
    path_quality,
    table_paths,
    tables_by_piece,
    unnamed_tables,
    unstructured_tables,
    untitled_share,
)
from rag_assets.core.tables import (
    LogicalTable,
    TableRow,
    linearize_tables,
    logical_from_pages,
)


def read_raw(lake: Lake, key: str) -> tuple[LakePath, Sidecar, str, int]:
    """A version's raw file and sidecar read: its path, sidecar, sha256 and page count
    (a bad key, sidecar or PDF raises the user's error, naming it)."""
    split_key(key)
    pdf_path, sidecar_path = lake.raw_paths(key)
    sidecar = Sidecar.read(sidecar_path)
    sha = sha256_file(pdf_path)
    return pdf_path, sidecar, sha, count_pages(pdf_path)


def register_version(
    lake: Lake, key: str, pdf_path: LakePath, sidecar: Sidecar, sha: str, n_pages: int
) -> LakePath:
    """The raw_pdf stage: one version's file and sidecar (`read_raw`) into
    `derived/documents/`; the file written."""
    doc_id, version = split_key(key)
    row = {
        "partition_key": key,
        "doc_id": doc_id,
        "version": version,
        "title": sidecar.title or doc_id,
        "source_path": lake.relative(pdf_path),
        "sha256": sha,
        "n_pages": n_pages,
        "status": sidecar.status,
        "valid_from": sidecar.valid_from,
        "valid_to": sidecar.valid_to,
        "ingested_at": dt.datetime.now(dt.UTC),
        "doc_type": sidecar.type,
        "metadata_json": json.dumps(sidecar.metadata, ensure_ascii=False, default=str),
    }
    return write_stage(lake, FOLDERS[RAW_PDF], key, [row], DOCUMENTS)


@dataclass
class Extracted:
    """What `extract_pages` wrote: the `extraction`, the file (`path`) and the joined
    `logical` tables."""

    extraction: Extraction
    path: LakePath
    logical: list[LogicalTable]


def extract_pages(lake: Lake, key: str, ocr: OcrSettings, layout: LayoutSettings) -> Extracted:
    """The page_text stage: one version's pages (OCR where a page has no text layer,
    tables by the layout model where enabled) into `derived/pages/`."""
    pdf_path, _ = lake.raw_paths(key)
    extraction = extract(pdf_path, ocr=ocr, layout=layout)
    logical = extraction.logical_tables()  # joined once, here, and stored with the pages
    starting: dict[int, list[dict[str, Any]]] = {}
    for table in logical:
        starting.setdefault(table.pages[0], []).append(table.as_row())
    rows = [
        {
            "partition_key": key,
            "page": page.page,
            "text": page.text,
            "char_start": page.char_start,
            "has_text_layer": page.has_text_layer,
            "ocr": page.ocr,
            "lines": [line.as_row() for line in page.lines],
            "tables": [table.as_row() for table in page.tables],
            "rotation": page.rotation,
            "columns": page.columns,
            "outline": extraction.outline_on(page.page),
            "logical_tables": starting.get(page.page, []),
        }
        for page in extraction.pages
    ]
    path = write_stage(lake, FOLDERS[PAGE_TEXT], key, rows, PAGES)
    return Extracted(extraction, path, logical)


@dataclass
class Structured:
    """What `build_structure` wrote: the `nodes`, the file (`path`), the `doc` text, the
    `page_rows` read, the PDF's `outline`, and how far the tree can be trusted: the
    text outside titled units (`untitled_share`), the `language`, the `paths`."""

    nodes: list[Node]
    path: LakePath
    doc: DocText
    page_rows: list[dict[str, Any]]
    outline: list[OutlineEntry]
    untitled_share: float
    language: str
    paths: PathQuality


def build_structure(lake: Lake, key: str) -> Structured:
    """The structure_tree stage: one version's tree of units into `derived/nodes/`."""
    inputs = read_inputs(lake, STRUCTURE_TREE, key)
    info = documents_info(inputs[RAW_PDF], key)
    pages = inputs[PAGE_TEXT].sort("page")
    doc = doc_from_pages(pages)
    page_rows = list(pages.iter_rows(named=True))
    lines = [Line(**raw) for page in page_rows for raw in page["lines"]]
    logical = logical_from_pages(page_rows)
    outline = outline_from_pages(page_rows)
    nodes = build_tree(key, doc, lines, tables_by_piece(logical), info.title, outline=outline)
    path = write_stage(lake, FOLDERS[STRUCTURE_TREE], key, [n.as_row() for n in nodes], NODES)
    language = detect_language(doc.text)
    return Structured(
        nodes,
        path,
        doc,
        page_rows,
        outline,
        untitled_share(nodes, doc),
        language,
        path_quality(nodes, language, outline),
    )


@dataclass
class Linearized:
    """What `linearize_version` wrote: the table `rows`, the file (`path`), the `nodes`
    and `logical` tables they came from, the tables indexed as their printed lines
    (`as_text`) and those read without named columns (`unnamed`)."""

    rows: list[TableRow]
    path: LakePath
    nodes: list[Node]
    logical: list[LogicalTable]
    as_text: list[dict[str, Any]] = field(default_factory=list)
    unnamed: list[dict[str, Any]] = field(default_factory=list)


def linearize_version(lake: Lake, key: str) -> Linearized:
    """The linearized_tables stage: one version's table rows, each value with its
    column header, into `derived/tables/`."""
    inputs = read_inputs(lake, LINEARIZED_TABLES, key)
    nodes = nodes_of(inputs[STRUCTURE_TREE])
    pages = inputs[PAGE_TEXT].sort("page")
    logical = logical_from_pages(pages.iter_rows(named=True))
    rows = linearize_tables(key, nodes, logical, table_paths(nodes), doc_from_pages(pages).text)
    path = write_stage(
        lake, FOLDERS[LINEARIZED_TABLES], key, [r.as_row() for r in rows], TABLE_ROWS
    )
    return Linearized(
        rows, path, nodes, logical, unstructured_tables(nodes), unnamed_tables(nodes, rows)
    )
