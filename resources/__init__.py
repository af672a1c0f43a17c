"""Dagster resources: the data lake root, the embedding model and the LanceDB store.

Each is configurable in the Dagster UI (Launchpad) or in run config. A field that stands
for a setting names it (`json_schema_extra={"setting": ...}`): the code location sets
those fields from `rag_assets.settings` (the environment, read and checked once) in
`configured_resources`, and a resource hands them back as `Settings` (`as_settings`), so
that the embedder and the index are built by the settings' one factory of each. A
setting's "unset" (None: the core's default) is None in its field too.
"""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any, TypeVar

from dagster import ConfigurableIOManager, ConfigurableResource, InputContext, OutputContext
from pydantic import Field

from rag_assets.core.embedding import Embedder
from rag_assets.core.index import (
    ANN_EF,
    ANN_MIN_ROWS,
    MIN_SCORE_E5,
    MIN_SCORE_MINILM,
    VECTOR_WEIGHT_E5,
    Index,
)
from rag_assets.core.lake import Lake
from rag_assets.settings import Settings

R = TypeVar("R", bound=ConfigurableResource)

_DEFAULTS = Settings()


def _field(default: Any, description: str, **extra: Any) -> Any:
    """A field with a default given by a factory, not as a plain default: run config that
    sets some fields of a resource (the Launchpad) keeps the values the resource was built
    with in a field whose default is a factory, but resets one with a plain default to it
    (Dagster 1.13)."""
    return Field(default_factory=lambda: default, description=description, **extra)


def _setting(attr: str, description: str, **extra: Any) -> Any:
    """A field that stands for the setting `attr`: named in its description, its default
    the setting's default (a factory: `_field`)."""
    return Field(
        default_factory=partial(getattr, _DEFAULTS, attr),
        description=f"{description} ({_DEFAULTS.var(attr)})",
        json_schema_extra={"setting": attr},
        **extra,
    )


def _settings_fields(cls: type[ConfigurableResource]) -> dict[str, str]:
    """Each field of `cls` that stands for a setting -> that setting's name."""
    return {
        name: f.json_schema_extra["setting"]
        for name, f in cls.model_fields.items()
        if isinstance(f.json_schema_extra, dict) and "setting" in f.json_schema_extra
    }


def _from_settings(cls: type[R], settings: Settings, **given: Any) -> R:
    """A resource of `cls` whose setting fields are `settings`' values, `given` taking
    precedence."""
    values = {name: getattr(settings, attr) for name, attr in _settings_fields(cls).items()}
    return cls(**{**values, **given})


def _as_settings(resource: ConfigurableResource) -> Settings:
    """The settings `resource`'s setting fields stand for, the others at their defaults."""
    fields = _settings_fields(type(resource))
    return Settings(**{attr: getattr(resource, name) for name, attr in fields.items()})


class LakeResource(ConfigurableResource):
    """Where the raw PDFs, derived Parquet files, LanceDB and reports live."""

    root: str = _setting("lake", "Data lake root folder")
    keep_history: bool = _setting(
        "keep_history",
        "Keep superseded versions (search filters them by --as-of date); "
        "off: a newer version in force removes the older one",
    )

    @property
    def lake(self) -> Lake:
        """The lake's paths."""
        return Lake(self.root)


class EmbedderResource(ConfigurableResource):
    """The embedding model (a bundled name or a sentence-transformers path) and its
    prompts."""

    model: str = _setting(
        "model",
        "Model name or path: the bundled multilingual-e5-small (default, also when empty; "
        "-enpt) or all-MiniLM-L6-v2, or a local sentence-transformers folder",
    )
    query_prefix: str = _setting("query_prefix", "e.g. 'query: ' for e5 models")
    passage_prefix: str = _setting("passage_prefix", "e.g. 'passage: ' for e5 models")
    device: str | None = _setting(
        "device",
        "'cpu', 'cuda', 'cuda:1', 'mps': where torch computes (a sentence-transformers "
        "model; the bundled e5's passages only when e5_passages is auto and this names an "
        "accelerator); empty: the model's own (the CPU)",
    )
    batch_size: int = _field(32, "Texts embedded per batch")
    backend: str | None = _setting(
        "embed_backend",
        "torch | onnx, for a sentence-transformers model (all-MiniLM-L6-v2, a folder): onnx "
        "runs an ONNX export of the same model (CPU only), checked against torch when "
        "loaded; same vectors, same model id. Empty: the model's own (torch for a "
        "sentence-transformers model). The bundled e5 ignores it: e5_passages and "
        "e5_queries choose its paths",
    )
    threads: int = _setting(
        "embed_threads", "Threads of the bundled e5's paths; 0: every core", ge=0
    )
    e5_passages: str = _setting(
        "e5_passages",
        "What embeds the bundled e5's passages: auto (OpenVINO bf16, else onnxruntime, else "
        "the engine: the first that loads and reproduces the engine), openvino, onnx, engine",
    )
    e5_queries: str = _setting(
        "e5_queries",
        "What embeds the bundled e5's queries (the eval report's): auto (the engine here), "
        "openvino, onnx or engine",
    )
    cache: bool = _field(
        True, "Reuse vectors of texts embedded before (keyed by model id + text hash)"
    )

    def as_settings(self) -> Settings:
        """The settings these fields stand for."""
        return _as_settings(self)

    def embedder(self) -> Embedder:
        """The embedder of these fields, by the one factory (`Settings.embedder`); the
        model itself is loaded once per process."""
        return dataclasses.replace(self.as_settings().embedder(), batch_size=self.batch_size)


class LanceDBResource(ConfigurableResource):
    """The LanceDB database; by default `<lake>/lancedb`."""

    uri: str = _field("", "LanceDB URI; empty means <lake>/lancedb")
    drop_old_tables: bool = _field(
        True, "Drop the previous model's table once search switched to the new one"
    )
    ann_min_rows: int | None = _setting(
        "ann_min_rows",
        "Rows from which a model's table gets an HNSW vector index (below: exact "
        f"search); 0 disables it (and drops an existing one at the next write); "
        f"empty: {ANN_MIN_ROWS}",
        ge=0,
    )
    ann_ef: int | None = _setting(
        "ann_ef",
        "HNSW search breadth (ef, 1 or more): higher is slower and closer to exact; "
        f"empty: {ANN_EF}, growing with the table past 100k rows (2,000 at 1M)",
        ge=1,
    )
    vector_weight: float | None = _setting(
        "vector_weight",
        "Weight of the vector list in hybrid fusion (full text: 1); empty: the "
        f"model's default ({VECTOR_WEIGHT_E5:g} for the bundled e5, else 1)",
        ge=0,
    )
    min_score: float | None = _setting(
        "min_score",
        "Lowest cosine a served search returns, and what the eval's abstention figures "
        f"are measured at; -1 keeps every hit; empty: the model's default ({MIN_SCORE_E5:g} "
        f"for the bundled e5, {MIN_SCORE_MINILM:g} for all-MiniLM-L6-v2)",
        ge=-1,
        le=1,
    )

    def as_settings(self) -> Settings:
        """The settings these fields stand for."""
        return _as_settings(self)

    def uri_for(self, lake: Lake) -> str:
        """The database URI: the configured one, else `<lake>/lancedb`."""
        return self.uri or str(lake.lancedb_dir)

    def index(self, lake: Lake, embedder: Embedder) -> Index:
        """The index of `embedder`'s model in this database, with this resource's ANN
        and fusion settings, by the one factory (`Settings.index`)."""
        return self.as_settings().index(self.uri_for(lake), embedder)


class NothingStored(ConfigurableIOManager):
    """The `io_manager` of every job: trecho's assets write their own files and tables,
    and nothing reads a step's return value back, so none is stored (Dagster's default
    pickles each under the instance's `storage/`, and shows its `base_dir` in every
    Launchpad); no config."""

    def handle_output(self, context: OutputContext, obj: Any) -> None:
        """Keep nothing: what the step made is in the lake already."""

    def load_input(self, context: InputContext) -> Any:
        """Never asked for (no asset takes another's value as input)."""
        raise NotImplementedError(f"{context.asset_key}: trecho stores no step values")


def configured_resources(
    settings: Settings,
    lake_root: str | None = None,
    embedder: Embedder | None = None,
    db_uri: str = "",
) -> dict[str, ConfigurableResource]:
    """The `lake`, `embedder` and `lancedb` resources (and `io_manager`, which stores
    nothing: `NothingStored`): each setting field from
    `settings`, the lake root, model and prompts from the values given (a command's
    `--lake`, `--model`...) when given. Plain values, not Dagster `EnvVar`s: with
    Dagster 1.13, run config that sets one field of a resource (e.g. `cache: false` in
    the Launchpad) leaves a field built from an `EnvVar` unresolved, and the step fails;
    plain values are kept (see `_setting`)."""
    model = embedder or settings.embedder()
    return {
        "lake": _from_settings(
            LakeResource, settings, **({"root": lake_root} if lake_root else {})
        ),
        "embedder": _from_settings(
            EmbedderResource,
            settings,
            model=model.model,
            query_prefix=model.query_prefix,
            passage_prefix=model.passage_prefix,
        ),
        "lancedb": _from_settings(LanceDBResource, settings, uri=db_uri),
        "io_manager": NothingStored(),
    }
