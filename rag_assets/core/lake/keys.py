"""Document-version keys and the lake's file primitives: the key rule
(`<doc_id>@<version>`, docs/design.md), `LakeError`, a raw version's files (`RawVersion`),
a file's sha256, an atomic write, where a store's lock lives.

The bottom of `core.lake`: it imports no other lake module, so `layout` (the `Lake`),
`listing`, `ledger` and `raw_scan` all build on it without an import cycle. `layout`
re-exports its names, which callers import from there."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from upath import UPath

from rag_assets.core.errors import UserError

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


CREDENTIALS = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"


def store_problem(uri: str, exc: BaseException) -> str:
    """One line for an object store's error on `uri`: which setting, and what is wrong."""
    text = str(exc)
    found = re.search(r"(https?://[^/\s\"')]+)", text)
    endpoint = f"AWS_ENDPOINT_URL ({found.group(1)})" if found else "AWS_ENDPOINT_URL"
    if "BadScheme" in text:
        why = (
            f"{endpoint} is plain http, which LanceDB refuses unless AWS_ALLOW_HTTP=true "
            "is set too (deploy/trecho.env)"
        )
    elif "NoSuchBucket" in text or "bucket does not exist" in text.lower():
        why = f"no such bucket at {endpoint}: create it first (docs/deploy.md)"
    elif any(word in text for word in ("InvalidAccessKeyId", "SignatureDoesNotMatch", "403")):
        why = f"the store at {endpoint} refused the credentials: check {CREDENTIALS}"
    elif any(word in text.lower() for word in ("connect", "dns", "timed out", "refused")):
        why = f"the store at {endpoint} does not answer: check AWS_ENDPOINT_URL"
    else:
        first = text.splitlines()[0][:160] if text else type(exc).__name__
        why = f"the object store refused it ({first}): check AWS_ENDPOINT_URL, "
        why += f"AWS_REGION, {CREDENTIALS}"
    return f"{uri}: {why}"
