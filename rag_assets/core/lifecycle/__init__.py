"""The version lifecycle above the index: which versions are live, and why the others
are not (`versions`); the change rule (`reconcile`); removing a version from every store
(`purge`); what the last runs did (`outcomes`). The rules themselves (in force on a date,
live, searchable, superseded) are pure functions below the index: `core.rules`."""

from __future__ import annotations

from rag_assets.core.lifecycle.outcomes import (
    failure_of,
    forget_outcome,
    note_failed,
    note_indexed,
    read_outcomes,
)
from rag_assets.core.lifecycle.purge import (
    Removal,
    delete_unused_cached,
    purge_version,
    purge_versions,
)
from rag_assets.core.lifecycle.reconcile import CodeVersions, Plan, Run, reconcile, removal_plan
from rag_assets.core.lifecycle.versions import (
    not_live_reason,
    replaced_once_committed,
    scan_versions,
)

__all__ = [
    "CodeVersions",
    "Plan",
    "Removal",
    "Run",
    "delete_unused_cached",
    "failure_of",
    "forget_outcome",
    "not_live_reason",
    "note_failed",
    "note_indexed",
    "purge_version",
    "purge_versions",
    "read_outcomes",
    "reconcile",
    "removal_plan",
    "replaced_once_committed",
    "scan_versions",
]
