"""trecho: versioned PDFs to a retrieval index, as a Dagster code location."""

from rag_assets.offline import no_telemetry

no_telemetry()  # before any dependency is imported: nothing leaves the machine
