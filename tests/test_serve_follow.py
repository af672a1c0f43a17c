"""How `trecho serve` follows a table that other processes write: `FollowedTable` on a real
LanceDB folder. Every commit, deletion, drop and re-create must be read by the very next
request, however close together they come (the server's HTTP tests, tests/test_serve.py,
follow a revocation and a backfill switch end to end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lancedb
import pyarrow as pa
import pytest

from rag_assets.core.index import FollowedTable
from rag_assets.core.index import followed as followed_module

NAME = "chunks__followed"


def rows(tag: str, n: int) -> pa.Table:
    return pa.table({"chunk_id": [f"{tag}-{i}" for i in range(n)], "tag": [tag] * n})


def tags(snapshot: tuple[Any, int]) -> set[str]:
    """The `tag` values the handle a request would get reads."""
    tbl = snapshot[0]
    return set(tbl.to_arrow().column("tag").to_pylist()) if tbl is not None else set()


@pytest.fixture(params=["settled after 2 s", "every look trusted"])
def trust(request, monkeypatch) -> str:
    """The default, and trusting an unchanged `_versions` folder at once: a commit must
    then be told by the folder alone."""
    if request.param == "every look trusted":
        monkeypatch.setattr(followed_module, "SETTLED_NS", -(10**18))
    return request.param


def test_every_commit_is_read_by_the_next_request(tmp_path: Path, trust: str) -> None:
    db = lancedb.connect(tmp_path)
    followed = FollowedTable(lancedb.connect(tmp_path), NAME)
    assert followed.snapshot() == (None, -1)
    tbl = db.create_table(NAME, rows("a", 2))
    for step in range(12):  # back to back: several commits within one tick of a coarse clock
        first = followed.snapshot()
        assert first[1] == tbl.version and first[0].count_rows() == 2 + step
        assert followed.snapshot()[1] == tbl.version  # asked again: unchanged
        tbl.add(rows(f"b{step}", 1))
        assert followed.snapshot()[1] == tbl.version == first[1] + 1
        assert first[0].count_rows() == 2 + step  # a handle given out stays on its version
    tbl.delete("tag = 'a'")  # a revocation
    assert "a" not in tags(followed.snapshot())


def test_a_dropped_and_recreated_table_is_read_anew(tmp_path: Path, trust: str) -> None:
    """A re-created table's version numbers start again: the same number as the dropped
    table's must still give the new table (a backfill switch drops and re-creates)."""
    db = lancedb.connect(tmp_path)
    followed = FollowedTable(lancedb.connect(tmp_path), NAME)
    db.create_table(NAME, rows("old", 2)).add(rows("old", 1))
    seen = followed.snapshot()
    assert tags(seen) == {"old"} and followed.snapshot()[1] == seen[1]
    db.drop_table(NAME)
    assert followed.snapshot() == (None, -1)
    db.create_table(NAME, rows("new", 2)).add(rows("new", 1))
    assert followed.snapshot()[1] == seen[1] and tags(followed.snapshot()) == {"new"}
    db.drop_table(NAME)  # and now with no request in between
    db.create_table(NAME, rows("newer", 2)).add(rows("newer", 1))
    assert tags(followed.snapshot()) == {"newer"}
