"""The code location as `dagster dev` loads it: it validates, and the lineage runs from
raw_pdf to eval_report with every stage partitioned by document version but the report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from dagster import AssetKey

from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import REPO

CHAIN = [
    "raw_pdf",
    "page_text",
    "structure_tree",
    "linearized_tables",
    "chunks",
    "embeddings",
    "eval_report",
]


def test_workspace_validates_with_the_dagster_cli(tmp_path: Path):
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path), "DAGSTER_DISABLE_TELEMETRY": "1"}
    dagster = Path(sys.executable).with_name("dagster")
    done = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation successful for code location trecho" in done.stdout + done.stderr


def test_lineage_and_partitions():
    graph = build_definitions().resolve_asset_graph()
    for upstream, downstream in zip(CHAIN, CHAIN[1:], strict=False):
        parents = graph.get(AssetKey(downstream)).parent_keys
        assert AssetKey(upstream) in parents, (upstream, downstream)
    for name in CHAIN[:-1]:
        partitions = graph.get(AssetKey(name)).partitions_def
        assert partitions is not None and partitions.name == DOC_VERSIONS
    assert graph.get(AssetKey("eval_report")).partitions_def is None


def readme_edges() -> set[tuple[str, str]]:
    """The edges of the README's asset graph (its mermaid flowchart)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## The asset graph\n+```mermaid\nflowchart LR\n(.*?)```", text, re.S)
    assert block, "README.md: no mermaid flowchart under '## The asset graph'"
    edges = set()
    for line in block.group(1).splitlines():
        names = [n.strip() for n in line.split("-->")]
        edges |= set(zip(names, names[1:], strict=False))
    return edges


def test_the_readme_draws_the_asset_graph_of_the_definitions():
    graph = build_definitions().resolve_asset_graph()
    drawn = {
        (parent.to_user_string(), key.to_user_string())
        for key in graph.get_all_asset_keys()
        for parent in graph.get(key).parent_keys
    }
    assert readme_edges() == drawn


def test_lineage_opens_on_one_group():
    graph = build_definitions().resolve_asset_graph()
    assert {graph.get(key).group_name for key in graph.get_all_asset_keys()} == {"trecho"}


def test_the_automation_switch_follows_the_automation_sensor(tmp_path: Path):
    """On a real instance the job pages' "Auto-materialize" switch (read by Dagster's own
    reader) turns on with the automation sensor running and off once it is stopped."""
    from dagster import DagsterInstance
    from dagster._core.remote_origin import (
        InProcessCodeLocationOrigin,
        RemoteInstigatorOrigin,
        RemoteRepositoryOrigin,
    )
    from dagster._core.scheduler.instigation import (  # the state only Dagster's UI sets
        InstigatorState,
        InstigatorStatus,
        InstigatorType,
    )
    from dagster._core.types.loadable_target_origin import LoadableTargetOrigin
    from dagster._daemon.asset_daemon import get_auto_materialize_paused

    from rag_assets.orchestration.concurrency import AUTOMATION_SENSOR, mirror_automation_switch

    with DagsterInstance.local_temp(tempdir=str(tmp_path)) as instance:
        assert get_auto_materialize_paused(instance)  # Dagster's default: "off"
        assert mirror_automation_switch(instance) is True
        assert not get_auto_materialize_paused(instance)
        location = InProcessCodeLocationOrigin(LoadableTargetOrigin(python_file=__file__))
        origin = RemoteInstigatorOrigin(
            RemoteRepositoryOrigin(location, "__repository__"), AUTOMATION_SENSOR
        )
        instance.add_instigator_state(
            InstigatorState(origin, InstigatorType.SENSOR, InstigatorStatus.STOPPED)
        )
        assert mirror_automation_switch(instance) is False
        assert get_auto_materialize_paused(instance)
