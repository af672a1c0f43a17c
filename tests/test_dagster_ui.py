"""What the Dagster UI shows is true: one run per document version at a time (the sensor and
the automation both see a new version, one run indexes it), check results that name the
version they judged, and a model change that marks chunks and embeddings stale together.

A real Dagster instance (SQLite in a temp folder), the real raw-folder sensor and the real
automation conditions, real runs on the sample lake's operations manual.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from dagster import (
    AssetKey,
    AssetRecordsFilter,
    DagsterEventType,
    DagsterInstance,
    EventRecordsFilter,
    FloatMetadataValue,
    IntMetadataValue,
    RunsFilter,
    evaluate_automation_conditions,
)
from dagster._core.utils import make_new_run_id

from rag_assets.core.index import table_name
from rag_assets.core.index.locking import table_lock
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.locks import file_lock
from rag_assets.core.stages import FOLLOWERS, PIPELINE
from rag_assets.definitions import build_definitions

from .conftest import copy_lake

# slow: indexes a version through Dagster runs
pytestmark = pytest.mark.slow

OPS = "manual-operacao@v1"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def requested_by_automation(result: Any) -> dict[str, set[str]]:
    """The partitions an automation evaluation asks for, by stage (empty ones left out)."""
    out = {}
    for stage in FOLLOWERS:
        keys = result.get_requested_partitions(AssetKey(stage))
        if keys:
            out[stage] = set(keys)
    return out


def partition_requests(result: Any) -> list[str]:
    """The partition keys of a sensor result's run requests."""
    return [r.partition_key for r in getattr(result, "run_requests", None) or []]


@dataclass
class Story:
    """What the sensor and the automation asked for around one new version's run."""

    lake: Lake
    instance: DagsterInstance
    first_tick: list[str]
    mid_run_sensor: list[str]
    mid_run_sensor_lost_cursor: list[str]
    mid_run_automation: dict[str, set[str]]
    after_sensor: list[str]
    after_automation: dict[str, set[str]]
    report_mid_run: int
    report_after: int
    run_ok: bool


def wait_for(predicate: Any, what: str, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def materializations(instance: DagsterInstance, stage: str, key: str) -> int:
    return len(
        instance.fetch_materializations(
            AssetRecordsFilter(asset_key=AssetKey(stage), asset_partitions=[key]), limit=100
        ).records
    )


@pytest.fixture(scope="module")
def story(tmp_path_factory, embedder, evaluate_sensor) -> Iterator[Story]:
    """A new version in raw/: the sensor asks for its run; while that run is parked at its
    index commit (the test holds the table's write lock), the sensor ticks again (with
    its cursor, and with its cursor lost, as after a daemon restart) and the automation
    is evaluated; then the run ends and both look once more."""
    root = tmp_path_factory.mktemp("ui")
    lake = copy_lake(root / "lake", ["manual-operacao"], [])
    (root / "dagster_home").mkdir()
    instance = DagsterInstance.local_temp(tempdir=str(root / "dagster_home"))
    defs = build_definitions(str(lake.root))
    automation = evaluate_automation_conditions(defs, instance)
    first = evaluate_sensor(defs, instance, lake)
    assert partition_requests(first) == [OPS]
    automation = evaluate_automation_conditions(defs, instance, cursor=automation.cursor)
    assert requested_by_automation(automation) == {}  # raw_pdf missing: nothing follows yet
    request = first.run_requests[0]
    job = defs.resolve_job_def("index_documents")
    done: dict[str, Any] = {}

    def run() -> None:
        done["result"] = job.execute_in_process(
            partition_key=OPS,
            instance=instance,
            tags=dict(request.tags),
            raise_on_error=False,
            run_config=QUIET,
        )

    # the run stops at its index commit, chunks written
    with table_lock(str(lake.lancedb_dir), table_name(embedder.model_id)):
        worker = threading.Thread(target=run)
        worker.start()
        wait_for(lambda: materializations(instance, "chunks", OPS) == 1, "chunks of the run")
        mid_sensor = evaluate_sensor(defs, instance, lake, cursor=first.cursor)
        lost = evaluate_sensor(defs, instance, lake, cursor=None)
        automation = evaluate_automation_conditions(defs, instance, cursor=automation.cursor)
        mid_automation = requested_by_automation(automation)
        report_mid = automation.get_num_requested(AssetKey("eval_report"))
    worker.join(timeout=600)
    after = evaluate_sensor(defs, instance, lake, cursor=None)
    automation = evaluate_automation_conditions(defs, instance, cursor=automation.cursor)
    yield Story(
        lake=lake,
        instance=instance,
        first_tick=partition_requests(first),
        mid_run_sensor=partition_requests(mid_sensor),
        mid_run_sensor_lost_cursor=partition_requests(lost),
        mid_run_automation=mid_automation,
        after_sensor=partition_requests(after),
        after_automation=requested_by_automation(automation),
        report_mid_run=report_mid,
        report_after=automation.get_num_requested(AssetKey("eval_report")),
        run_ok=bool(done.get("result") and done["result"].success),
    )
    instance.dispose()


def test_sensor_and_automation_see_a_new_version_and_one_run_indexes_it(story: Story):
    assert story.first_tick == [OPS]
    # while the run is in flight, neither the sensor (even with its cursor lost) nor the
    # automation asks for another run of the version
    assert story.mid_run_sensor == []
    assert story.mid_run_sensor_lost_cursor == []
    assert story.mid_run_automation == {}
    assert story.run_ok
    # once it ended, the version is up to date: nothing more is asked for
    assert story.after_sensor == []
    assert story.after_automation == {}
    # the eval report follows the index once no version is being embedded (not left
    # "Unsynced" until its daily schedule)
    assert (story.report_mid_run, story.report_after) == (0, 1)
    runs = story.instance.get_runs(RunsFilter(tags={"dagster/partition": OPS}))
    assert len(runs) == 1
    for stage in PIPELINE:
        assert materializations(story.instance, stage, OPS) == 1, stage


def test_check_results_name_the_version_and_what_they_counted(story: Story):
    records = story.instance.get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_CHECK_EVALUATION), limit=100
    )
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]
    by_check = {(e.asset_key.to_user_string(), e.check_name): e for e in evaluations}
    assert set(by_check) == {
        ("structure_tree", "untitled_text_share_low"),
        ("structure_tree", "section_paths_are_headings"),
        ("linearized_tables", "tables_with_named_columns"),
        ("chunks", "chunks_fit_model"),
        ("chunks", "no_orphan_table_values"),
        ("chunks", "no_mid_line_starts"),
        ("embeddings", "index_matches_chunks"),
    }
    chunks = next(
        r.asset_materialization
        for r in story.instance.fetch_materializations(AssetKey("chunks"), limit=1).records
    )
    n_chunks = chunks.metadata["chunks"].value
    for evaluation in evaluations:
        assert evaluation.partition == OPS  # each result says which version it judged
        assert evaluation.description and OPS in evaluation.description
    orphans = by_check[("chunks", "no_orphan_table_values")]
    assert orphans.passed
    assert orphans.description == f"0 orphans among the {n_chunks} chunks of {OPS}"
    index = by_check[("embeddings", "index_matches_chunks")]
    assert f"{n_chunks} rows of {OPS}" in index.description
    paths = by_check[("structure_tree", "section_paths_are_headings")]
    assert paths.passed and paths.metadata["share"].value == "0.0"  # the manual's headings


def test_a_version_checks_numbers_are_not_charted_as_one_series(story: Story):
    """Dagster plots a check's numeric metadata as one series over its evaluations: for a
    check partitioned by version, every version's figure would sit on one line as if one
    thing changed. A version's figures are text (issue 56 item 7)."""
    records = story.instance.get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_CHECK_EVALUATION), limit=100
    )
    evaluations = [r.event_log_entry.dagster_event.event_specific_data for r in records]
    of_versions = [e for e in evaluations if e.partition is not None]
    assert len(of_versions) == 7
    plotted = {
        (e.check_name, k)
        for e in of_versions
        for k, v in e.metadata.items()
        if isinstance(v, IntMetadataValue | FloatMetadataValue)
    }
    assert plotted == set()
    index = next(e for e in of_versions if e.check_name == "index_matches_chunks")
    assert index.metadata["stored"].value == index.metadata["expected"].value != "0"


def test_a_versions_embeddings_metadata_states_facts_of_its_run(story: Story):
    """The whole table's index figures change with every later run: a version's
    materialization says them as text of that run's moment (and the run's log says them),
    never as numbers that read as the version's own (issue 56 item 7)."""
    [record] = story.instance.fetch_materializations(AssetKey("embeddings"), limit=1).records
    metadata = record.asset_materialization.metadata
    whole_table = {"index_rows", "vector_unindexed_rows", "fts_unindexed_rows", "ann_min_rows"}
    assert whole_table.isdisjoint(metadata)
    assert metadata["indexes"].value.startswith("at this run: ")
    assert metadata["search"].value.startswith("at this run: ")
    assert metadata["rows"].value == metadata["dagster/row_count"].value > 0
    [run] = story.instance.get_runs(RunsFilter(tags={"dagster/partition": OPS}))
    said = [e.user_message for e in story.instance.all_logs(run.run_id)]
    table = metadata["table"].value
    assert any(m.startswith(f"{table} at this run: ") for m in said)


def stale(instance: DagsterInstance, defs: Any, stage: str, key: str) -> str:
    """The stale status the UI shows for a stage's partition (what its GraphQL resolves)."""
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    resolver = CachingStaleStatusResolver(
        instance, defs.resolve_asset_graph(), LoadingContextForTest(instance)
    )
    return resolver.get_status(AssetKey(stage), key).value


def test_a_model_change_marks_chunks_and_embeddings_stale_together(story: Story):
    same = build_definitions(str(story.lake.root))
    assert {s: stale(story.instance, same, s, OPS) for s in PIPELINE} == dict.fromkeys(
        PIPELINE, "FRESH"
    )
    other = build_definitions(str(story.lake.root), model="multilingual-e5-small")
    status = {s: stale(story.instance, other, s, OPS) for s in PIPELINE}
    assert status == {
        "raw_pdf": "FRESH",
        "page_text": "FRESH",
        "structure_tree": "FRESH",
        "linearized_tables": "FRESH",
        "chunks": "STALE",
        "embeddings": "STALE",
    }


def test_a_second_run_of_a_version_waits_for_the_first(story: Story):
    """A run started by hand (the UI's Materialize) while another run holds the version
    does not write until that run ends."""
    defs = build_definitions(str(story.lake.root))
    job = defs.resolve_job_def("index_documents").get_subset(asset_selection={AssetKey("raw_pdf")})
    before = materializations(story.instance, "raw_pdf", OPS)
    run_id = make_new_run_id()

    def said_waiting() -> bool:
        logs = story.instance.all_logs(run_id)
        return any("waiting for the lock" in e.user_message for e in logs)

    with file_lock(story.lake.lock_path(f".locks/{OPS}.lock")):  # another run holds it
        worker = threading.Thread(
            target=lambda: job.execute_in_process(
                partition_key=OPS, instance=story.instance, run_config=QUIET, run_id=run_id
            )
        )
        worker.start()
        wait_for(said_waiting, "the run to say it waits")
        assert materializations(story.instance, "raw_pdf", OPS) == before
    worker.join(timeout=300)
    assert materializations(story.instance, "raw_pdf", OPS) == before + 1


def test_the_report_is_asked_again_for_an_index_change_after_its_start(story: Story):
    """The eval report counts index changes from the start of its last run: a change
    that lands while a report runs asks for another report once that one ended (run
    last in this module: it adds events to the story's instance)."""
    from dagster import AssetMaterialization

    from rag_assets.orchestration.concurrency import index_changed_since_report

    instance = story.instance
    defs = build_definitions(str(story.lake.root))
    report = defs.resolve_job_def("eval_report_job")
    # the default policy alone, on no question: a report written in seconds (a failed
    # run would be asked again once: test_eval_trigger.py)
    config = {"ops": {"eval_report": {"config": {"strategies": [], "draw": 0, "offsets": 1}}}}

    def a_report_starts() -> None:
        assert report.execute_in_process(instance=instance, run_config=config).success

    def asked() -> int:
        return evaluate_automation_conditions(defs, instance).get_num_requested(
            AssetKey("eval_report")
        )

    a_report_starts()
    assert not index_changed_since_report(instance) and asked() == 0
    # the index changes after the report's start (e.g. a version indexed during it)
    instance.report_runless_asset_event(AssetMaterialization("embeddings", partition=OPS))
    assert index_changed_since_report(instance) and asked() == 1
    a_report_starts()  # the next report counts it
    assert not index_changed_since_report(instance) and asked() == 0
