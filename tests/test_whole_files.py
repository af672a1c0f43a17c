"""A file is read when it is whole: the raw-folder sensor asks for a run only for a file
left the same across two looks, the cron schedule looks twice within its tick, and a
run's `trecho/sha256` tag names the hash `raw_pdf` actually read."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from dagster import DagsterInstance

from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS
from rag_assets.orchestration.plans import plan_lake, settled
from resources import LakeResource, LanceDBResource

from .conftest import copy_lake, sensor_tick

KEY = "aviso@v1"
BLOCKS = [
    ("Aviso de Manutenção", 18, True),
    ("1. Prazo", 14, True),
    ("A manutenção preventiva das bombas ocorre a cada 90 dias de operação.", 11, False),
]


def raw_pdf_sha(instance: DagsterInstance) -> str:
    """The sha256 the latest `raw_pdf` materialization of `KEY` recorded."""
    from dagster import AssetKey

    event = instance.get_latest_materialization_event(AssetKey("raw_pdf"))
    assert event is not None and event.asset_materialization is not None
    assert event.asset_materialization.partition == KEY
    return str(event.asset_materialization.metadata["sha256"].value)


def test_a_file_growing_across_ticks_gives_one_run_with_the_whole_files_hash(
    tmp_path: Path, make_pdf, run_requested
):
    lake = copy_lake(tmp_path / "lake", [], [])
    whole = make_pdf(tmp_path / "whole.pdf", BLOCKS).read_bytes()
    target = lake.raw_dir / "aviso" / "v1.pdf"
    target.parent.mkdir(parents=True)
    target.write_bytes(whole[: len(whole) // 2])  # a copy under way
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))

    first = sensor_tick(defs, instance, looks=1)
    assert not first.run_requests and KEY in json.loads(first.cursor)["looked"]
    assert KEY in instance.get_dynamic_partitions(DOC_VERSIONS)  # registered, not run

    with target.open("ab") as fh:  # the copy goes on between two ticks
        fh.write(whole[len(whole) // 2 :])
    second = sensor_tick(defs, instance, first.cursor, looks=1)
    assert not second.run_requests  # changed since the last look: not yet

    third = sensor_tick(defs, instance, second.cursor, looks=1)  # the same at two looks
    assert [r.partition_key for r in third.run_requests] == [KEY]
    sha = hashlib.sha256(whole).hexdigest()
    assert third.run_requests[0].tags["trecho/sha256"] == sha
    runs = run_requested(defs, instance, third)
    assert runs[KEY].success
    assert raw_pdf_sha(instance) == sha
    assert instance.get_run_by_id(runs[KEY].run_id).tags["trecho/sha256"] == sha

    fourth = sensor_tick(defs, instance, third.cursor, looks=3)
    assert not fourth.run_requests  # one run for the version, however many ticks follow


def test_a_run_tags_the_hash_it_read(tmp_path: Path, make_pdf, run_requested):
    """The file replaced between the request and the run: the run's tag is corrected to
    the file `raw_pdf` read."""
    lake = copy_lake(tmp_path / "lake", [], [])
    target = make_pdf(lake.raw_dir / "aviso" / "v1.pdf", BLOCKS)
    instance = DagsterInstance.ephemeral()
    defs = build_definitions(str(lake.root))
    tick = sensor_tick(defs, instance)  # a look, then a second: the run asked for
    (request,) = tick.run_requests
    asked = request.tags["trecho/sha256"]
    make_pdf(target, [*BLOCKS, ("Revisado: a cada 60 dias.", 11, False)])
    read = hashlib.sha256(target.read_bytes()).hexdigest()
    assert read != asked
    runs = run_requested(defs, instance, tick)
    assert runs[KEY].success and raw_pdf_sha(instance) == read
    assert instance.get_run_by_id(runs[KEY].run_id).tags["trecho/sha256"] == read


def test_the_schedule_holds_a_file_that_changed_while_it_looked(tmp_path: Path, make_pdf):
    lake = copy_lake(tmp_path / "lake", [], [])
    target = make_pdf(lake.raw_dir / "aviso" / "v1.pdf", BLOCKS)
    stores = LakeResource(root=str(lake.root)), LanceDBResource()
    embedder = build_definitions(str(lake.root)).resources["embedder"].embedder()
    instance = DagsterInstance.ephemeral()

    plan = plan_lake(instance, *stores, embedder)
    assert settled(plan, 0) == {} and set(plan.run) == {KEY}  # left alone: asked for

    plan = plan_lake(instance, *stores, embedder)
    with target.open("ab") as fh:  # written to after the listing
        fh.write(b"\n% more bytes\n")
    held = settled(plan, 0)
    assert set(held) == {KEY} and not plan.run
