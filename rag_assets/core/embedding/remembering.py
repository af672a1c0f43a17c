"""An embedder that remembers query vectors: a long-running server asked the same question
again, or an eval asking every strategy's index the same questions, embeds each once."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from rag_assets.core.embedding.embedder import Embedder


class RememberingEmbedder:
    """`embedder` (every other attribute its own) remembering the vectors of its last
    `remember` distinct queries (an LRU; 0: none), so a repeated question costs no
    embedding. Same vectors as the embedder it wraps: the model is deterministic."""

    def __init__(self, embedder: Embedder, remember: int = 1024) -> None:
        self.wrapped = embedder
        self.remember = remember
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self._memory_lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @classmethod
    def of(cls, embedder: Embedder, remember: int) -> RememberingEmbedder:
        """`embedder` with a memory of `remember` queries."""
        return cls(embedder, remember)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    def stats(self) -> dict[str, int]:
        """How many queries it may remember, remembers, and found or not in memory."""
        return {
            "size": self.remember,
            "remembered": len(self._memory),
            "hits": self.hits,
            "misses": self.misses,
        }

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for queries: remembered ones from memory, the others embedded."""
        if self.remember < 1 or not texts:
            return self.wrapped.embed_queries(texts)
        with self._memory_lock:
            known = {t: self._memory[t] for t in texts if t in self._memory}
            for t in known:
                self._memory.move_to_end(t)
            self.hits += len(known)
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            fresh = self.wrapped.embed_queries(todo)
            with self._memory_lock:
                self.misses += len(todo)
                for t, vector in zip(todo, fresh, strict=True):
                    known[t] = self._memory[t] = vector
                while len(self._memory) > self.remember:
                    self._memory.popitem(last=False)
        return np.stack([known[t] for t in texts])
