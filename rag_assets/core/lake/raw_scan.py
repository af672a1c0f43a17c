"""The raw folder scanned: every `raw/<doc_id>/<version>.pdf` as a `RawVersion` (with the
file states its listing gave), and a message per path that is no version, saying why.

`Lake.scan_raw` runs it on its raw folder. A local folder is read with `os.scandir`, each
document folder listed only when it changed (`Lake.memo`); an object store's folders with
one fsspec listing each."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG
from typing import Any

from rag_assets.core.lake.keys import LakeError, LakePath, RawVersion, make_key
from rag_assets.core.lake.listing import LakeMemo, local_state, remote_state

RAW_LAYOUT = "a version is raw/<doc_id>/<version>.pdf"


def scan_raw(
    raw_dir: LakePath,
    doc_id: str | None,
    memo: Callable[[], LakeMemo],
    check: Callable[[str], object],
) -> tuple[list[RawVersion], list[str]]:
    """Every `<doc_id>/<version>.pdf` under `raw_dir`, plus a message per path it skipped
    and why: a file outside a document folder, an extension other than `.pdf` and
    `.yaml` (`v1.PDF`), a sidecar without its PDF, a folder inside a document folder,
    a name that breaks the key rule, a path leading outside the lake, an empty document
    folder (a document whose files were moved away, or not copied yet). Hidden files
    (`.name`) are never read, and one message counts them (`hidden`). `doc_id` limits
    the scan to one document; `memo` is the lake's memo (opened when asked); `check(key)`
    raises `LakeError` for a version whose files lead outside the lake (`Lake.raw_paths`)."""
    found: list[RawVersion] = []
    problems: list[str] = []
    if not raw_dir.is_dir():
        return found, problems
    unseen: list[str] = []  # hidden entries, as paths under raw/
    if isinstance(raw_dir, Path):
        _scan_folder(raw_dir, doc_id, memo, check, found, problems, unseen)
        problems.extend(hidden(raw_dir, unseen))
        return found, problems
    layout = RAW_LAYOUT
    for doc_dir in sorted(raw_dir.iterdir()):
        if doc_id not in (None, doc_dir.name):
            continue
        if doc_dir.name.startswith("."):
            unseen.append(doc_dir.name)
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
                unseen.append(f"{doc_dir.name}/{name}")
                continue
            kind = entries[name].get("type")
            problem = _raw_problem(str(item), item.stem, item.suffix, kind == "directory", names)
            if problem is not None:  # "" for a sidecar next to its PDF
                problems.extend([problem] if problem else [])
                continue
            try:
                check(make_key(doc_dir.name, item.stem))
            except LakeError as exc:
                problems.append(_named(str(item), exc))
                continue
            side = entries.get(f"{item.stem}.yaml")
            found.append(
                RawVersion(
                    doc_dir.name,
                    item.stem,
                    item,
                    item.with_suffix(".yaml"),
                    remote_state(entries[name]),
                    remote_state(side) if side and side.get("type") == "file" else None,
                )
            )
    problems.extend(hidden(raw_dir, unseen))
    return found, problems


def hidden(raw_dir: LakePath, names: list[str]) -> list[str]:
    """One message for the hidden entries of raw/ (`.DS_Store`, `doc/.v1.pdf.swp`: paths
    under raw/), which are never read, naming the first few; none when there are none."""
    if not names:
        return []
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    many = f"{len(names)} hidden entries" if len(names) > 1 else "1 hidden entry"
    return [f"{raw_dir}: {many} not read ({shown}): a name starting with '.' is never a version"]


def _scan_folder(
    raw: Path,
    doc_id: str | None,
    memo: Callable[[], LakeMemo],
    check: Callable[[str], object],
    found: list[RawVersion],
    problems: list[str],
    unseen: list[str],
) -> None:
    """`scan_raw` on a local folder: each document folder listed once (`os.scandir`),
    every file's state taken from that listing, names handled as strings (a path
    object made only for what is found), and a path resolved only where a symlink
    could lead it outside the lake."""
    base = str(raw)
    linked = raw.is_symlink()
    with os.scandir(raw) as listing:
        docs = sorted(listing, key=lambda e: e.name)
    for doc in docs:
        if doc_id not in (None, doc.name):
            continue
        if doc.name.startswith("."):
            unseen.append(doc.name)
            continue
        folder = f"{base}/{doc.name}"
        if not doc.is_dir():
            problems.append(f"{folder}: {_no_folder(doc)}")
            continue
        entries = _entries(memo(), doc, folder)  # name -> [is_dir, is_symlink]
        names = set(entries)
        if not [n for n in names if not n.startswith(".")]:
            problems.append(f"{folder}: an empty document folder ({RAW_LAYOUT})")
            continue
        for name in sorted(names):
            if name.startswith("."):
                unseen.append(f"{doc.name}/{name}")
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
                    check(key)
                state = local_state(os.stat(shown))
                side_state = _file_state(f"{folder}/{stem}.yaml") if side else None
            except LakeError as exc:
                problems.append(_named(shown, exc))
                continue
            except FileNotFoundError:  # removed while listed, or a broken link: say which
                if is_link and os.path.islink(shown):
                    problems.append(f"{shown}: {_broken(shown)}")
                continue
            side_path = f"{folder}/{stem}.yaml"
            found.append(RawVersion(doc.name, stem, shown, side_path, state, side_state))


def _named(shown: str, exc: LakeError) -> str:
    """The problem of the entry `shown`, its path said once (a message from
    `Lake.raw_paths` starts with the path already)."""
    message = str(exc)
    return message if message.startswith(f"{shown}: ") else f"{shown}: {message}"


def _broken(path: str) -> str:
    """Why a symbolic link that leads nowhere is skipped, naming where it points."""
    return f"a symbolic link to {os.readlink(path)}, which does not exist"


def _no_folder(entry: os.DirEntry) -> str:
    """Why an entry of raw/ that is no folder is no document: a broken symbolic link, a
    link to a file, or a file outside any document folder."""
    if entry.is_symlink() and not os.path.exists(entry.path):
        return f"{_broken(entry.path)} (a document is a folder raw/<doc_id>/)"
    if entry.is_symlink():
        return (
            f"a symbolic link to the file {os.readlink(entry.path)}, not to a folder ({RAW_LAYOUT})"
        )
    return f"not in a document folder ({RAW_LAYOUT})"


def _entries(memo: LakeMemo, doc: os.DirEntry, folder: str) -> dict[str, list[bool]]:
    """Name -> [is a folder, is a symlink] of each entry of a document folder: listed
    again only when the folder's own state changed (any entry added, removed or
    renamed changes it), else as the memo kept it (`Lake.memo`); a listing costs far
    more than a stat on a large lake."""
    state = local_state(doc.stat())
    kept = memo.get("listing", doc.name, state)
    if isinstance(kept, dict):
        return kept
    with os.scandir(folder) as listing:
        entries = {e.name: [e.is_dir(), e.is_symlink()] for e in listing}
    memo.put("listing", doc.name, state, entries)
    return entries


def _file_state(path: str) -> str | None:
    """The state of a local file (`core.lake.listing.local_state`), None when it is no
    file (gone, a folder, a broken link)."""
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
