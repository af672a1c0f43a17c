"""Embedding: the Embedder (one per model), its backends, tokenizers and the vector cache."""
