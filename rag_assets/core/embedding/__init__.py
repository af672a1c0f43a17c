"""Embedding: the Embedder (one per model), its backends, tokenizers and the vector cache."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.embedding.backends import E5_SETTINGS
    from rag_assets.core.embedding.e5_torch import DEVICE
    from rag_assets.core.embedding.embedder import BACKENDS, DEFAULT_MODEL, MINILM, Embedder
    from rag_assets.core.embedding.model_files import CacheDirs
    from rag_assets.core.embedding.remembering import RememberingEmbedder
    from rag_assets.core.embedding.runtime import NOT_MEASURED, recorded_paths
    from rag_assets.core.embedding.tokens import TokenCounter

__all__ = [
    "path_available",
    "BACKENDS",
    "DEFAULT_MODEL",
    "DEVICE",
    "E5_SETTINGS",
    "MINILM",
    "NOT_MEASURED",
    "CacheDirs",
    "Embedder",
    "RememberingEmbedder",
    "TokenCounter",
    "recorded_paths",
]

_LAZY: dict[str, str] = {
    "BACKENDS": "rag_assets.core.embedding.embedder",
    "CacheDirs": "rag_assets.core.embedding.model_files",
    "DEFAULT_MODEL": "rag_assets.core.embedding.embedder",
    "DEVICE": "rag_assets.core.embedding.e5_torch",
    "E5_SETTINGS": "rag_assets.core.embedding.backends",
    "Embedder": "rag_assets.core.embedding.embedder",
    "MINILM": "rag_assets.core.embedding.embedder",
    "NOT_MEASURED": "rag_assets.core.embedding.runtime",
    "RememberingEmbedder": "rag_assets.core.embedding.remembering",
    "TokenCounter": "rag_assets.core.embedding.tokens",
    "recorded_paths": "rag_assets.core.embedding.runtime",
}


def path_available(path: str) -> bool:
    """Whether the packages e5's passage path `path` needs (`onnx`, `torch`, `openvino`)
    import here: its module asked, loaded only then."""
    return bool(importlib.import_module(f"rag_assets.core.embedding.e5_{path}").available())


__getattr__ = lazy_names(__name__, _LAZY)
