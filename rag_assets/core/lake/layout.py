"""The data lake layout, document-version keys and the raw folder's sidecars.

Layout (docs/design.md)::

    <lake>/raw/<doc_id>/<version>.pdf        input PDFs (committed for the samples)
    <lake>/raw/<doc_id>/<version>.yaml       optional sidecar: title, valid_from, valid_to,
                                             status (active|revoked), type, metadata
    <lake>/eval/*.jsonl                      question files
    <lake>/derived/<folder>/<key>.parquet    one Parquet file per partition per stage,
                                             in the stage's folder (core/stages.py)
    <lake>/lancedb/                          LanceDB, one table per embedding model
    <lake>/reports/<timestamp>/              eval reports

The root is a local folder or an object-store URI (`s3://bucket/prefix`, any fsspec
protocol installed): paths under it are `pathlib.Path` or `upath.UPath`, which share the
API used here. Credentials and endpoint come from the standard environment (for S3:
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP), the
same variables LanceDB reads for the index under `<lake>/lancedb`."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG
from typing import Any, TypeAlias

import fsspec
from upath import UPath

from rag_assets.core.errors import UserError
from rag_assets.core.lake.locks import file_lock
from rag_assets.core.stages import LAKE_FOLDERS, NEXT_CHUNKS

LakePath: TypeAlias = Path | UPath
"""A path in a lake: local (`Path`) or in an object store (`UPath`)."""

KEY_PART = re.compile(r"^[a-z0-9._-]+$")


class LakeError(UserError, ValueError):
    """A problem with one input of the lake; the message names the file and the reason."""


def validate_key_part(value: str, what: str) -> str:
    """Check a doc id or version against the `[a-z0-9._-]` pattern of docs/design.md."""
    if not KEY_PART.match(value) or value.startswith(".") or ".." in value:
        raise LakeError(
            f"invalid {what} {value!r}: use only lowercase letters, digits, '.', '_' and '-' "
            "(not starting with '.', no '..')"
        )
    return value


def make_key(doc_id: str, version: str) -> str:
    """Build the partition key `<doc_id>@<version>`, validating both parts."""
    return f"{validate_key_part(doc_id, 'doc_id')}@{validate_key_part(version, 'version')}"


def split_key(key: str) -> tuple[str, str]:
    """Split and validate a partition key into (doc_id, version)."""
    if key.count("@") != 1:
        raise LakeError(f"invalid partition key {key!r}: expected '<doc_id>@<version>'")
    doc_id, version = key.split("@")
    validate_key_part(doc_id, "doc_id")
    validate_key_part(version, "version")
    return doc_id, version


def is_remote(uri: str | os.PathLike[str]) -> bool:
    """Whether a lake root or database URI names an object store rather than a folder."""
    text = str(uri)
    return "://" in text and not text.startswith("file://")


def local_lock_path(uri: str | os.PathLike[str], name: str) -> Path:
    """Where to lock `name` of a store: inside a local store, else in a per-store folder
    of the temp dir (object stores have no locks: this serializes writers on one host;
    writers on several hosts rely on the store's conditional commits)."""
    if not is_remote(uri):
        return Path(uri) / name
    digest = hashlib.sha256(str(uri).rstrip("/").encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / "trecho-locks" / digest / name


def sha256_file(path: LakePath) -> str:
    """Hex sha256 of a file's bytes: the identity of a document version's content."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RawVersion:
    """One document version found in the raw folder (a local scan gives its paths as
    strings: a path object is made only when a file must be read)."""

    doc_id: str
    version: str
    pdf: LakePath | str
    sidecar: LakePath | str
    pdf_state: str | None = None
    """The PDF's state as the listing saw it (`core.lake.listing`; None: not listed)."""
    sidecar_state: str | None = None
    """The sidecar's state as the listing saw it (None: no sidecar, or not listed)."""

    @property
    def key(self) -> str:
        """The partition key of this version."""
        return f"{self.doc_id}@{self.version}"

    @property
    def pdf_path(self) -> LakePath:
        """The version's PDF."""
        return Path(self.pdf) if isinstance(self.pdf, str) else self.pdf

    @property
    def sidecar_path(self) -> LakePath:
        """The version's sidecar (which may not exist)."""
        return Path(self.sidecar) if isinstance(self.sidecar, str) else self.sidecar


class Lake:
    """Paths of one data lake, local or in an object store; nothing is read or written
    outside its root."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._memo: Any = None
        self.remote = is_remote(root)
        self.root: LakePath
        if self.remote:
            protocol = str(root).split("://", 1)[0]
            try:
                fsspec.get_filesystem_class(protocol)
            except (ImportError, ValueError) as exc:
                extra = "pip install 'trecho[s3]'" if protocol in ("s3", "s3a") else str(exc)
                raise LakeError(f"{root}: no filesystem for '{protocol}://' ({extra})") from exc
            # no listings cache: a sensor must see files added by other processes
            self.root = UPath(str(root).rstrip("/"), use_listings_cache=False)
        else:
            self.root = Path(root).resolve()

    def __repr__(self) -> str:
        return f"Lake({str(self.root)!r})"

    @property
    def _uri_digest(self) -> str:
        """A short, stable name for this lake's local folders (an object store's URI)."""
        return hashlib.sha256(str(self.root).encode()).hexdigest()[:16]

    def lock_path(self, name: str) -> Path:
        """A local file to lock around read-modify-write of the lake's shared files."""
        return local_lock_path(str(self.root), name)

    def relative(self, path: LakePath) -> str:
        """`path` relative to the lake root, as stored in the documents table."""
        return str(path)[len(str(self.root)) :].lstrip("/")

    @property
    def raw_dir(self) -> LakePath:
        """Where the input PDFs live."""
        return self.root / "raw"

    @property
    def eval_dir(self) -> LakePath:
        """Where question files live."""
        return self.root / "eval"

    @property
    def lancedb_dir(self) -> LakePath:
        """The LanceDB database folder."""
        return self.root / "lancedb"

    @property
    def reports_dir(self) -> LakePath:
        """Where eval reports are written, one folder per run."""
        return self.root / "reports"

    @property
    def tombstones_path(self) -> LakePath:
        """Keys removed from the index, with when and why, and when they came back."""
        return self.root / "removed_versions.json"

    def tombstones(self) -> dict[str, dict[str, Any]]:
        """Every key ever removed: `reason`, `removed_at` (UTC ISO) and `sha256` of its
        latest removal, `removed` (whether it is out of the index now) and `history`
        (every removal and every return to the index, oldest first)."""
        path = self.tombstones_path
        if not path.exists():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LakeError(f"{path}: not valid JSON ({exc}); fix or delete it") from exc
        if not isinstance(data, dict):
            raise LakeError(f"{path}: expected a JSON object of removed keys")
        for entry in data.values():  # files written before the history was kept
            entry.setdefault("removed", True)
            entry.setdefault(
                "history",
                [{"event": "removed", "at": entry.get("removed_at", ""), **_removal(entry)}],
            )
        return data

    def removed_keys(self) -> set[str]:
        """The keys out of the index now by a removal (`removed` in `tombstones`): read
        from the records only when their file changed since a command last read it
        (`Lake.memo`; the records of a large lake are megabytes of JSON)."""
        if not isinstance(self.root, Path):
            return {k for k, v in self.tombstones().items() if v["removed"]}
        from rag_assets.core.lake.listing import path_state

        state = path_state(self.tombstones_path)
        if state is None:
            return set()
        kept = self.memo.get("ledger", "removed", state)
        if isinstance(kept, list):
            return set(kept)
        removed = sorted(k for k, v in self.tombstones().items() if v["removed"])
        self.memo.put("ledger", "removed", state, removed)
        return set(removed)

    def _update_tombstones(self, key: str, change: Any) -> bool:
        """Apply `change(data)` to the removal records under their lock; write them back
        when it returns True."""
        split_key(key)
        with file_lock(self.lock_path(".removed_versions.lock")):
            data = self.tombstones()
            if not change(data):
                return False
            write_atomically(
                self.tombstones_path,
                (json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"),
            )
            return True

    def add_tombstone(self, key: str, reason: str) -> bool:
        """Record that `key` left the index and why (nothing when it is already out);
        returns whether a removal was recorded."""
        return key in self.add_tombstones({key: reason})

    def add_tombstones(self, reasons: dict[str, str]) -> list[str]:
        """`add_tombstone` for several keys in one read and one write of the records;
        returns the keys whose removal was recorded."""
        for key in reasons:
            split_key(key)
        recorded: list[str] = []

        def change(data: dict[str, dict[str, Any]]) -> bool:
            for key, reason in reasons.items():
                entry = data.get(key)
                if entry is not None and entry["removed"]:
                    continue
                pdf = self.raw_dir / key.replace("@", "/", 1)
                pdf = pdf.with_name(pdf.name + ".pdf")
                removal = {
                    "reason": reason,
                    "removed_at": _now(),
                    "sha256": sha256_file(pdf) if pdf.is_file() else "",
                }
                history = [] if entry is None else entry["history"]
                history.append(
                    {"event": "removed", "at": removal["removed_at"], **_removal(removal)}
                )
                data[key] = {**removal, "removed": True, "history": history}
                recorded.append(key)
            return bool(recorded)

        if reasons:
            self._update_tombstones(next(iter(reasons)), change)
        return recorded

    def note_indexed_again(self, key: str, sha256: str) -> bool:
        """Record that a removed key is back in the index (its file is live again);
        returns whether it had been removed."""

        def change(data: dict[str, dict[str, Any]]) -> bool:
            entry = data.get(key)
            if entry is None or not entry["removed"]:
                return False
            entry["removed"] = False
            entry["history"].append({"event": "indexed again", "at": _now(), "sha256": sha256})
            return True

        return self._update_tombstones(key, change)

    def removal_history(self, key: str) -> str:
        """One line of what happened to `key` before (empty when it was never removed),
        e.g. `removed 2026-03-02 (revoked); indexed again 2026-03-05`."""
        entry = self.tombstones().get(key)
        if entry is None:
            return ""
        return "; ".join(
            f"{e['event']} {e['at'][:10]}" + (f" ({e['reason']})" if e.get("reason") else "")
            for e in entry["history"]
        )

    @property
    def dagster_home(self) -> Path:
        """The default persistent Dagster instance folder for this lake: `<lake>/.dagster`
        for a local lake, `~/.trecho/dagster/<hash of the URI>` for an object store (the
        instance's SQLite storage needs a local disk; set DAGSTER_HOME to share one)."""
        if self.remote:
            return Path.home() / ".trecho" / "dagster" / self._uri_digest
        return self.root / ".dagster"

    @property
    def local_cache_dir(self) -> Path:
        """A local folder for caches that need no sharing: `<lake>/cache` for a local lake,
        `~/.cache/trecho/<hash of the URI>` for an object store."""
        if self.remote:
            return Path.home() / ".cache" / "trecho" / self._uri_digest
        return self.root / "cache"

    @property
    def memo(self) -> Any:
        """What this lake's commands read from its files, kept until a file changes
        (`core.lake.listing.LakeMemo`, in `local_cache_dir`); opened once per Lake."""
        if self._memo is None:
            from rag_assets.core.lake.listing import MEMO_NAME, LakeMemo

            self._memo = LakeMemo(self.local_cache_dir / MEMO_NAME, str(self.root))
        return self._memo

    def stage_path(self, folder: str, key: str) -> LakePath:
        """The Parquet file of one partition in a stage's folder (`stages.FOLDERS`: e.g.
        `derived/documents/` for raw_pdf; `chunks-next/<model_id>` for the chunks of a
        model being backfilled, `stages.chunks_folder`)."""
        parent, _, model_id = folder.partition("/")
        staged = parent == NEXT_CHUNKS and KEY_PART.match(model_id) is not None
        staged = staged and not model_id.startswith(".")
        if folder not in LAKE_FOLDERS and not staged:
            raise ValueError(f"unknown stage folder {folder!r}: one of {', '.join(LAKE_FOLDERS)}")
        split_key(key)
        return self.root / "derived" / folder / f"{key}.parquet"

    def raw_paths(self, key: str) -> tuple[LakePath, LakePath]:
        """The PDF and sidecar paths of a partition key, checked to stay inside the lake."""
        doc_id, version = split_key(key)
        pdf = self.raw_dir / doc_id / f"{version}.pdf"
        sidecar = self.raw_dir / doc_id / f"{version}.yaml"
        for path in (pdf, sidecar) if isinstance(self.root, Path) else ():
            if path.exists() and not path.resolve().is_relative_to(self.root):
                raise LakeError(f"{path}: resolves outside the lake root {self.root}")
        return pdf, sidecar

    def scan_raw(self, doc_id: str | None = None) -> tuple[list[RawVersion], list[str]]:
        """Every `<doc_id>/<version>.pdf` under raw/, plus a message per path it skipped
        and why: a file outside a document folder, an extension other than `.pdf` and
        `.yaml` (`v1.PDF`), a sidecar without its PDF, a folder inside a document folder,
        a name that breaks the key rule, a path leading outside the lake, an empty document
        folder (a document whose files were moved away, or not copied yet). Hidden files
        (`.name`) are ignored silently. `doc_id` limits the scan to one document."""
        found: list[RawVersion] = []
        problems: list[str] = []
        if not self.raw_dir.is_dir():
            return found, problems
        if isinstance(self.raw_dir, Path):
            self._scan_folder(doc_id, found, problems)
            return found, problems
        layout = RAW_LAYOUT
        for doc_dir in sorted(self.raw_dir.iterdir()):
            if doc_dir.name.startswith(".") or doc_id not in (None, doc_dir.name):
                continue
            if not doc_dir.is_dir():
                problems.append(f"{doc_dir}: not in a document folder ({layout})")
                continue
            entries = _listed(doc_dir)  # one listing: names, kinds and states
            names = set(entries)
            if not [n for n in names if not n.startswith(".")]:
                problems.append(f"{doc_dir}: an empty document folder ({layout})")
                continue
            for name in sorted(names):
                item = doc_dir / name
                if name.startswith("."):
                    continue
                kind = entries[name].get("type")
                problem = _raw_problem(
                    str(item), item.stem, item.suffix, kind == "directory", names
                )
                if problem is not None:  # "" for a sidecar next to its PDF
                    problems.extend([problem] if problem else [])
                    continue
                try:
                    key = make_key(doc_dir.name, item.stem)
                    self.raw_paths(key)
                except LakeError as exc:
                    problems.append(f"{item}: {exc}")
                    continue
                side = entries.get(f"{item.stem}.yaml")
                found.append(
                    RawVersion(
                        doc_dir.name,
                        item.stem,
                        item,
                        item.with_suffix(".yaml"),
                        _state_of(entries[name]),
                        _state_of(side) if side and side.get("type") == "file" else None,
                    )
                )
        return found, problems

    def _scan_folder(
        self, doc_id: str | None, found: list[RawVersion], problems: list[str]
    ) -> None:
        """`scan_raw` on a local folder: each document folder listed once (`os.scandir`),
        every file's state taken from that listing, names handled as strings (a path
        object made only for what is found), and a path resolved only where a symlink
        could lead it outside the lake."""
        from rag_assets.core.lake.listing import local_state

        raw = self.raw_dir
        base = str(raw)
        linked = raw.is_symlink()
        with os.scandir(raw) as listing:
            docs = sorted(listing, key=lambda e: e.name)
        for doc in docs:
            if doc.name.startswith(".") or doc_id not in (None, doc.name):
                continue
            folder = f"{base}/{doc.name}"
            if not doc.is_dir():
                problems.append(f"{folder}: not in a document folder ({RAW_LAYOUT})")
                continue
            entries = self._entries(doc, folder)  # name -> [is_dir, is_symlink]
            names = set(entries)
            if not [n for n in names if not n.startswith(".")]:
                problems.append(f"{folder}: an empty document folder ({RAW_LAYOUT})")
                continue
            for name in sorted(names):
                if name.startswith("."):
                    continue
                is_dir, is_link = entries[name]
                stem, suffix = _split_name(name)
                shown = f"{folder}/{name}"
                problem = _raw_problem(shown, stem, suffix, is_dir, names)
                if problem is not None:  # "" for a sidecar next to its PDF
                    problems.extend([problem] if problem else [])
                    continue
                side = entries.get(f"{stem}.yaml")
                try:
                    key = make_key(doc.name, stem)
                    if linked or doc.is_symlink() or is_link or (side and side[1]):
                        self.raw_paths(key)
                    state = local_state(os.stat(shown))
                    side_state = _file_state(f"{folder}/{stem}.yaml") if side else None
                except LakeError as exc:
                    problems.append(f"{shown}: {exc}")
                    continue
                except FileNotFoundError:  # removed while listed (or a broken link)
                    continue
                side_path = f"{folder}/{stem}.yaml"
                found.append(RawVersion(doc.name, stem, shown, side_path, state, side_state))

    def _entries(self, doc: os.DirEntry, folder: str) -> dict[str, list[bool]]:
        """Name -> [is a folder, is a symlink] of each entry of a document folder: listed
        again only when the folder's own state changed (any entry added, removed or
        renamed changes it), else as the memo kept it (`Lake.memo`); a listing costs far
        more than a stat on a large lake."""
        from rag_assets.core.lake.listing import local_state

        state = local_state(doc.stat())
        kept = self.memo.get("listing", doc.name, state)
        if isinstance(kept, dict):
            return kept
        with os.scandir(folder) as listing:
            entries = {e.name: [e.is_dir(), e.is_symlink()] for e in listing}
        self.memo.put("listing", doc.name, state, entries)
        return entries


RAW_LAYOUT = "a version is raw/<doc_id>/<version>.pdf"


def _file_state(path: str) -> str | None:
    """The state of a local file (`core.lake.listing.local_state`), None when it is no
    file (gone, a folder, a broken link)."""
    from rag_assets.core.lake.listing import local_state

    try:
        stat = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return local_state(stat) if S_ISREG(stat.st_mode) else None


def _listed(folder: LakePath) -> dict[str, dict[str, Any]]:
    """Name -> fsspec listing entry (type, size, times, ETag) of each entry of an
    object-store folder, from one listing (the folder itself left out)."""
    own = str(folder.path).rstrip("/")
    out = {}
    for info in folder.fs.ls(folder.path, detail=True):
        path = str(info["name"]).rstrip("/")
        if path != own:
            out[path.rsplit("/", 1)[-1]] = info
    return out


def _state_of(info: dict[str, Any]) -> str:
    """The state of an object-store file (`core.lake.listing.remote_state`)."""
    from rag_assets.core.lake.listing import remote_state

    return remote_state(info)


def _split_name(name: str) -> tuple[str, str]:
    """A file name's stem and suffix, as `pathlib` splits them (`v1.pdf` -> `v1`,
    `.pdf`; `v1.` and `v1` have no suffix)."""
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        return name[:dot], name[dot:]
    return name, ""


def _raw_problem(shown: str, stem: str, suffix: str, is_dir: bool, names: set[str]) -> str | None:
    """Why a (not hidden) entry of a document folder (`shown`: its path) is no version
    to index, or None for a `.pdf` file; a sidecar with its PDF is no version either,
    and no problem (`""`)."""
    if is_dir:
        return f"{shown}: a folder inside a document folder ({RAW_LAYOUT})"
    if suffix == ".yaml":
        return f"{shown}: sidecar without its PDF {stem}.pdf" if f"{stem}.pdf" not in names else ""
    if suffix != ".pdf" and suffix.lower() in (".pdf", ".yaml", ".yml"):
        wanted = ".pdf" if suffix.lower() == ".pdf" else ".yaml"
        return f"{shown}: extension {suffix!r} is not read; rename it to {stem}{wanted}"
    if suffix != ".pdf":
        return f"{shown}: not a PDF or a sidecar ({RAW_LAYOUT})"
    return None


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _removal(entry: dict[str, Any]) -> dict[str, str]:
    return {"reason": entry.get("reason", ""), "sha256": entry.get("sha256", "")}


def write_atomically(path: LakePath, data: bytes) -> None:
    """Replace a file's bytes so that readers see the old or the new content, never a
    part: temp file + rename locally; one PUT (atomic by itself) in an object store."""
    if not isinstance(path, Path):
        path.write_bytes(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)
