"""The raw-folder sensor: registers new document versions, re-runs changed ones, and
removes revoked, expired, superseded or deleted ones from every store."""

import json
from collections.abc import Callable

from dagster import (
    AssetObservation,
    DagsterInstance,
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from rag_assets.core.lake import STAGES, Lake
from rag_assets.core.service import RawScan, file_hashes, purge_version, scan_versions
from rag_assets.jobs import index_job
from rag_assets.partitions import DOC_VERSIONS, doc_versions
from resources import LakeResource, LanceDBResource


def remove_not_live(
    instance: DagsterInstance,
    lake: LakeResource,
    lancedb: LanceDBResource,
    scan: RawScan,
    log: Callable[[str], None],
) -> list[str]:
    """Purge every partition that is no longer live from Parquet and LanceDB (all model
    tables), and record why as an observation on `embeddings`.

    Dagster OSS keeps a deleted partition's old materializations; the observation (and
    `trecho status`) says the version is gone. Returns the keys to delete as partitions.
    """
    existing = set(instance.get_dynamic_partitions(DOC_VERSIONS))
    gone = sorted(existing - set(scan.live))
    # a run that ended after its version's removal may have left derived files behind
    leftover = [k for k in scan.dead if k not in existing and has_derived_files(lake.lake, k)]
    for key in [*gone, *leftover]:
        reason = scan.reasons.get(key, "file deleted")
        removal = purge_version(lake.lake, lancedb.uri_for(lake.lake), key, reason)
        rows, files = removal.rows, removal.files
        log(f"{key}: {reason}; removed {rows} index rows and {files} files")
        instance.report_runless_asset_event(
            AssetObservation(
                asset_key="embeddings",
                metadata={
                    "removed_version": key,
                    "reason": reason,
                    "index_rows_removed": rows,
                    "files_removed": files,
                    "live_versions": ", ".join(scan.live),
                },
            )
        )
    return gone


def has_derived_files(lake: Lake, key: str) -> bool:
    """Whether any stage's Parquet file of `key` exists."""
    return any(lake.stage_path(stage, key).exists() for stage in STAGES)


def returning_removals(lake: Lake, scan: RawScan) -> dict[str, str]:
    """The live keys that were removed before (their file is live again), each with the
    date of its latest removal."""
    if not scan.returning:
        return {}
    removed = lake.tombstones()
    return {key: removed[key]["removed_at"] for key in scan.returning}


def run_key(key: str, sha: str, removed: dict[str, str]) -> str:
    """The run key of a version's file: its sha256, plus the removal date for a version
    indexed again after a removal (so that each undo runs, even with the same bytes)."""
    return f"{key}:{sha}" + (f":after-{removed[key]}" if key in removed else "")


@sensor(
    job=index_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Watches raw/: new or changed versions are indexed, revoked ones removed.",
)
def raw_folder_sensor(
    context: SensorEvaluationContext,
    lake: LakeResource,
    lancedb: LanceDBResource,
) -> SensorResult | SkipReason:
    """One scan of the raw folder turned into partition changes and run requests.

    The cursor remembers each live file's (mtime, size, sha256): unchanged files are not
    re-read, and only new or changed versions are requested (the run key also carries the
    hash, so a request repeated after a lost cursor never runs twice).
    """
    root = lake.lake
    existing = set(context.instance.get_dynamic_partitions(DOC_VERSIONS))
    scan = scan_versions(root, lake.keep_history, db_uri=lancedb.uri_for(root))
    for problem in scan.problems:
        context.log.warning(problem)
    gone = remove_not_live(context.instance, lake, lancedb, scan, context.log.info)
    known = json.loads(context.cursor) if context.cursor else {}
    states = file_hashes(root, scan.live, known)
    runs = []
    removed = returning_removals(root, scan)
    for key, (_, _, sha) in states.items():
        if key in removed:
            reason = "restored"
        elif key in known and known[key][2] == sha and key in existing:
            continue
        else:
            reason = "new" if key not in existing else "changed" if key in known else "rescan"
        runs.append(
            RunRequest(
                partition_key=key,
                run_key=run_key(key, sha, removed),
                tags={"trecho/reason": reason, "trecho/sha256": sha[:16]},
            )
        )
    requests = []
    new = [k for k in scan.live if k not in existing]
    if new:
        requests.append(doc_versions.build_add_request(new))
    if gone:
        requests.append(doc_versions.build_delete_request(gone))
    cursor = json.dumps(states, sort_keys=True)
    if not runs and not requests:
        context.update_cursor(cursor)
        return SkipReason(f"nothing new or changed under {root.raw_dir}")
    return SensorResult(run_requests=runs, dynamic_partitions_requests=requests, cursor=cursor)
