"""Shared fixtures: the real bundled model (loaded once per session), small lakes copied
from the sample corpus, and real PDFs generated with fpdf2."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")

from rag_assets.core.embedding import Embedder  # noqa: E402
from rag_assets.core.lake import Lake  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SAMPLE_LAKE = REPO / "data_lake"
SHARED = REPO.parent / "shared" / "corpora"
LAWS = SAMPLE_LAKE / "raw"
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once for the whole session."""
    model = Embedder()
    assert model.max_tokens == 256
    return model


@pytest.fixture(scope="session")
def counter(embedder: Embedder):
    """The model's own tokenizer."""
    return embedder.token_counter()


def copy_lake(target: Path, docs: list[str], questions: list[str]) -> Lake:
    """A lake holding some sample documents (all their versions) and question files."""
    for doc in docs:
        shutil.copytree(SAMPLE_LAKE / "raw" / doc, target / "raw" / doc)
    (target / "eval").mkdir(parents=True, exist_ok=True)
    for name in questions:
        shutil.copy(SAMPLE_LAKE / "eval" / name, target / "eval" / name)
    return Lake(target)


@pytest.fixture
def small_lake(tmp_path: Path) -> Lake:
    """The operations manual (v1) and the beneficiary manual (v6 revoked, v7 active)."""
    return copy_lake(
        tmp_path / "lake", ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"]
    )


def prompted_model(folder: Path, prompts: dict[str, str]) -> Path:
    """The bundled model under another folder (its files symlinked) whose
    sentence-transformers config ships `prompts`, as e5-style models do."""
    import json

    from rag_assets.core.embedding import DEFAULT_MODEL, resolve_model_path

    source = Path(resolve_model_path(DEFAULT_MODEL))
    folder.mkdir(parents=True)
    for item in source.iterdir():
        if item.name != "config_sentence_transformers.json":
            (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    config = json.loads((source / "config_sentence_transformers.json").read_text())
    config["prompts"] = prompts
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config))
    return folder


Block = tuple[str, int, bool]  # text, font size, bold


@pytest.fixture
def make_pdf() -> Callable[[Path, list[Block]], Path]:
    """Write a real PDF from (text, size, bold) blocks, one paragraph each."""
    from fpdf import FPDF

    def build(path: Path, blocks: list[Block]) -> Path:
        pdf = FPDF(format="A4")
        pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
        pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
        pdf.add_page()
        for text, size, bold in blocks:
            pdf.set_font("DejaVu", "B" if bold else "", size)
            pdf.multi_cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        path.parent.mkdir(parents=True, exist_ok=True)
        pdf.output(str(path))
        return path

    return build
