"""The tolerances of table reading are listed truly: every field of `TableSettings` is a
row of docs/tables.md with its default, and every such row is a field; changing one
reaches the reading through `extract` (the caller threads it down)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from rag_assets.core.extract import extract
from rag_assets.core.layout import LayoutSettings
from rag_assets.core.tables import TableSettings

from .table_layouts import grade_pdf

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "tables.md"


def _rows() -> dict[str, str]:
    """`setting` -> default, from the settings table of docs/tables.md."""
    text = DOC.read_text()
    table = text[text.index("| setting | default | meaning |") :]
    table = table[: table.index("\n\n")]
    return dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", table, re.M))


def test_every_setting_is_documented_with_its_default() -> None:
    rows = _rows()
    fields = {f.name: f.default for f in dataclasses.fields(TableSettings)}
    assert len(fields) > 60
    assert set(rows) == set(fields), set(rows) ^ set(fields)
    wrong = {k: (rows[k].strip(), v) for k, v in fields.items() if rows[k].strip() != str(v)}
    assert not wrong, wrong


def test_layout_settings_named_in_the_docs() -> None:
    """The proposer's tolerances the docs name are `LayoutSettings` fields."""
    names = {f.name for f in dataclasses.fields(LayoutSettings)}
    text = DOC.read_text()
    said = text[text.index("fields of `core.layout.LayoutSettings`") :].split(")")[0]
    listed = set(re.findall(r"`(\w+)`", said))
    assert listed and listed <= names, listed - names


def test_settings_reach_the_reading_through_extract(tmp_path: Path) -> None:
    """`extract(..., tables=...)` threads the settings down to the stages: lines of one
    table asked to stand closer than they are printed leave an unruled table as text."""
    bare = grade_pdf(tmp_path / "none.pdf", "none")
    off = LayoutSettings(enabled=False)
    tight = TableSettings(line_pitch=0.1, min_line_gap=0.0)
    assert len(extract(bare, layout=off).pages[0].tables) == 1
    assert extract(bare, layout=off, tables=tight).pages[0].tables == []
