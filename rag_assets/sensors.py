"""The raw-folder sensor: registers new document versions, re-runs changed ones, and
removes revoked or deleted ones from every store."""

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from rag_assets.core.lake import sha256_file
from rag_assets.core.service import live_keys, purge_version
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
    """One scan of the raw folder turned into partition changes and run requests."""
    root = lake.lake
    existing = set(context.instance.get_dynamic_partitions(DOC_VERSIONS))
    live, dead = live_keys(root)
    _, problems = root.scan_raw()
    for problem in problems:
        context.log.warning(problem)
    gone = sorted(existing - set(live))  # revoked, expired or deleted
    if gone:
        index = lancedb.index(root, embedder.embedder())
        for key in gone:
            rows, files = purge_version(root, index, key)
            context.log.info(f"{key}: removed {rows} index rows and {files} files (not live)")
    runs = []
    for key in live:
        pdf, _ = root.raw_paths(key)
        # the run key carries the file hash: unchanged files never run twice, changed ones do
        runs.append(
            RunRequest(
                partition_key=key,
                run_key=f"{key}:{sha256_file(pdf)}",
                tags={"trecho/reason": "new" if key not in existing else "hash"},
            )
        )
    requests = []
    new = [k for k in live if k not in existing]
    if new:
        requests.append(doc_versions.build_add_request(new))
    if gone:
        requests.append(doc_versions.build_delete_request(gone))
    if not runs and not requests:
        return SkipReason(f"no document versions under {root.raw_dir}")
    return SensorResult(run_requests=runs, dynamic_partitions_requests=requests)
