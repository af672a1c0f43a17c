"""The conventions Dagster users expect (issue 56, item 8), read from the definitions
the code location loads and from a real run's materializations: owners, kinds and tags
on every asset; a code version and a freshness policy on the eval report; an
`io_manager` that stores nothing and asks for no config in the Launchpad; Dagster's
standard metadata (`dagster/row_count`, `dagster/table_name`, `dagster/uri`) on what a
version's run materializes."""

from __future__ import annotations

import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.core.embedding import Embedder
from rag_assets.core.index import table_name
from rag_assets.core.stages import PIPELINE
from rag_assets.definitions import build_definitions

ASSETS = [*PIPELINE, "eval_report"]


def test_every_asset_has_owners_kinds_and_tags_and_the_report_a_code_version(tmp_path):
    graph = build_definitions(str(tmp_path / "lake")).resolve_asset_graph()
    for name in ASSETS:
        node = graph.get(AssetKey(name))
        assert node.owners, name
        assert node.kinds and len(node.kinds) <= 3, name
        assert node.tags.get("trecho/role"), name
        assert node.code_version, name
    report = graph.get(AssetKey("eval_report"))
    assert report.freshness_policy is not None
    assert "lancedb" in graph.get(AssetKey("embeddings")).kinds


def test_no_launchpad_asks_for_an_io_managers_config(tmp_path):
    defs = build_definitions(str(tmp_path / "lake"))
    for job in defs.resolve_all_job_defs():
        fields = job.run_config_schema.config_type.fields["resources"].config_type.fields
        io_manager = fields["io_manager"].config_type.fields.get("config")
        assert io_manager is None or not io_manager.config_type.fields, job.name


@pytest.mark.slow
def test_a_run_leaves_standard_metadata_and_no_pickles(
    small_lake, evaluate_sensor, run_requested, embedder: Embedder, tmp_path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    instance = DagsterInstance.local_temp(str(home))
    defs = build_definitions(str(small_lake.root))
    runs = run_requested(defs, instance, evaluate_sensor(defs, instance, small_lake))
    assert runs and all(r.success for r in runs.values())
    key = sorted(runs)[0]
    for stage in PIPELINE:
        event = instance.get_latest_materialization_event(AssetKey(stage)).asset_materialization
        meta = event.metadata
        assert meta["dagster/row_count"].value > 0, stage
        assert "dagster/uri" in meta, stage
    embeddings = instance.get_latest_materialization_event(AssetKey("embeddings"))
    meta = embeddings.asset_materialization.metadata
    assert meta["dagster/table_name"].value == table_name(embedder.model_id)
    assert meta["dagster/row_count"].value == meta["rows"].value
    storage = home / "storage"
    pickles = [p for p in storage.rglob("*") if p.is_file()] if storage.exists() else []
    assert not [p for p in pickles if "compute_logs" not in str(p) and p.suffix != ".log"], (
        key,
        pickles[:5],
    )
