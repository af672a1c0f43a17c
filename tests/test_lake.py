"""Keys, sidecars and the raw folder scan: bad input is named and refused."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from rag_assets.core.lake import Lake, LakeError, Sidecar, is_live, make_key, split_key


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
    assert is_live(Sidecar(), today)
    assert not is_live(Sidecar(status="revoked"), today)
    assert not is_live(Sidecar(valid_to=dt.date(2026, 2, 28)), today)
    assert is_live(Sidecar(valid_to=dt.date(2026, 6, 1)), today)


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
