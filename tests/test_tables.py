"""A table the reader cannot structure, through every stage of the real code location:
the version is indexed anyway (its table as printed lines), searchable in a real LanceDB,
and the reader's limit is reported by a warning check naming the table."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from dagster import AssetCheckSeverity, DagsterInstance
from fpdf import FPDF

from rag_assets.checks import (
    CHUNKS_FIT_MODEL,
    INDEX_MATCHES_CHUNKS,
    NO_MID_LINE_STARTS,
    NO_ORPHAN_TABLE_VALUES,
    TABLES_STRUCTURED,
)
from rag_assets.core.lake import Lake
from rag_assets.core.search import Index
from rag_assets.definitions import build_definitions
from rag_assets.partitions import DOC_VERSIONS

from .conftest import FONT_DIR

KEY = "porto@v1"
# no header row (every row starts with a year and holds numbers): no column names to read
# the values under, so the table cannot be linearized
ROWS = [("2010", "54,876", "38,716"), ("2011", "55,120", "39,004"), ("2012", "56,210", "40,118")]


def unheaded_table_pdf(path: Path) -> Path:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.set_font("DejaVu", "", 11)
    pdf.add_page()
    pdf.multi_cell(
        0,
        6,
        "The harbour of Pelotas handled more containers every year of the decade, "
        "in both directions, as the yearly figures below show.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(4)
    pdf.cell(0, 8, "Table 1 – Containers handled", new_x="LMARGIN", new_y="NEXT")
    for row in ROWS:
        for i, value in enumerate(row):
            last = i == len(row) - 1
            pdf.cell(
                40,
                8,
                value,
                border=1,
                new_x="LMARGIN" if last else "RIGHT",
                new_y="NEXT" if last else "TOP",
            )
    pdf.ln(4)
    pdf.multi_cell(0, 6, "Imports grew faster than exports.", new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True)
    pdf.output(str(path))
    return path


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory):
    """One version holding the unheaded table, run through every stage once."""
    lake = Lake(tmp_path_factory.mktemp("tables") / "lake")
    unheaded_table_pdf(lake.raw_dir / "porto" / "v1.pdf")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    run = job.execute_in_process(partition_key=KEY, instance=instance, raise_on_error=False)
    return lake, run


def test_an_unstructured_table_is_indexed_as_its_lines_with_a_warning(indexed, embedder):
    lake, run = indexed
    assert run.success
    checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
    warning = checks[TABLES_STRUCTURED]
    assert not warning.passed and warning.severity == AssetCheckSeverity.WARN
    [named] = warning.metadata["tables"].value
    assert named["pages"] == [1, 1] and named["table"]
    for name in (
        CHUNKS_FIT_MODEL,
        NO_ORPHAN_TABLE_VALUES,
        NO_MID_LINE_STARTS,
        INDEX_MATCHES_CHUNKS,
    ):
        assert checks[name].passed, name  # the chunker did no damage of its own
    chunks = pl.read_parquet(lake.stage_path("chunks", KEY))
    table_chunks = chunks.filter(pl.col("kind") == "table_text")["text"].to_list()
    assert table_chunks  # the table is its own chunk, kind marked as such
    for row in ROWS:  # every printed row is in it, values in printed order
        assert any(" ".join(row) in " ".join(t.split()) for t in table_chunks), row
    index = Index(lake.lancedb_dir, embedder)
    assert index.partition_counts() == {KEY: chunks.height}
    hits = index.search("containers handled 2011 55,120", k=3)
    assert any("55,120" in h.text and h.kind == "table_text" for h in hits), [h.text for h in hits]
