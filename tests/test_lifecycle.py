"""The index follows the documents: sensor-driven add / revoke / changed bytes,
supersession by validity dates (with and without history), model change and backfill,
the embedding cache, a run killed mid-way, and two versions written in parallel.

Everything runs on a real Dagster instance, a real LanceDB folder and the real model.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    Definitions,
    EventRecordsFilter,
    build_schedule_context,
)

from rag_assets.core.embedding.embedder import MINILM, Embedder, resolve_model_path
from rag_assets.core.index import Index, active_embedder, model_tables, read_active
from rag_assets.core.index.cache import EmbeddingCache, embed_cached
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.schemas import content_hash
from rag_assets.core.lifecycle.versions import scan_versions
from rag_assets.core.request import SearchRequest
from rag_assets.core.stages import FOLLOWERS
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.orchestration.plans import plan_lake
from rag_assets.orchestration.removals import carry_out_removals
from resources import EmbedderResource

from .conftest import copy_lake

# slow: every test indexes a lake through Dagster runs (up to minutes each)
pytestmark = pytest.mark.slow

REFUND = "Qual o prazo para receber o reembolso?"
OPS, V6, V7 = "manual-operacao@v1", "manual-beneficiario@v6", "manual-beneficiario@v7"


def set_sidecar(lake: Lake, key: str, **fields: object) -> None:
    """Rewrite a version's sidecar with some fields changed."""
    _, path = lake.raw_paths(key)
    data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.update(fields)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")


def texts_of(lake: Lake, embedder: Embedder, key: str) -> list[str]:
    """Every text the live index holds for one version."""
    index = Index(lake.lancedb_dir, active_embedder(lake.lancedb_dir, embedder))
    tbl = index.db.open_table(index.table_name)
    rows = tbl.search().where(f"partition_key = '{key}'").select(["text"]).limit(None)
    return rows.to_arrow().column("text").to_pylist()


def embedding_metadata(run) -> dict[str, object]:
    """The embeddings materialization's metadata of a run."""
    for event in run.get_asset_materialization_events():
        mat = event.step_materialization_data.materialization
        if mat.asset_key.to_user_string() == "embeddings":
            return {k: v.value for k, v in mat.metadata.items()}
    raise AssertionError("no embeddings materialization in the run")


@pytest.fixture
def beneficiary_lake(tmp_path: Path) -> Lake:
    """Only the beneficiary manual: v6 made active again, v7 not yet published."""
    lake = copy_lake(tmp_path / "lake", ["manual-beneficiario"], ["manuais.jsonl"])
    hold = tmp_path / "held"
    hold.mkdir()
    for suffix in (".pdf", ".yaml"):
        shutil.move(lake.raw_dir / "manual-beneficiario" / f"v7{suffix}", hold)
    set_sidecar(lake, V6, status="active", valid_from=None, valid_to=None)
    return lake


def publish_v7(lake: Lake, tmp_path: Path, **fields: object) -> None:
    for suffix in (".pdf", ".yaml"):
        shutil.copy(tmp_path / "held" / f"v7{suffix}", lake.raw_dir / "manual-beneficiario")
    set_sidecar(lake, V7, **fields)


def test_add_revoke_and_changed_bytes_all_by_the_sensor(
    run_requested,
    evaluate_sensor,
    beneficiary_lake: Lake,
    tmp_path: Path,
    embedder: Embedder,
    make_pdf,
) -> None:
    lake = beneficiary_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    tick = evaluate_sensor(defs, instance, lake)
    runs = run_requested(defs, instance, tick)
    assert set(runs) == {V6} and runs[V6].success
    index = Index(lake.lancedb_dir, embedder)
    assert "60 dias" in index.search(SearchRequest(query=REFUND, k=1))[0].text

    # v7 published without dates: both versions are live until v6 is revoked
    publish_v7(lake, tmp_path, valid_from=None, valid_to=None)
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    assert [r.tags["trecho/reason"] for r in tick.run_requests] == ["new"]
    runs = run_requested(defs, instance, tick)
    assert runs[V7].success
    assert {h.version for h in index.search(SearchRequest(query=REFUND, k=10))} == {"v6", "v7"}

    set_sidecar(lake, V6, status="revoked")
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    assert not getattr(tick, "run_requests", None)
    assert V6 not in instance.get_dynamic_partitions(DOC_VERSIONS)
    # the asset's latest materialization (what the UI's overview shows) says it is gone
    latest = instance.get_latest_materialization_event(AssetKey("embeddings"))
    marker = latest.asset_materialization
    assert marker.partition == V6 and marker.metadata["status"].value == "removed (revoked)"
    assert marker.metadata["rows"].value == 0
    # ... unmistakably: the description says removed, why and when (issue 56 item 7)
    when = marker.metadata["removed_at"].value
    assert when.endswith(" UTC") and when[:4].isdigit()
    assert marker.description.startswith(f"{V6} removed (revoked) at {when}: REMOVED")
    # ... and the check's latest result too (the Checks tab's "latest execution")
    records = instance.get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_CHECK_EVALUATION), limit=1
    )
    closed = records[0].event_log_entry.dagster_event.event_specific_data
    assert closed.partition == V6 and closed.check_name == "index_matches_chunks"
    assert closed.description.startswith(f"{V6} removed (revoked) at ")
    assert closed.metadata["stored"].value == "0"  # a version's figure: text, not plotted
    assert set(index.partition_counts()) == {V7}
    assert not any(lake.stage_path(s, V6).exists() for s in ("documents", "pages", "chunks"))
    assert "30 dias" in index.search(SearchRequest(query=REFUND, k=1))[0].text
    assert not any("60 dias" in h.text for h in index.search(SearchRequest(query=REFUND, k=20)))

    # the bytes of v7 change: only v7 runs again; the new deadline replaces the old one
    make_pdf(
        lake.raw_dir / "manual-beneficiario" / "v7.pdf",
        [
            ("Manual do Beneficiário", 18, True),
            ("1. Reembolso", 14, True),
            ("O reembolso de despesas médicas é pago em até 45 dias após o pedido.", 11, False),
        ],
    )
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    assert [(r.partition_key, r.tags["trecho/reason"]) for r in tick.run_requests] == [
        (V7, "file changed")
    ]
    runs = run_requested(defs, instance, tick)
    assert runs[V7].success
    texts = texts_of(lake, embedder, V7)
    assert any("45 dias" in t for t in texts)
    assert not any("30 dias" in t for t in texts)
    assert "45 dias" in index.search(SearchRequest(query=REFUND, k=1))[0].text


def test_an_operator_can_undo_a_revocation(
    run_requested, evaluate_sensor, beneficiary_lake: Lake, embedder: Embedder
) -> None:
    lake = beneficiary_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
    set_sidecar(lake, V6, status="revoked")
    tick = evaluate_sensor(defs, instance, lake)
    assert not Index(lake.lancedb_dir, embedder).partition_counts()
    set_sidecar(lake, V6, status="active")  # the wrong version was revoked: undo it
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    assert [(r.partition_key, r.tags["trecho/reason"]) for r in tick.run_requests] == [
        (V6, "restored")
    ]
    runs = run_requested(defs, instance, tick)
    assert runs[V6].success
    assert (
        "60 dias"
        in Index(lake.lancedb_dir, embedder).search(SearchRequest(query=REFUND, k=1))[0].text
    )
    history = [e["event"] for e in lake.tombstones()[V6]["history"]]
    assert history == ["removed", "indexed again"]
    # and the UI shows it on the version's raw_pdf materialization
    (record,) = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=AssetKey("raw_pdf"), asset_partitions=[V6]), limit=1
    ).records
    shown = record.asset_materialization.metadata["removal_history"].value
    assert "removed" in shown and "(revoked)" in shown


def test_a_newer_version_in_force_supersedes_the_older_one(
    run_requested, evaluate_sensor, beneficiary_lake: Lake, tmp_path: Path, embedder: Embedder
) -> None:
    lake = beneficiary_lake
    set_sidecar(lake, V6, valid_from="2025-01-01")
    publish_v7(lake, tmp_path, valid_from="2026-03-01", status="active")
    scan = scan_versions(lake, history=False, today=dt.date(2026, 11, 29), indexed={V7})
    assert scan.live == [V7] and scan.reasons[V6] == f"superseded by {V7}"
    pending = scan_versions(lake, history=False, today=dt.date(2026, 11, 29), indexed=set())
    assert pending.live == [V6, V7]  # v7 not in the index yet: v6 stays until it is
    before = scan_versions(lake, history=False, today=dt.date(2026, 2, 1), indexed={V7})
    assert before.live == [V6, V7]  # v7 is published ahead of its date: both indexed

    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    tick = evaluate_sensor(defs, instance, lake)
    runs = run_requested(defs, instance, tick)
    assert set(runs) == {V6, V7}  # v6 leaves in the step that commits v7
    assert embedding_metadata(runs[V7])["superseded"] == V6
    assert set(Index(lake.lancedb_dir, embedder).partition_counts()) == {V7}
    assert not lake.stage_path("chunks", V6).exists()

    # the next tick deletes v6's partition; its one removal record is the run's, with
    # the rows and files that left (not a second one saying nothing was removed)
    evaluate_sensor(defs, instance, lake, tick.cursor)
    assert V6 not in instance.get_dynamic_partitions(DOC_VERSIONS)
    records = [
        r.event_log_entry.asset_observation.metadata
        for r in instance.fetch_observations(AssetKey("embeddings"), limit=100).records
    ]
    (removed,) = [m for m in records if m["removed_version"].value == V6]
    assert removed["reason"].value == f"superseded by {V7}"
    assert removed["index_rows_removed"].value == embedding_metadata(runs[V6])["rows"] > 0
    assert removed["files_removed"].value == 5  # documents, pages, nodes, tables, chunks

    # a re-run of v7 does not say it superseded v6 again: v6 is gone already
    again = defs.resolve_job_def("index_documents").execute_in_process(
        partition_key=V7, instance=instance
    )
    assert embedding_metadata(again)["superseded"] == "none"


def test_a_partition_added_by_hand_without_a_file_goes_as_never_indexed(
    small_lake: Lake, embedder: Embedder
) -> None:
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(small_lake.root))
    instance.add_dynamic_partitions(DOC_VERSIONS, ["ghost@v1"])
    resources = defs.resources
    plan = plan_lake(instance, resources["lake"], resources["lancedb"], embedder)
    assert plan.remove == {"ghost@v1": "no file raw/ghost/v1.pdf (never indexed)"}


def test_with_history_both_versions_stay_and_search_answers_as_of_a_date(
    run_requested,
    evaluate_sensor,
    beneficiary_lake: Lake,
    tmp_path: Path,
    embedder: Embedder,
    monkeypatch,
) -> None:
    lake = beneficiary_lake
    set_sidecar(lake, V6, valid_from="2025-01-01")
    publish_v7(lake, tmp_path, valid_from="2026-03-01", status="active")
    monkeypatch.setenv("TRECHO_KEEP_HISTORY", "1")
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    runs = run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
    assert set(runs) == {V6, V7} and all(r.success for r in runs.values())
    index = Index(lake.lancedb_dir, embedder)
    then = index.search(SearchRequest(query=REFUND, k=10, as_of=dt.date(2025, 6, 1)))
    assert {h.version for h in then} == {"v6"} and "60 dias" in then[0].text
    now = index.search(SearchRequest(query=REFUND, k=10, as_of=dt.date(2026, 11, 29)))
    assert {h.version for h in now} == {"v7"} and "30 dias" in now[0].text


def test_rerun_with_nothing_changed_embeds_nothing(
    run_requested, evaluate_sensor, small_lake: Lake, embedder: Embedder
) -> None:
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(small_lake.root))
    first = run_requested(defs, instance, evaluate_sensor(defs, instance, small_lake))
    counts = Index(small_lake.lancedb_dir, embedder).partition_counts()
    job = defs.resolve_job_def("index_documents")
    for key, run in first.items():
        meta = embedding_metadata(run)
        assert meta["texts_embedded"] == meta["rows"] and meta["cache_hits"] == 0
        again = job.execute_in_process(partition_key=key, instance=instance)
        meta = embedding_metadata(again)
        assert meta["texts_embedded"] == 0 and meta["cache_hits"] == counts[key]
    assert Index(small_lake.lancedb_dir, embedder).partition_counts() == counts  # no duplicates


@pytest.fixture
def twin_model(tmp_path: Path) -> str:
    """The bundled model's weights under another name: another model id, same vectors."""
    twin = tmp_path / "minilm-twin"
    twin.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    return str(twin)


def test_model_change_backfills_a_new_table_and_switches_when_complete(
    run_requested, evaluate_sensor, small_lake: Lake, embedder: Embedder, twin_model: str
) -> None:
    lake, db = small_lake, small_lake.lancedb_dir
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    runs = run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
    live = sorted(runs)
    old_table = Index(db, embedder).table_name
    baseline = [
        h.chunk_id
        for h in Index(db, embedder).search(SearchRequest(query="limite de vibração", k=3))
    ]

    # the UI compares each partition's last code version with the asset's: all unsynced
    new_defs = build_definitions(str(lake.root), model=twin_model)
    node = new_defs.resolve_asset_graph().get(AssetKey("embeddings"))
    for key in live:
        (record,) = instance.fetch_materializations(
            AssetRecordsFilter(asset_key=AssetKey("embeddings"), asset_partitions=[key]), limit=1
        ).records
        stored = record.asset_materialization.tags["dagster/code_version"]
        assert stored != node.code_version and node.code_version.endswith("minilm-twin")

    embed = new_defs.resolve_job_def("embed_documents")
    first = embed.execute_in_process(partition_key=live[0], instance=instance)
    assert embedding_metadata(first)["texts_embedded"] > 0  # another model: no cache reuse
    assert read_active(db).model == "all-MiniLM-L6-v2"  # not complete: search stays
    serving = Index(db, active_embedder(db, Embedder(model=twin_model)))
    assert serving.table_name == old_table
    assert set(serving.partition_counts()) == set(live)

    embed.execute_in_process(partition_key=live[1], instance=instance)
    assert read_active(db).model == twin_model
    serving = Index(db, active_embedder(db, embedder))
    assert serving.table_name != old_table and set(serving.partition_counts()) == set(live)
    assert old_table not in model_tables(db)  # dropped once the switch is done
    assert [
        h.chunk_id for h in serving.search(SearchRequest(query="limite de vibração", k=3))
    ] == baseline


# -- separate processes: the way Dagster runs materializations in production -----------


def dagster_env(lake: Lake, home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "TRECHO_LAKE": str(lake.root),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }


def materialize_cmd(key: str, select: str, config: dict | None = None) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "dagster",
        "asset",
        "materialize",
        "-m",
        "rag_assets.definitions",
        "--select",
        select,
        "--partition",
        key,
    ]
    return cmd + (["--config-json", json.dumps(config)] if config else [])


def test_two_versions_written_in_parallel_lose_no_rows(small_lake: Lake, tmp_path: Path) -> None:
    lake = small_lake
    # each `dagster asset materialize` runs its six steps in its own process, not one
    # Python process a step (twelve start-ups importing Dagster, the model in several):
    # the two writers are still two processes, what the table's write lock must hold
    env = {**dagster_env(lake, tmp_path / "dagster_home"), "TRECHO_EXECUTOR": "in_process"}
    keys = scan_versions(lake).live
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]
    try:
        DagsterInstance.get().add_dynamic_partitions(DOC_VERSIONS, keys)
    finally:
        del os.environ["DAGSTER_HOME"]
    procs = [
        subprocess.Popen(
            materialize_cmd(key, "*embeddings"),
            env=env,
            cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for key in keys
    ]
    outputs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    expected = {k: pl.read_parquet(lake.stage_path("chunks", k)).height for k in keys}
    index = Index(lake.lancedb_dir, Embedder(model=MINILM))
    assert index.partition_counts() == expected
    tbl = index.db.open_table(index.table_name)
    assert tbl.count_rows() == sum(expected.values())


def embed_step_started(instance: DagsterInstance, known_runs: set[str]) -> bool:
    """Whether a run not in `known_runs` has started its embeddings step."""
    for run in instance.get_runs(limit=3):
        if run.run_id in known_runs:
            continue
        records = instance.get_records_for_run(
            run_id=run.run_id, of_type=DagsterEventType.STEP_START
        ).records
        if any(r.event_log_entry.step_key == "embeddings" for r in records):
            return True
    return False


def test_a_run_killed_while_embedding_leaves_the_previous_index_searchable(
    run_requested, evaluate_sensor, small_lake: Lake, tmp_path: Path, embedder: Embedder
) -> None:
    lake = small_lake
    home = tmp_path / "dagster_home"
    env = dagster_env(lake, home)
    os.environ["DAGSTER_HOME"] = str(home)
    try:
        instance = DagsterInstance.get()
        defs = build_definitions(str(lake.root))
        runs = run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
        assert runs
        assert all(r.success for r in runs.values())
        before = sorted(texts_of(lake, embedder, OPS))
        hits_before = [
            h.chunk_id
            for h in Index(lake.lancedb_dir, embedder).search(SearchRequest(query="vibração"))
        ]
        # new chunk texts for the same version (another header mode), then a slow embed
        # run (no cache, one text per batch) killed once it is under way
        defs.resolve_job_def("index_documents").execute_in_process(
            partition_key=OPS,
            instance=instance,
            asset_selection=[AssetKey("chunks")],
            run_config={"ops": {"chunks": {"config": {"header_mode": "path"}}}},
        )
        known_runs = {r.run_id for r in instance.get_runs()}
        slow = {"resources": {"embedder": {"config": {"batch_size": 1, "cache": False}}}}
        proc = subprocess.Popen(
            materialize_cmd(OPS, "embeddings", slow),
            env=env,
            cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 300
        started = False
        while time.monotonic() < deadline and proc.poll() is None and not started:
            started = embed_step_started(instance, known_runs)
            time.sleep(0.05)
        assert started and proc.poll() is None, "the embed run never started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)

        assert sorted(texts_of(lake, embedder, OPS)) == before  # old rows, all of them
        index = Index(lake.lancedb_dir, embedder)
        assert [h.chunk_id for h in index.search(SearchRequest(query="vibração"))] == hits_before

        rerun = subprocess.run(
            materialize_cmd(OPS, "embeddings"),
            env=env,
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
            timeout=600,
        )
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        after = texts_of(lake, embedder, OPS)
        chunks = pl.read_parquet(lake.stage_path("chunks", OPS))
        assert sorted(after) == sorted(chunks["text"].to_list()) and after != before
    finally:
        del os.environ["DAGSTER_HOME"]


def test_status_tells_what_is_live_served_and_pending(
    run_requested,
    evaluate_sensor,
    small_lake: Lake,
    embedder: Embedder,
    twin_model: str,
    capsys,
    monkeypatch,
) -> None:
    from rag_assets.cli import main

    lake = small_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
    set_sidecar(lake, OPS, status="revoked")  # revoked, but no sensor tick yet
    monkeypatch.setenv("TRECHO_MODEL", twin_model)  # another model in this shell only
    assert main(["status", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "search uses: chunks__all-minilm-l6-v2" in out
    assert "lake's model: all-minilm-l6-v2 (no backfill pending)" in out  # not the shell's
    assert f"TRECHO_MODEL={twin_model} in this shell is not the lake's model" in out
    assert f"`trecho backfill --model {twin_model}`" in out
    lines = {key: line for line in out.splitlines() for key in (OPS, V7) if f" {key} " in line}
    assert "indexed" in lines[V7] and "CLEANUP PENDING" in lines[OPS] and "revoked" in lines[OPS]


def test_the_cron_schedule_indexes_what_changed_and_records_removals(
    small_lake: Lake, embedder: Embedder, tmp_path: Path
) -> None:

    lake = small_lake
    # a persistent instance: a schedule's context reopens it from its reference
    (tmp_path / "dagster_home").mkdir()
    instance = DagsterInstance.local_temp(str(tmp_path / "dagster_home"))
    defs = build_definitions(str(lake.root))
    schedule = defs.resolve_schedule_def("scan_and_index")

    def tick() -> list:
        # closed after each tick: an open schedule context leaves Dagster's current
        # definitions-state storage pointing at an instance that is then collected
        with build_schedule_context(instance=instance, resources=defs.resources) as context:
            result = schedule(context)
        return result if isinstance(result, list) else []

    first = tick()
    assert {r.partition_key for r in first} == {OPS, V7}
    job = defs.resolve_job_def("index_documents")
    for request in first:
        job.execute_in_process(partition_key=request.partition_key, instance=instance)
    assert tick() == []  # nothing changed: nothing requested
    set_sidecar(lake, OPS, status="revoked")
    assert tick() == []
    assert set(instance.get_dynamic_partitions(DOC_VERSIONS)) == {V7}
    assert set(Index(lake.lancedb_dir, embedder).partition_counts()) == {V7}
    # the UI keeps the old events of a deleted partition; an observation says it is gone
    observations = instance.fetch_observations(AssetKey("embeddings"), limit=5).records
    removed = [o.asset_observation.metadata for o in observations]
    assert any(
        m["removed_version"].value == OPS and m["reason"].value == "revoked" for m in removed
    )


def test_a_symlinked_document_folder_leaving_the_lake_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "v1.pdf").write_bytes(b"%PDF-1.4")
    lake = Lake(tmp_path / "lake")
    lake.raw_dir.mkdir(parents=True)
    (lake.raw_dir / "doc").symlink_to(outside, target_is_directory=True)
    scan = scan_versions(lake)
    assert scan.live == [] and "outside the lake" in scan.problems[0]


def test_declarative_automation_refreshes_the_stages_below_a_rerun_stage(
    run_requested, evaluate_sensor, small_lake: Lake, embedder: Embedder
) -> None:
    from dagster import evaluate_automation_conditions

    lake = small_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    run_requested(defs, instance, evaluate_sensor(defs, instance, lake))
    result = evaluate_automation_conditions(defs=defs, instance=instance)
    requested = {s: result.get_num_requested(AssetKey(s)) for s in FOLLOWERS}
    assert requested == dict.fromkeys(FOLLOWERS, 0)  # every stage is up to date
    defs.resolve_job_def("index_documents").execute_in_process(
        partition_key=OPS, instance=instance, asset_selection=[AssetKey("page_text")]
    )
    result = evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
    assert result.get_requested_partitions(AssetKey("structure_tree")) == {OPS}


# -- nothing lost, nothing stale ----------------------------------------------------------

OPS_V2 = "manual-operacao@v2"


@pytest.fixture
def ticked(run_requested, evaluate_sensor, small_lake: Lake):
    """The small lake after one sensor tick and its runs: (instance, defs, tick)."""
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(small_lake.root))
    tick = evaluate_sensor(defs, instance, small_lake)
    run_requested(defs, instance, tick)
    return instance, defs, tick


def test_a_failed_newer_version_changes_nothing_for_the_older_one(
    run_requested, evaluate_sensor, small_lake: Lake, ticked, embedder: Embedder, make_pdf
) -> None:
    lake = small_lake
    instance, defs, tick = ticked
    index = Index(lake.lancedb_dir, embedder)
    before = [h.chunk_id for h in index.search(SearchRequest(query="limite de vibração", k=3))]
    assert before and before[0].startswith(OPS)

    # a truncated v2, in force from today: its run fails, v1 stays searchable as it was
    folder = lake.raw_dir / "manual-operacao"
    (folder / "v2.pdf").write_bytes((folder / "v1.pdf").read_bytes()[:4000])
    set_sidecar(lake, OPS_V2, valid_from=dt.date.today().isoformat(), status="active")
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    runs = run_requested(defs, instance, tick)
    assert not runs[OPS_V2].success
    assert OPS in scan_versions(lake).live
    assert [
        h.chunk_id for h in index.search(SearchRequest(query="limite de vibração", k=3))
    ] == before
    evaluate_sensor(defs, instance, lake, tick.cursor)  # nor is anything removed later
    assert OPS in instance.get_dynamic_partitions(DOC_VERSIONS)
    assert OPS in index.partition_counts() and OPS not in lake.tombstones()

    # a good v2: v1 leaves in the step that commits v2, not before
    make_pdf(
        folder / "v2.pdf",
        [
            ("Manual de Operação — revisão 2", 18, True),
            ("1. Limites", 14, True),
            ("O limite de vibração da bomba passa a ser 3,5 mm/s.", 11, False),
        ],
    )
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    runs = run_requested(defs, instance, tick)
    assert runs[OPS_V2].success
    assert embedding_metadata(runs[OPS_V2])["superseded"] == OPS
    assert set(index.partition_counts()) == {OPS_V2, V7}
    assert lake.tombstones()[OPS]["reason"] == f"superseded by {OPS_V2}"

    # v2 withdrawn: the raw folder is the truth, v1 is live again and indexed again
    for suffix in (".pdf", ".yaml"):
        (folder / f"v2{suffix}").unlink()
    tick = evaluate_sensor(defs, instance, lake, tick.cursor)
    assert [(r.partition_key, r.tags["trecho/reason"]) for r in tick.run_requests] == [
        (OPS, "restored")
    ]
    runs = run_requested(defs, instance, tick)
    assert runs[OPS].success
    assert set(index.partition_counts()) == {OPS, V7}
    assert [
        h.chunk_id for h in index.search(SearchRequest(query="limite de vibração", k=3))
    ] == before
    events = [e["event"] for e in lake.tombstones()[OPS]["history"]]
    assert events == ["removed", "indexed again"]


def revoking_job(defs, lake: Lake, key: str):
    """The index job with a hook that revokes `key` right after its chunks step, i.e.
    while the run is under way, before its embeddings step commits."""
    from dagster import Definitions, HookContext, define_asset_job, success_hook

    from rag_assets.orchestration.jobs import index_job

    @success_hook
    def revoke_after_chunks(context: HookContext) -> None:
        if context.op.name == "chunks":
            set_sidecar(lake, key, status="revoked")

    job = define_asset_job(
        "index_then_revoked",
        selection=index_job.selection,
        partitions_def=index_job.partitions_def,
        hooks={revoke_after_chunks},
    )
    racing = Definitions(assets=list(defs.assets), resources=defs.resources, jobs=[job])
    return racing.resolve_job_def("index_then_revoked")


def test_a_version_revoked_while_its_run_is_under_way_is_not_written(
    evaluate_sensor, small_lake: Lake, embedder: Embedder
) -> None:
    lake = small_lake
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    instance.add_dynamic_partitions(DOC_VERSIONS, [OPS])
    run = revoking_job(defs, lake, OPS).execute_in_process(partition_key=OPS, instance=instance)
    assert run.success
    meta = embedding_metadata(run)
    assert meta["rows"] == 0 and meta["not_written"] == "revoked"
    index = Index(lake.lancedb_dir, embedder)
    assert OPS not in index.partition_counts()
    assert not [
        h
        for h in index.search(SearchRequest(query="limite de vibração", k=10))
        if h.partition_key == OPS
    ]
    # the files the run wrote before it knew are gone too; the next tick drops the key
    assert not any(lake.stage_path(s, OPS).exists() for s in ("documents", "pages", "chunks"))
    evaluate_sensor(defs, instance, lake)
    assert OPS not in instance.get_dynamic_partitions(DOC_VERSIONS)


def store_files_holding(folder: Path, text: str) -> list[Path]:
    """Files under `folder` whose bytes contain `text` (UTF-8)."""
    needle = text.encode("utf-8")
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_revoked_version_cannot_be_read_back_from_disk(
    evaluate_sensor, small_lake: Lake, ticked, embedder: Embedder
) -> None:
    lake = small_lake
    instance, defs, _ = ticked
    ops_texts = texts_of(lake, embedder, OPS)
    word = "Desalinhamento"  # only in the operations manual
    assert any(word in t for t in ops_texts)
    assert not any(word in t for t in texts_of(lake, embedder, V7))
    index = Index(lake.lancedb_dir, embedder)
    tbl = index.db.open_table(index.table_name)
    assert store_files_holding(lake.lancedb_dir, word)  # the scan does see stored text
    assert len(tbl.list_versions()) > 1
    cache = index.db.open_table("embcache__" + embedder.model_id)
    v7_hashes = set(pl.read_parquet(lake.stage_path("chunks", V7))["content_hash"])
    assert cache.count_rows() > len(v7_hashes)

    set_sidecar(lake, OPS, status="revoked")
    evaluate_sensor(defs, instance, lake)
    assert store_files_holding(lake.lancedb_dir, word) == []
    tbl = index.db.open_table(index.table_name)
    for version in tbl.list_versions():  # no older version holds it either
        tbl.checkout(version["version"])
        assert tbl.count_rows(f"partition_key = '{OPS}'") == 0
    cache = index.db.open_table("embcache__" + embedder.model_id)
    assert cache.count_rows() == len(v7_hashes)  # only what the revoked version used left
    assert index.search(SearchRequest(query="desalinhamento da bomba", k=3))[0].partition_key == V7


@dataclasses.dataclass(eq=False)
class RevokingEmbedder(Embedder):
    """The real model, which revokes one version (its sidecar) once it has embedded a
    batch of passages: a revocation that lands while the embeddings step runs."""

    revoke: str = ""

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        vectors = super().embed_passages(texts)
        if self.revoke:
            path = Path(self.revoke)
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            path.write_text(yaml.safe_dump({**data, "status": "revoked"}), encoding="utf-8")
        return vectors


class RevokingEmbedderResource(EmbedderResource):
    """The configured embedder as a `RevokingEmbedder` of the sidecar `revoke`."""

    revoke: str = ""

    def embedder(self) -> Embedder:
        base = super().embedder()
        fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(Embedder)}
        return RevokingEmbedder(**fields, revoke=self.revoke)


def cached_hashes(lake: Lake, embedder: Embedder) -> set[str]:
    """The text hashes the model's embedding cache holds."""
    index = Index(lake.lancedb_dir, embedder)
    name = "embcache__" + embedder.model_id
    if name not in index.db.table_names():
        return set()
    rows = index.db.open_table(name).search().select(["text_hash"]).limit(None).to_arrow()
    return set(rows.column("text_hash").to_pylist())


def test_a_version_revoked_while_it_is_embedded_leaves_no_cached_vector(
    evaluate_sensor, small_lake: Lake, ticked, embedder: Embedder, make_pdf
) -> None:
    lake = small_lake
    instance, defs, _ = ticked
    kept = cached_hashes(lake, embedder)  # what the live versions use
    v2 = lake.raw_dir / "manual-operacao" / "v2.pdf"
    secret = "Procedimento reservado de calibração do rotor auxiliar, revogado."
    make_pdf(v2, [("Manual de operação", 16, True), (secret, 11, False)])
    shutil.copy(lake.raw_paths(OPS)[1], v2.with_suffix(".yaml"))
    set_sidecar(lake, OPS_V2, valid_from="2026-02-01")
    resources = {**defs.resources}
    resources["embedder"] = RevokingEmbedderResource(
        **defs.resources["embedder"].model_dump(), revoke=str(lake.raw_paths(OPS_V2)[1])
    )
    racing = Definitions(assets=list(defs.assets), resources=resources, jobs=list(defs.jobs))
    instance.add_dynamic_partitions(DOC_VERSIONS, [OPS_V2])
    job = racing.resolve_job_def("index_documents")
    run = job.execute_in_process(partition_key=OPS_V2, instance=instance)
    assert embedding_metadata(run)["not_written"] == "revoked"
    assert cached_hashes(lake, embedder) == kept  # not one vector of the revoked version
    evaluate_sensor(defs, instance, lake)
    assert cached_hashes(lake, embedder) == kept
    # what a run of the code before left (it cached first): the sensor's frequent ticks
    # leave the sweep (a pass over every hash) to the schedule and the commands
    vectors, _ = embed_cached(embedder, EmbeddingCache(lake.lancedb_dir, embedder), [secret])
    assert cached_hashes(lake, embedder) == kept | {content_hash(secret)}
    evaluate_sensor(defs, instance, lake)
    assert content_hash(secret) in cached_hashes(lake, embedder)
    stores = defs.resources["lake"], defs.resources["lancedb"]
    said: list[str] = []  # what the schedule and `trecho materialize` carry out
    carry_out_removals(instance, *stores, plan_lake(instance, *stores, embedder), said.append)
    assert cached_hashes(lake, embedder) == kept
    assert said == ["embedding cache: 1 cached vectors of texts no index row holds"]
    needle = vectors[0].tobytes()  # nor can its vector be read back from disk
    assert not [p for p in lake.lancedb_dir.rglob("*") if p.is_file() and needle in p.read_bytes()]
