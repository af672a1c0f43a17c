"""Chunking strategies: the structure-aware default and the size-based baselines."""
