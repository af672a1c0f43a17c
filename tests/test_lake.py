"""Keys, sidecars and the raw folder scan: bad input is named and refused."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

import pyarrow as pa
import pytest

from rag_assets.core.lake.keys import LakePath
from rag_assets.core.lake.layout import Lake, LakeError, make_key, split_key
from rag_assets.core.lake.lease import held_lease
from rag_assets.core.lake.parquet import first_rows, write_stage
from rag_assets.core.lake.sidecar import Sidecar
from rag_assets.core.rules import why_not_live


@pytest.mark.parametrize("key", ["lgpd@2018", "manual-beneficiario@v7", "a.b_c@1.0"])
def test_valid_keys_round_trip(key):
    doc_id, version = split_key(key)
    assert make_key(doc_id, version) == key


@pytest.mark.parametrize(
    "key", ["LGPD@2018", "lgpd", "a@b@c", "../x@1", "lgpd@..", "doc id@1", "doc@v/1", ".x@1"]
)
def test_invalid_keys_are_refused_with_the_rule(key):
    with pytest.raises(LakeError, match="lowercase|expected"):
        split_key(key)


def test_sidecar_errors_name_the_file(tmp_path: Path):
    bad_yaml = tmp_path / "v1.yaml"
    bad_yaml.write_text("title: [unclosed\n", encoding="utf-8")
    with pytest.raises(LakeError, match=str(bad_yaml)):
        Sidecar.read(bad_yaml)
    bad_status = tmp_path / "v2.yaml"
    bad_status.write_text("status: archived\n", encoding="utf-8")
    with pytest.raises(LakeError, match="status 'archived'"):
        Sidecar.read(bad_status)
    bad_date = tmp_path / "v3.yaml"
    bad_date.write_text("valid_from: next monday\n", encoding="utf-8")
    with pytest.raises(LakeError, match="valid_from"):
        Sidecar.read(bad_date)


def test_liveness_follows_status_and_validity():
    today = dt.date(2026, 6, 1)
    assert why_not_live(Sidecar(), today) is None
    assert why_not_live(Sidecar(status="revoked"), today) == "revoked"
    assert why_not_live(Sidecar(valid_to=dt.date(2026, 2, 28)), today) == "expired on 2026-02-28"
    assert why_not_live(Sidecar(valid_to=dt.date(2026, 6, 1)), today) is None


def test_scan_finds_versions_and_reports_bad_names(tmp_path: Path):
    lake = Lake(tmp_path)
    (tmp_path / "raw" / "manual").mkdir(parents=True)
    (tmp_path / "raw" / "manual" / "v1.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "raw" / "Bad Doc").mkdir()
    (tmp_path / "raw" / "Bad Doc" / "v1.pdf").write_bytes(b"%PDF-1.4")
    found, problems = lake.scan_raw()
    assert [v.key for v in found] == ["manual@v1"]
    assert len(problems) == 1 and "Bad Doc" in problems[0]


def test_symlink_leaving_the_lake_is_refused(tmp_path: Path):
    outside = tmp_path / "outside.pdf"
    outside.write_bytes(b"%PDF-1.4")
    lake = Lake(tmp_path / "lake")
    (lake.raw_dir / "doc").mkdir(parents=True)
    (lake.raw_dir / "doc" / "v1.pdf").symlink_to(outside)
    found, problems = lake.scan_raw()
    assert found == []
    assert "outside the lake" in problems[0]


def test_linked_folders_and_files_are_named_once_with_what_is_wrong(tmp_path: Path):
    """A folder linked from outside the lake printed its file's path twice
    (`.../v1.pdf: .../v1.pdf: resolves outside the lake root`); a link that leads
    nowhere was `not in a document folder`, or (inside a document folder) skipped
    without a word."""
    outside = tmp_path / "outside" / "docs"
    outside.mkdir(parents=True)
    (outside / "v1.pdf").write_bytes(b"%PDF-1.4")
    lake = Lake(tmp_path / "lake")
    (lake.raw_dir / "doc").mkdir(parents=True)
    (lake.raw_dir / "doc" / "v1.pdf").write_bytes(b"%PDF-1.4")
    (lake.raw_dir / "linked").symlink_to(outside, target_is_directory=True)
    (lake.raw_dir / "broken").symlink_to("../nowhere", target_is_directory=True)
    (lake.raw_dir / "filed").symlink_to(lake.raw_dir / "doc" / "v1.pdf")
    (lake.raw_dir / "doc" / "v2.pdf").symlink_to(tmp_path / "gone.pdf")
    found, problems = lake.scan_raw()
    assert [v.key for v in found] == ["doc@v1"]
    raw = lake.raw_dir
    assert problems == [
        f"{raw}/broken: a symbolic link to ../nowhere, which does not exist "
        "(a document is a folder raw/<doc_id>/)",
        f"{raw}/doc/v2.pdf: a symbolic link to {tmp_path}/gone.pdf, which does not exist",
        f"{raw}/filed: a symbolic link to the file {raw}/doc/v1.pdf, not to a folder "
        "(a version is raw/<doc_id>/<version>.pdf)",
        f"{raw}/linked/v1.pdf: resolves outside the lake root {lake.root} (to {outside}/v1.pdf)",
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("valid_from: 2026-03-01\nvalid_to: 2026-01-31\n", "valid_to 2026-01-31 is before"),
        (
            "title: x\nvalid_from: 2026-02-30\n",
            "valid_from '2026-02-30' (line 2) does not exist (day is out of range for month)",
        ),
        (
            "valid_to: 2026-13-01\n",
            "valid_to '2026-13-01' (line 1) does not exist (month must be in 1..12)",
        ),
        ("metadata:\n  signed: 2026-02-30\n", "metadata.signed '2026-02-30' (line 2)"),
        ("valid_from: yesterday\n", "valid_from 'yesterday' is not a date (YYYY-MM-DD)"),
        ("valid_form: 2026-03-01\nowner: x\n", "unknown sidecar keys 'owner', 'valid_form'"),
        ("status: withdrawn\n", "status 'withdrawn' must be one of"),
        ("title: [unclosed\n", "sidecar does not parse as YAML"),
    ],
)
def test_a_bad_sidecar_is_one_clear_error_naming_the_file(tmp_path: Path, text, problem):
    path = tmp_path / "v1.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LakeError) as error:
        Sidecar.read(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and problem in message and "\n" not in message


def test_a_sidecar_valid_for_one_day_is_accepted(tmp_path: Path):
    path = tmp_path / "v1.yaml"
    path.write_text("valid_from: 2026-03-01\nvalid_to: 2026-03-01\n", encoding="utf-8")
    assert Sidecar.read(path).valid_to == dt.date(2026, 3, 1)


def test_files_that_cannot_be_a_version_are_listed_with_why(tmp_path: Path):
    lake = Lake(tmp_path)
    doc = tmp_path / "raw" / "doc"
    (doc / "old").mkdir(parents=True)
    for name in ("v1.pdf", "v2.PDF", "v3.yml", "notes.txt", "v4.yaml", ".v1.pdf.tmp"):
        (doc / name).write_bytes(b"%PDF-1.4")
    (tmp_path / "raw" / "stray.pdf").write_bytes(b"%PDF-1.4")
    found, problems = lake.scan_raw()
    assert [v.key for v in found] == ["doc@v1"]
    why = {Path(p.split(": ")[0]).name: p.split(": ", 1)[1] for p in problems}
    assert why == {
        "stray.pdf": "not in a document folder (a version is raw/<doc_id>/<version>.pdf)",
        "v2.PDF": "extension '.PDF' is not read; rename it to v2.pdf",
        "v3.yml": "extension '.yml' is not read; rename it to v3.yaml",
        "notes.txt": "not a PDF or a sidecar (a version is raw/<doc_id>/<version>.pdf)",
        "v4.yaml": "sidecar without its PDF v4.pdf",
        "old": "a folder inside a document folder (a version is raw/<doc_id>/<version>.pdf)",
        "raw": "1 hidden entry not read (doc/.v1.pdf.tmp): a name starting with '.' is "
        "never a version",
    }


@pytest.mark.parametrize("where", ["folder", "object store"])
def test_first_rows_reads_each_version_s_own_row(tmp_path: Path, where: str):
    lake = Lake(tmp_path if where == "folder" else f"memory://{tmp_path.name}/lake")
    schema = pa.schema([("sha256", pa.string()), ("title", pa.string())])
    write_stage(lake, "documents", "manual@v1", [{"sha256": "a", "title": "One"}], schema)
    write_stage(lake, "documents", "manual@v2", [{"sha256": "b", "title": "Two"}], schema)
    rows = first_rows(lake, "documents", ["manual@v2", "manual@v1", "manual@v3"])
    assert rows == {
        "manual@v1": {"sha256": "a", "title": "One"},
        "manual@v2": {"sha256": "b", "title": "Two"},
    }  # a version without a file has no row


def test_hidden_entries_of_raw_are_counted_in_one_line(tmp_path: Path):
    """Dot files in raw/ were ignored without a word: a `.v2.pdf` copied by a tool that
    hides it until done, or a version someone hid, left no trace in any output."""
    lake = Lake(tmp_path / "lake")
    (lake.raw_dir / "doc").mkdir(parents=True)
    (lake.raw_dir / "doc" / "v1.pdf").write_bytes(b"%PDF-1.4")
    (lake.raw_dir / "doc" / ".v2.pdf").write_bytes(b"%PDF-1.4")
    (lake.raw_dir / ".DS_Store").write_bytes(b"")
    (lake.raw_dir / ".drafts").mkdir()
    found, problems = lake.scan_raw()
    assert [v.key for v in found] == ["doc@v1"]
    assert problems == [
        f"{lake.raw_dir}: 3 hidden entries not read (.DS_Store, .drafts, doc/.v2.pdf): "
        "a name starting with '.' is never a version"
    ]
    assert lake.scan_raw("doc")[1] == [
        f"{lake.raw_dir}: 1 hidden entry not read (doc/.v2.pdf): "
        "a name starting with '.' is never a version"
    ]
    (lake.raw_dir / "doc" / ".v2.pdf").unlink()
    assert lake.scan_raw("doc")[1] == []


def test_a_lock_file_is_removed_only_while_no_one_holds_it(tmp_path: Path):
    """The lock of what no longer exists (a removed version, a dropped table) is deleted,
    never from under a holder; the next `file_lock` makes it again."""
    from rag_assets.core.lake.locks import file_lock, remove_lock, waited_lock

    path = tmp_path / ".locks" / "doc@v1.lock"
    with file_lock(path):
        assert remove_lock(path) is False and path.exists()
    with waited_lock(path, "test", print):
        assert remove_lock(path) is False and path.exists()
    assert remove_lock(path) is True and not path.exists()
    assert remove_lock(path) is False
    with file_lock(path):
        assert path.exists()


def test_one_purge_lease_holder_and_a_dead_ones_lease_taken_over(tmp_path: Path) -> None:
    """The lease removals run under (`orchestration/removals.py`): one holder at a time; a
    lease past its time (its holder died) is taken over, and the late holder, when it
    ends, leaves its successor's lease in place."""
    folder = Lake(tmp_path).leases_dir
    with held_lease(folder, "purge", "host A", seconds=-1) as first:  # expired at once
        assert first is None
        with held_lease(folder, "purge", "host B") as second:
            assert second is None  # took over host A's expired lease
            with held_lease(folder, "purge", "host C") as third:
                assert third is not None and third.startswith("host B (until ")
        with held_lease(folder, "purge", "host C") as fourth:
            assert fourth is None  # host B let go
            with held_lease(folder, "purge", "host D") as fifth:
                assert fifth is not None and fifth.startswith("host C")
    assert list(folder.iterdir()) == []


def held_past_its_term(folder: LakePath) -> None:
    """Host A holds the purge lease (a term of one second) over two terms: host B finds
    it held by A all along, then takes it once A lets go (the heartbeat renewed it)."""
    with held_lease(folder, "purge", "host A", seconds=1.0) as first:
        assert first is None
        for _ in range(7):  # over two terms, each a second (the file's `until` is in seconds)
            time.sleep(0.3)
        with held_lease(folder, "purge", "host B", seconds=1.0) as second:
            assert second is not None and second.startswith("host A (until "), second
    with held_lease(folder, "purge", "host B", seconds=1.0) as third:
        assert third is None


def test_a_live_holder_keeps_the_purge_lease_past_its_term(tmp_path: Path) -> None:
    """A removal longer than the lease's term: its holder renews the lease while it runs,
    so another host finds it held past the first term and takes it once it is let go."""
    folder = Lake(tmp_path).leases_dir
    held_past_its_term(folder)
    assert list(folder.iterdir()) == []
