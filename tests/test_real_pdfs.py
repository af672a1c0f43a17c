"""Every real-world PDF of ../shared/corpora/real-pdfs through the reading stages of the
real code location, on one Dagster instance, in one pass over the raw folder (one run per
version, as a backfill launches them): the good ones yield trees and linearized tables,
the bad ones fail with the file and the reason, and the pass finishes.

Stages run up to `chunks` (what the chunker makes of real layouts: no chunk starting inside
a line, no table value without its header; embeddings are covered by test_pipeline). The
image-only file is included: its OCR adds about 5 s.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.core.lake.layout import Lake, make_key
from rag_assets.core.stages import CHUNKS, EXTRACTION
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.checks import (
    CHUNKS_FIT_MODEL,
    NO_MID_LINE_STARTS,
    NO_ORPHAN_TABLE_VALUES,
)
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import SHARED

REAL = SHARED / "real-pdfs"
STAGES = [*EXTRACTION, CHUNKS]
BAD = {  # file: what its error must say
    "empty.pdf": "file is empty",
    "password-example.pdf": "encrypted",
    "malformed-from-issue-932.pdf": "malformed PDF",
}
WARN = "warn-report-for-7-1-2015-to-03-25-2016@v1"
WARN_HEADER = [
    "Notice Date",
    "Effective",
    "Received",
    "Company",
    "City",
    "No. Of",
    "Layoff/Closure",
]

pytestmark = [
    pytest.mark.skipif(not REAL.exists(), reason="shared real-world PDFs not available"),
    pytest.mark.slow,  # every real-world PDF read, and chunked through Dagster runs
]


def doc_id(pdf: Path) -> str:
    return pdf.stem.lower()


def failure_messages(run) -> list[str]:
    return [
        e.step_failure_data.error.message
        for e in run.all_events
        if e.event_type_value == "STEP_FAILURE"
    ]


def metadata(run, asset: str) -> dict[str, object]:
    [event] = [
        e for e in run.get_asset_materialization_events() if e.asset_key.to_user_string() == asset
    ]
    return {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}


@pytest.fixture(scope="module")
def processed(tmp_path_factory: pytest.TempPathFactory):
    """The real-pdfs folder as a raw lake, every version run once on one instance."""
    lake = Lake(tmp_path_factory.mktemp("real") / "lake")
    for pdf in sorted(REAL.glob("*.pdf")):
        target = lake.raw_dir / doc_id(pdf) / "v1.pdf"
        target.parent.mkdir(parents=True)
        shutil.copy(pdf, target)
    found, problems = lake.scan_raw()
    assert not problems
    keys = [make_key(v.doc_id, v.version) for v in found]
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, keys)
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    selection = [AssetKey(stage) for stage in STAGES]
    runs = {
        key: job.execute_in_process(
            partition_key=key, instance=instance, raise_on_error=False, asset_selection=selection
        )
        for key in keys
    }
    return lake, instance, runs


def test_good_pdfs_index_through_chunks_and_bad_ones_fail_with_file_and_reason(processed):
    lake, instance, runs = processed
    assert len(runs) == len(list(REAL.glob("*.pdf")))
    bad = {make_key(doc_id(Path(name)), "v1"): reason for name, reason in BAD.items()}
    for key, run in runs.items():
        if key in bad:
            assert not run.success, key
            pdf = lake.raw_dir / key.split("@")[0] / "v1.pdf"
            messages = failure_messages(run)
            assert any(str(pdf) in m and bad[key] in m for m in messages), messages
            assert not lake.stage_path("nodes", key).exists()
            assert not lake.stage_path("chunks", key).exists()
            continue
        assert run.success, (key, failure_messages(run))
        nodes = pl.read_parquet(lake.stage_path("nodes", key))
        assert nodes["text"].str.len_chars().sum() > 0, key  # the tree holds the text
        meta = metadata(run, "structure_tree")
        assert {"pages", "ocr_pages", "nodes_by_kind", "tables", "table_rows"} <= set(meta)
        assert 0.0 <= meta["untitled_text_share"] <= 1.0
        # how far the section paths can be trusted: no segment of these is a prose
        # fragment, a contents line or a table named in another language
        assert meta["language"] in ("en", "zh", "it"), key  # lorem ipsum reads as Italian
        assert meta["non_heading_path_share"] == 0.0, (key, meta["non_heading_path_share"])
        checks = {c.check_name: c for c in run.get_asset_check_evaluations()}
        assert "untitled_text_share_low" in checks
        assert checks["section_paths_are_headings"].passed, key
        assert pl.read_parquet(lake.stage_path("chunks", key)).height > 0, key
        for name in (NO_MID_LINE_STARTS, NO_ORPHAN_TABLE_VALUES, CHUNKS_FIT_MODEL):
            assert checks[name].passed, (key, name, checks[name].metadata)
    # every version is known to the instance, failed or not: the pass went through all
    assert set(instance.get_dynamic_partitions(DOC_VERSIONS)) == set(runs)


def test_warn_report_table_over_pages_is_one_table_with_its_header(processed):
    lake, _, runs = processed
    rows = pl.read_parquet(lake.stage_path("tables", WARN))
    nodes = pl.read_parquet(lake.stage_path("nodes", WARN))
    tables = nodes.filter(pl.col("kind") == "table")
    main = tables.filter(pl.col("node_id") == rows["table_id"][0]).row(0, named=True)
    assert (main["page_start"], main["page_end"]) == (1, 15)  # the summary follows on 15-16
    warn = rows.filter(pl.col("table_id") == main["node_id"])
    assert warn["page"].unique().sort().to_list() == list(range(1, 16))
    assert warn.height == 633  # every notice, none lost at a page break, no header repeated
    assert all(h == WARN_HEADER for h in warn["header"].to_list())
    assert all(t.startswith("Notice Date: ") and "; Company: " in t for t in warn["text"])
    last = warn.row(warn.height - 1, named=True)["text"]
    assert last.startswith("Notice Date: 03/21/2016; Effective: 05/27/2016")  # no "0 5 / 2 7"
    summary = rows.filter(pl.col("table_id") != main["node_id"])
    assert summary["text"].to_list()[-1].startswith("Summary by Month: Total; Notices: 632")
    assert summary["page"].unique().sort().to_list() == [15, 16]
    meta = metadata(runs[WARN], "linearized_tables")
    assert meta["tables_across_pages"] == 2 and meta["rows"] == warn.height + summary.height


def test_scanned_pdf_is_ocr_text_and_columns_are_read_in_order(processed):
    lake, _, runs = processed
    key = make_key("issue-203-decimalize", "v1")
    pages = pl.read_parquet(lake.stage_path("pages", key))
    assert pages["ocr"].to_list() == [True] * 3 and not any(pages["has_text_layer"])
    assert "2301914001" in "\n".join(pages["text"].to_list())
    assert metadata(runs[key], "page_text")["ocr_pages"] == 3
    assert metadata(runs[key], "structure_tree")["ocr_pages"] == 3
    federal = make_key("federal-register-2020-17221", "v1")
    text = "\n".join(pl.read_parquet(lake.stage_path("pages", federal))["text"].to_list())
    # a sentence of the middle column of page 3 reads on, not interleaved with its neighbours
    assert "To ensure that an erroneous signal\nfrom a failed single AOA sensor does" in text
    assert "Federal Register/Vol. 85" not in text  # the running header of every page
    assert "DSK" not in text  # the sideways stamp in the margin of every page
