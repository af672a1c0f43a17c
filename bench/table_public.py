"""Ground truth from public repositories' tests: Camelot's `tests/` and tabula-java's
`src/test/`, each read from a folder extracted from a fetched copy (never committed).

Both projects test their readers against the table each PDF should give (Camelot: lists of
rows in `tests/data.py`, compared in `test_lattice.py`, `test_network.py`, ...; tabula-java:
CSV and JSON files in `src/test/resources/technology/tabula/`, compared in its Java tests).
Each case below names the test that pairs a PDF with its expected table. These are the
projects' own readings, checked by their maintainers: where they print a header over
several rows, or cut a word, the truth does too (bench/README.md, docs/tables.md).

Held-out files (`table_truth.held_out`: ICDAR 2013 US, NICS background checks) are never
opened: they are counted as excluded and nothing of theirs is read.
"""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path
from typing import Any

import _common  # noqa: F401  (the repository's root on sys.path: synth)

from synth.table_truth import Box, Case, Source, TruthTable, grid_table, held_out

# (PDF under tests/files, data.py lists of its tables in order, the test comparing them).
# Where several flavours' tests read the PDF, the expected table of the lattice test is
# taken (ruled reading), else the network test's (it drops the page's titles and notes),
# else the stream test's; tests that change the text (strip_text) are not used.
CAMELOT_CASES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("health.pdf", ("data_stream",), "test_network.test_network"),
    ("clockwise_table_1.pdf", ("data_lattice_table_rotated",), "test_lattice_table_rotated"),
    ("anticlockwise_table_1.pdf", ("data_lattice_table_rotated",), "test_lattice_table_rotated"),
    ("clockwise_table_2.pdf", ("data_network_table_rotated",), "test_network_table_rotated"),
    ("anticlockwise_table_2.pdf", ("data_network_table_rotated",), "test_network_table_rotated"),
    (
        "twotables_2.pdf",
        ("data_lattice_two_tables_1", "data_lattice_two_tables_2"),
        "test_lattice_two_tables",
    ),
    ("table_region.pdf", ("data_lattice_table_regions",), "test_lattice_table_regions"),
    (
        "background_lines_1.pdf",
        ("data_lattice_process_background",),
        "test_lattice_process_background (the page's second table)",
    ),
    ("row_span_1.pdf", ("data_lattice_copy_text",), "test_lattice_copy_text"),
    ("column_span_2.pdf", ("data_lattice_shift_text_left_top",), "test_lattice_shift_text"),
    ("tabula/arabic.pdf", ("data_arabic",), "test_lattice_arabic"),
    ("split_text_lattice.pdf", ("data_lattice_split_text",), "test_lattice_split_text"),
    (
        "tabula/12s0324.pdf",
        ("data_network_two_tables_1", "data_network_two_tables_2"),
        "test_network_two_tables_a",
    ),
    (
        "multiple_tables.pdf",
        ("data_network_two_tables_b_1", "data_network_two_tables_b_2"),
        "test_network_two_tables_b",
    ),
    ("vertical_header.pdf", ("data_network_vertical_headers",), "test_network_vertical_header"),
    ("mexican_towns.pdf", ("data_stream_columns",), "test_network_columns"),
    ("tabula/m27.pdf", ("data_network_split_text",), "test_network_split_text"),
    ("superscript.pdf", ("data_network_flag_size",), "test_network_flag_size"),
    ("detect_vertical_false.pdf", ("data_stream_layout_kwargs",), "test_network_layout_kwargs"),
    ("edge_tol.pdf", ("data_network_edge_tol",), "test_network_edge_tol"),
    (
        "stream_inner_outer_columns.pdf",
        ("data_stream_inner_outer_columns",),
        "test_stream_inner_outer_columns",
    ),
)
# The area a test reads (its `table_regions`, as x1, y1, x2, y2 from the bottom left): its
# truth covers that area alone, so no region found elsewhere on the page is judged.
CAMELOT_AREAS: dict[str, Box] = {"table_region.pdf": (170.0, 270.0, 560.0, 370.0)}
CAMELOT_WHY = {
    "health_protected.pdf": "password-protected copy of health.pdf",
    "eu-": "a copy of an ICDAR 2013 EU file (scored in the eu source)",
}

# (PDF, expected file under src/test/resources/technology/tabula/, the test reading it).
TABULA_CASES: tuple[tuple[str, str, str], ...] = (
    (
        "argentina_diputados_voting_record.pdf",
        "json/argentina_diputados_voting_record.json",
        "TestWriters.testJSONWriter",
    ),
    ("schools.pdf", "json/schools.json", "TestWriters.testJSONSerializeInfinity"),
    ("twotables.pdf", "json/twotables.json", "TestWriters.testJSONSerializeTwoTables"),
    (
        "spanning_cells.pdf",
        "json/spanning_cells.json",
        "TestSpreadsheetExtractor.testSpanningCells",
    ),
    (
        "AnimalSounds1.pdf",
        "json/AnimalSounds1.json",
        "TestCommandLineApp.testLatticeModeWithColumnAndMultipleAreasOption",
    ),
    (
        "AnimalSounds.pdf",
        "csv/AnimalSounds.csv",
        "TestCommandLineApp.testLatticeModeWithColumnOption",
    ),
    ("frx_2012_disclosure.pdf", "csv/frx_2012_disclosure.csv", "TestWriters.testCSVMultilineRow"),
    ("indictb1h_14.pdf", "csv/indictb1h_14.csv", "TestBasicExtractor.testRealLifeRTL2"),
    (
        "spreadsheet_no_bounding_frame.pdf",
        "csv/spreadsheet_no_bounding_frame.csv",
        "TestSpreadsheetExtractor.testSpreadsheetWithNoBoundingFrameShouldBeSpreadsheet",
    ),
    (
        "MultiColumn.pdf",
        "csv/MultiColumn.csv",
        "TestCommandLineApp.testExtractWithMultiplePercentArea",
    ),
    (
        "Publication_of_award_of_Bids_for_Transport_Sector__August_2016.pdf",
        "csv/Publication_of_award_of_Bids_for_Transport_Sector__August_2016.csv",
        "TestSpreadsheetExtractor.testSpreadsheetExtractionIssue656",
    ),
)
TABULA_WHY = {
    "eu-": "a copy of an ICDAR 2013 EU file (scored in the eu source)",
    "encrypted.pdf": "password-protected; its test checks one line only",
}
NO_CELLS = "its tests check no table's cells (counts, shapes, rulings, errors or single cells)"


def camelot_data(path: Path, wanted: set[str]) -> dict[str, list[list[str]]]:
    """The lists of rows `tests/data.py` defines under the `wanted` names, read as data (its
    code is never run): literals, slices of lists defined above, `list(x)`, `x.extend(y)`.
    Only the wanted lists and those they are made from are evaluated (never the tables of
    the held-out files that the same module holds)."""
    steps: dict[str, list[tuple[str, ast.expr]]] = {}  # name: ("=" or "extend", expression)
    for stmt in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            steps[stmt.targets[0].id] = [("=", stmt.value)]  # a later definition wins
        elif (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Attribute)
            and stmt.value.func.attr == "extend"
            and isinstance(stmt.value.func.value, ast.Name)
        ):
            steps.setdefault(stmt.value.func.value.id, []).append(("extend", stmt.value.args[0]))
    env: dict[str, Any] = {}

    def value(node: ast.expr) -> Any:
        if isinstance(node, ast.Name):
            return named(node.id)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            bound = node.slice
            lo = ast.literal_eval(bound.lower) if bound.lower else None
            hi = ast.literal_eval(bound.upper) if bound.upper else None
            return value(node.value)[lo:hi]
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "list":
            return list(value(node.args[0]))
        return ast.literal_eval(node)

    def named(name: str) -> Any:
        if name not in env:
            out: list[Any] = []
            for op, node in steps[name]:
                out = list(value(node)) if op == "=" else [*out, *value(node)]
            env[name] = out
        return env[name]

    return {name: named(name) for name in wanted}


def _skips(folder: Path, used: set[Path], why: dict[str, str], source: Source) -> None:
    """Every other PDF of the folder: skipped with its reason, or excluded unread."""
    for pdf in sorted(folder.rglob("*.pdf")):
        if held_out(pdf.relative_to(folder)):
            source.excluded += 1
        elif pdf not in used:
            reason = next((w for key, w in why.items() if pdf.name.startswith(key)), NO_CELLS)
            source.skipped.append((str(pdf.relative_to(folder)), reason))


def camelot_source(tests: Path) -> Source:
    """Camelot's test PDFs with the tables its tests expect (`tests` = its tests/ folder)."""
    source = Source("camelot", f"Camelot's tests ({tests})")
    files = tests / "files"
    data = camelot_data(tests / "data.py", {n for _, names, _ in CAMELOT_CASES for n in names})
    used: set[Path] = set()
    for rel, names, test in CAMELOT_CASES:
        pdf = files / rel
        if held_out(rel) or not pdf.exists():
            continue
        used.add(pdf)
        tables = [grid_table(data[n], 1, n) for n in names]
        kept = [t for t in tables if t is not None]
        for table in kept:
            table.area = CAMELOT_AREAS.get(rel)
        source.cases.append(Case(Path(rel).stem, pdf, kept, f"tests/{test}"))
    _skips(files, used, CAMELOT_WHY, source)
    return source


def _tabula_grids(path: Path) -> list[tuple[int, list[list[str]]]]:
    """(page, rows) of each table of a tabula-java expected file (JSON: one entry per
    table; CSV: one table)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        doc = json.loads(text)
        entries = doc if isinstance(doc, list) else [doc]
        return [
            (int(e.get("page_number") or 1), [[c.get("text", "") for c in r] for r in e["data"]])
            for e in entries
        ]
    return [(1, [list(r) for r in csv.reader(io.StringIO(text))])]


def tabula_source(root: Path) -> Source:
    """tabula-java's test PDFs with their expected CSV/JSON (`root` = its src/test/ folder,
    or the resources folder itself)."""
    base = root / "resources" / "technology" / "tabula"
    if not base.exists():
        base = root
    source = Source("tabula", f"tabula-java's tests ({base})")
    used: set[Path] = set()
    for rel, expected, test in TABULA_CASES:
        pdf, truth = base / rel, base / expected
        if held_out(rel) or held_out(expected) or not (pdf.exists() and truth.exists()):
            continue
        used.add(pdf)
        tables: list[TruthTable] = []
        for i, (page, rows) in enumerate(_tabula_grids(truth)):
            table = grid_table([[c.replace("\r", "\n") for c in r] for r in rows], page, f"#{i}")
            if table is not None:
                tables.append(table)
        source.cases.append(Case(Path(rel).stem, pdf, tables, f"{test} ({expected})"))
    _skips(base, used, TABULA_WHY, source)
    return source
