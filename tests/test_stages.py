"""The stage list is defined once, in rag_assets/core/stages.py: the code location's
partitioned assets, their order and dependencies, the jobs and the declarative automation
are that list, and each stage writes its Parquet file to the folder stages.py names."""

from __future__ import annotations

from pathlib import Path

from dagster import AssetKey, DagsterInstance

from rag_assets.assets import PARTITIONED
from rag_assets.core.stages import (
    EMBED_STAGES,
    EMBEDDINGS,
    FOLDERS,
    FOLLOWERS,
    LAKE_FOLDERS,
    PIPELINE,
    RAW_PDF,
    READS,
)
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import copy_lake

KEY = "manual-operacao@v1"


def test_the_partitioned_assets_are_the_pipeline_each_after_the_one_before():
    assert [a.key.to_user_string() for a in PARTITIONED] == list(PIPELINE)
    graph = build_definitions().resolve_asset_graph()
    partitioned = {k for k in graph.get_all_asset_keys() if graph.get(k).partitions_def}
    assert partitioned == {AssetKey(stage) for stage in PIPELINE}
    assert not graph.get(AssetKey(RAW_PDF)).parent_keys
    for before, stage in zip(PIPELINE, PIPELINE[1:], strict=False):
        # each reads the one before, and the others it opens (issue 58: `READS`)
        parents = graph.get(AssetKey(stage)).parent_keys
        assert AssetKey(before) in parents, stage
        assert parents == {AssetKey(s) for s in READS[stage]}, stage


def test_the_jobs_run_the_pipeline_and_the_model_dependent_stages():
    defs = build_definitions()

    def assets(job: str) -> set[str]:
        layer = defs.resolve_job_def(job).asset_layer
        return {k.to_user_string() for k in layer.executable_asset_keys}

    assert assets("index_documents") == set(PIPELINE)
    assert assets("embed_documents") == set(EMBED_STAGES)


def test_every_stage_after_raw_pdf_follows_its_upstream():
    defs = build_definitions()
    graph = defs.resolve_asset_graph()
    sensor = defs.resolve_sensor_def("stages_follow_upstream")
    targeted = sensor.asset_selection.resolve(graph)
    # and the eval report, once the index changed (not left "Unsynced" until its cron)
    assert targeted == {AssetKey(stage) for stage in (*FOLLOWERS, "eval_report")}
    for stage in PIPELINE:
        automated = graph.get(AssetKey(stage)).automation_condition is not None
        assert automated == (stage in FOLLOWERS), stage


def test_each_stage_writes_its_own_folder(tmp_path: Path, embedder):
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, [KEY])
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    result = job.execute_in_process(partition_key=KEY, instance=instance)
    assert result.success
    for stage in PIPELINE:
        (materialization,) = result.asset_materializations_for_node(stage)
        written = materialization.metadata.get("parquet")
        if stage == EMBEDDINGS:  # the model's LanceDB table, no Parquet folder
            assert stage not in FOLDERS and written is None
            continue
        path = lake.stage_path(FOLDERS[stage], KEY)
        assert written is not None and written.value == str(path), stage
        assert path.exists(), stage
    derived = {p.name for p in (lake.root / "derived").iterdir()}
    assert derived == set(LAKE_FOLDERS)
