"""One source of truth for the model (issue 56, item 2): the lake's record of its model
(`core.index.lake_model`: the model it switches to, else the one search uses). A switch
from the UI is the `switch_model` job (a model chosen in the Launchpad's config); the code
location, reloaded, builds its assets for the lake's model, its sensor refuses to plan
for a model the lake left, and `trecho status` names the lake's model and the pending
backfill whatever TRECHO_MODEL says in the shell.

A real Dagster instance, the sensor's requests run as its daemon runs them
(`test_run_keys.Sensor`), real PDFs, the bundled MiniLM and a twin of it (another model
id, the same weights).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from rag_assets.cli import main
from rag_assets.core.embedding import Embedder
from rag_assets.core.index import committed_keys, read_active, table_name
from rag_assets.definitions import build_definitions

from .test_run_keys import OPS, QUIET, V7, drop_new_pdf, ops_indexed

pytestmark = pytest.mark.slow  # indexes versions through Dagster runs, for two models

MINILM = "all-MiniLM-L6-v2"


def status_of(lake_root: Path, capsys) -> str:
    """`trecho status` as printed."""
    capsys.readouterr()
    assert main(["status", "--lake", str(lake_root)]) == 0
    return capsys.readouterr().out


def switch_from_the_launchpad(defs, instance: DagsterInstance, config: dict) -> str:
    """The `switch_model` job launched with the Launchpad's config; what it said."""
    result = defs.resolve_job_def("switch_model").execute_in_process(
        instance=instance,
        run_config={**QUIET, "ops": {"switch_lake_model": {"config": config}}},
    )
    assert result.success
    return result.output_for_node("switch_lake_model")


def test_a_switch_from_the_ui_is_followed_by_the_code_location_the_sensor_and_status(
    evaluate_sensor, tmp_path: Path, embedder: Embedder, twin: str, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("TRECHO_MODEL", MINILM)  # the shell's model: not the lake's, later
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake, instance = sensor.lake, sensor.instance
    twin_id = Embedder(model=twin).model_id
    assert f"lake's model: {embedder.model_id} (no backfill pending)" in status_of(
        lake.root, capsys
    )

    said = switch_from_the_launchpad(defs, instance, {"path": twin})
    assert f"search stays on {table_name(embedder.model_id)} until all are in" in said
    shown = status_of(lake.root, capsys)
    assert f"search uses: {table_name(embedder.model_id)}" in shown
    assert f"lake's model: {twin_id} -> backfill 1 versions missing (0 done)" in shown
    assert f"TRECHO_MODEL={MINILM} in this shell is not the lake's model" in shown

    # the code location not reloaded yet: its sensor says so and asks for nothing
    skipped = evaluate_sensor(defs, instance, lake, sensor.cursor)
    assert not skipped.run_requests and "reload it" in skipped.skip_reason.skip_message

    reloaded = build_definitions(str(lake.root))  # Deployment -> Reload
    graph = reloaded.resolve_asset_graph()
    assert twin_id in graph.get(AssetKey("chunks")).code_version
    assert twin_id in graph.get(AssetKey("embeddings")).code_version
    assert table_name(twin_id) in graph.get(AssetKey("embeddings")).description
    assert table_name(embedder.model_id) not in graph.get(AssetKey("embeddings")).description
    runs = sensor.tick_and_run(reloaded)
    assert runs[OPS] is not None and runs[OPS].success
    said = runs[OPS].asset_materializations_for_node("embeddings")[0].metadata["search"].value
    assert said.startswith("at this run: ")  # a fact of that moment, not of the index now
    assert read_active(lake.lancedb_dir).model_id == twin_id  # search switched
    assert f"lake's model: {twin_id} (no backfill pending)" in status_of(lake.root, capsys)

    drop_new_pdf(lake)  # and a new PDF goes into the lake's model's table
    assert sensor.tick_and_run(reloaded)[V7].success
    assert committed_keys(lake.lancedb_dir) == {OPS, V7}


def test_switching_back_before_the_fill_cancels_it(
    evaluate_sensor, tmp_path: Path, embedder: Embedder, twin: str, capsys
) -> None:
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake, instance = sensor.lake, sensor.instance
    switch_from_the_launchpad(defs, instance, {"path": twin})
    said = switch_from_the_launchpad(defs, instance, {"model": "all_MiniLM_L6_v2"})
    assert "the switch to" in said and "is cancelled" in said
    assert f"lake's model: {embedder.model_id} (no backfill pending)" in status_of(
        lake.root, capsys
    )
    assert sensor.tick_and_run(build_definitions(str(lake.root))) == {}  # nothing to redo


def test_a_model_that_does_not_load_fails_the_switch_and_changes_nothing(
    evaluate_sensor, tmp_path: Path, embedder: Embedder, capsys
) -> None:
    """A path in the Launchpad that holds no model: the run fails saying so, the lake's
    model stays, and the sensor goes on as before."""
    sensor, defs = ops_indexed(evaluate_sensor, tmp_path)
    lake, instance = sensor.lake, sensor.instance
    result = defs.resolve_job_def("switch_model").execute_in_process(
        instance=instance,
        run_config={
            **QUIET,
            "ops": {"switch_lake_model": {"config": {"path": str(tmp_path / "nothing")}}},
        },
        raise_on_error=False,
    )
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.user_failure_data
    assert failure.description.startswith(str(tmp_path / "nothing"))
    assert f"lake's model: {embedder.model_id} (no backfill pending)" in status_of(
        lake.root, capsys
    )
    assert sensor.tick_and_run(defs) == {}
