"""High-level operations shared by the CLI and the eval asset: which versions are live,
loading them, and running the eval on a lake."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rag_assets.core.corpus import Version, load_chunks, load_version
from rag_assets.core.embedding import Embedder
from rag_assets.core.evaluation import Chunker, EvalResult, Question, evaluate, load_questions
from rag_assets.core.lake import (
    Lake,
    LakeError,
    Sidecar,
    is_live,
    remove_stage_files,
    sha256_file,
)
from rag_assets.core.search import Index, Mode


@dataclass
class RawScan:
    """The raw folder sorted for the pipeline: what should be indexed, what should not, and
    paths skipped (with why)."""

    live: list[str] = field(default_factory=list)
    dead: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def scan_versions(lake: Lake) -> RawScan:
    """Partition keys of the raw folder split into live and not live (revoked or expired).

    A version whose sidecar does not parse counts as live: its run then fails with the
    sidecar's error, and what is already indexed for it is kept, never purged.
    """
    found, problems = lake.scan_raw()
    scan = RawScan(problems=problems)
    for raw in found:
        try:
            sidecar = Sidecar.read(raw.sidecar_path)
        except LakeError:
            scan.live.append(raw.key)
            continue
        (scan.live if is_live(sidecar) else scan.dead).append(raw.key)
    return scan


FileState = list  # [mtime_ns, size, sha256]


def file_hashes(
    lake: Lake, keys: Sequence[str], known: dict[str, FileState]
) -> dict[str, FileState]:
    """sha256 of each version's PDF, re-hashed only when its size or mtime changed since
    `known` (so a sensor tick over a large lake reads no unchanged file)."""
    states: dict[str, FileState] = {}
    for key in keys:
        pdf, _ = lake.raw_paths(key)
        stat = pdf.stat()
        previous = known.get(key)
        if previous and previous[:2] == [stat.st_mtime_ns, stat.st_size]:
            states[key] = previous
        else:
            states[key] = [stat.st_mtime_ns, stat.st_size, sha256_file(pdf)]
    return states


def indexed_versions(lake: Lake, index: Index) -> dict[str, Version]:
    """Every live version that has reached the index, loaded from the lake."""
    live = scan_versions(lake).live
    counts = index.partition_counts() if index.exists() else {}
    return {k: load_version(lake, k) for k in live if counts.get(k)}


def question_files(lake: Lake, given: Sequence[Path] | None = None) -> list[Path]:
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
    files: Sequence[Path],
    strategies: dict[str, dict[str, Chunker]] | None = None,
    mode: Mode = "hybrid",
    progress: Callable[[str], None] = lambda _: None,
) -> EvalResult:
    """Evaluate the lake's indexed versions on the questions of `files`."""
    versions = indexed_versions(lake, index)
    if not versions:
        raise LakeError(f"{lake.root}: nothing is indexed yet; run `trecho materialize` first")
    docs = {v.info.doc_id for v in versions.values()}
    questions: list[Question] = [
        q for path in files for q in load_questions(path) if q.doc_id is None or q.doc_id in docs
    ]
    live_chunks = [c for key in versions for c in load_chunks(lake, key)]
    return evaluate(
        versions,
        questions,
        embedder,
        index,
        live_chunks,
        strategies,
        mode=mode,
        progress=progress,
    )


def purge_version(lake: Lake, index: Index | None, key: str) -> tuple[int, int]:
    """Remove a version from every store: its index rows and its Parquet files.

    Returns (index rows removed, files removed). Used for revoked, expired and deleted
    versions, so that they can never be retrieved again.
    """
    rows = index.delete_partition(key) if index is not None and index.exists() else 0
    files = remove_stage_files(lake, key)
    return rows, len(files)


def parent_text(lake: Lake, partition_key: str, parent_id: str | None) -> str | None:
    """The whole parent unit of a chunk (its article, section or table), for small-to-big:
    the small chunk is what search matched, the parent is what an LLM should read."""
    if not parent_id:
        return None
    from rag_assets.core.corpus import load_doc, load_nodes

    nodes = {n.node_id: n for n in load_nodes(lake, partition_key)}
    node = nodes.get(parent_id)
    if node is None:
        return None
    return load_doc(lake, partition_key).text[node.char_start : node.char_end]
