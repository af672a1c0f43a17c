"""The logical tables are joined once per version, by page_text, and stored with the
pages (issue 58): what the later stages read back is the join itself."""

from __future__ import annotations

from pathlib import Path

from rag_assets.core.extract import OcrSettings
from rag_assets.core.lake.parquet import read_stage
from rag_assets.core.layout import LayoutSettings
from rag_assets.core.pipeline import extract_pages
from rag_assets.core.stages import FOLDERS, PAGE_TEXT
from rag_assets.core.tables import join_tables, logical_from_pages, parts_from_pages

from .conftest import copy_lake

KEY = "manual-operacao@v1"


def test_the_stored_tables_are_the_join(tmp_path: Path) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    done = extract_pages(lake, KEY, OcrSettings(enabled=False), LayoutSettings())
    rows = list(read_stage(lake, FOLDERS[PAGE_TEXT], KEY).iter_rows(named=True))
    stored = logical_from_pages(rows)
    joined = join_tables(parts_from_pages(rows))
    assert stored and [t.as_row() for t in stored] == [t.as_row() for t in joined]
    assert [t.keys for t in stored] == [t.keys for t in done.logical]
    # a pages file from before they were stored is joined on reading
    old = [{k: v for k, v in r.items() if k != "logical_tables"} for r in rows]
    assert [t.as_row() for t in logical_from_pages(old)] == [t.as_row() for t in joined]
