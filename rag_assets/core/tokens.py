"""Token counts by the embedding model's own tokenizer, and the budgets derived from them.

Sizes are never guessed from characters: a chunk is measured exactly as the model will
read it (prompt prefix and special tokens included), so that nothing is silently truncated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


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
