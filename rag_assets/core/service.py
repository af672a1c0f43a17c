"""High-level operations shared by the CLI and the eval asset: which versions are live,
loading them, and running the eval on a lake."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_assets.core.corpus import Version, load_chunks, load_version
from rag_assets.core.embedding import Embedder
from rag_assets.core.evaluation import Chunker, EvalResult, Question, evaluate, load_questions
from rag_assets.core.lake import (
    Lake,
    LakeError,
    LakePath,
    Sidecar,
    is_live,
    remove_stage_files,
    split_key,
    stage_rows,
    superseded,
)
from rag_assets.core.search import (
    EmbeddingCache,
    Hit,
    Index,
    Mode,
    ModelRef,
    Removal,
    committed_keys,
    delete_partition_everywhere,
    read_active,
    table_name,
    write_active,
)


@dataclass
class RawScan:
    """The raw folder sorted for the pipeline: what should be indexed, what should not
    (with why), and paths skipped (with why)."""

    live: list[str] = field(default_factory=list)
    dead: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    """Why each dead key is not live: revoked, expired, superseded by ..."""
    returning: list[str] = field(default_factory=list)
    """Live keys that were removed before (their file is live again): indexed again."""
    sidecars: dict[str, Sidecar | LakeError] = field(default_factory=dict)
    """Each scanned key's sidecar as read by the scan, or the error it raised (read once
    per scan: the change rule compares the same values)."""


def scan_versions(
    lake: Lake,
    history: bool = False,
    today: dt.date | None = None,
    db_uri: str | os.PathLike[str] | None = None,
    *,
    indexed: Collection[str] | None = None,
    doc_id: str | None = None,
) -> RawScan:
    """Partition keys of the raw folder split into live and not live: the raw folder is
    the truth, whatever was removed before.

    Not live: revoked, expired (`valid_to` passed), or superseded (unless `history`, the
    `keep_history` setting): a newer version of the same document, in force and
    already in the index (`indexed`, default: what the table search uses holds in
    `db_uri`, default `<lake>/lancedb`), replaces the older ones. A newer version not
    indexed yet (or whose run failed) replaces nothing. A version whose sidecar does not
    parse counts as live: its run then fails with the sidecar's error, and what is
    already indexed for it is kept, never purged. A key removed before whose file is
    live again is live (`returning`), its removal kept in `removed_versions.json`.
    """
    today = today or dt.date.today()
    found, problems = lake.scan_raw(doc_id)
    scan = RawScan(problems=problems)
    removed = lake.tombstones()
    if indexed is None:
        indexed = committed_keys(db_uri or lake.lancedb_dir) if found else set()
    candidates: dict[str, Sidecar] = {}
    for raw in found:
        try:
            sidecar = scan.sidecars[raw.key] = Sidecar.read(raw.sidecar_path)
        except LakeError as exc:
            scan.sidecars[raw.key] = exc
            sidecar = None  # live: its run fails with the sidecar's error
        if sidecar is not None and sidecar.status != "active":
            scan.dead.append(raw.key)
            scan.reasons[raw.key] = sidecar.status
        elif sidecar is not None and not is_live(sidecar, today):
            scan.dead.append(raw.key)
            scan.reasons[raw.key] = f"expired on {sidecar.valid_to}"
        elif sidecar is None:
            scan.live.append(raw.key)
        else:
            candidates[raw.key] = sidecar
    replaced = (
        {}
        if history
        else superseded_by_indexed(
            {key: sidecar.valid_from for key, sidecar in candidates.items()}, set(indexed), today
        )
    )
    for key in candidates:
        if key in replaced:
            scan.dead.append(key)
            scan.reasons[key] = f"superseded by {replaced[key]}"
        else:
            scan.live.append(key)
    scan.returning = [k for k in scan.live if removed.get(k, {}).get("removed")]
    scan.live.sort()
    scan.dead.sort()
    return scan


def superseded_by_indexed(
    starts: dict[str, dt.date | None], indexed: set[str], today: dt.date
) -> dict[str, str]:
    """`lake.superseded`, counting only replacements that are in the index: a newer
    version replaces the older ones once it is committed, never before (a failed newer
    version changes nothing for them)."""
    committed = {key: start for key, start in starts.items() if key in indexed}
    out: dict[str, str] = {}
    for key, start in starts.items():
        newer = superseded({**committed, key: start}, today).get(key)
        if newer is not None:
            out[key] = newer
    return out


def not_live_reason(
    lake: Lake,
    key: str,
    db_uri: str | os.PathLike[str],
    history: bool = False,
    *,
    indexed: Collection[str] | None = None,
) -> str | None:
    """Why `key` must not be in the index now (None when it is live), read from its
    document's folder: asked again at commit time, under the table's write lock."""
    doc_id, _ = split_key(key)
    pdf, sidecar_path = lake.raw_paths(key)
    if not pdf.is_file():
        return f"its file {lake.relative(pdf)} is gone"
    try:
        Sidecar.read(sidecar_path)
    except LakeError as exc:
        return f"its sidecar no longer parses ({exc})"
    scan = scan_versions(lake, history, None, db_uri, indexed=indexed, doc_id=doc_id)
    return None if key in scan.live else scan.reasons.get(key, "not found in raw/")


def replaced_once_committed(
    lake: Lake,
    key: str,
    db_uri: str | os.PathLike[str],
    history: bool = False,
    *,
    indexed: Collection[str] | None = None,
) -> dict[str, str]:
    """The older versions of `key`'s document that leave the index once `key` is in it
    (superseded by it), each with the reason to record. `indexed`: the versions the
    table search uses holds, when the caller has just read them (default: read now)."""
    doc_id, _ = split_key(key)
    indexed = set(committed_keys(db_uri) if indexed is None else indexed) | {key}
    scan = scan_versions(lake, history, None, db_uri, indexed=indexed, doc_id=doc_id)
    wanted = f"superseded by {key}"
    return {k: reason for k, reason in scan.reasons.items() if reason == wanted}


def indexed_versions(lake: Lake, index: Index, history: bool = False) -> dict[str, Version]:
    """Every live version that has reached the index, loaded from the lake (`history`:
    superseded versions kept, the `keep_history` setting)."""
    live = scan_versions(lake, history).live
    counts = index.partition_counts() if index.exists() else {}
    return {k: load_version(lake, k) for k in live if counts.get(k)}


def question_files(lake: Lake, given: Sequence[Path] | None = None) -> list[LakePath]:
    """The question files to use: those given, else every `eval/*.jsonl` of the lake."""
    files = list(given) if given else sorted(lake.eval_dir.glob("*.jsonl"))
    for path in files:
        if not path.is_file():
            raise LakeError(f"{path}: question file not found")
    return files


def run_eval(
    lake: Lake,
    embedder: Embedder,
    index: Index,
    files: Sequence[LakePath],
    strategies: dict[str, dict[str, Chunker]] | None = None,
    mode: Mode = "hybrid",
    progress: Callable[[str], None] = lambda _: None,
    history: bool = False,
) -> EvalResult:
    """Evaluate the lake's indexed versions on the questions of `files`."""
    versions = indexed_versions(lake, index, history)
    if not versions:
        raise LakeError(f"{lake.root}: nothing is indexed yet; run `trecho materialize` first")
    docs = {v.info.doc_id for v in versions.values()}
    questions: list[Question] = [
        q for path in files for q in load_questions(path) if q.doc_id is None or q.doc_id in docs
    ]
    live_chunks = [c for key in versions for c in load_chunks(lake, key)]
    index.update_indexes(max_lag_rows=0)  # BM25 over every row, as the scratch indexes
    return evaluate(
        versions,
        questions,
        embedder,
        index,
        live_chunks,
        strategies,
        mode=mode,
        progress=progress,
        cache=EmbeddingCache(index.uri, embedder),  # the live chunks' vectors, reused
    )


def run_eval_models(
    lake: Lake,
    embedders: Sequence[Embedder],
    files: Sequence[LakePath],
    strategies: Callable[[Embedder], dict[str, dict[str, Chunker]]],
    mode: Mode = "hybrid",
    progress: Callable[[str], None] = lambda _: None,
    history: bool = False,
    vector_weight: float | None = None,
) -> dict[str, EvalResult]:
    """The eval of several models side by side, by model id: for each, every live version
    already extracted is chunked by the default policy for that model's tokenizer and
    indexed in a scratch folder (timed: the model's index time), then the `strategies`
    built for it are compared as in `run_eval`."""
    keys = [k for k in scan_versions(lake, history).live if lake.stage_path("chunks", k).exists()]
    if not keys:
        raise LakeError(f"{lake.root}: nothing is extracted yet; run `trecho materialize` first")
    versions = {k: load_version(lake, k) for k in keys}
    docs = {v.info.doc_id for v in versions.values()}
    questions = [
        q for path in files for q in load_questions(path) if q.doc_id is None or q.doc_id in docs
    ]
    results: dict[str, EvalResult] = {}
    for embedder in embedders:
        results[embedder.model_id] = evaluate(
            versions,
            questions,
            embedder,
            None,
            None,
            strategies(embedder),
            mode=mode,
            progress=lambda s, m=embedder.model_id: progress(f"{m}: {s}"),
            vector_weight=vector_weight,
        )
    return results


def purge_version(
    lake: Lake, db_uri: str | os.PathLike[str], key: str, reason: str = "not live"
) -> Removal:
    """Remove a version from every store, its text from disk included: its rows in every
    model's table (compacted, older table versions deleted), the cached vectors only it
    used, its Parquet files; and record the removal and why in `removed_versions.json`.

    Used for revoked, expired, superseded and deleted versions, so that they can never be
    retrieved again. A key with nothing left costs one count per table.
    """
    lake.add_tombstone(key, reason)
    removal = delete_partition_everywhere(db_uri, key)
    removal.files = len(remove_stage_files(lake, key))
    return removal


@dataclass
class ModelProgress:
    """How far the configured model's table is from serving every live version."""

    active: str | None
    """The model id search uses now (None before anything was indexed)."""
    configured: str
    done: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether the configured model's table holds every version search serves."""
        return not self.missing


def model_progress(
    lake: Lake, db_uri: str | os.PathLike[str], embedder: Embedder, history: bool = False
) -> ModelProgress:
    """Which live versions the configured model's table holds in full, and which it lacks.

    Required are the live versions the active table serves (a version that never got
    indexed, e.g. a bad PDF, cannot hold a switch back); a version counts as done when its
    row count equals its chunks file.
    """
    active = read_active(db_uri)
    progress = ModelProgress(active.model_id if active else None, embedder.model_id)
    new_counts = Index(db_uri, embedder).partition_counts()
    old_counts = Index(db_uri, active.embedder()).partition_counts() if active else {}
    for key in scan_versions(lake, history).live:
        if active is not None and active.model_id != embedder.model_id and key not in old_counts:
            continue
        rows = stage_rows(lake, "chunks", key)
        expected = -1 if rows is None else rows
        have = new_counts.get(key, 0)
        ok = have == expected or (expected == -1 and have > 0)
        (progress.done if ok else progress.missing).append(key)
    return progress


def promote_if_complete(
    lake: Lake,
    db_uri: str | os.PathLike[str],
    embedder: Embedder,
    drop_old: bool = True,
    history: bool = False,
) -> str:
    """Switch search to the configured model once its table serves every live version
    (and then drop the old model's table, unless `drop_old` is off); says what happened.

    Until then search keeps using the previous model's table: never a mix of both, never
    a half-filled table.
    """
    mine = ModelRef.of(embedder)
    active = read_active(db_uri)
    if active is not None and active.model_id == mine.model_id:
        return f"search uses {table_name(mine.model_id)}"
    if active is None:
        write_active(db_uri, mine)
        return f"search uses {table_name(mine.model_id)} (first model indexed)"
    progress = model_progress(lake, db_uri, embedder, history)
    if not progress.complete:
        return (
            f"{len(progress.done)}/{len(progress.done) + len(progress.missing)} live versions "
            f"in {table_name(mine.model_id)}; search stays on {table_name(active.model_id)} "
            "until all are in"
        )
    write_active(db_uri, mine)
    message = f"search switched from {table_name(active.model_id)} to {table_name(mine.model_id)}"
    if drop_old and Index(db_uri, active.embedder()).drop():
        message += f"; {table_name(active.model_id)} dropped"
    return message


def drop_model(db_uri: str | os.PathLike[str], embedder: Embedder) -> list[str]:
    """Drop a model's index table and embedding cache (e.g. the old model after a switch,
    when `drop_old_tables` was off); refused for the model search uses. Returns the tables
    dropped."""
    import lancedb

    from rag_assets.core.search import CACHE_PREFIX, model_tables

    active = read_active(db_uri)
    if active is not None and active.model_id == embedder.model_id:
        raise LakeError(
            f"{table_name(embedder.model_id)} is the table search uses; switch to another "
            "model first (`trecho backfill` with the new model)"
        )
    dropped = []
    if Index(db_uri, embedder).drop():
        dropped.append(table_name(embedder.model_id))
    cache = CACHE_PREFIX + embedder.model_id
    if cache in model_tables(db_uri, prefix=cache):
        lancedb.connect(str(db_uri)).drop_table(cache)
        dropped.append(cache)
    return dropped


def parent_texts(lake: Lake, hits: Sequence[Hit]) -> list[str | None]:
    """The whole parent unit of each hit (its article, section or table), for small-to-big:
    the small chunk is what search matched, the parent is what an LLM should read. Each
    version's nodes and text are read once, however many of its chunks were hit."""
    from rag_assets.core.corpus import load_doc, load_nodes

    spans: dict[str, tuple[dict[str, tuple[int, int]], str]] = {}
    out: list[str | None] = []
    for hit in hits:
        if not hit.parent_id:
            out.append(None)
            continue
        key = hit.partition_key
        if key not in spans:
            nodes = {n.node_id: (n.char_start, n.char_end) for n in load_nodes(lake, key)}
            spans[key] = (nodes, load_doc(lake, key).text)
        nodes, text = spans[key]
        span = nodes.get(hit.parent_id)
        out.append(None if span is None else text[span[0] : span[1]])
    return out


def hit_rows(lake: Lake, hits: Sequence[Hit], expand: bool = False) -> list[dict[str, Any]]:
    """Hits as `trecho search --json` prints them and `trecho serve` returns them: every
    field of each hit, plus its whole parent unit as `parent_text` when `expand` is on."""
    rows = [hit.to_json() for hit in hits]
    if expand:
        for row, parent in zip(rows, parent_texts(lake, hits), strict=True):
            row["parent_text"] = parent
    return rows
