"""Dagster resources: the data lake root, the embedding model and the LanceDB store.

Each is configurable in the Dagster UI (Launchpad) or in run config; defaults come from
the environment so that `trecho --lake PATH` and `dagster dev` see the same lake.
"""

import os

from dagster import ConfigurableResource
from pydantic import Field

from rag_assets.core.embedding import DEFAULT_MODEL, Embedder
from rag_assets.core.lake import Lake
from rag_assets.core.search import Index


def default_lake_root() -> str:
    """`TRECHO_LAKE` if set, else `data_lake` in the working directory."""
    return os.environ.get("TRECHO_LAKE", "data_lake")


class LakeResource(ConfigurableResource):
    """Where the raw PDFs, derived Parquet files, LanceDB and reports live."""

    root: str = Field(default_factory=default_lake_root, description="Data lake root folder")

    @property
    def lake(self) -> Lake:
        """The lake's paths."""
        return Lake(self.root)


class EmbedderResource(ConfigurableResource):
    """The sentence-transformers model (by name or path) and its prompts."""

    model: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_MODEL", DEFAULT_MODEL),
        description="Model name or path; the default is the bundled all-MiniLM-L6-v2",
    )
    query_prefix: str = Field(default="", description="e.g. 'query: ' for e5 models")
    passage_prefix: str = Field(default="", description="e.g. 'passage: ' for e5 models")
    device: str = Field(default="cpu", description="'cpu', 'cuda', ...")
    batch_size: int = 32

    def embedder(self) -> Embedder:
        """The embedder (the model itself is loaded once per process)."""
        return Embedder(
            model=self.model,
            query_prefix=self.query_prefix,
            passage_prefix=self.passage_prefix,
            device=self.device,
            batch_size=self.batch_size,
        )


class LanceDBResource(ConfigurableResource):
    """The LanceDB database; by default `<lake>/lancedb`."""

    uri: str = Field(default="", description="LanceDB URI; empty means <lake>/lancedb")

    def index(self, lake: Lake, embedder: Embedder) -> Index:
        """The index of the configured model in this database."""
        return Index(self.uri or str(lake.lancedb_dir), embedder)
