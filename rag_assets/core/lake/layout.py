"""The data lake layout: `Lake`, the paths of one lake, local or in an object store.

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
same variables LanceDB reads for the index under `<lake>/lancedb`.

The lake's other jobs live beside it, each in its module, and `Lake` answers through
them: the key rule and file primitives (`keys`, whose names are re-exported here), the
removal ledger (`ledger`), the raw folder's scan (`raw_scan`), the memo of what was read
(`listing`)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import fsspec
from upath import UPath

from rag_assets.core.lake.keys import (
    KEY_PART,
    LakeError,
    LakePath,
    RawVersion,
    is_remote,
    local_lock_path,
    make_key,
    sha256_file,
    split_key,
    store_problem,
    validate_key_part,
    write_atomically,
)
from rag_assets.core.lake.ledger import TombstoneLedger
from rag_assets.core.lake.listing import MEMO_NAME, LakeMemo, path_state
from rag_assets.core.lake.raw_scan import RAW_LAYOUT, scan_raw
from rag_assets.core.stages import LAKE_FOLDERS, NEXT_CHUNKS

__all__ = [
    "KEY_PART",
    "RAW_LAYOUT",
    "Lake",
    "LakeError",
    "LakePath",
    "RawVersion",
    "is_remote",
    "local_lock_path",
    "make_key",
    "sha256_file",
    "split_key",
    "store_problem",
    "validate_key_part",
    "write_atomically",
]


class Lake:
    """Paths of one data lake, local or in an object store; nothing is read or written
    outside its root."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._memo: LakeMemo | None = None
        self._ledger: TombstoneLedger | None = None
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

    def version_lock(self, key: str) -> Path:
        """The file one version's stages lock while they write it (what its removal
        removes)."""
        return self.lock_path(f".locks/{key}.lock")

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

    @property
    def ledger(self) -> TombstoneLedger:
        """The removal ledger (`core.lake.ledger`), opened once per Lake."""
        if self._ledger is None:
            self._ledger = TombstoneLedger(
                self.tombstones_path,
                self.lock_path(".removed_versions.lock"),
                self.raw_dir,
                self._opened_memo,
            )
        return self._ledger

    def tombstones(self) -> dict[str, dict[str, Any]]:
        """Every key ever removed, with its history (`TombstoneLedger.tombstones`)."""
        return self.ledger.tombstones()

    def removed_keys(self) -> set[str]:
        """The keys out of the index now by a removal (`TombstoneLedger.removed_keys`)."""
        return self.ledger.removed_keys()

    def add_tombstone(self, key: str, reason: str) -> bool:
        """Record that `key` left the index and why (`TombstoneLedger.add_tombstone`)."""
        return self.ledger.add_tombstone(key, reason)

    def add_tombstones(self, reasons: dict[str, str]) -> list[str]:
        """`add_tombstone` for several keys in one write (`TombstoneLedger.add_tombstones`)."""
        return self.ledger.add_tombstones(reasons)

    def note_indexed_again(self, key: str, sha256: str) -> bool:
        """Record that a removed key is back in the index (`TombstoneLedger`)."""
        return self.ledger.note_indexed_again(key, sha256)

    def removal_history(self, key: str) -> str:
        """One line of what happened to `key` before (`TombstoneLedger.removal_history`)."""
        return self.ledger.removal_history(key)

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
    def leases_dir(self) -> LakePath:
        """Where the leases every host honours live (`core.lake.lease`)."""
        return self.root / ".leases"

    def exists(self) -> bool:
        """Whether the lake's root folder exists; an object store that refuses to answer
        (no endpoint there, a missing bucket, refused credentials) raises `LakeError`,
        one line naming the setting, not the store client's traceback."""
        try:
            return self.root.is_dir()
        except Exception as exc:  # botocore, s3fs and aiohttp errors share no base
            if not self.remote:
                raise
            raise LakeError(store_problem(str(self.root), exc)) from exc

    @property
    def runtime_dir(self) -> LakePath:
        """Where the runs record what they ran on (`core.embedding.runtime`): `<lake>/cache`,
        in the lake itself also on an object store, so every host reads the same record
        (for a local lake, the folder of `local_cache_dir`)."""
        return self.root / "cache"

    @property
    def memo(self) -> LakeMemo:
        """What this lake's commands read from its files, kept until a file changes
        (`core.lake.listing.LakeMemo`, in `local_cache_dir`); opened once per Lake."""
        if self._memo is None:
            self._memo = LakeMemo(self.local_cache_dir / MEMO_NAME, str(self.root))
        return self._memo

    def _opened_memo(self) -> LakeMemo:
        """`memo` as a callable (a bound method pickles, a lambda does not), for the ledger
        and the scan, which open it only when they need it."""
        return self.memo

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
                raise LakeError(
                    f"{path}: resolves outside the lake root {self.root} (to {path.resolve()})"
                )
        return pdf, sidecar

    def scan_raw(self, doc_id: str | None = None) -> tuple[list[RawVersion], list[str]]:
        """Every version under raw/ and a message per path skipped, saying why
        (`core.lake.raw_scan.scan_raw`); `doc_id` limits the scan to one document."""
        return scan_raw(self.raw_dir, doc_id, self._opened_memo, self.raw_paths)


def version_sha256(lake: Lake, raw: RawVersion) -> str:
    """The sha256 of a version's PDF, hashed again only when the file's state changed
    since a command last hashed it (`Lake.memo`; the state from the scan's listing, else
    one stat)."""
    state = raw.pdf_state or path_state(raw.pdf_path)
    sha = lake.memo.get("sha256", raw.key, state)
    if not isinstance(sha, str):
        sha = sha256_file(raw.pdf_path)
        lake.memo.put("sha256", raw.key, state, sha)
    return sha
