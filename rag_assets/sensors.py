"""The raw-folder sensor: registers new document versions, re-runs changed ones, and
removes revoked or deleted ones from every store."""

import json

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from rag_assets.core.service import file_hashes, purge_version, scan_versions
from rag_assets.jobs import index_job
from rag_assets.partitions import DOC_VERSIONS, doc_versions
from resources import EmbedderResource, LakeResource, LanceDBResource


@sensor(
    job=index_job,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Watches raw/: new or changed versions are indexed, revoked ones removed.",
)
def raw_folder_sensor(
    context: SensorEvaluationContext,
    lake: LakeResource,
    embedder: EmbedderResource,
    lancedb: LanceDBResource,
) -> SensorResult | SkipReason:
    """One scan of the raw folder turned into partition changes and run requests.

    The cursor remembers each live file's (mtime, size, sha256): unchanged files are not
    re-read, and only new or changed versions are requested (the run key also carries the
    hash, so a request repeated after a lost cursor never runs twice).
    """
    root = lake.lake
    existing = set(context.instance.get_dynamic_partitions(DOC_VERSIONS))
    scan = scan_versions(root)
    for problem in scan.problems:
        context.log.warning(problem)
    gone = sorted(existing - set(scan.live))  # revoked, expired or deleted
    if gone:
        index = lancedb.index(root, embedder.embedder())
        for key in gone:
            rows, files = purge_version(root, index, key)
            context.log.info(f"{key}: removed {rows} index rows and {files} files (not live)")
    known = json.loads(context.cursor) if context.cursor else {}
    states = file_hashes(root, scan.live, known)
    runs = []
    for key, (_, _, sha) in states.items():
        if key in known and known[key][2] == sha and key in existing:
            continue
        reason = "new" if key not in existing else "changed" if key in known else "rescan"
        runs.append(
            RunRequest(partition_key=key, run_key=f"{key}:{sha}", tags={"trecho/reason": reason})
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
