"""Why a search found nothing, in words: no version yet, a document or version the index
does not hold, none of them in force on the date asked, or every hit under min_score."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from rag_assets.core.rules import is_active, searchable, started


def why_no_hits(
    versions: Sequence[Mapping[str, Any]],
    day: dt.date,
    doc_id: str | None = None,
    version: str | None = None,
) -> str | None:
    """What leaves a search nothing to answer from, given the versions the table holds
    (`Index.version_rows`): None when some version passes the filters on `day` (then
    the hits were refused for their score, or the text matched nothing)."""
    if not versions:
        return "the index holds no version yet (run `trecho materialize`)"
    scope = [v for v in versions if doc_id is None or v["doc_id"] == doc_id]
    if not scope:
        held = ", ".join(sorted({v["doc_id"] for v in versions}))
        return f"the index holds no document {doc_id!r} (it holds {held})"
    chosen = [v for v in scope if version is None or v["version"] == version]
    if not chosen:
        held = ", ".join(sorted({v["version"] for v in scope}))
        owner = f" of {doc_id}" if doc_id else ""
        return f"the index holds no version {version!r}{owner} (it holds {held})"
    live = [v for v in chosen if searchable(v["status"], v["valid_from"], v["valid_to"], day)]
    if live:
        return None
    reasons = "; ".join(f"{v['partition_key']} {_not_in_force(v, day)}" for v in chosen)
    return f"no version {'asked for ' if doc_id or version else ''}is in force on {day}: {reasons}"


def _not_in_force(row: Mapping[str, Any], day: dt.date) -> str:
    """Why one version is not searched on `day`: its status, or its validity."""
    if not is_active(row["status"]):
        return f"is {row['status']}"
    if not started(row["valid_from"], day):
        return f"is valid from {row['valid_from']}"
    return f"ended on {row['valid_to']}"


def no_results(
    index: Any,
    min_score: float | None,
    doc_id: str | None = None,
    version: str | None = None,
    as_of: dt.date | None = None,
) -> str:
    """The line `trecho search` prints for an empty answer: why there is none."""
    reason = why_no_hits(index.version_rows(), as_of or dt.date.today(), doc_id, version)
    if reason is not None:
        return f"no results: {reason}"
    if min_score is not None:
        return (
            f"no results with a cosine of {min_score} or more to the query (--min-score; "
            "-1 keeps every hit): the documents hold no answer"
        )
    return "no results: no chunk holds the query's words"
