"""An eval that reuses its work: the previous result when nothing it reads changed.

The eval's inputs are the indexed versions (their extracted text, tree and table rows),
the live index's chunks, the questions, the model, the strategies, the mode, the index's
fusion weight and score floor, and the code. Their digest is kept with the result under
`<lake>/cache/eval-results/`; an eval whose inputs have the same digest returns that
result instead of cutting, embedding and searching again (`trecho eval` twice with
nothing changed; the eval asset after a schedule tick that changed nothing).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from rag_assets.core.eval.evaluation import EvalResult

FORMAT = "1"
"""Bumped when what a kept result holds changes."""
RESULTS = "eval-results"
VECTORS = "eval-vectors"
"""The folders under the lake's local cache: kept results, baseline chunk vectors (an
`EmbeddingCache` database of its own: no model switch or index purge touches it)."""


@cache
def code_digest() -> str:
    """A digest of the core's source files: a change of chunking, search or metric code
    makes every kept result stale."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def inputs_digest(
    versions: Mapping[str, Any],
    live_hashes: Sequence[str],
    questions: Sequence[Any],
    settings: Mapping[str, Any],
    strategies: Mapping[str, Mapping[str, Any]],
) -> str:
    """The digest of everything an eval reads (`settings`: model, mode, weights...;
    `strategies`: name -> variant -> chunker, whose repr holds its settings)."""
    h = hashlib.sha256()
    h.update(json.dumps([FORMAT, code_digest(), dict(settings)], sort_keys=True).encode())
    for key in sorted(versions):
        h.update(key.encode())
        h.update(hashlib.sha256(repr(versions[key]).encode()).digest())
    h.update("\n".join(live_hashes).encode())
    h.update(repr(list(questions)).encode())
    h.update(
        repr({n: {v: repr(c) for v, c in vs.items()} for n, vs in strategies.items()}).encode()
    )
    return h.hexdigest()


def result_path(cache_dir: Path, model_id: str, mode: str) -> Path:
    """Where the last result of a model and mode is kept."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{model_id}-{mode}")
    return cache_dir / RESULTS / f"{name}.json"


def reused(path: Path, digest: str) -> tuple[EvalResult, str] | None:
    """The kept result and when it was written, when its inputs' digest is `digest`."""
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept.get("inputs") != digest:
            return None
        return EvalResult.from_json(kept["result"]), str(kept.get("written", ""))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # none kept, or not as written: evaluate


def keep_result(path: Path, digest: str, result: EvalResult) -> None:
    """Keep `result` with its inputs' digest (written whole, renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    written = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    payload = {"inputs": digest, "written": written, "result": result.to_json()}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(payload, default=str), encoding="utf-8")
    os.replace(tmp, path)
