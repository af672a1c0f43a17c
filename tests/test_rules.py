"""The search-time rule has two forms, the SQL filter LanceDB applies and the Python
check that decides whether a filter is needed (and what `/documents` calls in force):
on a real LanceDB table they keep the same versions at every edge of validity."""

from __future__ import annotations

import datetime as dt

import lancedb
import pyarrow as pa
import pytest

from rag_assets.core.rules import searchable, searchable_sql

DAY = dt.date(2026, 3, 10)
BEFORE, AFTER = DAY - dt.timedelta(days=1), DAY + dt.timedelta(days=1)
VERSIONS = {  # key: (status, valid_from, valid_to)
    "open": ("active", None, None),
    "starts-that-day": ("active", DAY, None),
    "ends-that-day": ("active", None, DAY),
    "only-that-day": ("active", DAY, DAY),
    "starts-the-day-after": ("active", AFTER, None),
    "ended-the-day-before": ("active", None, BEFORE),
    "around-the-day": ("active", BEFORE, AFTER),
    "revoked": ("revoked", None, None),
    "revoked-that-day": ("revoked", DAY, DAY),
}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory):
    """The versions as rows of a LanceDB table with the index's lifecycle columns."""
    db = lancedb.connect(tmp_path_factory.mktemp("rules"))
    rows = [
        {"partition_key": k, "status": s, "valid_from": f, "valid_to": t}
        for k, (s, f, t) in VERSIONS.items()
    ]
    schema = pa.schema(
        [
            ("partition_key", pa.string()),
            ("status", pa.string()),
            ("valid_from", pa.date32()),
            ("valid_to", pa.date32()),
        ]
    )
    return db.create_table("lifecycle", pa.Table.from_pylist(rows, schema=schema))


@pytest.mark.parametrize("include_revoked", [False, True])
@pytest.mark.parametrize("day", [BEFORE, DAY, AFTER])
def test_the_sql_filter_and_the_python_rule_keep_the_same_versions(
    table, day: dt.date, include_revoked: bool
):
    where = searchable_sql(day, include_revoked)
    found = table.search().where(where).select(["partition_key"]).limit(None).to_arrow()
    by_sql = set(found.column("partition_key").to_pylist())
    by_python = {k for k, v in VERSIONS.items() if searchable(*v, day, include_revoked)}
    assert by_sql == by_python
    if day == DAY:  # both bounds count: a version is in force on its first and last day
        expected = {"open", "starts-that-day", "ends-that-day", "only-that-day", "around-the-day"}
        revoked = {"revoked", "revoked-that-day"} if include_revoked else set()
        assert by_python == expected | revoked
