"""The raw-folder sensor logs a line once, not at every tick (issue 56, item 7): a tick
that has nothing new to say logs nothing, so Dagster keeps no log file for it (a lake
with a file that is no version left one file a tick: about 9,000 a day at 5 s ticks).
A real persistent instance; each tick captures its logs as the daemon's do."""

from __future__ import annotations

import logging
from pathlib import Path

from dagster import DagsterInstance, build_sensor_context

from rag_assets.definitions import build_definitions

from .conftest import copy_lake


class Lines(logging.Handler):
    """The lines a tick's logger was given (what the daemon writes to the tick's file)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def tick(defs, instance: DagsterInstance, cursor: str | None) -> tuple[list[str], str | None]:
    """One tick: the lines it logged, and its cursor."""
    sensor = defs.resolve_sensor_def("raw_folder_sensor")
    with build_sensor_context(
        instance=instance,
        definitions=defs,
        resources=defs.resources,
        cursor=cursor,
        repository_name="__repository__",
        sensor_name="raw_folder_sensor",
    ) as context:
        seen = Lines()
        context.log.addHandler(seen)
        result = sensor(context)
        return seen.lines, getattr(result, "cursor", None) or context.cursor


def test_a_problem_is_logged_once_not_at_every_tick(tmp_path: Path) -> None:
    lake = copy_lake(tmp_path / "lake", [], [])
    lake.raw_dir.mkdir(parents=True)
    (lake.raw_dir / "loose.pdf").write_bytes(b"%PDF-1.4 not in a document folder")
    home = tmp_path / "home"
    home.mkdir()
    instance = DagsterInstance.local_temp(str(home))
    defs = build_definitions(str(lake.root))
    logged, cursor = tick(defs, instance, None)
    assert any("loose.pdf: not in a document folder" in line for line in logged), logged
    for _ in range(3):
        logged, cursor = tick(defs, instance, cursor)
        assert logged == []  # the same problem: nothing new to say, no log file
    (lake.raw_dir / "other.pdf").write_bytes(b"%PDF-1.4 another")
    logged, cursor = tick(defs, instance, cursor)
    assert len(logged) == 1 and "other.pdf" in logged[0]  # only the new problem
