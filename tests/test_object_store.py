"""The lake and LanceDB in an object store: a moto S3 server on loopback (started here),
the real CLI, the real model, a real Dagster instance. Only the endpoint is local."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance

from rag_assets.cli import main
from rag_assets.core.lake.layout import Lake, LakeError

from .conftest import SAMPLE_LAKE, copy_lake, moto_s3
from .test_lake import held_past_its_term

# slow: a moto S3 server, a lake indexed on it
pytestmark = pytest.mark.slow

BUCKET = "trecho-test"
URI = f"s3://{BUCKET}/lake"


@pytest.fixture(scope="module")
def s3() -> Iterator[Any]:
    """A moto S3 server on a free loopback port, the AWS_* variables pointing at it, and
    a boto3 client on an empty bucket."""
    with moto_s3(BUCKET) as client:
        yield client


def keys(client: Any, prefix: str = "lake/") -> list[str]:
    """Every object key under a prefix of the bucket."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
    return [obj["Key"] for page in pages for obj in page.get("Contents", [])]


def run(*args: str) -> str:
    """`trecho ARGS` in this process; its output (the exit code must be 0)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    assert code == 0, out.getvalue()
    return out.getvalue()


def test_a_lake_on_s3_is_indexed_searched_and_revoked_there(s3, tmp_path, monkeypatch):
    source = copy_lake(
        tmp_path / "source", ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"]
    )
    for path in sorted(p for p in source.root.rglob("*") if p.is_file()):
        s3.upload_file(str(path), BUCKET, f"lake/{path.relative_to(source.root).as_posix()}")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)

    out = run("materialize", "--lake", URI)
    assert "manual-operacao@v1 ... ok" in out and "manual-beneficiario@v7 ... ok" in out
    stored = keys(s3)
    for stage in ("documents", "pages", "nodes", "tables", "chunks"):
        assert f"lake/derived/{stage}/manual-operacao@v1.parquet" in stored
    assert any(k.startswith("lake/lancedb/chunks__all-minilm-l6-v2.lance/") for k in stored)
    assert any(k.startswith("lake/reports/") and k.endswith("/report.html") for k in stored)
    assert not any("@v6" in k for k in stored if "/derived/" in k)  # v6 is revoked
    # nothing landed in a local folder named after the URI
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith("s3:") or p.name == BUCKET]

    # another host (its own HOME, so its own caches) says what the runs ran on
    with monkeypatch.context() as other_host:
        other_host.setenv("HOME", str(tmp_path / "other-host"))
        said = run("status", "--lake", URI)
    assert "embedding: passages on " in said and "passages on not yet measured" not in said

    question = "qual o limite de vibração?"
    hits = json.loads(run("search", question, "-k", "3", "--json", "--lake", URI))
    assert hits and hits[0]["doc_id"] == "manual-operacao"
    assert "skipped  manual-operacao@v1: up to date" in run(
        "materialize", "--skip-eval", "--lake", URI
    )

    # revoke v1 in the bucket: its files and rows go, the other document stays searchable
    sidecar = "lake/raw/manual-operacao/v1.yaml"
    text = s3.get_object(Bucket=BUCKET, Key=sidecar)["Body"].read().decode("utf-8")
    revoked = re.sub(r"(?m)^status:.*$", "", text) + "\nstatus: revoked\n"
    s3.put_object(Bucket=BUCKET, Key=sidecar, Body=revoked.encode("utf-8"))
    out = run("materialize", "--skip-eval", "--lake", URI)
    assert "removed  manual-operacao@v1" in out
    assert not [k for k in keys(s3) if "manual-operacao@v1" in k and "/derived/" in k]
    args = ("search", question, "-k", "5", "--json", "--min-score", "-1", "--lake", URI)
    hits = json.loads(run(*args))
    assert hits  # the other versions still answer (off topic for them: no cosine floor)
    assert all(hit["doc_id"] != "manual-operacao" for hit in hits)
    tombstones = s3.get_object(Bucket=BUCKET, Key="lake/removed_versions.json")["Body"].read()
    assert json.loads(tombstones)["manual-operacao@v1"]["reason"] == "revoked"  # recorded


def test_an_s3_lake_keeps_local_state_out_of_the_bucket_uri(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    lake = Lake(URI + "/")
    assert lake.remote and str(lake.root) == URI
    assert str(lake.stage_path("chunks", "a@v1")) == f"{URI}/derived/chunks/a@v1.parquet"
    assert lake.relative(lake.raw_paths("a@v1")[0]) == "raw/a/v1.pdf"
    # the Dagster instance and the locks need a local disk: under HOME and the temp dir
    assert lake.dagster_home.is_relative_to(tmp_path)
    assert not str(lake.lock_path(".x.lock")).startswith("s3")
    assert Lake(URI).dagster_home == lake.dagster_home  # one instance per lake URI
    assert Lake(f"s3://{BUCKET}/other").dagster_home != lake.dagster_home
    assert not Lake(str(tmp_path)).remote and os.fspath(Lake(str(tmp_path)).root) == str(tmp_path)
    with pytest.raises(LakeError, match="nosuch://"):
        Lake("nosuch://bucket/lake")  # an unknown store is named, not a local folder made


def test_a_failure_a_run_recorded_on_one_host_is_what_status_says_on_another(
    s3, tmp_path, monkeypatch, make_pdf
):
    """Two hosts (two HOMEs, each its own caches and Dagster home) share one lake in the
    bucket. A run started as the sensor, the UI or a backfill starts it (a Dagster run,
    not a `trecho` command) fails on host A; `trecho status` on host B says why, as on A."""
    key = "folheto-quebrado@v1"
    pdf = make_pdf(tmp_path / "v1.pdf", [("Folheto", 18, True), ("Art. 1º Texto.", 11, False)])
    s3.put_object(
        Bucket=BUCKET, Key="lake/raw/folheto-quebrado/v1.pdf", Body=pdf.read_bytes()[:300]
    )
    host_a, host_b = tmp_path / "host-a", tmp_path / "host-b"
    home = host_a / "dagster"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.from_config(str(home)) as instance:
        instance.add_dynamic_partitions("doc_versions", [key])
    dagster = str(Path(sys.executable).with_name("dagster"))
    done = subprocess.run(
        [
            *(dagster, "job", "execute", "-m", "rag_assets.definitions", "-a", "defs"),
            *("-j", "index_documents", "--tags", json.dumps({"dagster/partition": key})),
        ],
        env={**os.environ, "HOME": str(host_a), "DAGSTER_HOME": str(home), "TRECHO_LAKE": URI},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0, done.stdout[-2000:]

    def status_line(host: Path) -> str:
        monkeypatch.setenv("HOME", str(host))
        monkeypatch.delenv("DAGSTER_HOME", raising=False)
        (line,) = [x for x in run("status", "--lake", URI).splitlines() if key in x]
        return line

    on_b = status_line(host_b)
    assert "FAILED (not indexed): " in on_b and "PENDING" not in on_b, on_b
    assert status_line(host_a) == on_b


def test_a_store_that_refuses_is_one_line_naming_the_setting(s3, tmp_path, monkeypatch, capsys):
    s3.put_object(Bucket=BUCKET, Key="refused/raw/a/v1.pdf", Body=b"%PDF-1.4\n")
    monkeypatch.setenv("HOME", str(tmp_path))
    lake = f"s3://{BUCKET}/refused"
    # an http endpoint (MinIO and the like) without AWS_ALLOW_HTTP: LanceDB refuses it
    monkeypatch.delenv("AWS_ALLOW_HTTP")
    for command in (["status"], ["search", "limite"]):
        assert main([*command, "--lake", lake]) != 0
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err
        assert "AWS_ALLOW_HTTP=true" in err and "AWS_ENDPOINT_URL" in err
    # an endpoint where nothing answers
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert main(["status", "--lake", lake]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert "AWS_ENDPOINT_URL (http://127.0.0.1:9) does not answer" in err


def test_a_removal_waits_while_another_host_holds_the_purge_lease(s3, tmp_path, monkeypatch):
    """Two hosts (two HOMEs: their own file locks, caches and Dagster homes) share one
    lake. While a process on host A holds the lake's purge lease, `trecho materialize` on
    host B removes nothing and says who holds it; once A lets go, B removes."""
    uri = f"s3://{BUCKET}/leased"
    sample = SAMPLE_LAKE / "raw" / "manual-operacao"
    s3.upload_file(str(sample / "v1.pdf"), BUCKET, "leased/raw/manual-operacao/v1.pdf")
    sidecar = (sample / "v1.yaml").read_text(encoding="utf-8")
    revoked = re.sub(r"(?m)^status:.*$", "status: revoked", sidecar).encode("utf-8")
    s3.put_object(Bucket=BUCKET, Key="leased/raw/manual-operacao/v1.yaml", Body=revoked)
    left = "leased/derived/chunks/manual-operacao@v1.parquet"  # a revoked version's leftover
    s3.put_object(Bucket=BUCKET, Key=left, Body=b"PAR1")
    holding = (
        "import sys\n"
        "from rag_assets.core.lake import Lake, held_lease\n"
        "with held_lease(Lake(sys.argv[1]).leases_dir, 'purge', 'the remover of host A') as o:\n"
        "    print(o, flush=True)\n"
        "    sys.stdin.read()\n"
    )
    host_a = subprocess.Popen(
        [sys.executable, "-c", holding, uri],
        env={**os.environ, "HOME": str(tmp_path / "host-a")},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert host_a.stdout.readline().strip() == "None"  # host A holds the lease
        monkeypatch.setenv("HOME", str(tmp_path / "host-b"))
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "host-b" / "dagster"))
        out = run("materialize", "--skip-eval", "--lake", uri)
        assert "the remover of host A" in out and "purge lease" in out, out
        assert "removed  manual-operacao@v1" not in out
        assert left in keys(s3, "leased/")
    finally:
        host_a.stdin.close()
        host_a.wait(timeout=60)
    out = run("materialize", "--skip-eval", "--lake", uri)
    assert "removed  manual-operacao@v1" in out, out
    assert left not in keys(s3, "leased/")
    assert not [k for k in keys(s3, "leased/") if k.startswith("leased/.leases/")]


def test_a_live_holder_keeps_the_purge_lease_past_its_term_in_a_bucket(s3) -> None:
    """In an object store too, a holder renews its lease while it runs (a PUT conditional
    on the ETag it read): another host finds it held past the first term."""
    folder = Lake(f"s3://{BUCKET}/renewed").leases_dir
    held_past_its_term(folder)
    assert keys(s3, "renewed/") == []
