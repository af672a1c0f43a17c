"""The one reconcile step: the raw folder against what the lake and the index hold, as a
plan of partitions to add, versions to remove (with why) and versions to run (with why).

The sensor, the cron schedule and `trecho materialize` all act on this plan, so they
agree on one change rule. A live version runs when, compared with what the lake holds for
it, its file's bytes (sha256), its sidecar (title, dates, status, type, metadata), the
code version any stage last ran with, or the configured model's table (exactly its
chunks) differ; or when it was removed before and is live again (`restored`).

Orchestration facts (registered partitions, the code version each stage last ran with)
come in as plain values: this module knows nothing of Dagster.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rag_assets.core.embedding import Embedder
from rag_assets.core.index import (
    Index,
    chunks_folder_for,
    committed_keys,
    read_active,
    table_name,
    unused_entries,
)
from rag_assets.core.lake import (
    Derived,
    Lake,
    LakeError,
    Sidecar,
    sha256_file,
    split_key,
    version_sha256,
)
from rag_assets.core.lifecycle.versions import RawScan, scan_versions
from rag_assets.core.rules import superseded_by_indexed
from rag_assets.core.stages import (
    CHUNKS,
    EMBED_STAGES,
    FOLDERS,
    LINEARIZED_TABLES,
    PIPELINE,
    RAW_PDF,
)


@dataclass(frozen=True)
class CodeVersions:
    """The code version of each stage now, and the one each version's last
    materialization of that stage ran with."""

    current: Mapping[str, str]
    """Stage name -> its code version now."""
    ran_with: Mapping[str, Mapping[str, str]]
    """Stage name -> partition key -> the code version its last materialization had
    (absent: never materialized)."""
    indexed: Mapping[str, int] = field(default_factory=dict)
    """Partition key -> the id of the orchestrator's latest record of its `embeddings`
    stage (its last indexing, or removal; absent: none). Every run that indexed the
    version moves it, so a run key that carries it never names a past run that did other
    work (`Run.run_key`)."""

    def changed(self, key: str) -> tuple[str, str] | None:
        """The first stage whose code differs from what `key` last ran with, and why."""
        for stage in PIPELINE:
            if stage not in self.current:
                continue
            seen = self.ran_with.get(stage, {}).get(key)
            if seen is None:
                return stage, f"{stage} never materialized"
            if seen != self.current[stage]:
                return stage, f"{stage} code changed"
        return None


@dataclass(frozen=True)
class Run:
    """One version to run, and why."""

    key: str
    reason: str
    """new, file changed, sidecar changed, restored, `<stage> code changed`, ..."""
    sha256: str
    """The sha256 of the version's PDF now."""
    fingerprint: str
    """A digest of everything the change rule read: file, sidecar, code versions, model.
    The same fingerprint means the same inputs: a run asked for once is not asked again."""
    restored_after: str | None = None
    """When a version live again was removed (each undo runs, even with the same bytes)."""
    embed_only: bool = False
    """Only the model-dependent stages need to run (extraction is current)."""
    indexed: int | None = None
    """The orchestrator's latest record of the version's index when planned
    (`CodeVersions.indexed`)."""

    @property
    def inputs_key(self) -> str:
        """What the run reads: the key, the file's sha256, the fingerprint, and the
        removal date of a restored version (the same again when a model used before
        comes back: `run_key` tells those runs apart)."""
        out = f"{self.key}:{self.sha256}:{self.fingerprint[:16]}"
        return out + (f":after-{self.restored_after}" if self.restored_after else "")

    @property
    def run_key(self) -> str:
        """The run key: `inputs_key` and the index record the run starts from. Runs that
        indexed the version since a past run with the same inputs (another model's,
        there and back) moved that record, so this key is new and Dagster runs it; a
        past run that indexed nothing (failed before) left it: the same request is the
        same work, not run twice (nor is one whose own record it is:
        `orchestration.plans.keep_own_records`)."""
        return f"{self.inputs_key}:i{self.indexed if self.indexed is not None else 0}"


@dataclass
class Plan:
    """What to do so that the index matches the raw folder."""

    scan: RawScan
    registered: set[str] = field(default_factory=set)
    """The partition keys the orchestrator knew when the plan was made."""
    add: list[str] = field(default_factory=list)
    """Live keys not registered yet (new partitions)."""
    remove: dict[str, str] = field(default_factory=dict)
    """Keys to purge from every store, with why: registered but not live, or not live
    with something left (derived files, index rows)."""
    run: dict[str, Run] = field(default_factory=dict)
    up_to_date: list[str] = field(default_factory=list)
    """Live keys the lake and index already hold as they are now."""
    hashes: dict[str, str] = field(default_factory=dict)
    """The sha256 of each live version's PDF (hashed again only when the file changed:
    `core.lake.listing.version_sha256`)."""
    index_rows: dict[str, int] = field(default_factory=dict)
    """Rows per key in the configured model's table."""
    unused_cache: int = 0
    """Vectors in the configured model's embedding cache whose text no row of its table
    uses (a removed version's, left by a run before entries came with their rows):
    deleted with the removals, or on their own when there are none."""

    history: bool = False
    """Whether superseded versions stay (`keep_history`): then no run replaces another."""

    def run_order(self) -> list[str]:
        """The keys to run, each document's versions newest first (by `valid_from`):
        once the newest in force is indexed, the older ones it supersedes need not run
        (`replaced_by`), as a cold index of years of versions would otherwise index
        every version only to remove it again."""

        def newest_first(key: str) -> tuple[str, int, str]:
            sidecar = self.scan.sidecars.get(key)
            start = getattr(sidecar, "valid_from", None) or dt.date.min
            return split_key(key)[0], -start.toordinal(), key

        return sorted(self.run, key=newest_first)

    def replaced_by(
        self, key: str, indexed: Collection[str], today: dt.date | None = None
    ) -> str | None:
        """The version among `indexed` (just indexed by this plan's runs) that supersedes
        `key`, by the rule the scan applies (`rules.superseded_by_indexed`); None when
        none does, or with `history`."""
        if self.history:
            return None
        starts = self._starts_by_doc.get(split_key(key)[0], {})
        if key not in starts:
            return None
        replaced = superseded_by_indexed(starts, set(indexed), today or dt.date.today())
        return replaced.get(key)

    @cached_property
    def _starts_by_doc(self) -> dict[str, dict[str, dt.date | None]]:
        """Each document's versions with a sidecar that parses, and their `valid_from`."""
        out: dict[str, dict[str, dt.date | None]] = {}
        for k, sidecar in self.scan.sidecars.items():
            if isinstance(sidecar, Sidecar):
                out.setdefault(split_key(k)[0], {})[k] = sidecar.valid_from
        return out

    @property
    def nothing_left(self) -> dict[str, str]:
        """Not-live keys with nothing left to remove, with why."""
        return {
            k: self.scan.reasons.get(k, "not live") for k in self.scan.dead if k not in self.remove
        }


def has_derived_files(lake: Lake, key: str) -> bool:
    """Whether any stage's Parquet file of `key` exists."""
    return Derived(lake).any_file(key)


def lake_reason(
    sha: str, sidecar: Sidecar | LakeError, row: Mapping[str, Any] | None
) -> str | None:
    """Why the lake's record of a version (its `derived/documents` row, None when there is
    none) is not the raw folder's now (its file's `sha` and `sidecar`, or the sidecar's
    error): new, file changed, sidecar changed (or the sidecar's own error); None if same."""
    if row is None:
        return "new"
    if row["sha256"] != sha:
        return "file changed"
    if isinstance(sidecar, LakeError):
        return str(sidecar)
    seen = (row["title"], row["valid_from"], row["valid_to"], row["status"], row["doc_type"])
    now = (sidecar.title or row["doc_id"], sidecar.valid_from, sidecar.valid_to)
    metadata = json.dumps(sidecar.metadata, ensure_ascii=False, default=str)
    if seen != (*now, sidecar.status, sidecar.type) or row["metadata_json"] != metadata:
        return "sidecar changed"
    return None


def fingerprint(lake: Lake, key: str, sha: str, code: CodeVersions, model_id: str) -> str:
    """A digest of the inputs the change rule compares: the file's sha256, the sidecar's
    bytes, every stage's code version and the model id."""
    sidecar = lake.raw_paths(key)[1]
    side = sha256_file(sidecar) if sidecar.exists() else ""
    inputs = [sha, side, sorted(code.current.items()), model_id]
    return hashlib.sha256(json.dumps(inputs).encode("utf-8")).hexdigest()


def removal_plan(
    lake: Lake,
    db_uri: str | os.PathLike[str],
    embedder: Embedder,
    registered: Collection[str],
    *,
    history: bool,
    today: dt.date | None = None,
    sweep_cache: bool = True,
    derived: Derived | None = None,
) -> Plan:
    """The plan's partitions to add and versions to remove, without deciding what to run
    (no file hashed, no code version compared): what is left to purge after runs.

    The index is read once: the configured model's table for its row counts (the active
    model's keys only when search uses another model) and, with its cache, the text
    hashes (`Plan.unused_cache`) when `sweep_cache`: a pass over every text hash of the
    model's table and cache, which a sensor tick skips (a run commits its cached vectors
    with its rows, so only what an interrupted or older run left is ever unused: the
    commands and the schedule sweep it). `derived`: the listing of `derived/` to use
    (default: listed now)."""
    derived = derived or Derived(lake)
    counts = Index(db_uri, embedder).partition_counts()
    active = read_active(db_uri)
    if active is not None and active.model_id == embedder.model_id:
        committed = {k for k, n in counts.items() if n}
    else:
        committed = committed_keys(db_uri)
    scan = scan_versions(lake, history, today, db_uri, indexed=committed)
    plan = Plan(scan=scan, registered=set(registered), index_rows=counts, history=history)
    if sweep_cache:
        plan.unused_cache = len(unused_entries(db_uri, embedder.model_id))
    plan.add = [k for k in scan.live if k not in plan.registered]
    for key in sorted((plan.registered - set(scan.live)) | set(scan.dead)):
        held = key in counts or key in committed or derived.any_file(key)
        if held or key in plan.registered:
            plan.remove[key] = scan.reasons.get(key) or _gone_reason(lake, key, held)
    for kind in ("sidecar", "listing"):
        lake.memo.forget_unseen(kind)
    lake.memo.save()
    return plan


def _gone_reason(lake: Lake, key: str, held: bool) -> str:
    """Why a version with no file under raw/ goes: its file was deleted when the lake or
    the index holds something of it; else it never had one here (a partition added by
    hand, or a file removed before its run)."""
    if held:
        return "file deleted"
    doc_id, version = split_key(key)
    return f"no file raw/{doc_id}/{version}.pdf (never indexed)"


def reconcile(
    lake: Lake,
    db_uri: str | os.PathLike[str],
    embedder: Embedder,
    registered: Collection[str],
    code: CodeVersions,
    *,
    history: bool,
    force: bool = False,
    sweep_cache: bool = True,
) -> Plan:
    """The plan that brings the index in line with the raw folder, today: `removal_plan`,
    plus the versions to run and why.

    `registered`: the partition keys the orchestrator knows. `force` runs every live
    version. `sweep_cache`: look for cached vectors no row uses (`removal_plan`).
    """
    derived = Derived(lake)
    plan = removal_plan(
        lake,
        db_uri,
        embedder,
        registered,
        history=history,
        sweep_cache=sweep_cache,
        derived=derived,
    )
    scan, counts = plan.scan, plan.index_rows
    plan.hashes = {key: version_sha256(lake, scan.files[key]) for key in scan.live}
    removed = lake.tombstones() if scan.returning else {}
    # a backfill's chunks folder, beside the active model's
    held = _Held(
        derived,
        code,
        counts,
        table_name(embedder.model_id),
        chunks_folder_for(db_uri, embedder.model_id),
    )
    documents = derived.documents(scan.live)
    for key in scan.live:
        sha = plan.hashes[key]
        if key in removed:
            reason, embed_only = "restored", False
        elif force:
            reason, embed_only = "--force", False
        else:
            row = documents.get(key)
            sidecar = scan.sidecars[key]
            reason, embed_only = held.why_run(key, sha, sidecar, row)
        if reason is None:
            plan.up_to_date.append(key)
            continue
        plan.run[key] = Run(
            key,
            reason,
            sha,
            fingerprint(lake, key, sha, code, embedder.model_id),
            removed[key]["removed_at"] if key in removed else None,
            embed_only,
            code.indexed.get(key),
        )
    for kind in ("sha256", FOLDERS[RAW_PDF], f"rows:{FOLDERS[CHUNKS]}"):
        lake.memo.forget_unseen(kind)
    lake.memo.save()
    return plan


@dataclass(frozen=True)
class _Held:
    """What the stores hold now, against which each live version is judged: its derived
    files, the code versions its stages ran with, the rows per version in the `model`'s
    table, and `folder`, where the configured model's chunks are."""

    derived: Derived
    code: CodeVersions
    counts: Mapping[str, int]
    model: str
    folder: str = FOLDERS[CHUNKS]

    def why_run(
        self, key: str, sha: str, sidecar: Sidecar | LakeError, row: Mapping[str, Any] | None
    ) -> tuple[str | None, bool]:
        """The change rule for one live version (`sidecar`: as the scan read it; `row`:
        its documents row, if any): why it must run (None: up to date), and whether only
        the model-dependent stages must."""
        reason = lake_reason(sha, sidecar, row)
        if reason is not None:
            return reason, False
        changed = self.code.changed(key)
        if changed is not None and changed[0] not in EMBED_STAGES:
            return changed[1], False
        extraction_current = self.derived.exists(FOLDERS[LINEARIZED_TABLES], key)
        expected = self.derived.rows(self.folder, key)
        if expected is None:
            return "chunks missing", extraction_current
        if self.counts.get(key, 0) != expected:
            return f"not fully in {self.model}", extraction_current
        if changed is not None:
            return changed[1], extraction_current
        return None, False
