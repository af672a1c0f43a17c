"""The pipeline's stages, defined once: their order, the Parquet folder each one writes,
which of them depend on the model, and which follow raw_pdf.

Two vocabularies meet here. A stage is named by its asset (raw_pdf, page_text, ...: what
Dagster, the reconcile plan and the CLI say); what it writes to the lake is named by its
folder under `derived/` (documents, pages, ...: what `Lake.stage_path`, `read_stage` and
`write_stage` take). `FOLDERS` maps one to the other. Plain strings, so that Dagster's
asset keys built from them are the ones it serializes; no Dagster import (core).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

RAW_PDF = "raw_pdf"
PAGE_TEXT = "page_text"
STRUCTURE_TREE = "structure_tree"
LINEARIZED_TABLES = "linearized_tables"
CHUNKS = "chunks"
EMBEDDINGS = "embeddings"

PIPELINE: tuple[str, ...] = (
    RAW_PDF,
    PAGE_TEXT,
    STRUCTURE_TREE,
    LINEARIZED_TABLES,
    CHUNKS,
    EMBEDDINGS,
)
"""The stages one version's run goes through, in order, each reading the one before
(and others: `READS`; the index job's assets)."""

READS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        RAW_PDF: (),
        PAGE_TEXT: (RAW_PDF,),
        STRUCTURE_TREE: (RAW_PDF, PAGE_TEXT),
        LINEARIZED_TABLES: (PAGE_TEXT, STRUCTURE_TREE),
        CHUNKS: (RAW_PDF, PAGE_TEXT, STRUCTURE_TREE, LINEARIZED_TABLES),
        EMBEDDINGS: (RAW_PDF, CHUNKS),
    }
)
"""What each stage reads, declared once: the stages whose output its run opens (raw_pdf
its raw file and sidecar; page_text the file raw_pdf registered; structure_tree the
documents row (title) and the pages; linearized_tables the pages (tables and text) and
the tree; chunks a whole `Version`, `corpus.load_version`; embeddings the documents row
(status, validity) and the chunks). The assets' `deps` are this table (the lineage the
UI draws), and the readers read these stages (tests/test_house.py holds them equal)."""

FOLDERS: Mapping[str, str] = MappingProxyType(
    {
        RAW_PDF: "documents",
        PAGE_TEXT: "pages",
        STRUCTURE_TREE: "nodes",
        LINEARIZED_TABLES: "tables",
        CHUNKS: "chunks",
    }
)
"""Each stage's Parquet folder under `derived/` (one `<key>.parquet` per version);
embeddings has none: it writes the model's LanceDB table."""

STAGE_OF: Mapping[str, str] = MappingProxyType({folder: stage for stage, folder in FOLDERS.items()})
"""The other way: the stage that writes each folder under `derived/`."""

LAKE_FOLDERS: tuple[str, ...] = tuple(FOLDERS.values())
"""Every folder under `derived/`, in pipeline order."""

NEXT_CHUNKS = "chunks-next"
"""Under `derived/`, one folder per model being backfilled (`chunks-next/<model_id>/`):
its chunks, cut to its tokenizer, beside the chunks of the model search uses
(`derived/chunks/`), which they replace only when search switches to it
(`core.pipeline.promote_if_complete`). A killed backfill leaves `derived/chunks/`
as the active model's table holds it."""


def chunks_folder(model_id: str | None = None) -> str:
    """The folder under `derived/` of a model's chunks: `chunks` for the model search uses
    (None), `chunks-next/<model_id>` for a model being backfilled (`NEXT_CHUNKS`)."""
    return FOLDERS[CHUNKS] if model_id is None else f"{NEXT_CHUNKS}/{model_id}"


EMBED_STAGES: tuple[str, ...] = (CHUNKS, EMBEDDINGS)
"""The stages that depend on the model (token budgets, vectors): what a model change, or
a change of their own code, re-runs, extraction kept (the embed job's assets)."""

EXTRACTION: tuple[str, ...] = tuple(s for s in PIPELINE if s not in EMBED_STAGES)
"""The stages that do not depend on the model: read once per version's bytes."""

FOLLOWERS: tuple[str, ...] = PIPELINE[1:]
"""The stages after raw_pdf: kept up to date by declarative automation when the stage
before them is materialized again (raw_pdf itself runs when its file or sidecar
changes: the reconcile plan)."""
