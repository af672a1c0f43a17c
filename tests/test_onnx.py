"""The optional ONNX backend: the bundled model exported for real, checked against torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from rag_assets.core.chunking import Policy, PolicyChunker
from rag_assets.core.corpus import source_from_pdf
from rag_assets.core.embedding import backends, onnx_backend
from rag_assets.core.embedding.embedder import (
    MINILM,
    Embedder,
    model_slug,
    resolve_model_path,
)
from rag_assets.core.embedding.model_files import CacheDirs
from rag_assets.core.embedding.onnx_backend import TOLERANCE, OnnxMismatch, OnnxUnsupported
from rag_assets.core.index import Index, Stamp
from rag_assets.core.lake.schemas import CHUNKS
from rag_assets.core.lake.sidecar import Sidecar
from rag_assets.core.request import SearchRequest

from .conftest import SAMPLE_LAKE

# slow: exports the model to ONNX (seconds) and loads it in subprocesses
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
VERSIONS = {
    "manual-operacao@v1": SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf",
    "manual-beneficiario@v7": SAMPLE_LAKE / "raw" / "manual-beneficiario" / "v7.pdf",
}
QUERIES = [
    "qual o limite de vibração?",
    "quando trocar o óleo do rolamento?",
    "como pedir reembolso de consulta?",
    "prazo de carência para internação",
    "o que fazer se a bomba superaquecer?",
    "telefone da central de atendimento",
    "cobertura de exames",
    "temperatura máxima do mancal",
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory):
    """A fresh trecho cache (tokenizers + ONNX exports) for this module."""
    root = tmp_path_factory.mktemp("trecho-onnx")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRECHO_CACHE_DIR", str(root))
        mp.delenv("TRECHO_ONNX_DIR", raising=False)
        backends.forget("onnx-export", MINILM, "cpu")
        yield root
        backends.forget("onnx-export", MINILM, "cpu")


@pytest.fixture(scope="module")
def onnx_embedder(onnx_cache: Path, embedder: Embedder) -> Embedder:
    """The bundled model on the ONNX backend: exported once here, checked on load."""
    before = onnx_backend.EXPORTS
    model = Embedder(model=MINILM, backend="onnx", caches=CacheDirs.under(onnx_cache))
    model.onnx()
    assert onnx_backend.EXPORTS == before + 1
    return model


@pytest.fixture(scope="module")
def chunks(counter) -> dict[str, pa.Table]:
    """The default policy's chunks of two sample manuals (tables included), per version."""
    out = {}
    for key, pdf in VERSIONS.items():
        source = source_from_pdf(pdf, key, Sidecar.read(pdf.with_suffix(".yaml")))
        result = PolicyChunker(Policy())(source, counter)
        out[key] = pa.Table.from_pylist([c.as_row() for c in result], schema=CHUNKS)
    return out


def test_vectors_match_torch_within_tolerance(onnx_embedder, embedder, chunks):
    texts = [t for table in chunks.values() for t in table.column("text").to_pylist()]
    assert len(texts) > 20
    pairs = [
        (embedder.embed_passages(texts), onnx_embedder.embed_passages(texts)),
        (embedder.embed_queries(QUERIES), onnx_embedder.embed_queries(QUERIES)),
    ]
    for torch_vecs, onnx_vecs in pairs:
        assert onnx_vecs.shape == torch_vecs.shape and onnx_vecs.dtype == np.float32
        assert np.allclose(np.linalg.norm(onnx_vecs, axis=1), 1, atol=1e-5)
        assert onnx_backend.probe_cosines(onnx_vecs, torch_vecs).min() >= TOLERANCE
    # Same vectors, same model: the table, the cache and the chunk budgets are shared.
    assert onnx_embedder.model_id == embedder.model_id
    assert (onnx_embedder.dimension, onnx_embedder.max_tokens) == (384, 256)
    assert onnx_embedder.embed_passages([]).shape == (0, 384)


def test_top_k_is_the_same_with_either_backend(tmp_path, onnx_embedder, embedder, chunks):
    """Vector search over the same chunks returns the same chunks in the same order. (Hybrid
    is not compared: its full-text side returns BM25 ties, such as the rows of one table
    under the same header, in no fixed order, so two runs of one backend can differ.)"""
    results = {}
    for name, model in (("torch", embedder), ("onnx", onnx_embedder)):
        index = Index(tmp_path / name, model)
        for key, table in chunks.items():
            vectors = model.embed_passages(table.column("text").to_pylist())
            index.upsert_partition(key, table, vectors, Stamp("active", title=key))
        results[name] = index.search_many(
            [SearchRequest(query=q, k=5, mode="vector") for q in QUERIES]
        )
    for torch_hits, onnx_hits in zip(results["torch"], results["onnx"], strict=True):
        assert [h.chunk_id for h in onnx_hits] == [h.chunk_id for h in torch_hits]
        scores = [(h.score, g.score) for h, g in zip(onnx_hits, torch_hits, strict=True)]
        assert np.allclose(*zip(*scores, strict=True), atol=1e-5)


def test_the_check_refuses_vectors_that_do_not_match(onnx_embedder, tmp_path):
    encoder = onnx_embedder.onnx()
    reference = np.load(encoder.folder / onnx_backend.PROBE_FILE)
    assert encoder.check(reference) >= TOLERANCE
    shifted = np.roll(reference, 1, axis=0)  # torch vectors, of other texts
    with pytest.raises(
        OnnxMismatch, match=r"'all-MiniLM-L6-v2'.*worst cosine -?0\.\d+ < tolerance"
    ):
        encoder.check(shifted)
    # End to end: an export whose stored torch vectors disagree is refused when loaded,
    # and not exported again.
    other = tmp_path / "onnx"
    shutil.copytree(encoder.folder, other / encoder.folder.name)
    np.save(other / encoder.folder.name / onnx_backend.PROBE_FILE, shifted)
    before = onnx_backend.EXPORTS
    path = Path(resolve_model_path(MINILM))
    dirs = CacheDirs(onnx_embedder.caches.root, other)
    with pytest.raises(OnnxMismatch, match=f"tolerance {TOLERANCE}"):
        onnx_backend.load_encoder(MINILM, "cpu", path, model_slug(MINILM), None, dirs)
    assert onnx_backend.EXPORTS == before


def test_the_export_is_reused_and_loads_without_torch(onnx_embedder, onnx_cache):
    before = onnx_backend.EXPORTS
    path = Path(resolve_model_path(MINILM))
    dirs = CacheDirs.under(onnx_cache)
    again = onnx_backend.load_encoder(MINILM, "cpu", path, model_slug(MINILM), None, dirs)
    assert again.folder == onnx_embedder.onnx().folder and onnx_backend.EXPORTS == before
    exports = [p for p in (onnx_cache / "onnx").iterdir() if p.is_dir()]
    assert [p.name for p in exports] == [again.folder.name]
    assert again.folder.name.startswith("all-minilm-l6-v2-")

    code = (
        "import json, sys\n"
        "from rag_assets.core.embedding import onnx_backend\n"
        "from rag_assets.core.embedding.embedder import Embedder\n"
        "from rag_assets.settings import cache_dirs\n"
        "v = Embedder(model='all-MiniLM-L6-v2', backend='onnx', caches=cache_dirs())"
        ".embed_queries(['qual o limite de vibração?'])\n"
        "print(json.dumps([v[0].tolist(), onnx_backend.EXPORTS, 'torch' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "TRECHO_CACHE_DIR": str(onnx_cache)},
        check=True,
        timeout=300,
    )
    vector, exported, torch_imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert exported == 0 and not torch_imported
    here = onnx_embedder.embed_queries(["qual o limite de vibração?"])[0]
    assert np.allclose(vector, here, atol=1e-6)


def test_unsupported_setups_are_refused_clearly(embedder, onnx_cache, monkeypatch):
    with pytest.raises(OnnxUnsupported, match="device 'cuda' is not supported"):
        Embedder(model=MINILM, backend="onnx", device="cuda").embed_queries(["x"])
    with pytest.raises(ValueError, match="backend 'tf' must be one of"):
        Embedder(backend="tf")
    from sentence_transformers.base.modules.dense import Dense

    st = embedder.st
    with pytest.raises(OnnxUnsupported, match="model 'my-model' has a Dense module"):
        onnx_backend.check_supported([st[0], st[1], Dense(384, 32)], "my-model")
    with pytest.raises(OnnxUnsupported, match=r"model 'my-model' has modules \['Transformer'\]"):
        onnx_backend.check_supported([st[0]], "my-model")
    assert onnx_backend.check_supported(st, "m") == {"modes": ["mean"], "dimension": 384}

    from rag_assets.settings import Settings, SettingsError
    from resources import EmbedderResource

    assert EmbedderResource(backend="onnx").embedder().backend == "onnx"
    monkeypatch.setenv("TRECHO_EMBED_BACKEND", "onnx")
    assert Settings.from_env().embedder().backend == "onnx"
    monkeypatch.setenv("TRECHO_EMBED_BACKEND", "tf")
    with pytest.raises(SettingsError, match="TRECHO_EMBED_BACKEND='tf': expected one of"):
        Settings.from_env()


@pytest.mark.parametrize(
    "mode", [*onnx_backend.SUPPORTED_POOLING, ("mean", "max"), ("cls", "mean_sqrt_len_tokens")]
)
def test_pooling_matches_sentence_transformers(mode):
    import torch
    from sentence_transformers.sentence_transformer.modules.pooling import Pooling

    rng = np.random.default_rng(0)
    hidden = rng.normal(size=(3, 7, 8)).astype(np.float32)
    mask = np.array([[1] * 7, [1] * 4 + [0] * 3, [1] * 2 + [0] * 5], dtype=np.int64)
    features = {
        "token_embeddings": torch.from_numpy(hidden),
        "attention_mask": torch.from_numpy(mask),
    }
    expected = Pooling(8, pooling_mode=mode)(features)["sentence_embedding"].numpy()
    modes = [mode] if isinstance(mode, str) else list(mode)
    assert np.allclose(onnx_backend.pool(hidden, mask, modes), expected, atol=1e-6)


def test_export_meta_names_what_was_exported(onnx_embedder):
    meta = json.loads((onnx_embedder.onnx().folder / onnx_backend.META_FILE).read_text())
    assert meta["model"] == MINILM and meta["pooling"] == ["mean"]
    assert meta["input_names"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert any(v.startswith("torch==") for v in meta["versions"])
