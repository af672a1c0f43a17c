"""Token counts by the embedding model's own tokenizer, and the budgets derived from them.

Sizes are never guessed from characters: a chunk is measured exactly as the model will
read it (prompt prefix and special tokens included), so that nothing is silently truncated.

Counting must not cost a model load. Loading a SentenceTransformer imports torch and reads
the weights (~6-7 s in a fresh process), which the chunks step paid only to count tokens.
So the first time a model is loaded on a machine, what counting needs is written to a
small cache folder (`ModelInfo`): the tokenizer exactly as transformers built it for the
model, serialized by the `tokenizers` library, plus `max_seq_length`, the prompts and the
vector size. Later processes read that folder with `tokenizers` alone (no torch, no
transformers). The tokenizer is taken from the loaded model rather than from the model's
own `tokenizer.json` because transformers 5 rebuilds BERT / XLM-R tokenizers from their
class and `tokenizer_config.json` (lower-casing, accents, special tokens), which can
differ from that file.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rag_assets.core.embedding.model_files import CacheDirs, fingerprint, publish_dir, versions

INFO_FILE = "info.json"
TOKENIZER_FILE = "tokenizer.json"
INFO_FORMAT = 1  # bump when the cached folder's layout or meaning changes


@dataclass
class TokenCounter:
    """Counts tokens the way the embedding model reads a passage."""

    tokenizer: Any
    max_tokens: int
    passage_prefix: str = ""

    def count(self, text: str) -> int:
        """Tokens the model reads for this passage, prefix and special tokens included."""
        return len(self.tokenizer(self.passage_prefix + text, add_special_tokens=True)["input_ids"])

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """`count` for many texts in one tokenizer call."""
        if not texts:
            return []
        enc = self.tokenizer([self.passage_prefix + t for t in texts], add_special_tokens=True)[
            "input_ids"
        ]
        return [len(ids) for ids in enc]

    def ids(self, text: str) -> list[int]:
        """Token ids of a bare text (no special tokens, no prefix)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of every token of a bare text."""
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(span) for span in enc["offset_mapping"]]

    @property
    def overhead(self) -> int:
        """Tokens every passage costs before its own text (prefix, special tokens)."""
        return self.count("")


class FastTokenizer:
    """A bare `tokenizers.Tokenizer` answering the calls `TokenCounter` makes the way a
    transformers tokenizer does (`input_ids`, `offset_mapping`; no truncation, no padding).

    transformers' fast tokenizers hand these calls to the same Rust object, so the ids
    and offsets are the same; importing `tokenizers` alone takes ~0.1 s."""

    def __init__(self, backend: Any) -> None:
        backend.no_truncation()
        backend.no_padding()
        self.backend = backend

    @classmethod
    def from_json(cls, text: str) -> FastTokenizer:
        """From a serialized tokenizer (`Tokenizer.to_str()`)."""
        from tokenizers import Tokenizer

        return cls(Tokenizer.from_str(text))

    def __call__(
        self,
        text: str | Sequence[str],
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
    ) -> dict[str, list[Any]]:
        """Ids (and offsets) of one text, or of each text of a list."""
        single = isinstance(text, str)
        texts = [text] if isinstance(text, str) else list(text)
        encs = self.backend.encode_batch(texts, add_special_tokens=add_special_tokens)
        pairs = [self.ids_and_offsets(e, t) for e, t in zip(encs, texts, strict=True)]
        out: dict[str, list[Any]] = {"input_ids": [p[0] for p in pairs]}
        if return_offsets_mapping:
            out["offset_mapping"] = [p[1] for p in pairs]
        return {k: v[0] for k, v in out.items()} if single else out

    def ids_and_offsets(self, enc: Any, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The ids and character spans of one encoding (subclasses adjust them)."""
        return list(enc.ids), [tuple(span) for span in enc.offsets]


@dataclass
class ModelInfo:
    """What trecho needs from a model without running it: its tokenizer, the longest input
    it reads, its prompts and the length of its vectors."""

    tokenizer: Any
    max_seq_length: int
    dimension: int
    prompts: dict[str, str] = field(default_factory=dict)
    default_prompt_name: str | None = None
    padding: dict[str, Any] = field(default_factory=dict)

    def prompt(self, *names: str) -> str:
        """The first non-empty prompt of the model among `names`, else ""."""
        return next((str(self.prompts[n]) for n in names if self.prompts.get(n)), "")

    @property
    def default_prompt(self) -> str:
        """The prompt sentence-transformers prepends to every text when `encode` is given
        none (its `default_prompt_name`); "" for most models."""
        if not self.default_prompt_name:
            return ""
        return str(self.prompts.get(self.default_prompt_name) or "")

    @classmethod
    def from_loaded(cls, st: Any) -> ModelInfo:
        """From a loaded SentenceTransformer: its own tokenizer object, values and prompts."""
        tok = st.tokenizer
        get_dim = (
            getattr(st, "get_embedding_dimension", None) or st.get_sentence_embedding_dimension
        )
        padding = {}
        if tok is not None:
            padding = {
                "pad_token": tok.pad_token,
                "pad_id": tok.pad_token_id,
                "pad_type_id": getattr(tok, "pad_token_type_id", 0),
                "padding_side": tok.padding_side,
                "truncation_side": tok.truncation_side,
                "model_input_names": list(tok.model_input_names),
            }
        return cls(
            tokenizer=tok,
            max_seq_length=int(st.max_seq_length),
            dimension=int(get_dim()),
            prompts={k: str(v or "") for k, v in (getattr(st, "prompts", None) or {}).items()},
            default_prompt_name=getattr(st, "default_prompt_name", None),
            padding=padding,
        )

    def save(self, folder: Path) -> None:
        """Write the tokenizer (as `tokenizers` serializes it) and the values to `folder`."""
        backend = getattr(self.tokenizer, "backend_tokenizer", None) or getattr(
            self.tokenizer, "backend", None
        )
        if backend is None:
            raise ValueError("only fast (Rust-backed) tokenizers can be cached")
        serialized = json.loads(backend.to_str())
        # transformers sets these per call and leaves the last call's values behind.
        serialized["truncation"] = serialized["padding"] = None
        (folder / TOKENIZER_FILE).write_text(json.dumps(serialized), encoding="utf-8")
        info = {
            "format": INFO_FORMAT,
            "max_seq_length": self.max_seq_length,
            "dimension": self.dimension,
            "prompts": self.prompts,
            "default_prompt_name": self.default_prompt_name,
            "padding": self.padding,
        }
        (folder / INFO_FILE).write_text(json.dumps(info, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> ModelInfo:
        """Read a folder written by `save`; the tokenizer comes back as a `FastTokenizer`."""
        info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
        if info.get("format") != INFO_FORMAT:
            raise ValueError(f"{folder}: cache format {info.get('format')} != {INFO_FORMAT}")
        tokenizer = FastTokenizer.from_json((folder / TOKENIZER_FILE).read_text(encoding="utf-8"))
        return cls(
            tokenizer=tokenizer,
            max_seq_length=int(info["max_seq_length"]),
            dimension=int(info["dimension"]),
            prompts=dict(info.get("prompts") or {}),
            default_prompt_name=info.get("default_prompt_name"),
            padding=dict(info.get("padding") or {}),
        )


def info_dir(model_dir: str | Path, slug: str, caches: CacheDirs) -> Path:
    """The cache folder of a model's `ModelInfo` on this machine: keyed by the model's
    non-weight files and the versions of the libraries that build its tokenizer."""
    key = fingerprint(
        model_dir,
        weights=False,
        extra=[
            f"format={INFO_FORMAT}",
            *versions("transformers", "tokenizers", "sentence-transformers"),
        ],
    )
    return caches.tokenizers / f"{slug}-{key}"


def cached_info(model_dir: str | Path, slug: str, caches: CacheDirs) -> ModelInfo | None:
    """The cached `ModelInfo` of a local model folder, or None when not cached yet."""
    folder = info_dir(model_dir, slug, caches)
    if not (folder / INFO_FILE).is_file():
        return None
    try:
        return ModelInfo.load(folder)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # damaged by hand: load the model
        logging.getLogger(__name__).warning("ignoring the tokenizer cache %s: %s", folder, exc)
        return None


def remember_info(
    model_dir: str | Path, slug: str, info: ModelInfo, caches: CacheDirs
) -> Path | None:
    """Cache `info` (taken from the loaded model) for later processes; best effort: a
    read-only cache or a slow tokenizer only means later processes load the model."""
    folder = info_dir(model_dir, slug, caches)
    try:
        publish_dir(folder, info.save, INFO_FILE)
    except (OSError, ValueError):
        return None
    return folder
