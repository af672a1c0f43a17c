"""trecho: versioned PDFs to a retrieval index, as a Dagster code location."""
