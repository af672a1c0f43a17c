"""The sample corpus on object storage: lake and LanceDB on a local S3-compatible server.

Starts a moto S3 server on loopback (the dev extra installs `moto[server]`), uploads the
sample lake's raw PDFs, sidecars and question files to `s3://<bucket>/lake`, and runs the
real CLI against it in fresh processes, exactly as a user would::

    trecho materialize --lake s3://<bucket>/lake
    trecho search --lake s3://<bucket>/lake "<question>"

The same files are copied to a local temp lake and run the same way, side by side, so the
figures are ratios (object store ÷ local folder) measured in one run, and the two indexes
are compared answer for answer. Usage::

    python bench/object_store.py            # the whole sample lake (manuals + laws)
    python bench/object_store.py --quick    # the two manuals
    python bench/object_store.py --endpoint http://host:9000 --bucket b  # your own server

With `--endpoint`, credentials come from the usual AWS_* variables and no server is
started.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import LAKE, REPO, header  # noqa: E402

QUICK_DOCS = ("manual-beneficiario", "manual-operacao")
QUESTIONS = (
    "Qual o prazo para reembolso de consultas?",
    "Quais dados pessoais são considerados sensíveis?",
    "Quem pode pedir autorização prévia de exames?",
)


@contextmanager
def s3_server(endpoint: str | None) -> Iterator[str]:
    """A moto S3 server on a free loopback port (or the given endpoint), with the AWS_*
    variables that point boto3, fsspec and LanceDB at it."""
    if endpoint:
        os.environ["AWS_ENDPOINT_URL"] = endpoint
        os.environ.setdefault("AWS_ALLOW_HTTP", "true" if endpoint.startswith("http:") else "")
        yield endpoint
        return
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    os.environ.update(
        AWS_ACCESS_KEY_ID="trecho",
        AWS_SECRET_ACCESS_KEY="trecho-secret",
        AWS_REGION="us-east-1",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_ENDPOINT_URL=url,
        AWS_ALLOW_HTTP="true",
    )
    try:
        yield url
    finally:
        server.stop()


def lake_files(quick: bool) -> list[Path]:
    """The sample lake's inputs, relative to the lake: raw PDFs, sidecars, question files."""
    files = sorted(p.relative_to(LAKE) for p in (LAKE / "raw").rglob("*") if p.is_file())
    files += sorted(p.relative_to(LAKE) for p in (LAKE / "eval").glob("*.jsonl"))
    if quick:
        files = [
            f
            for f in files
            if (f.parts[0] == "raw" and f.parts[1] in QUICK_DOCS) or f.name == "manuais.jsonl"
        ]
    return files


def trecho(*args: str, home: Path) -> tuple[float, str]:
    """Run the `trecho` CLI in a fresh process; seconds and its output. Fails loudly."""
    env = os.environ | {"DAGSTER_HOME": str(home)}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "rag_assets.cli", *args],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"trecho {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return seconds, proc.stdout


def top_hits(lake: str, home: Path) -> tuple[float, list[str]]:
    """Seconds for all questions (one process each) and the top chunk id of each."""
    total, tops = 0.0, []
    for question in QUESTIONS:
        seconds, out = trecho("search", "--lake", lake, "--json", "-k", "1", question, home=home)
        total += seconds
        hits = json.loads(out)
        tops.append(hits[0]["chunk_id"] if hits else "-")
    return total, tops


def bucket_objects(bucket: str, prefix: str) -> tuple[int, int, list[str]]:
    """Objects and bytes under a prefix, and the top-level folders found there."""
    import boto3

    s3 = boto3.client("s3")
    count = size = 0
    folders: set[str] = set()
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            count += 1
            size += obj["Size"]
            folders.add(obj["Key"][len(prefix) :].split("/", 2)[0])
    return count, size, sorted(folders)


def main() -> None:
    """Parse options, run both lakes, print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the two manuals only")
    parser.add_argument("--endpoint", help="an S3-compatible server to use instead of moto")
    parser.add_argument("--bucket", default="trecho-bench")
    args = parser.parse_args()
    header("sample corpus on object storage (S3 ÷ local folder)", args)
    files = lake_files(args.quick)
    with tempfile.TemporaryDirectory(prefix="trecho-s3-bench-") as tmp, s3_server(args.endpoint):
        import boto3

        s3 = boto3.client("s3")
        if args.bucket not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]:
            s3.create_bucket(Bucket=args.bucket)
        s3_lake = f"s3://{args.bucket}/lake"
        local_lake = Path(tmp) / "lake"
        for rel in files:
            s3.upload_file(str(LAKE / rel), args.bucket, f"lake/{rel.as_posix()}")
            (local_lake / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(LAKE / rel, local_lake / rel)
        print(
            f"inputs: {len(files)} files -> {s3_lake} (endpoint {os.environ['AWS_ENDPOINT_URL']})"
        )

        homes = {}
        for name in ("s3", "local"):
            homes[name] = Path(tmp) / f"home-{name}"
            homes[name].mkdir()
        lakes = {"s3": s3_lake, "local": str(local_lake)}
        cold: dict[str, float] = {}
        outputs: dict[str, str] = {}
        for name in ("local", "s3"):
            cold[name], outputs[name] = trecho(
                "materialize", "--lake", lakes[name], home=homes[name]
            )
        print("\n--- trecho materialize --lake", s3_lake)
        print(outputs["s3"].rstrip())
        rerun: dict[str, float] = {}
        for name in ("s3", "local"):
            rerun[name], _ = trecho("materialize", "--lake", lakes[name], home=homes[name])
        search: dict[str, float] = {}
        tops: dict[str, list[str]] = {}
        for name in ("local", "s3"):
            search[name], tops[name] = top_hits(lakes[name], homes[name])
        _, shown = trecho("search", "--lake", s3_lake, "-k", "3", QUESTIONS[0], home=homes["s3"])
        print(f'\n--- trecho search --lake {s3_lake} -k 3 "{QUESTIONS[0]}"')
        print(shown.rstrip())
        count, size, folders = bucket_objects(args.bucket, "lake/")
        stray = sorted(p.name for p in Path(tmp).iterdir() if p.name.startswith("s3"))
        print("\n--- figures (one run; ratios S3 ÷ local folder, same files, same machine)")
        print(f"bucket after the run: {count} objects, {size / 1e6:.1f} MB, folders {folders}")
        print(f"cold materialize:        S3 ÷ local = {cold['s3'] / cold['local']:.2f}")
        print(f"rerun, nothing changed:  S3 ÷ local = {rerun['s3'] / rerun['local']:.2f}")
        print(
            f"search ({len(QUESTIONS)} questions, one process each): S3 ÷ local = "
            f"{search['s3'] / search['local']:.2f}"
        )
        same = sum(a == b for a, b in zip(tops["s3"], tops["local"], strict=True))
        print(f"same top hit on both:    {same} of {len(QUESTIONS)}")
        print(f"local stray 's3*' folders: {stray or 'none'}")
        print(f"(cold local run: {cold['local']:.0f} s; commands run from {REPO})")


if __name__ == "__main__":
    main()
