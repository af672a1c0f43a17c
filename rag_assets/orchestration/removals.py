"""One remover at a time across hosts: the reconcile plan's removals carried out under the
lake's purge lease (`core.lake.lease`), which every host honours (the sensor's code
server, the schedules, `trecho materialize` on any machine)."""

from __future__ import annotations

import socket
from collections.abc import Callable, Mapping

from dagster import DagsterInstance

from rag_assets.core.lake import PURGE, held_lease, this_process
from rag_assets.core.lifecycle import Plan
from rag_assets.orchestration.plans import purge_removals
from resources import LakeResource, LanceDBResource


def carry_out_removals(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    plan: Plan,
    say: Callable[[str], None],
    earlier: Mapping[str, Mapping[str, int]] | None = None,
    waiting: Callable[[str], None] | None = None,
) -> list[str]:
    """`purge_removals` under the lake's purge lease: while another process, on this host
    or another, holds it, nothing is removed here (one line through `waiting`, else
    `say`, says who holds it, until when) and the next plan finds the removals again.
    Returns the removed keys that are registered partitions."""
    if not plan.remove and not plan.unused_cache:
        return purge_removals(instance, lake, lancedb, plan, say, earlier)
    holder = this_process(f"removals on {socket.gethostname()}")
    with held_lease(lake.lake.leases_dir, PURGE, holder) as other:
        if other is not None:
            what = ", ".join(plan.remove) or "unused cached vectors"
            (waiting or say)(
                f"{what}: not removed yet, {other} holds the lake's purge lease (the next "
                "plan removes it)"
            )
            return []
        return purge_removals(instance, lake, lancedb, plan, say, earlier)
