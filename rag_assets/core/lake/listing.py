"""The lake read once per command: each folder listed once, with every file's size and
times, and what was read from a file kept until those change.

A file's *state* is a short string: its size, modification time, status-change time
and inode in a folder (`1234:<mtime_ns>:<ctime_ns>:<ino>`), its size, last-modified time
and ETag in an object store. Any write changes it (an atomic replace makes a new inode,
and the change time cannot be set back by a copy), so a value read from a file while
it had a state still holds while the state is the same.

`LakeMemo` keeps such values (a PDF's sha256, a parsed sidecar, a version's
`derived/documents` row, a chunks file's row count) in
`<Lake.local_cache_dir>/lake-state.json`, each with the state of the file it came from:
the sensor, `trecho status` and the reconcile plan read a file again only when it
changed. The file is a cache, never the truth: deleting it costs one read of every file,
a lost or concurrent write costs reads, never a wrong answer (an entry whose state does
not match is ignored).
"""

from __future__ import annotations

import gc
import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rag_assets.core.lake.keys import LakePath

MEMO_NAME = "lake-state.json"
MEMO_FORMAT = 2
"""Bumped when what an entry holds changes: a memo of another format is ignored."""

log = logging.getLogger(__name__)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cycle collector paused while a block builds many small objects (a
    memo of a large lake, a scan): in a process holding Dagster's and LanceDB's objects
    each collection walks them all, and a 6 MB memo took 0.5 s to load instead of 0.1."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def local_state(stat: os.stat_result) -> str:
    """The state of a local file from its `os.stat`."""
    return f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


def remote_state(info: dict[str, Any]) -> str:
    """The state of an object-store file from its fsspec listing entry."""
    stamp = info.get("LastModified") or info.get("mtime") or info.get("updated") or ""
    tag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or ""
    return f"{info.get('size')}:{stamp}:{str(tag).strip(chr(34))}"


def path_state(path: LakePath) -> str | None:
    """The state of one file (None when it does not exist)."""
    try:
        if isinstance(path, Path):
            return local_state(os.stat(path))
        return remote_state(path.fs.info(path.path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def folder_names(folder: LakePath, suffix: str = "") -> set[str]:
    """The names (without `suffix`) of the files right in `folder` whose name ends with
    `suffix`, from one listing and no stat (empty when the folder does not exist)."""
    if not isinstance(folder, Path):
        return set(folder_states(folder, suffix))
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return set()
    cut = len(suffix)
    return {n[:-cut] if cut else n for n in names if n.endswith(suffix)}


def folder_states(folder: LakePath, suffix: str = "") -> dict[str, str]:
    """Name (without `suffix`) -> state of every file right in `folder` whose name ends
    with `suffix`, from one listing (empty when the folder does not exist)."""
    out: dict[str, str] = {}
    if isinstance(folder, Path):
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name.endswith(suffix) and entry.is_file():
                        out[entry.name.removesuffix(suffix) if suffix else entry.name] = (
                            local_state(entry.stat())
                        )
        except (FileNotFoundError, NotADirectoryError):
            pass
        return out
    try:
        listed = folder.fs.ls(folder.path, detail=True)
    except FileNotFoundError:
        return out
    for info in listed:
        name = str(info["name"]).rstrip("/").rsplit("/", 1)[-1]
        if info.get("type") == "file" and name.endswith(suffix):
            out[name.removesuffix(suffix) if suffix else name] = remote_state(info)
    return out


class LakeMemo:
    """Values read from the lake's files, each kept with the state of its file (see the
    module docstring). `get` answers only for the same state; `save` writes what
    changed (atomically; a lake on a read-only disk simply keeps nothing)."""

    def __init__(self, path: Path, root: str) -> None:
        self.path = path
        self.root = root
        self._data: dict[str, dict[str, list[Any]]] = {}
        self._seen: dict[str, set[str]] = {}
        self._dirty = False
        try:
            with gc_paused():
                loaded = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            self._discard(f"it cannot be read as JSON ({exc})")
            return
        if not isinstance(loaded, dict):
            self._discard(f"it holds a {type(loaded).__name__}, not an object")
            return
        if loaded.get("root") != root or loaded.get("format") != MEMO_FORMAT:
            return  # a moved lake's, or another format's: ignored, replaced on save
        entries = loaded.get("entries")
        wrong = _wrong_shape(entries)
        if wrong:
            self._discard(wrong)
            return
        self._data = entries

    def _discard(self, why: str) -> None:
        """Start empty in place of a memo of the wrong shape (one warning) and have it
        rewritten on `save` (before, an `entries` that was no object failed every
        command and was never rewritten)."""
        log.warning("trecho: %s: the lake's memo is discarded and rebuilt: %s", self.path, why)
        self._dirty = True

    def get(self, kind: str, key: str, state: str | None) -> Any | None:
        """The value of `kind` kept for `key` when its file had `state` (None: not kept,
        or the file changed since)."""
        self._seen.setdefault(kind, set()).add(key)
        entry = self._data.get(kind, {}).get(key)
        if state is None or not isinstance(entry, list) or len(entry) != 2 or entry[0] != state:
            return None
        return entry[1]

    def put(self, kind: str, key: str, state: str | None, value: Any) -> None:
        """Keep `value` of `kind` for `key`, read from its file in `state`."""
        self._seen.setdefault(kind, set()).add(key)
        if state is None:
            return
        self._data.setdefault(kind, {})[key] = [state, value]
        self._dirty = True

    def forget_unseen(self, kind: str) -> None:
        """Drop the entries of `kind` not asked for since this memo was opened (versions
        gone from the lake): call it after a pass over the whole lake."""
        seen = self._seen.get(kind, set())
        kept = {k: v for k, v in self._data.get(kind, {}).items() if k in seen}
        if len(kept) != len(self._data.get(kind, {})):
            self._data[kind] = kept
            self._dirty = True

    def save(self) -> None:
        """Write the memo back if anything changed (temp file + rename)."""
        if not self._dirty:
            return
        data = {"format": MEMO_FORMAT, "root": self.root, "entries": self._data}
        tmp = self.path.with_name(f"{self.path.name}.tmp-{os.getpid()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:  # a read-only lake: nothing kept, every file read next time
            tmp.unlink(missing_ok=True)


def json_kind(value: Any) -> str:
    """What a JSON value is, in words (`an array`, `a number`...), for a message."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    kinds = {list: "an array", str: "a string", dict: "an object", type(None): "null"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def _wrong_shape(entries: Any) -> str:
    """What is wrong with a memo's entries (empty when nothing): they must map each kind
    to an object of keys (an entry of any other shape is ignored by `get`)."""
    if not isinstance(entries, dict):
        return f"its entries are {json_kind(entries)}, not an object"
    kinds = [kind for kind, values in entries.items() if not isinstance(values, dict)]
    if kinds:
        return f"its entries of {', '.join(map(repr, kinds[:3]))} are not an object"
    return ""
