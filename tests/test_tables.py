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
from rag_assets.core.chunking.policy import Policy, policy_chunker
from rag_assets.core.corpus import read_pdf
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


# --- tables as printed: generated PDFs read through the default policy's chunks ----------


def chunk_texts(path: Path, embedder) -> list[str]:
    """The default policy's chunks of one PDF (what `trecho materialize` indexes), each
    with its whitespace collapsed."""
    source, _ = read_pdf(path, "doc@v1")
    chunks = policy_chunker(Policy(), embedder)(source, embedder.token_counter())
    return [" ".join(c.text.split()) for c in chunks]


def holding(chunks: list[str], *texts: str) -> list[str]:
    """The chunks that hold every one of `texts`."""
    return [c for c in chunks if all(t in c for t in texts)]


def new_pdf(size: float = 10, orientation: str = "P") -> FPDF:
    pdf = FPDF(orientation=orientation, format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.set_font("DejaVu", "", size)
    return pdf


TRAFFIC = [
    (str(year), f"{54 + i},{876 + i:03d}", f"{38 + i},{716 - i:03d}")
    for i, year in enumerate(range(1990, 2030))
]
TRAFFIC_HEADER = ("Year", "Imports (t)", "Exports (t)")


def aligned_rows(pdf: FPDF, rows: list[tuple[str, ...]], x: list[float], pitch: float = 6) -> None:
    """Rows printed at column positions only (no rule anywhere), numbers right-aligned."""
    for row in rows:
        y = pdf.get_y()
        for i, value in enumerate(row):
            left = (
                x[i]
                if i == 0 or not value[:1].isdigit()
                else x[i] + 25 - pdf.get_string_width(value)
            )
            pdf.text(left, y + 4, value)
        pdf.set_y(y + pitch)


def test_an_unruled_table_over_two_pages_is_read_into_rows_under_one_header(
    tmp_path: Path, embedder
):
    """No ruling at all: columns only by alignment. Its rows come out linearized under the
    header, the header printed again on the next page is no row, the totals row carries
    the headers, and thousands separators stay in the numbers."""
    pdf = new_pdf()
    x = [25.0, 80.0, 125.0]
    rows = TRAFFIC + [("Total", "2,975,840", "1,964,170")]
    pdf.add_page()
    pdf.multi_cell(
        0,
        5,
        "The harbour of Pelotas handled more cargo every year, in both "
        "directions, as the yearly figures below show.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(3)
    pdf.cell(0, 6, "Table 4 – Cargo handled at the harbour", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    for start, end in ((0, 30), (30, len(rows))):
        if start:
            pdf.add_page()
        aligned_rows(pdf, [TRAFFIC_HEADER], x, pitch=8)
        aligned_rows(pdf, rows[start:end], x)
    pdf.ln(4)
    pdf.multi_cell(
        0, 5, "Imports grew faster than exports over the period.", new_x="LMARGIN", new_y="NEXT"
    )
    path = tmp_path / "unruled.pdf"
    pdf.output(str(path))
    chunks = chunk_texts(path, embedder)
    for year, imports, exports in rows:
        row = f"Year: {year}; Imports (t): {imports}; Exports (t): {exports}"
        assert holding(chunks, row), row
    assert not holding(chunks, "Year: Year")  # the repeated header is not a row
    assert not holding(chunks, "1991 55,877")  # no prose line of bare numbers left
    assert holding(chunks, "Imports grew faster than exports")


STATES = [("Alabama", "209", "1,234", "33", "4"), ("Alaska", "17", "2,050", "8", "12")]
STATES += [("Arizona", "88", "3,407", "21", "9"), ("Arkansas", "40", "905", "5", "2")]


def test_a_table_ruled_by_horizontal_lines_only_reads_its_two_level_header(
    tmp_path: Path, embedder
):
    """Rules above the header, under it and under the last row, none between columns (the
    common journal style): each value carries its header path and its row label."""
    pdf = new_pdf()
    pdf.add_page()
    pdf.text(20, 20, "Background checks by state")
    x = [22.0, 70.0, 100.0, 130.0, 160.0]
    pdf.line(20, 26, 190, 26)
    pdf.text(x[1] + 8, 31, "Permit")
    pdf.text(x[3] + 10, 31, "Sale")
    pdf.line(x[1], 33, 190, 33)
    pdf.text(x[0], 38, "State")
    for i, name in enumerate(["Handgun", "Long gun", "Handgun", "Long gun"]):
        pdf.text(x[i + 1], 38, name)
    pdf.line(20, 40, 190, 40)
    for r, values in enumerate(STATES):
        for i, value in enumerate(values):
            pdf.text(x[i], 46 + 6 * r, value)
    pdf.line(20, 48 + 6 * len(STATES), 190, 48 + 6 * len(STATES))
    pdf.text(20, 60 + 6 * len(STATES), "Source: the national background check system.")
    path = tmp_path / "booktabs.pdf"
    pdf.output(str(path))
    chunks = chunk_texts(path, embedder)
    for state, *values in STATES:
        row = (
            f"State: {state}; Permit > Handgun: {values[0]}; Permit > Long gun: {values[1]}; "
            f"Sale > Handgun: {values[2]}; Sale > Long gun: {values[3]}"
        )
        assert holding(chunks, row), row
