"""Every environment variable trecho reads, in one place: read once per process entry
(a `trecho` command, the Dagster code location), validated, and handed down as values;
the core takes values and never reads the environment. The table of them is
docs/configuration.md.

A bad value is one line naming the variable and the problem (`SettingsError`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag_assets.core.errors import ConfigError

if TYPE_CHECKING:
    from rag_assets.core.embedding import CacheDirs, Embedder
    from rag_assets.core.index import Index

TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")
EXECUTORS = ("multiprocess", "in_process", "dask", "celery", "k8s")
"""The executors trecho knows (`rag_assets.orchestration.executors` builds them)."""


class SettingsError(ConfigError):
    """An environment variable with a value trecho cannot use."""


def _var(name: str, kind: str = "str", default: Any = "") -> Any:
    """A field read from the environment variable `name`, parsed as `kind`."""
    return field(default=default, metadata={"env": name, "kind": kind})


@dataclass(frozen=True)
class Settings:
    """The configuration, as values. Each field's metadata names its variable."""

    lake: str = _var("TRECHO_LAKE", default="data_lake")
    model: str = _var("TRECHO_MODEL", default="")
    """Empty: the bundled default (`core.embedding.embedder.DEFAULT_MODEL`)."""
    query_prefix: str = _var("TRECHO_QUERY_PREFIX", "prefix")
    passage_prefix: str = _var("TRECHO_PASSAGE_PREFIX", "prefix")
    """Prompts are taken as they are, spaces included (`query: `)."""
    device: str | None = _var("TRECHO_DEVICE", "device", None)
    """Where torch computes (`cpu`, `cuda`, `cuda:N`, `mps`): a sentence-transformers
    model, and the bundled e5's passages under `auto` when it names an accelerator. None:
    the model's own (a sentence-transformers model on the CPU, the bundled e5's paths on
    the CPU)."""
    embed_backend: str | None = _var("TRECHO_EMBED_BACKEND", "backend", None)
    """`torch` or `onnx`, for a sentence-transformers model; the bundled e5 ignores it (its
    paths are `e5_passages`, `e5_queries`). None: the model's own (torch for a
    sentence-transformers model)."""
    embed_threads: int = _var("TRECHO_EMBED_THREADS", "count", 0)
    """0: every core (the bundled e5's paths only)."""
    e5_passages: str = _var("TRECHO_E5_PASSAGES", "e5_path", "auto")
    """What embeds the bundled e5's passages: one of `core.embedding.backends.E5_SETTINGS`
    (`auto`: torch on TRECHO_DEVICE when it names an accelerator, then OpenVINO (bf16
    where the CPU has it, else fp32), else onnxruntime, else the engine: the first that
    loads and reproduces the engine's vectors)."""
    e5_queries: str = _var("TRECHO_E5_QUERIES", "e5_path", "auto")
    """What embeds the bundled e5's queries: the same values; `auto` is onnxruntime (else
    the engine) in a long-running server, the engine elsewhere (a one-shot command loads
    nothing more)."""
    vector_weight: float | None = _var("TRECHO_VECTOR_WEIGHT", "weight", None)
    """None: the model's default (`core.index.default_vector_weight`)."""
    min_score: float | None = _var("TRECHO_MIN_SCORE", "cosine", None)
    """The lowest cosine a served search returns; None: the model's default
    (`core.index.default_min_score`); -1 keeps every hit."""
    keep_history: bool = _var("TRECHO_KEEP_HISTORY", "flag", False)
    ann_min_rows: int | None = _var("TRECHO_ANN_MIN_ROWS", "count", None)
    """None: `core.index.ANN_MIN_ROWS`."""
    ann_ef: int | None = _var("TRECHO_ANN_EF", "positive", None)
    """None: `core.index.ANN_EF`."""
    index_cron: str = _var("TRECHO_INDEX_CRON", "cron", "0 5 * * *")
    eval_cron: str = _var("TRECHO_EVAL_CRON", "cron", "0 6 * * *")
    upkeep_cron: str = _var("TRECHO_UPKEEP_CRON", "cron", "40 * * * *")
    sensor_interval: int = _var("TRECHO_SENSOR_INTERVAL", "positive", 5)
    """Seconds between the raw-folder sensor's ticks."""
    executor: str = _var("TRECHO_EXECUTOR", "executor", "in_process")
    max_concurrent: int = _var("TRECHO_MAX_CONCURRENT", "count", 0)
    """0: the executor's own default."""
    dask_address: str = _var("TRECHO_DASK_ADDRESS")
    dask_workers: int = _var("TRECHO_DASK_WORKERS", "count", 0)
    celery_broker: str = _var("TRECHO_CELERY_BROKER")
    celery_backend: str = _var("TRECHO_CELERY_BACKEND")
    k8s_namespace: str = _var("TRECHO_K8S_NAMESPACE")
    k8s_image: str = _var("TRECHO_K8S_IMAGE")
    serve_token: str = _var("TRECHO_SERVE_TOKEN")
    debug: bool = _var("TRECHO_DEBUG", "flag", False)
    dagster_home: str = _var("DAGSTER_HOME")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read and check every variable once (`env` defaults to the process's)."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = f.metadata["env"]
            if not env.get(name, "").strip():
                continue
            kind = f.metadata["kind"]
            raw = env[name] if kind == "prefix" else env[name].strip()
            values[f.name] = _parse(name, kind, raw)
        return cls(**values)

    def var(self, attr: str) -> str:
        """The environment variable of the field `attr`."""
        return next(f.metadata["env"] for f in fields(self) if f.name == attr)

    def embedder(
        self,
        model: str | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        *,
        server: bool = False,
    ) -> Embedder:
        """The one embedder factory: `model` (default: the configured one) with its
        prompts (given, else the configured ones when it is the configured model, else
        none), on the configured device, backend and threads. `server`: for a
        long-running process (`trecho serve`, `trecho mcp`), where `auto` embeds the
        bundled e5's queries on onnxruntime when it is installed."""
        from rag_assets.core.embedding import DEFAULT_MODEL, Embedder

        configured = self.model or DEFAULT_MODEL
        chosen = model or configured
        same = chosen == configured
        return Embedder(
            model=chosen,
            query_prefix=(self.query_prefix if same else "")
            if query_prefix is None
            else query_prefix,
            passage_prefix=(self.passage_prefix if same else "")
            if passage_prefix is None
            else passage_prefix,
            device=self.device or "cpu",
            backend=self.embed_backend or "torch",
            threads=self.embed_threads,
            e5_queries=e5_query_path(self.e5_queries, server=server),
            e5_passages=self.e5_passages,
            caches=cache_dirs(),
        )

    def lake_embedder(
        self,
        db_uri: str,
        model: str | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ) -> Embedder:
        """The model to work with on the database `db_uri`: `model` (or other prompts)
        when named, else the lake's own (`core.index.lake_model`: the model it is switching
        to, else the one search uses), else the configured one (a lake nothing was indexed
        in or asked for yet). How it runs (device, backend...) is always the settings'."""
        configured = self.embedder(model, query_prefix, passage_prefix)
        if model or query_prefix is not None or passage_prefix is not None:
            return configured
        from rag_assets.core.index import lake_model

        ref = lake_model(db_uri)
        return configured if ref is None else ref.embedder(configured)

    def index_options(self) -> dict[str, Any]:
        """`Index`'s keyword arguments the settings give: ANN settings, vector weight."""
        return {
            "ann_min_rows": self.ann_min_rows,
            "ann_ef": self.ann_ef,
            "vector_weight": self.vector_weight,
            "min_score": self.min_score,
        }

    def index(self, uri: str, embedder: Embedder) -> Index:
        """The one `Index` factory: the index of `embedder`'s model in `uri`, with the
        configured ANN settings and vector weight (`index_options`, which `trecho serve`'s
        engine also takes)."""
        from rag_assets.core.index import Index

        return Index(uri, embedder, **self.index_options())

    def serving_index(
        self,
        uri: str,
        model: str | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
    ) -> Index:
        """The index search answers from: `model` (or the configured model with other
        prompts) when named, else the active model of `uri` (the configured one takes
        over only once its backfill is complete)."""
        from rag_assets.core.index import active_embedder

        embedder = self.embedder(model, query_prefix, passage_prefix)
        if not (model or query_prefix is not None or passage_prefix is not None):
            embedder = active_embedder(uri, embedder)
        return self.index(uri, embedder)


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Where trecho keeps per-machine caches (tokenizers, ONNX exports):
    `TRECHO_CACHE_DIR`, else `$XDG_CACHE_HOME/trecho`, else `~/.cache/trecho`. Read at
    each call (`cache_dirs`: when an embedder is built)."""
    env = os.environ if env is None else env
    if env.get("TRECHO_CACHE_DIR", "").strip():
        return Path(env["TRECHO_CACHE_DIR"].strip()).expanduser()
    base = env.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "trecho"


def onnx_root(env: Mapping[str, str] | None = None) -> Path:
    """Where ONNX exports live: `TRECHO_ONNX_DIR`, else `<cache_root>/onnx`."""
    env = os.environ if env is None else env
    given = env.get("TRECHO_ONNX_DIR", "").strip()
    return Path(given).expanduser() if given else cache_root(env) / "onnx"


def cache_dirs(env: Mapping[str, str] | None = None) -> CacheDirs:
    """Where the embedders keep this machine's model caches (`cache_root`, `onnx_root`),
    read when an embedder is built (`Settings.embedder`): the core is given them."""
    from rag_assets.core.embedding import CacheDirs

    return CacheDirs(cache_root(env), onnx_root(env))


def secret(name: str | None) -> str | None:
    """The value of the environment variable `name` (an API key a setting names, never
    stored in configuration); None when unset, empty or not named."""
    return (os.environ.get(name) or None) if name else None


def e5_query_path(setting: str, *, server: bool) -> str:
    """What embeds the bundled e5's queries for the TRECHO_E5_QUERIES value `setting`:
    `auto` means onnxruntime in a long-running server (`backends.E5_QUERY_AUTO`), else
    the engine."""
    if setting != "auto":
        return setting
    return "auto" if server else "engine"


def _parse(name: str, kind: str, raw: str) -> Any:
    """One variable's value, parsed as `kind` and checked."""
    if kind == "flag":
        if raw.lower() not in TRUE + FALSE:
            raise SettingsError(f"{name}={raw!r}: expected 1/true/yes/on or 0/false/no/off")
        return raw.lower() in TRUE
    if kind in ("count", "positive"):
        try:
            value = int(raw.replace("_", ""))
        except ValueError:
            raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
        minimum = 1 if kind == "positive" else 0
        if value < minimum:
            raise SettingsError(f"{name}={raw!r}: expected {minimum} or more")
        return value
    if kind == "weight":
        try:
            weight = float(raw)
        except ValueError:
            raise SettingsError(f"{name}={raw!r}: expected a number") from None
        if weight < 0:
            raise SettingsError(f"{name}={raw!r}: expected 0 or more")
        return weight
    if kind == "cosine":
        try:
            cosine = float(raw)
        except ValueError:
            raise SettingsError(f"{name}={raw!r}: expected a number") from None
        if not -1 <= cosine <= 1:
            raise SettingsError(f"{name}={raw!r}: expected a cosine, from -1 to 1")
        return cosine
    if kind in ("backend", "e5_path"):  # the embedder's own lists, read when needed
        from rag_assets.core.embedding import BACKENDS, E5_SETTINGS

        allowed = BACKENDS if kind == "backend" else E5_SETTINGS
        if raw not in allowed:
            raise SettingsError(f"{name}={raw!r}: expected one of {', '.join(allowed)}")
    if kind == "e5_path" and raw == "onnx":
        from rag_assets.core.embedding import path_available

        if not path_available("onnx"):
            raise SettingsError(
                f"{name}=onnx needs the packages onnxruntime and onnx (pip install 'trecho[onnx]')"
            )
    if kind == "e5_path" and raw == "torch":
        from rag_assets.core.embedding import path_available

        if not path_available("torch"):
            raise SettingsError(f"{name}=torch needs the package torch (pip install torch)")
    if kind == "device":
        from rag_assets.core.embedding import DEVICE

        if not DEVICE.match(raw.lower()):
            raise SettingsError(f"{name}={raw!r}: expected cpu, cuda, cuda:N or mps")
        raw = raw.lower()
    if kind == "e5_path" and raw == "openvino":
        from rag_assets.core.embedding import path_available

        if not path_available("openvino"):
            raise SettingsError(f"{name}=openvino needs the package openvino (pip install trecho)")
    if kind == "executor":
        raw = raw.lower().replace("-", "_")
        if raw not in EXECUTORS:
            raise SettingsError(
                f"{name}={raw!r} is not an executor trecho knows; use one of: "
                f"{', '.join(EXECUTORS)}"
            )
    if kind == "cron":
        from dagster import DagsterInvalidDefinitionError, ScheduleDefinition

        try:  # Dagster's own check of a schedule's cron string, through its public API
            ScheduleDefinition(name="cron_check", cron_schedule=raw, job_name="cron_check")
        except DagsterInvalidDefinitionError:
            raise SettingsError(
                f"{name}={raw!r}: not a cron expression (e.g. '0 5 * * *')"
            ) from None
    return raw
