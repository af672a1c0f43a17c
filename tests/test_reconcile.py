"""One change rule for the sensor, the cron schedule and `trecho materialize`: a
sidecar-only edit re-runs its version under all three and its new title and dates reach
the index; an unchanged lake plans nothing under any of them.

A real Dagster instance (the lake's own, as `trecho materialize` leaves it), a real
LanceDB folder and the real model; the lake is indexed once for the module and copied
for each test.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from dagster import (
    DagsterInstance,
    SkipReason,
    build_schedule_context,
)
from dagster._core.instance.ref import InstanceRef

from rag_assets.cli import main
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.index import Index
from rag_assets.core.lake.layout import Lake
from rag_assets.core.request import SearchRequest
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.plans import plan_lake
from rag_assets.settings import Settings
from resources import LakeResource, LanceDBResource

from .conftest import copy_lake, sensor_tick

# slow: a lake indexed by trecho materialize, then Dagster runs
pytestmark = pytest.mark.slow

OPS = "manual-operacao@v1"
QUESTION = "qual o limite de vibração da bomba?"
TITLE = "Manual da Bomba BC-200, revisão de campo"
VALID_FROM, VALID_TO = dt.date(2026, 2, 1), dt.date(2099, 12, 31)

Trigger = Callable[[Lake, DagsterInstance], dict[str, str]]
"""Runs what a trigger asks for on a lake; returns the keys it ran, with why."""


def materialize(lake: Lake) -> str:
    """`trecho materialize --skip-eval` on the lake (its own Dagster instance); stdout."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def indexed_lake(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    """The operations manual indexed once by `trecho materialize`, with the Dagster
    instance it used inside the lake (`<lake>/.dagster`)."""
    root = tmp_path_factory.mktemp("reconcile") / "lake"
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DAGSTER_HOME", raising=False)
        out = materialize(copy_lake(root, ["manual-operacao"], []))
    assert f"[1/1] {OPS} ... ok" in out
    return root


@pytest.fixture
def lake(indexed_lake: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Lake:
    """A copy of the indexed lake, its instance included, for one test."""
    root = tmp_path / "lake"
    shutil.copytree(indexed_lake, root, symlinks=True)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    return Lake(root)


@pytest.fixture
def instance(lake: Lake) -> Iterator[DagsterInstance]:
    """The lake's persistent Dagster instance (what `trecho materialize` wrote to)."""
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(lake.dagster_home))) as opened:
        yield opened


def by_sensor(lake: Lake, instance: DagsterInstance) -> dict[str, str]:
    """One tick of `raw_folder_sensor`, its partition changes applied, its runs run."""
    defs = build_definitions(str(lake.root))
    result = sensor_tick(defs, instance)  # a first look, and a second at what it held
    assert not result.dynamic_partitions_requests  # the version stays registered
    return run_all(defs, instance, result.run_requests or [])


def by_schedule(lake: Lake, instance: DagsterInstance) -> dict[str, str]:
    """One tick of the `scan_and_index` schedule, its runs run."""
    defs = build_definitions(str(lake.root))
    schedule = defs.resolve_schedule_def("scan_and_index")
    with build_schedule_context(instance=instance, resources=defs.resources) as context:
        result = schedule(context)
    return {} if isinstance(result, SkipReason) else run_all(defs, instance, result)


def by_cli(lake: Lake, instance: DagsterInstance) -> dict[str, str]:
    """`trecho materialize`: the versions it ran (its lines say ok; the plan says why)."""
    stores = LakeResource(root=str(lake.root)), LanceDBResource()
    embedder = Settings.from_env().embedder()
    why = {k: r.reason for k, r in plan_lake(instance, *stores, embedder).run.items()}
    out = materialize(lake)
    ran = re.findall(r"^\[\d+/\d+\] (\S+) \.\.\. ok", out, flags=re.MULTILINE)
    assert set(ran) == set(why), out
    if not ran:
        assert f"skipped  {OPS}: up to date" in out
    return why


def run_all(defs, instance: DagsterInstance, requests) -> dict[str, str]:
    """Run each request as the daemon would; every run must succeed."""
    job = defs.resolve_job_def("index_documents")
    for request in requests:
        result = job.execute_in_process(
            partition_key=request.partition_key,
            instance=instance,
            asset_selection=request.asset_selection,
            tags=request.tags,
        )
        assert result.success
    return {r.partition_key: r.tags["trecho/reason"] for r in requests}


TRIGGERS = {"sensor": by_sensor, "schedule": by_schedule, "cli": by_cli}


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_an_unchanged_lake_plans_nothing(
    trigger: str, lake: Lake, instance: DagsterInstance
) -> None:
    assert TRIGGERS[trigger](lake, instance) == {}


@pytest.mark.parametrize("trigger", TRIGGERS)
def test_a_sidecar_only_edit_reruns_the_version_and_reaches_the_index(
    trigger: str, lake: Lake, instance: DagsterInstance, embedder: Embedder
) -> None:
    index = Index(lake.lancedb_dir, embedder)
    [before] = index.search(SearchRequest(query=QUESTION, k=1, documents=["manual-operacao"]))
    assert before.title != TITLE
    assert index.search(
        SearchRequest(query=QUESTION, k=1, as_of=dt.date(2026, 1, 15))
    )  # valid since January

    _, path = lake.raw_paths(OPS)
    sidecar = yaml.safe_load(path.read_text(encoding="utf-8"))
    sidecar.update(title=TITLE, valid_from=VALID_FROM, valid_to=VALID_TO)
    path.write_text(yaml.safe_dump(sidecar, allow_unicode=True), encoding="utf-8")

    assert TRIGGERS[trigger](lake, instance) == {OPS: "sidecar changed"}
    [after] = index.search(SearchRequest(query=QUESTION, k=1))
    assert after.title == TITLE  # what `trecho search` prints first on each hit
    assert f"v1 ({VALID_FROM})" in after.header  # the chunk header dates the version
    assert (after.valid_from, after.valid_to) == (VALID_FROM, VALID_TO)
    assert (
        index.search(SearchRequest(query=QUESTION, k=1, as_of=dt.date(2026, 1, 15))) == []
    )  # not yet valid
    assert index.search(SearchRequest(query=QUESTION, k=1, as_of=dt.date(2026, 2, 1)))
    # and once run, the edit is no longer a change under any of the three
    for name, again in TRIGGERS.items():
        assert again(lake, instance) == {}, name
