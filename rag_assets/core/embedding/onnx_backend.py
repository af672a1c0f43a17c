"""The optional ONNX backend: the same vectors as sentence-transformers, run by onnxruntime.

`optimum` (sentence-transformers' own ONNX route) needs transformers 4, so trecho exports
the model's transformer itself, once per machine, with `torch.onnx.export` (the dynamo
exporter, dynamic batch and sequence axes), and applies the model's own
sentence-transformers pooling (read from its Pooling module), prompt, truncation at
`max_seq_length` and L2 normalization around it. Only the stack Transformer → Pooling
(→ Normalize) is supported; any other module is refused by name.

The export folder, `<CacheDirs.onnx>/<model slug>-<hash>/` (the settings' `TRECHO_ONNX_DIR`,
else `<TRECHO_CACHE_DIR>/onnx`), holds
`model.onnx`, the tokenizer, the torch vectors of a fixed probe set (`PROBE_TEXTS`) and
`meta.json`. Its hash covers the model's files (weights included) and the versions of
torch, transformers, tokenizers, sentence-transformers, onnx and onnxscript: a change in
any of them means a new export (the graph itself is made by `onnx_export`). It is
written atomically (`publish_dir`), so two processes exporting at once leave one complete
folder.

The first time a process loads it, the probe set is embedded with ONNX and compared with
the stored torch vectors of the same texts (computed by the same torch model at export);
a cosine below `TOLERANCE` for any probe text refuses the backend with an error naming
the model, the worst cosine and the tolerance. Loading needs neither torch nor
transformers once the export exists.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.embedding.model_files import CacheDirs, fingerprint, publish_dir, versions
from rag_assets.core.embedding.onnx_export import OnnxUnsupported, export_transformer
from rag_assets.core.embedding.tokens import ModelInfo, cached_info, remember_info
from rag_assets.core.errors import UserError

# Worst cosine between an ONNX vector and the torch vector of the same text that still
# counts as the same model. Measured on the bundled all-MiniLM-L6-v2 (bench/onnx_backend.py:
# the probe set and the sample lake's 649 chunk texts): worst 0.99999988, largest absolute
# difference of a coordinate 2.5e-7, i.e. float32 rounding. 0.99999 leaves ~80x that margin
# (other CPUs' kernels round differently) and refuses real divergences, measured on the
# probe set: truncating at 250 tokens instead of 256 gives a worst cosine of 0.9989, at 128
# 0.89, CLS pooling instead of mean 0.28.
TOLERANCE = 0.99999
EXPORT_FORMAT = 1  # bump when the export folder's layout or meaning changes
META_FILE = "meta.json"
ONNX_FILE = "model.onnx"
PROBE_FILE = "probe_torch.npy"
SUPPORTED_POOLING = ("cls", "max", "mean", "mean_sqrt_len_tokens", "lasttoken")
EXPORT_LIBRARIES = (
    "torch",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "onnx",
    "onnxscript",
)

# Portuguese legal text (a long one past 256 tokens, to check truncation), a linearized
# table row, a context header, and short queries.
PROBE_TEXTS = (
    "[lgpd@2018 | Capítulo I > Art. 5º | 2018] Art. 5º Para os fins desta Lei, considera-se: "
    "I - dado pessoal: informação relacionada a pessoa natural identificada ou identificável;",
    "§ 1º O consentimento deverá ser fornecido por escrito ou por outro meio que demonstre a "
    "manifestação de vontade do titular.",
    "Art. 18. O titular dos dados pessoais tem direito a obter do controlador, em relação aos "
    "dados do titular por ele tratados, a qualquer momento e mediante requisição: "
    + " ".join(
        f"{n} - confirmação da existência de tratamento, acesso aos dados, correção de dados "
        "incompletos, inexatos ou desatualizados;"
        for n in ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")
    ),
    "Medida: Vibração; Unidade: mm/s; Limite: 4,5; Ação: Parar o equipamento",
    "Art. 49. O consumidor pode desistir do contrato, no prazo de 7 dias a contar de sua "
    "assinatura ou do ato de recebimento do produto ou serviço.",
    "qual o limite de vibração?",
    "prazo de reembolso",
    "Como o consentimento deve ser fornecido?",
    "direito de arrependimento",
    "ok",
)

log = logging.getLogger(__name__)


class OnnxMismatch(UserError, RuntimeError):
    """The ONNX vectors differ from the torch ones beyond `TOLERANCE`."""


def export_dir(model_dir: Path, slug: str, caches: CacheDirs) -> Path:
    """This machine's export folder for a model folder (keyed by its files and versions)."""
    key = fingerprint(
        model_dir, weights=True, extra=[f"format={EXPORT_FORMAT}", *versions(*EXPORT_LIBRARIES)]
    )
    return caches.onnx / f"{slug}-{key}"


def check_supported(st: Any, model: str) -> dict[str, Any]:
    """The pooling spec of a loaded SentenceTransformer, or OnnxUnsupported naming the
    model and the module there is no ONNX route for."""
    modules = list(st)
    names = [type(m).__name__ for m in modules]
    if len(modules) < 2 or names[0] != "Transformer" or names[1] != "Pooling":
        raise OnnxUnsupported(
            f"ONNX backend: model {model!r} has modules {names}; only Transformer → Pooling "
            "(→ Normalize) is supported"
        )
    for name in names[2:]:
        if name != "Normalize":
            raise OnnxUnsupported(
                f"ONNX backend: model {model!r} has a {name} module after pooling"
            )
    transformer, pooling = modules[0], modules[1]
    text_only = {"text": {"method": "forward", "method_output_name": "last_hidden_state"}}
    problems = []
    if getattr(transformer, "transformer_task", "feature-extraction") != "feature-extraction":
        problems.append(f"transformer_task {transformer.transformer_task!r}")
    if getattr(transformer, "modality_config", text_only) != text_only:
        problems.append(f"modality_config {transformer.modality_config!r}")
    for attr in ("processing_kwargs", "query_length", "document_length", "query_expansion"):
        if getattr(transformer, attr, None):
            problems.append(f"{attr} {getattr(transformer, attr)!r}")
    if getattr(transformer, "can_flatten_inputs", False):
        problems.append("unpadded (flash-attention) inputs")
    if problems:
        raise OnnxUnsupported(
            f"ONNX backend: model {model!r}, Transformer module: unsupported {', '.join(problems)}"
        )
    mode = pooling.pooling_mode
    modes = [mode] if isinstance(mode, str) else list(mode)
    bad = [m for m in modes if m not in SUPPORTED_POOLING]
    if bad:
        raise OnnxUnsupported(
            f"ONNX backend: model {model!r}, Pooling module: mode {bad} is not supported "
            f"(supported: {SUPPORTED_POOLING})"
        )
    if not pooling.include_prompt and ModelInfo.from_loaded(st).default_prompt:
        raise OnnxUnsupported(
            f"ONNX backend: model {model!r}, Pooling module: include_prompt=False with a "
            "default prompt is not supported"
        )
    return {"modes": modes, "dimension": int(pooling.get_embedding_dimension())}


EXPORTS = 0  # exports done by this process (tests check the cache is reused)


def export(st: Any, model: str, folder: Path) -> None:
    """Fill `folder` with a model's ONNX export, tokenizer, probe vectors and meta."""
    global EXPORTS
    pooling = check_supported(st, model)
    # The torch side of the check, computed before the export touches the model.
    probe = st.encode(
        list(PROBE_TEXTS), batch_size=32, normalize_embeddings=True, convert_to_numpy=True
    )
    np.save(folder / PROBE_FILE, np.asarray(probe, dtype=np.float32))
    start = time.perf_counter()
    names = export_transformer(st, folder / ONNX_FILE)
    seconds = time.perf_counter() - start
    ModelInfo.from_loaded(st).save(folder)
    meta = {
        "format": EXPORT_FORMAT,
        "model": model,
        "pooling": pooling["modes"],
        "dimension": pooling["dimension"],
        "input_names": names,
        "exporter": "torch.onnx.export(dynamo=True)",
        "versions": versions(*EXPORT_LIBRARIES),
        "export_seconds": round(seconds, 2),
        "probe_texts": list(PROBE_TEXTS),
    }
    (folder / META_FILE).write_text(json.dumps(meta, indent=1, ensure_ascii=False), "utf-8")
    EXPORTS += 1


def ensure_export(
    model: str, model_dir: Path, slug: str, load: Callable[[], Any], caches: CacheDirs
) -> Path:
    """This machine's export of `model` (in `caches.onnx`), made now (from the model
    `load` returns) if it is not there yet."""
    target = export_dir(model_dir, slug, caches)
    if not (target / META_FILE).is_file():
        log.info("exporting %s to ONNX in %s (once per machine)", model, target)
        publish_dir(target, lambda folder: export(load(), model, folder), META_FILE)
    return target


def pool(hidden: np.ndarray, mask: np.ndarray, modes: Sequence[str]) -> np.ndarray:
    """sentence-transformers' Pooling on padded token embeddings (right padding), in numpy."""
    m = mask[..., None].astype(hidden.dtype)
    out = []
    for mode in modes:
        if mode == "cls":
            out.append(hidden[np.arange(len(hidden)), mask.argmax(axis=1)])
        elif mode == "max":
            out.append(np.where(m > 0, hidden, -np.inf).max(axis=1))
        elif mode in ("mean", "mean_sqrt_len_tokens"):
            total = (hidden * m).sum(axis=1)
            count = np.clip(m.sum(axis=1), 1e-9, None)
            out.append(total / (count if mode == "mean" else np.sqrt(count)))
        elif mode == "lasttoken":
            last = mask.shape[1] - 1 - mask[:, ::-1].argmax(axis=1)
            out.append(hidden[np.arange(len(hidden)), last] * m[np.arange(len(hidden)), last])
        else:
            raise OnnxUnsupported(f"pooling mode {mode!r}")
    return np.concatenate(out, axis=-1)


class OnnxEncoder:
    """An export folder loaded into onnxruntime: `encode` gives unit vectors, as
    `SentenceTransformer.encode(..., normalize_embeddings=True)` does."""

    def __init__(self, folder: Path, model: str) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.folder = folder
        self.model = model
        self.meta = json.loads((folder / META_FILE).read_text("utf-8"))
        self.info = ModelInfo.load(folder)
        pad = self.info.padding
        if pad.get("padding_side", "right") != "right":
            raise OnnxUnsupported(f"ONNX backend: model {model!r} pads on the left")
        tok = Tokenizer.from_str(self.info.tokenizer.backend.to_str())
        tok.enable_truncation(
            max_length=self.info.max_seq_length,
            strategy="longest_first",
            direction=pad.get("truncation_side", "right"),
        )
        tok.enable_padding(
            direction="right",
            pad_id=int(pad.get("pad_id") or 0),
            pad_type_id=int(pad.get("pad_type_id") or 0),
            pad_token=str(pad.get("pad_token") or "[PAD]"),
        )
        self.tokenizer = tok
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(
            str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"]
        )

    def _batch(self, texts: list[str]) -> np.ndarray:
        encs = self.tokenizer.encode_batch(texts)
        arrays = {
            "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
        }
        feed = {n: arrays[n] for n in self.meta["input_names"]}
        hidden = self.session.run(["token_embeddings"], feed)[0]
        return pool(hidden, arrays["attention_mask"], self.meta["pooling"])

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Unit vectors of `texts` (the model's default prompt, if any, prepended), in
        batches of texts of similar length, longest first, as sentence-transformers does."""
        prompt = self.info.default_prompt
        texts = [prompt + t for t in texts]
        out = np.zeros((len(texts), int(self.meta["dimension"])), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            out[idx] = self._batch([texts[i] for i in idx])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).astype(np.float32)

    def check(self, reference: np.ndarray | None = None, tolerance: float = TOLERANCE) -> float:
        """Embed the probe set and compare with `reference` (by default the torch vectors
        stored at export); returns the worst cosine, or raises OnnxMismatch below
        `tolerance`."""
        if reference is None:
            reference = np.load(self.folder / PROBE_FILE)
        # Batches of 4: padding is exercised, but the short queries are not padded to the
        # long text's 256 tokens (a quarter of the time of one batch).
        vectors = self.encode(list(self.meta["probe_texts"]), batch_size=4)
        cosines = probe_cosines(vectors, reference)
        worst = float(cosines.min())
        if worst < tolerance:
            raise OnnxMismatch(
                f"ONNX backend refused for model {self.model!r}: its vectors differ from the "
                f"torch ones (worst cosine {worst:.6f} < tolerance {tolerance}) on the probe "
                f"texts; export folder {self.folder}. Use the torch backend, or delete the "
                "folder to export again."
            )
        return worst


def probe_cosines(vectors: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Cosine of each row of `vectors` with the same row of `reference`."""
    if vectors.shape != reference.shape:
        raise OnnxMismatch(f"probe vectors {vectors.shape} vs reference {reference.shape}")
    norms = np.linalg.norm(vectors, axis=1) * np.linalg.norm(reference, axis=1)
    return (vectors * reference).sum(axis=1) / np.maximum(norms, 1e-12)


def load_encoder(
    model: str,
    device: str,
    model_dir: Path | None,
    slug: str,
    load: Callable[[], Any],
    caches: CacheDirs,
) -> OnnxEncoder:
    """Export if needed, load and check the ONNX encoder of `model` (see the module doc)."""
    if device != "cpu":
        raise OnnxUnsupported(
            f"ONNX backend: device {device!r} is not supported (CPU only: onnxruntime's CPU "
            "provider); use backend 'torch' for other devices"
        )
    if model_dir is None:
        raise OnnxUnsupported(
            f"ONNX backend: model {model!r} is not a local folder (nothing to export from)"
        )
    encoder = OnnxEncoder(ensure_export(model, model_dir, slug, load, caches), model)
    if cached_info(model_dir, slug, caches) is None:  # token counting needs no torch either
        remember_info(model_dir, slug, encoder.info, caches)
    worst = encoder.check()
    log.info("ONNX backend for %s: worst probe cosine vs torch %.7f", model, worst)
    return encoder
