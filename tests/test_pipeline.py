"""The whole flow on a real Dagster instance, a real LanceDB folder and the real model:
sensor → index job per document version → eval report; revoked versions never indexed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake
from rag_assets.core.request import SearchRequest
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import copy_lake

# slow: the small lake indexed through Dagster runs, for each test
pytestmark = pytest.mark.slow

LIVE = {"manual-operacao@v1", "manual-beneficiario@v7"}


def failure_messages(run) -> list[str]:
    """The error messages of a run's failed steps, as the Dagster UI shows them."""
    return [
        e.step_failure_data.error.message
        for e in run.all_events
        if e.event_type_value == "STEP_FAILURE"
    ]


def index_by_sensor(run_requested, evaluate_sensor, lake: Lake):
    """The lake after one sensor tick and the runs it asked for, on a fresh instance."""
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    tick = evaluate_sensor(defs, instance, lake)
    runs = run_requested(defs, instance, tick)
    return lake, instance, defs, tick, runs


@pytest.fixture
def indexed(run_requested, evaluate_sensor, small_lake: Lake, embedder):
    """The small lake after one sensor tick and the runs it asked for (a test may change it)."""
    return index_by_sensor(run_requested, evaluate_sensor, small_lake)


@pytest.fixture(scope="module")
def indexed_once(run_requested, evaluate_sensor, tmp_path_factory, embedder):
    """`indexed`, built once for the tests that only read it."""
    root = tmp_path_factory.mktemp("pipeline") / "lake"
    lake = copy_lake(root, ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"])
    return index_by_sensor(run_requested, evaluate_sensor, lake)


def test_sensor_registers_live_versions_and_runs_them(indexed_once, embedder):
    lake, instance, _, tick, runs = indexed_once
    assert {r.partition_key for r in tick.run_requests} == LIVE
    assert set(instance.get_dynamic_partitions(DOC_VERSIONS)) == LIVE  # v6 is revoked
    assert set(runs) == LIVE and all(run.success for run in runs.values())
    for key, run in runs.items():
        materialized = {
            e.asset_key.to_user_string() for e in run.get_asset_materialization_events()
        }
        assert materialized == {
            "raw_pdf",
            "page_text",
            "structure_tree",
            "linearized_tables",
            "chunks",
            "embeddings",
        }
        checks = run.get_asset_check_evaluations()
        assert checks and all(c.passed for c in checks), key
        for stage in ("documents", "pages", "nodes", "tables", "chunks"):
            assert lake.stage_path(stage, key).exists()
    index = Index(lake.lancedb_dir, embedder)
    assert set(index.partition_counts()) == LIVE


def test_search_answers_from_the_table_and_never_from_revoked_v6(indexed_once, embedder):
    lake, *_ = indexed_once
    index = Index(lake.lancedb_dir, embedder)
    hits = index.search(SearchRequest(query="qual o limite de vibração?", k=3))
    table_hit = [h for h in hits if "4,5" in h.text and "Limite" in h.text]
    assert table_hit, [h.text for h in hits]
    assert table_hit[0].text.startswith("[manual-operacao | 3 Tabela de tolerância")
    assert "Tabela de tolerância" in table_hit[0].path
    refund = index.search(SearchRequest(query="Qual o prazo para receber o reembolso?", k=10))
    assert refund and all(h.version != "v6" for h in refund)
    assert "30 dias" in refund[0].text  # v7's deadline (v6 said 60)
    assert not any("60 dias" in h.text for h in refund)


def test_revoking_an_indexed_version_removes_it_everywhere(evaluate_sensor, indexed, embedder):
    lake, instance, defs, *_ = indexed
    sidecar = lake.raw_dir / "manual-operacao" / "v1.yaml"
    sidecar.write_text(sidecar.read_text(encoding="utf-8").replace("active", "revoked"))
    tick = evaluate_sensor(defs, instance, lake)
    assert "manual-operacao@v1" not in {r.partition_key for r in tick.run_requests}
    assert "manual-operacao@v1" not in instance.get_dynamic_partitions(DOC_VERSIONS)
    index = Index(lake.lancedb_dir, embedder)
    assert set(index.partition_counts()) == {"manual-beneficiario@v7"}
    assert not any(lake.stage_path(s, "manual-operacao@v1").exists() for s in ("pages", "chunks"))
    hits = index.search(SearchRequest(query="limite de vibração", k=10))
    assert hits and all(h.doc_id != "manual-operacao" for h in hits)


def test_a_bad_pdf_fails_only_its_version(run_requested, evaluate_sensor, indexed, embedder):
    lake, instance, defs, *_ = indexed
    broken = lake.raw_dir / "relatorio" / "v1.pdf"
    broken.parent.mkdir()
    broken.write_text("this is not a pdf", encoding="utf-8")
    before = Index(lake.lancedb_dir, embedder).partition_counts()
    tick = evaluate_sensor(defs, instance, lake)
    runs = run_requested(defs, instance, tick)
    failed = runs["relatorio@v1"]
    assert not failed.success
    messages = failure_messages(failed)
    assert any(str(broken) in m and "not a PDF" in m for m in messages), messages
    assert set(runs) == {"relatorio@v1"}  # the unchanged versions do not run again
    assert Index(lake.lancedb_dir, embedder).partition_counts() == before


def test_eval_report_writes_markdown_and_metrics(indexed):
    lake, instance, defs, *_ = indexed
    result = defs.resolve_job_def("eval_report_job").execute_in_process(instance=instance)
    assert result.success
    [event] = result.get_asset_materialization_events()
    metadata = event.step_materialization_data.materialization.metadata
    report = Path(metadata["report"].value)
    assert report.exists() and report.parent.parent == lake.reports_dir
    table = metadata["metrics_table"].value
    assert "| default |" in table and "| fixed_tokens-512-o64 |" in table
    metrics = json.loads((report.parent / "metrics.json").read_text())
    default = metrics["strategies"]["default"]
    assert default["orphans"] == 0 and default["truncated"] == 0
    assert metrics["strategies"]["fixed_tokens-512-o64"]["truncated"] > 0
    assert metrics["questions"] >= 8


def test_a_broken_sidecar_fails_its_version_and_keeps_what_is_indexed(
    run_requested, evaluate_sensor, indexed, embedder
):
    lake, instance, defs, *_ = indexed
    sidecar = lake.raw_dir / "manual-operacao" / "v1.yaml"
    sidecar.write_text("title: [unclosed\n", encoding="utf-8")
    before = Index(lake.lancedb_dir, embedder).partition_counts()
    tick = evaluate_sensor(defs, instance, lake)
    assert "manual-operacao@v1" in instance.get_dynamic_partitions(DOC_VERSIONS)
    runs = run_requested(defs, instance, tick)
    failed = runs["manual-operacao@v1"]
    assert not failed.success
    messages = failure_messages(failed)
    assert any(str(sidecar) in m and "does not parse" in m for m in messages), messages
    assert Index(lake.lancedb_dir, embedder).partition_counts() == before
    hits = Index(lake.lancedb_dir, embedder).search(
        SearchRequest(query="qual o limite de vibração?", k=3)
    )
    assert any("4,5" in h.text for h in hits)


def test_an_unreachable_llm_for_situating_sentences_is_reported_not_fatal(indexed):
    lake, instance, defs, *_ = indexed
    job = defs.resolve_job_def("index_documents")
    config = {"llm_url": "http://127.0.0.1:9/v1", "llm_model": "any"}  # nothing listens there
    run = job.execute_in_process(
        partition_key="manual-operacao@v1",
        instance=instance,
        run_config={"ops": {"chunks": {"config": config}}},
    )
    assert run.success
    chunks_event = next(
        e
        for e in run.get_asset_materialization_events()
        if e.asset_key.to_user_string() == "chunks"
    )
    situating = chunks_event.step_materialization_data.materialization.metadata["situating"]
    assert situating.value["failed"] > 0 and situating.value["called"] >= 1
    evaluations = run.get_asset_check_evaluations()
    assert evaluations
    assert all(c.passed for c in evaluations)


def test_sensor_requests_only_new_or_changed_files(evaluate_sensor, indexed):
    lake, instance, defs, tick, _ = indexed
    assert tick.run_requests and all(r.tags["trecho/reason"] == "new" for r in tick.run_requests)
    again = evaluate_sensor(defs, instance, lake, cursor=tick.cursor)
    assert not getattr(again, "run_requests", None)  # nothing new, nothing changed
    pdf = lake.raw_dir / "manual-beneficiario" / "v7.pdf"
    pdf.write_bytes(pdf.read_bytes() + b"\n% edited\n")
    changed = evaluate_sensor(defs, instance, lake, cursor=tick.cursor)
    [request] = changed.run_requests
    assert request.partition_key == "manual-beneficiario@v7"
    assert request.tags["trecho/reason"] == "file changed"
    before = {r.partition_key: r.run_key for r in tick.run_requests}
    assert request.run_key != before["manual-beneficiario@v7"]
