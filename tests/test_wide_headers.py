"""Wide tables in small type (issue 41): wrapped headings centred vertically, whose lines
sit half a line from their neighbours', read as one heading over their column; a row
label printed on a line of its own labels the values on the next."""

from __future__ import annotations

from pathlib import Path

import pdfplumber

from rag_assets.core.tables import DEFAULT_SETTINGS, find_tables, page_words
from rag_assets.core.tables.stub_tree import join_own_line_labels

from .table_layouts import centred, new_pdf, right_aligned, value

SUBS = ["Filed", "Percent change", "Rate", "Total"]
GROUPS = ["Imports", "Exports", "Balance"]
STATES = ["Alabama", "Alaska", "Arizona", "Arkansas", "Colorado", "Delaware"]


def _wide_pdf(path: Path) -> Path:
    """Three groups over four sub-columns each in 5 pt type; `Percent change` wrapped on
    two lines centred vertically on the line of the other sub-headings (3 pt apart)."""
    pdf = new_pdf(5, "L")
    pdf.add_page()
    width, left = 26.0, 90.0
    edges = [left + k * width for k in range(len(GROUPS) * len(SUBS) + 1)]
    for g, group in enumerate(GROUPS):
        centred(pdf, group, edges[g * 4], edges[g * 4 + 4], 100)
        for s, sub in enumerate(SUBS):
            a, b = edges[g * 4 + s], edges[g * 4 + s + 1]
            if " " in sub:
                for k, part in enumerate(sub.split()):
                    centred(pdf, part, a, b, 107 + 6 * k)
            else:
                centred(pdf, sub, a, b, 110)
    pdf.text(40, 110, "State")
    for r, state in enumerate(STATES):
        y = 124 + 7 * r
        pdf.text(40, y, state)
        for j in range(len(edges) - 1):
            right_aligned(pdf, value(r, j, 900), edges[j + 1] - 3, y)
    pdf.output(str(path))
    return path


def test_vertically_centred_wrapped_headings_read_whole(tmp_path: Path):
    with pdfplumber.open(_wide_pdf(tmp_path / "wide.pdf")) as pdf:
        page = pdf.pages[0]
        words = [w["text"] for w in page_words(page, DEFAULT_SETTINGS)]
        tables = find_tables(page)
    assert words.count("Percent") == words.count("change") == len(GROUPS)
    assert len(tables) == 1
    expected = [f"{g} > {s}" for g in GROUPS for s in SUBS]
    assert tables[0].header[1:] == expected


def test_a_label_on_its_own_line_labels_the_values_below():
    rows: list[list[str | None]] = [
        ["State", "2019", "2020"],
        ["Northeast", "", ""],  # a group row: the row under it has its own label
        ["Maine", "1", "2"],
        ["New Hampshire and Vermont", "", ""],  # printed alone, its values on the next line
        ["", "3", "4"],
    ]
    boxes = [(0.0, 10.0 * i, 100.0, 10.0 * i + 8) for i in range(len(rows))]
    join_own_line_labels(rows, boxes, 1)
    assert rows[1:] == [
        ["Northeast", "", ""],
        ["Maine", "1", "2"],
        ["New Hampshire and Vermont", "3", "4"],
    ]
    assert boxes[-1] == (0.0, 30.0, 100.0, 48.0)


CROWDED = ["Inpatient", "Outpatient", "Emergency", "Referrals"] * 2


def _crowded_pdf(path: Path) -> Path:
    """Headings in 5 pt type crowded so that each touches the next (one word to
    pdfplumber: `InpatientOutpatientEmergency...`), over columns of values."""
    pdf = new_pdf(5, "L")
    pdf.add_page()
    left = 90.0
    widths = [pdf.get_string_width(h) for h in CROWDED]
    edges = [left]
    for w in widths:
        edges.append(edges[-1] + w)
    for j, heading in enumerate(CROWDED):
        pdf.text(edges[j], 110, heading)
    pdf.text(40, 110, "State")
    for r, state in enumerate(STATES):
        y = 120 + 7 * r
        pdf.text(40, y, state)
        for j in range(len(CROWDED)):
            right_aligned(pdf, value(r, j, 900), edges[j + 1] - 3, y)
    pdf.output(str(path))
    return path


def test_crowded_headings_that_touch_are_cut_at_the_column_edges(tmp_path: Path):
    with pdfplumber.open(_crowded_pdf(tmp_path / "crowded.pdf")) as pdf:
        page = pdf.pages[0]
        heads = [w["text"] for w in page_words(page, DEFAULT_SETTINGS) if w["top"] < 108]
        tables = find_tables(page)
    assert len(heads) < len(CROWDED)  # the headings touch: fewer words than headings
    assert len(tables) == 1
    assert tables[0].header == ["State", *CROWDED]
