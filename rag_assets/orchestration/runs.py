"""Runs on the Dagster instance that nobody will finish: marked failed, with why.

A run killed mid-way (SIGKILL, a closed laptop, an OOM kill) never writes its end, so
Dagster lists it as STARTED forever. `trecho` tags the runs it starts with its host and
process id; at its next start, a run so tagged whose process is gone is marked failed.
Runs started elsewhere (the daemon, another host) are left to Dagster's own run
monitoring.
"""

from __future__ import annotations

import os
import socket

from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

HOST_TAG = "trecho/host"
PID_TAG = "trecho/pid"
UNFINISHED = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED, DagsterRunStatus.NOT_STARTED]


def process_tags() -> dict[str, str]:
    """Tags naming this process, for the runs it starts."""
    return {HOST_TAG: socket.gethostname(), PID_TAG: str(os.getpid())}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def fail_interrupted_runs(instance: DagsterInstance) -> list[str]:
    """Mark failed every unfinished run started on this host by a process that no longer
    exists; returns the run ids marked."""
    host = socket.gethostname()
    marked: list[str] = []
    for run in instance.get_runs(RunsFilter(statuses=UNFINISHED, tags={HOST_TAG: host})):
        pid = run.tags.get(PID_TAG, "")
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        instance.report_run_failed(
            run, f"interrupted: the process that ran it (pid {pid} on {host}) is gone"
        )
        marked.append(run.run_id)
    return marked
