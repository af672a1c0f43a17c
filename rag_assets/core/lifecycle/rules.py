"""The lifecycle rules, each defined once: in force on a date, live, superseded."""

from __future__ import annotations

import datetime as dt

from rag_assets.core.lake.layout import split_key
from rag_assets.core.lake.sidecar import Sidecar


def is_live(sidecar: Sidecar, as_of: dt.date | None = None) -> bool:
    """Whether a version should be in the index: not revoked and not expired."""
    as_of = as_of or dt.date.today()
    if sidecar.status != "active":
        return False
    return sidecar.valid_to is None or sidecar.valid_to >= as_of


def superseded(starts: dict[str, dt.date | None], today: dt.date) -> dict[str, str]:
    """Versions replaced by a newer version of the same document, with the key of the
    replacement: among the versions in force on `today` (`valid_from` in `starts`), the
    one with the latest `valid_from` replaces the others.

    A version without `valid_from` counts as valid since forever. Versions of a document
    none of which has a `valid_from` supersede nothing: nothing tells which is newer.
    """
    by_doc: dict[str, list[tuple[dt.date, str]]] = {}
    for key, start in starts.items():
        by_doc.setdefault(split_key(key)[0], []).append((start or dt.date.min, key))
    out: dict[str, str] = {}
    for entries in by_doc.values():
        in_force = [e for e in entries if e[0] <= today]
        if len(in_force) < 2 or all(start == dt.date.min for start, _ in in_force):
            continue
        newest_start, newest = max(in_force)
        for start, key in in_force:
            if start < newest_start:
                out[key] = newest
    return out


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
