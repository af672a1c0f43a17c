"""trecho test suite."""
