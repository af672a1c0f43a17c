"""The light token counter (tokenizer cache, no model load) counts exactly like the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rag_assets.core.embedding.embedder import Embedder, model_slug, resolve_model_path
from rag_assets.core.embedding.model_files import CacheDirs, publish_dir
from rag_assets.core.embedding.tokens import (
    FastTokenizer,
    ModelInfo,
    TokenCounter,
    cached_info,
    info_dir,
    remember_info,
)

from .conftest import ODD, SAMPLE_LAKE, SHARED, prompted_model

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory):
    """A fresh trecho cache folder for this module."""
    root = tmp_path_factory.mktemp("trecho-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRECHO_CACHE_DIR", str(root))
        yield root


@pytest.fixture(scope="module")
def light(cache: Path, embedder: Embedder) -> ModelInfo:
    """The bundled model's info as a later process reads it: written from the loaded model
    (what loading it does), read back with `tokenizers` alone."""
    path = resolve_model_path(embedder.model)
    dirs = CacheDirs.under(cache)
    loaded = ModelInfo.from_loaded(embedder.st)
    folder = remember_info(path, model_slug(embedder.model), loaded, dirs)
    assert folder is not None and folder.is_relative_to(cache)
    info = cached_info(path, model_slug(embedder.model), dirs)
    assert info is not None and isinstance(info.tokenizer, FastTokenizer)
    return info


def full_counter(embedder: Embedder) -> TokenCounter:
    """The counter as trecho built it before: from the loaded SentenceTransformer."""
    st = embedder.st
    prompts = st.prompts or {}
    prefix = embedder.passage_prefix or next(
        (str(prompts[n]) for n in ("document", "passage") if prompts.get(n)), ""
    )
    return TokenCounter(st.tokenizer, int(st.max_seq_length), prefix)


@pytest.mark.slow
def test_light_counts_equal_the_loaded_models_on_real_texts(light, embedder, real_texts):
    full = full_counter(embedder)
    counter = TokenCounter(light.tokenizer, light.max_seq_length, light.prompt("document"))
    assert (counter.max_tokens, counter.passage_prefix) == (full.max_tokens, "") == (256, "")
    assert light.dimension == 384
    texts = real_texts(
        SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf",
        SAMPLE_LAKE / "raw" / "manual-beneficiario" / "v7.pdf",
        SHARED / "leis" / "lgpd.pdf",
    )
    assert len(texts) > 1500
    assert counter.count_many(texts) == full.count_many(texts)
    assert max(counter.count_many(texts)) > 512  # long texts are counted, not truncated
    for text in texts[::7]:
        assert counter.count(text) == full.count(text)
        assert counter.ids(text) == full.ids(text)
        assert counter.offsets(text) == full.offsets(text)
    assert counter.overhead == full.overhead == 2


def test_prompted_model_gets_the_same_prefix_and_limits(tmp_path, cache, embedder):
    """A model that ships e5-style prompts: the light path reads the same prompts."""
    prompts = {"query": "query: ", "document": "passage: "}
    model = prompted_model(tmp_path / "minilm-prompted", prompts)

    loaded = Embedder(model=str(model), caches=CacheDirs.under(cache))
    full = full_counter(loaded)  # loads it, which writes the cache
    info = cached_info(model, model_slug(str(model)), loaded.caches)
    assert info is not None
    assert (info.prompt("query"), info.prompt("document", "passage")) == ("query: ", "passage: ")
    assert loaded.effective_passage_prefix == full.passage_prefix == "passage: "
    counter = TokenCounter(info.tokenizer, info.max_seq_length, info.prompt("document"))
    texts = [*ODD, "prazo de reembolso", "Art. 8º O consentimento"]
    assert counter.count_many(texts) == full.count_many(texts)
    assert counter.overhead == full.overhead == full.count("") > 2


def test_a_fresh_process_counts_without_torch(light, cache, embedder):
    """MiniLM's `token_counter()` in a new process: no torch, no transformers, same
    counts and limits as the loaded model."""
    texts = ["Art. 5º Para os fins desta Lei, considera-se:", "", "palavra " * 400]
    code = (
        "import json, sys\n"
        "from rag_assets.core.embedding.embedder import MINILM, Embedder\n"
        "from rag_assets.settings import cache_dirs\n"
        "c = Embedder(model=MINILM, caches=cache_dirs()).token_counter()\n"
        "print(json.dumps([c.count_many(json.loads(sys.argv[1])), c.max_tokens,"
        " c.passage_prefix, 'torch' in sys.modules, 'transformers' in sys.modules]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(texts)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "TRECHO_CACHE_DIR": str(cache)},
        check=True,
        timeout=120,
    )
    counts, max_tokens, prefix, torch_imported, transformers_imported = json.loads(
        done.stdout.strip().splitlines()[-1]
    )
    full = full_counter(embedder)
    assert counts == full.count_many(texts)
    assert (max_tokens, prefix) == (full.max_tokens, full.passage_prefix)
    assert not torch_imported and not transformers_imported


def test_cache_key_follows_the_models_files(tmp_path, cache, embedder):
    """Another config means another cache folder; weights do not count."""
    source = Path(resolve_model_path(embedder.model))
    copy = tmp_path / "copy"
    copy.mkdir()
    for item in source.iterdir():
        if item.name not in ("sentence_bert_config.json", "model.safetensors"):
            (copy / item.name).symlink_to(item, target_is_directory=item.is_dir())
    (copy / "model.safetensors").write_bytes(b"other weights")
    (copy / "sentence_bert_config.json").write_text(
        (source / "sentence_bert_config.json").read_text()
    )
    dirs = CacheDirs.under(cache)
    same = info_dir(copy, "m", dirs)
    (copy / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    assert info_dir(source, "m", dirs) == same  # weights differ, key does not
    from rag_assets.core.embedding import model_files

    model_files._FINGERPRINTS.clear()  # memoized per process: a real change comes with a new one
    assert info_dir(copy, "m", dirs) != same


def test_publish_dir_builds_once_under_concurrency(tmp_path):
    """Two builders at once: one builds, the other waits and finds it complete."""
    target = tmp_path / "cache" / "thing"
    calls: list[int] = []

    def build(folder: Path) -> None:
        calls.append(1)
        (folder / "part").write_text("half")
        time.sleep(0.3)
        (folder / "done").write_text("ok")

    results: list[bool] = []
    threads = [
        threading.Thread(target=lambda: results.append(publish_dir(target, build, "done")))
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, True] and len(calls) == 1
    assert sorted(p.name for p in target.iterdir()) == ["done", "part"]
    assert [p.name for p in target.parent.iterdir() if ".tmp-" in p.name] == []
