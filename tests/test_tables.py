"""A table whose columns the reader cannot name, through every stage of the real code
location: the version is indexed anyway (the table row by row, each row's chunk under the
table's caption), searchable in a real LanceDB, and the reader's limit is reported by a
warning check naming the table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from dagster import AssetCheckSeverity, DagsterInstance
from fpdf import FPDF

from rag_assets.core.chunking import Policy, PolicyChunker
from rag_assets.core.chunking.sized import fixed_chars
from rag_assets.core.corpus import read_pdf
from rag_assets.core.eval.metrics import chunk_damage
from rag_assets.core.extract import PdfError
from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake
from rag_assets.core.request import SearchRequest
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.checks import (
    CHUNKS_FIT_MODEL,
    INDEX_MATCHES_CHUNKS,
    NO_MID_LINE_STARTS,
    NO_ORPHAN_TABLE_VALUES,
    TABLES_NAMED,
)
from rag_assets.orchestration.materialize import failure_reason
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import FONT_DIR, SAMPLE_LAKE, SHARED
from .table_layouts import (
    CROWDED_GROUPS,
    CROWDED_TITLE,
    LONG_TITLE,
    crowded_pdf,
    crowded_rows,
    grade_rows,
    long_header_pdf,
    long_header_rows,
)

KEY = "porto@v1"
# no header row (every row starts with a year and holds numbers): no column names to read
# the values under, so each row is indexed as its cells under the table's caption
ROWS = [("2010", "54,876", "38,716"), ("2011", "55,120", "39,004"), ("2012", "56,210", "40,118")]


def introduce(pdf: FPDF, caption: str) -> None:
    """A paragraph of prose, then a table's caption."""
    pdf.multi_cell(
        0,
        6,
        "The harbour of Pelotas handled more containers every year of the decade, "
        "in both directions, as the yearly figures below show.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(4)
    pdf.cell(0, 8, caption, new_x="LMARGIN", new_y="NEXT")


def unheaded_table_pdf(path: Path) -> Path:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.set_font("DejaVu", "", 11)
    pdf.add_page()
    introduce(pdf, "Table 1 – Containers handled")
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


def test_a_table_without_named_columns_is_indexed_row_by_row_with_a_warning(indexed, embedder):
    lake, run = indexed
    assert run.success
    checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
    warning = checks[TABLES_NAMED]
    assert not warning.passed and warning.severity == AssetCheckSeverity.WARN
    assert warning.metadata["tables_without_named_columns"].value == "1"
    [named] = warning.metadata["tables"].value
    assert named["pages"] == [1, 1] and named["table"]
    for name in (
        CHUNKS_FIT_MODEL,
        NO_ORPHAN_TABLE_VALUES,
        NO_MID_LINE_STARTS,
        INDEX_MATCHES_CHUNKS,
    ):
        assert checks[name].passed, name  # the chunker did no damage of its own
    tables = pl.read_parquet(lake.stage_path("tables", KEY))
    assert tables["text"].to_list() == ["; ".join(row) for row in ROWS]
    assert all(not h for h in tables["header"].to_list())  # no column named
    chunks = pl.read_parquet(lake.stage_path("chunks", KEY))
    table_chunks = chunks.filter(pl.col("kind") == "table")["text"].to_list()
    assert len(table_chunks) == len(ROWS)  # one chunk a row, as a table's
    for row in ROWS:  # each row in a chunk of its own, under the table's caption
        [chunk] = [t for t in table_chunks if "; ".join(row) in t]
        assert "Table 1 – Containers handled" in chunk
    index = Index(lake.lancedb_dir, embedder)
    assert index.partition_counts() == {KEY: chunks.height}
    hits = index.search(SearchRequest(query="containers handled 2011 55,120", k=3))
    assert any("55,120" in h.text and h.kind == "table" for h in hits), [h.text for h in hits]


def test_a_crowded_table_keeps_its_printed_header_over_every_row(tmp_path: Path, embedder):
    """25 narrow columns in 5 pt type on a landscape page under two heading levels, the
    sub-headings run together over their group's columns (`Handgun Long Gun *Other
    **Multiple Admin`): the table is indexed as a table, and every count sits in a chunk
    with its heading path (`Permit > Handgun: 48`) or, its columns not named, under the
    table's title and printed header lines; no chunk holds a count without them."""
    path = crowded_pdf(tmp_path / "crowded.pdf")
    source, _ = read_pdf(path, "doc@v1")
    [table] = [n for n in source.nodes if n.kind in ("table", "table_text")]
    assert table.kind == "table"
    chunks = PolicyChunker(Policy(), embedder)(source, embedder.token_counter())
    texts = [" ".join(c.text.split()) for c in chunks]
    paths = [f"{group} > {sub}" for group, subs in CROWDED_GROUPS for sub in subs]
    printed = [  # the two header lines, words as printed
        " ".join(group for group, _ in CROWDED_GROUPS),
        " ".join(["State", *(sub for _, subs in CROWDED_GROUPS for sub in subs)]),
    ]
    for state, *counts in crowded_rows():
        [chunk] = holding(texts, state, counts[0])
        named = all(f"{p}: {c}" in chunk for p, c in zip(paths, counts, strict=True))
        under = all(line in chunk for line in printed) and all(c in chunk for c in counts)
        assert named or under, chunk
        assert CROWDED_TITLE in chunk
    assert not holding(texts, "Alabama 48 3,619")  # no line of bare numbers
    key = source.info.partition_key
    damage = chunk_damage(chunks, source.rows, {key: source.doc.text})
    assert damage.orphans == 0 and damage.truncated == 0
    if all(not r.header for r in source.rows):  # read without named columns: counted
        assert damage.unnamed_tables == 1
        # windows cut through the rows hold counts without the header lines: orphans
        windows = fixed_chars(source.doc, key, embedder.token_counter(), size=300)
        assert chunk_damage(windows, source.rows, {key: source.doc.text}).orphans > 0


def test_a_header_filling_most_of_a_chunk_is_over_every_row_of_a_table_it_cannot_name(
    tmp_path: Path, embedder
):
    """24 columns no reader can name one by one, under eight group headings wrapped over
    four lines each: the header lines fill more than half of what the 256-token model
    reads. Every row's chunks hold every one of them (before, the lines past half the
    model were dropped: 250 values without their header, and the version refused)."""
    source, _ = read_pdf(long_header_pdf(tmp_path / "long.pdf"), "doc@v1")
    chunks = PolicyChunker(Policy(), embedder)(source, embedder.token_counter())
    unnamed = [r for r in source.rows if not r.header]
    assert {r.cells[0] for r in unnamed} == {row[0] for row in long_header_rows()}
    lines = unnamed[0].header_lines
    counter = embedder.token_counter()
    assert counter.count("\n".join(lines)) > counter.max_tokens // 2
    for row in unnamed:  # a row too long beside the lines is cut, each piece under them
        held = [
            " ".join(c.text.split())
            for c in chunks
            if c.parent_id == row.table_id and f"{row.cells[0]}; " in c.text
        ]
        assert held and all(line in c for c in held for line in lines), row.text
        assert all(any(value in c for c in held) for value in row.cells)
    damage = chunk_damage(chunks, source.rows, {"doc@v1": source.doc.text})
    assert damage.orphans == 0 and damage.flagged_tables == 0 and damage.truncated == 0


LONG_KEY = "permits@v1"


@pytest.mark.slow  # a version indexed through the Dagster job
def test_a_table_whose_header_is_more_than_a_chunk_holds_is_flagged_and_its_version_indexed(
    tmp_path: Path, embedder
):
    """A table whose columns cannot be named and whose printed header lines are more
    than a chunk holds beside a row leaves values without part of their header: the
    version is indexed all the same (its prose, its other table and this table's rows
    searchable), the table flagged in the orphan check's metadata, which passes (it
    blocks the chunker's faults, not the reader's limits). Before, the blocking check
    failed and nothing of the version was searchable."""
    lake = Lake(tmp_path / "lake")
    (lake.raw_dir / "permits").mkdir(parents=True)
    long_header_pdf(lake.raw_dir / "permits" / "v1.pdf", longer=True)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, [LONG_KEY])
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    run = job.execute_in_process(partition_key=LONG_KEY, instance=instance, raise_on_error=False)
    assert run.success, failure_reason(run)
    checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
    orphan_check = checks[NO_ORPHAN_TABLE_VALUES]
    assert orphan_check.passed
    assert orphan_check.metadata["flagged_tables"].value == "1"
    [where] = orphan_check.metadata["flagged"].value
    assert where.startswith("page 2, table ") and "without its header" in where, where
    assert checks[INDEX_MATCHES_CHUNKS].passed
    index = Index(lake.lancedb_dir, embedder)
    chunks = pl.read_parquet(lake.stage_path("chunks", LONG_KEY))
    assert index.partition_counts() == {LONG_KEY: chunks.height}
    year, *scores = grade_rows()[2]
    for query, wanted in (
        ("harbour master approved permits within a week", "harbour master"),
        (f"reading score grade 2 in {year}", f"Grade > 2: {scores[2]}"),
        (f"{LONG_TITLE} Alaska", f"Alaska; {long_header_rows()[1][1]}"),
    ):
        hits = index.search(SearchRequest(query=query, k=5))
        assert any(wanted in h.text for h in hits), (query, [h.text for h in hits])


READABLE = sorted((SHARED / "real-pdfs").glob("*.pdf")) + sorted(SAMPLE_LAKE.glob("raw/*/*.pdf"))


@pytest.mark.slow  # every real-world PDF and the sample lake read and chunked, about a minute
@pytest.mark.skipif(not (SHARED / "real-pdfs").exists(), reason="shared real-world PDFs absent")
def test_every_table_found_in_real_pdfs_has_named_columns_or_its_header_over_each_row(embedder):
    """On the real-world PDFs and the sample lake, every table region the reader finds is
    indexed as a table (no table is left as bare printed lines), and each of its rows'
    chunks holds every value under its column's name (no orphan) or, a table read without
    named columns, every one of the table's printed header lines."""
    counter = embedder.token_counter()
    unnamed = 0
    for pdf in READABLE:
        try:
            source, extraction = read_pdf(pdf, "doc@v1")
        except PdfError:
            continue  # the empty, encrypted, malformed and image-only files
        logical = [t for t in extraction.logical_tables() if t.char_start >= 0]
        tables = [n for n in source.nodes if n.kind in ("table", "table_text")]
        assert [n.kind for n in tables] == ["table"] * len(logical), pdf.name
        chunks = PolicyChunker(Policy(), embedder)(source, counter)
        key = source.info.partition_key
        assert chunk_damage(chunks, source.rows, {key: source.doc.text}).orphans == 0, pdf.name
        unnamed += len({r.table_id for r in source.rows if not r.header})
        for row in (r for r in source.rows if not r.header):
            held = [
                " ".join(c.text.split())
                for c in chunks
                if c.parent_id == row.table_id and row.text in c.text
            ]
            assert held, (pdf.name, row.text)
            assert all(line in c for c in held for line in row.header_lines), (pdf.name, row)
    assert unnamed  # the lorem-ipsum grid of bare numbers is one


# --- tables as printed: generated PDFs read through the default policy's chunks ----------


def chunk_texts(path: Path, embedder) -> list[str]:
    """The default policy's chunks of one PDF (what `trecho materialize` indexes), each
    with its whitespace collapsed."""
    source, _ = read_pdf(path, "doc@v1")
    chunks = PolicyChunker(Policy(), embedder)(source, embedder.token_counter())
    return [" ".join(c.text.split()) for c in chunks]


def holding(chunks: list[str], *texts: str) -> list[str]:
    """The chunks that hold every one of `texts`."""
    return [c for c in chunks if all(t in c for t in texts)]


def new_pdf(size: float = 10, orientation: str = "P") -> FPDF:
    pdf = FPDF(orientation=orientation, format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
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
    introduce(pdf, "Table 4 – Cargo handled at the harbour")
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


MARKED = [  # (country, value as printed, mark printed small and raised or None)
    ("Austria", "1,234", "1"),
    ("Belgium", "2,050*", None),
    ("Czech Republic", "905 1)", None),
    ("Denmark", "13,407", "2"),
]


def test_footnote_marks_are_set_apart_from_the_numbers(tmp_path: Path, embedder):
    """A mark printed against a value (a raised `¹`, a `*`) reads apart from it: the
    number stays whole, thousands separators included, and never gains a digit."""
    pdf = new_pdf()
    pdf.add_page()
    pdf.text(20, 20, "Table 3 – Franchise networks by country")
    x, top, row_h = [20.0, 80.0, 130.0], 26.0, 8.0
    for r in range(len(MARKED) + 1):
        for i in range(2):
            pdf.rect(x[i], top + row_h * r, x[i + 1] - x[i], row_h)
    pdf.text(x[0] + 2, top + 5.5, "Country")
    pdf.text(x[1] + 2, top + 5.5, "Networks")
    for r, (country, value, mark) in enumerate(MARKED, start=1):
        baseline = top + row_h * r + 5.5
        pdf.text(x[0] + 2, baseline, country)
        pdf.text(x[1] + 2, baseline, value)
        if mark:
            pdf.set_font_size(6)
            pdf.text(x[1] + 2 + new_pdf().get_string_width(value), baseline - 1.8, mark)
            pdf.set_font_size(10)
    pdf.text(
        20, top + row_h * (len(MARKED) + 1) + 8, "1) Provisional. 2) Estimate. * Break in series."
    )
    path = tmp_path / "marks.pdf"
    pdf.output(str(path))
    chunks = chunk_texts(path, embedder)
    for country, shown in (
        ("Austria", "1,234 ¹"),
        ("Belgium", "2,050 *"),
        ("Czech Republic", "905 1)"),
        ("Denmark", "13,407 ²"),
    ):
        assert holding(chunks, f"Country: {country}; Networks: {shown}"), country
    assert not holding(chunks, "1,2341") and not holding(chunks, "13,4072")


TURNED = [
    ("Pump 01", "Noise", "92", "Check the insulation"),
    ("Pump 02", "Vibration", "4,5", "Stop"),
]
TURNED_HEADER = ("Equipment", "Measure", "Limit", "Action")


def ruled_table(
    pdf: FPDF, header: tuple[str, ...], rows: list[tuple[str, ...]], **layout: Any
) -> None:
    """A table ruled all over (fpdf2's), header first; `layout` as `FPDF.table` takes it."""
    layout.setdefault("col_widths", tuple(40 for _ in header))
    with pdf.table(**layout) as table:
        for values in [header, *rows]:
            row = table.row()
            for value in values:
                row.cell(value)


def test_a_table_on_a_turned_page_is_read_into_rows(tmp_path: Path, embedder, turned):
    """A landscape table printed sideways on a portrait sheet, and a page shown turned by
    its /Rotate: either way the table is read upright, each row under its header."""
    sideways = tmp_path / "sideways.pdf"
    pdf = new_pdf()
    pdf.add_page()
    with pdf.rotation(90, x=105, y=148):
        pdf.set_xy(40, 110)
        pdf.cell(0, 8, "Table 5 – Limits by equipment", new_x="LMARGIN", new_y="NEXT")
        pdf.set_x(40)
        ruled_table(pdf, TURNED_HEADER, TURNED)
    pdf.output(str(sideways))
    plain = tmp_path / "plain.pdf"
    pdf = new_pdf()
    pdf.add_page()
    pdf.cell(0, 8, "Table 5 – Limits by equipment", new_x="LMARGIN", new_y="NEXT")
    ruled_table(pdf, TURNED_HEADER, TURNED)
    pdf.output(str(plain))
    for path in (sideways, turned(plain, tmp_path / "rotate90.pdf")):
        chunks = chunk_texts(path, embedder)
        for values in TURNED:
            row = "; ".join(f"{h}: {v}" for h, v in zip(TURNED_HEADER, values, strict=True))
            assert holding(chunks, row), (path.name, row)


WIDE_HEADER = ("Equipment", "Noise", "Vibration", "Heat", "Dust", "Action")


def wide_value(column: str, row: int) -> str:
    words = " ".join(f"{column.lower()}{row}w{i}" for i in range(14))
    return f"{column} rule {row}: {words}"


def test_a_row_wider_than_a_chunk_is_cut_into_parts_that_each_repeat_its_label(
    tmp_path: Path, embedder
):
    """A row too long for one chunk is cut between its values: every part leads with the
    row label, and every value keeps its header beside it."""
    rows = [(f"Pump {r:02d}", *(wide_value(h, r) for h in WIDE_HEADER[1:])) for r in range(1, 4)]
    pdf = new_pdf(size=7, orientation="L")
    pdf.add_page()
    pdf.cell(0, 8, "Table 6 – Rules by equipment", new_x="LMARGIN", new_y="NEXT")
    ruled_table(pdf, WIDE_HEADER, rows, col_widths=(25, 50, 50, 50, 50, 50))
    path = tmp_path / "wide.pdf"
    pdf.output(str(path))
    chunks = chunk_texts(path, embedder)
    for label, *values in rows:
        parts = holding(chunks, f"Equipment: {label};")
        assert len(parts) >= 2, label  # the row did not fit one chunk
        for header, value in zip(WIDE_HEADER[1:], values, strict=True):
            assert holding(parts, f"{header}: {value}"), (label, header)
        for part in parts:  # no part holds a value of another row
            assert not any(other != label and f"{other};" in part for other, *_ in rows)


LEFT = [("Spain", "268"), ("Germany", "233"), ("France", "136")]
RIGHT = [("Germany", "91"), ("Spain", "85"), ("Belgium", "56")]


def test_tables_side_by_side_each_keep_their_own_rows(tmp_path: Path, embedder):
    """Two tables printed beside each other share every printed line; each is still read
    as its own rows under its own header."""
    pdf = new_pdf()
    pdf.add_page()
    pdf.cell(0, 8, "Enquiries by country, two topics", new_x="LMARGIN", new_y="NEXT")
    top = pdf.get_y()
    for header, rows, align in (
        (("Air passengers", "Enquiries"), LEFT, "LEFT"),
        (("Lisbon Treaty", "Enquiries"), RIGHT, "RIGHT"),
    ):
        pdf.set_y(top)
        ruled_table(pdf, header, rows, width=80, col_widths=(50, 30), align=align)
    path = tmp_path / "beside.pdf"
    pdf.output(str(path))
    chunks = chunk_texts(path, embedder)
    for topic, rows in (("Air passengers", LEFT), ("Lisbon Treaty", RIGHT)):
        for country, value in rows:
            assert holding(chunks, f"{topic}: {country}; Enquiries: {value}"), (topic, country)


# --- a version is never refused for a table: a cell longer than a chunk, and the line a
# blocking check failure gets -----------------------------------------------------------

SCHEDULE_HEADER = ("Item", "Day", "Start", "End", "Room", "Matter")
SCHEDULE_KEY = "hearings@v1"


def matter(item: int) -> str:
    """A cell far longer than a chunk, mentioning its own day (`13`) in its text."""
    words = " ".join(f"matter{item}w{k}" for k in range(70))
    return f"{words} continued on day {12 + item} at noon"


SCHEDULE = [
    (str(i), str(12 + i), "9:30", f"{12 + i}:00", f"Room {i}", matter(i)) for i in range(1, 4)
]


def schedule_pdf(path: Path) -> Path:
    """A ruled schedule whose last column's cells each run longer than a chunk."""
    pdf = new_pdf(size=7, orientation="L")
    pdf.add_page()
    pdf.cell(0, 8, "Schedule of hearings", new_x="LMARGIN", new_y="NEXT")
    ruled_table(pdf, SCHEDULE_HEADER, SCHEDULE, col_widths=(15, 15, 20, 20, 25, 180))
    path.parent.mkdir(parents=True)
    pdf.output(str(path))
    return path


def run_schedule(root: Path, **run_config: Any):
    """The schedule as the one version of a lake, run through every stage once."""
    lake = Lake(root / "lake")
    schedule_pdf(lake.raw_dir / "hearings" / "v1.pdf")
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, [SCHEDULE_KEY])
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    run = job.execute_in_process(
        partition_key=SCHEDULE_KEY, instance=instance, raise_on_error=False, **run_config
    )
    return lake, run


def test_a_cell_longer_than_a_chunk_is_indexed_with_its_header_on_every_piece(
    tmp_path: Path, embedder
):
    """Each piece of a cell cut to fit the model reads `Item: 1; Matter: ...`: no piece
    holds text of the table without its row and its column, so the blocking check that
    no value is left without its header passes and the version is indexed (a `13` inside
    the cell's own text is that cell's, not the `Day` column's)."""
    lake, run = run_schedule(tmp_path)
    assert run.success
    checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
    assert checks[NO_ORPHAN_TABLE_VALUES].passed and checks[CHUNKS_FIT_MODEL].passed
    texts = [
        " ".join(t.split())
        for t in pl.read_parquet(lake.stage_path("chunks", SCHEDULE_KEY))["text"]
    ]
    for item, day, *_ in SCHEDULE:
        pieces = [t for t in texts if f"matter{item}w" in t]
        assert len(pieces) >= 2, item  # the cell did not fit one chunk
        assert all(f"Item: {item}; Matter: matter{item}w" in t for t in pieces), pieces
        assert holding(pieces, f"on day {day} at noon")
        assert holding(texts, f"Item: {item}; Day: {day}; Start: 9:30; End: {day}:00")
    index = Index(lake.lancedb_dir, embedder)
    assert index.partition_counts() == {SCHEDULE_KEY: len(texts)}


def test_a_failed_blocking_check_is_named_with_the_table_and_page_that_tripped_it(
    tmp_path: Path,
):
    """Chunks cut every 40 characters (a strategy that ignores tables) leave values
    without their headers: the run stops at the blocking check, and the line `trecho
    materialize` prints for the version names the check and where it failed, not
    Dagster's line that ends before naming it."""
    config = {"ops": {"chunks": {"config": {"strategy": "fixed_chars-40-o0"}}}}
    lake, run = run_schedule(tmp_path, run_config=config)
    assert not run.success
    checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
    assert not checks[NO_ORPHAN_TABLE_VALUES].passed
    done = {e.asset_key.to_user_string() for e in run.get_asset_materialization_events()}
    assert "embeddings" not in done  # nothing indexed
    line = failure_reason(run)
    assert "blocking check" in line and NO_ORPHAN_TABLE_VALUES in line, line
    assert "page 1" in line and "table " in line and "without its header" in line, line
    assert not line.endswith(":"), line
