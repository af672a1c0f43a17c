"""The lifecycle rules, each defined once: in force on a date, live, searchable on a date,
superseded. The assets, the reconcile plan, the CLI, search and the server all ask here;
search's SQL filter is built here too (`searchable_sql`), from the same rule as its
Python twin (`searchable`), so the two cannot drift apart."""

from __future__ import annotations

import datetime as dt

from rag_assets.core.lake import ACTIVE, Sidecar, split_key


def is_active(status: str) -> bool:
    """Whether a version's status lets it be indexed and answer searches (not revoked or
    deleted)."""
    return status == ACTIVE


def started(valid_from: dt.date | None, day: dt.date) -> bool:
    """Whether a version's validity has begun on `day` (no `valid_from`: since forever)."""
    return valid_from is None or valid_from <= day


def expired(valid_to: dt.date | None, day: dt.date) -> bool:
    """Whether a version's validity ended before `day` (`valid_to` is its last day in
    force; none: it never ends)."""
    return valid_to is not None and valid_to < day


def in_force(valid_from: dt.date | None, valid_to: dt.date | None, day: dt.date) -> bool:
    """Whether a version is in force on `day`: begun and not ended (both bounds count)."""
    return started(valid_from, day) and not expired(valid_to, day)


def searchable(
    status: str,
    valid_from: dt.date | None,
    valid_to: dt.date | None,
    day: dt.date,
    include_revoked: bool = False,
) -> bool:
    """Whether search answers from a version asked as of `day`: active (any status with
    `include_revoked`) and in force that day. `/documents` calls it `in_force`."""
    return (include_revoked or is_active(status)) and in_force(valid_from, valid_to, day)


def _sql_date(day: dt.date) -> str:
    return f"date '{day.isoformat()}'"


def searchable_sql(day: dt.date, include_revoked: bool = False) -> str:
    """`searchable` as a LanceDB (DataFusion) filter on the table's `status`,
    `valid_from` and `valid_to` columns."""
    sql = _sql_date(day)
    parts = [
        f"(valid_from IS NULL OR valid_from <= {sql})",
        f"(valid_to IS NULL OR valid_to >= {sql})",
    ]
    if not include_revoked:
        parts.insert(0, f"status = '{ACTIVE}'")
    return " AND ".join(parts)


def why_not_live(sidecar: Sidecar, as_of: dt.date) -> str | None:
    """Why a version must not be in the index on `as_of` (its status, or `expired on
    <valid_to>`); None when it is live. A version whose validity has not begun yet is
    live: indexed ahead, search finds it from its `valid_from` on (`searchable`)."""
    if not is_active(sidecar.status):
        return sidecar.status
    if expired(sidecar.valid_to, as_of):
        return f"expired on {sidecar.valid_to}"
    return None


def superseded(starts: dict[str, dt.date | None], today: dt.date) -> dict[str, str]:
    """Versions replaced by a newer version of the same document, with the key of the
    replacement: among the versions begun on `today` (`valid_from` in `starts`), the
    one with the latest `valid_from` replaces the others.

    A version without `valid_from` counts as valid since forever. Versions of a document
    none of which has a `valid_from` supersede nothing: nothing tells which is newer.
    """
    by_doc: dict[str, list[tuple[dt.date, str]]] = {}
    for key, start in starts.items():
        doc_id = split_key(key)[0]
        if started(start, today):
            by_doc.setdefault(doc_id, []).append((start or dt.date.min, key))
    out: dict[str, str] = {}
    for begun in by_doc.values():
        if len(begun) < 2 or all(start == dt.date.min for start, _ in begun):
            continue
        newest_start, newest = max(begun)
        for start, key in begun:
            if start < newest_start:
                out[key] = newest
    return out


def superseded_by_indexed(
    starts: dict[str, dt.date | None], indexed: set[str], today: dt.date
) -> dict[str, str]:
    """`superseded`, counting only replacements that are in the index: a newer
    version replaces the older ones once it is committed, never before (a failed newer
    version changes nothing for them). Each key is compared with its own document's
    committed versions only (with every committed key, a lake of 10,000 versions took
    minutes)."""
    committed: dict[str, dict[str, dt.date | None]] = {}  # by document: each key's rivals
    for key, start in starts.items():
        if key in indexed:
            committed.setdefault(split_key(key)[0], {})[key] = start
    out: dict[str, str] = {}
    for key, start in starts.items():
        rivals = committed.get(split_key(key)[0], {})
        newer = superseded({**rivals, key: start}, today).get(key) if rivals else None
        if newer is not None:
            out[key] = newer
    return out
