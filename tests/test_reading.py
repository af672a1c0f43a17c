"""Page text, structure tree and tables on real PDFs: the samples, the laws, bad input."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from rag_assets.core.pdf import PdfError, count_pages, extract
from rag_assets.core.structure import build_tree, display_name, path_of
from rag_assets.core.tables import linearize_tables

from .conftest import SAMPLE_LAKE, SHARED


def tree_of(path: Path, key: str = "doc@v1"):
    extraction = extract(path)
    lines = [line for page in extraction.pages for line in page.lines]
    tables = {
        (p.page, t.index): (t.rows, t.row_spans, t.char_start, t.char_end)
        for p in extraction.pages
        for t in p.tables
    }
    return extraction, build_tree(key, extraction.doc, lines, tables, "Doc")


def test_manual_sections_table_and_no_running_lines():
    extraction, nodes = tree_of(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf")
    text = extraction.doc.text
    assert "Página" not in text  # footers with page numbers are dropped
    sections = {n.label: n.title for n in nodes if n.kind == "section"}
    assert sections["2"] == "Frequência" and sections["2.2"] == "Medição de vibração"
    by_id = {n.node_id: n for n in nodes}
    sub = next(n for n in nodes if n.label == "2.2")
    assert by_id[sub.parent_id].label == "2"  # 2.2 sits under 2
    table = next(n for n in nodes if n.kind == "table")
    assert table.label == "Tabela 1" and "Limites de tolerância" in table.title
    rows = [n for n in nodes if n.kind == "table_row"]
    assert len(rows) == 4 and all(r.parent_id == table.node_id for r in rows)
    for node in nodes:  # every span points at its own text
        assert node.char_start <= node.char_end <= len(text)
        if node.kind in ("section", "table_row"):
            assert text[node.char_start : node.char_end].startswith(node.text.split("\n")[0][:5])


def test_table_rows_carry_their_header():
    extraction, nodes = tree_of(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf")
    by_id = {n.node_id: n for n in nodes}
    paths = {n.node_id: " > ".join(display_name(a) for a in path_of(n, by_id)) for n in nodes}
    page_tables = [(p.page, t.rows) for p in extraction.pages for t in p.tables]
    rows = linearize_tables("doc@v1", nodes, page_tables, paths)
    assert [r.header for r in rows][0] == ["Medida", "Unidade", "Limite", "Ação"]
    vib = next(r for r in rows if r.cells[0] == "Vibração")
    assert vib.text == "Medida: Vibração; Unidade: mm/s; Limite: 4,5; Ação: Parar o equipamento"
    assert extraction.doc.text[vib.char_start : vib.char_end].startswith("Vibração")


@pytest.mark.parametrize(("law", "articles"), [("lgpd", 80), ("cdc", 130)])
def test_law_articles_and_clauses_sit_under_the_right_article(law: str, articles: int):
    pdf = SAMPLE_LAKE / "raw" / law / ("2018.pdf" if law == "lgpd" else "1990.pdf")
    extraction, nodes = tree_of(pdf)
    kinds = Counter(n.kind for n in nodes)
    assert kinds["article"] == articles  # the count the corpus README gives
    by_id = {n.node_id: n for n in nodes}
    for node in nodes:
        if node.kind in ("paragraph", "item", "point"):
            chain = path_of(node, by_id)
            article = next(a for a in chain if a.kind == "article")
            assert node.node_id.startswith(article.node_id + "/")
        if node.kind == "point":
            assert by_id[node.parent_id].kind in ("item", "paragraph")
    running = "texto compilado"
    assert all(running not in n.text for n in nodes)
    assert not re.search(r"^Página \d+$", extraction.doc.text, re.M)
    if law == "lgpd":
        art5 = next(n for n in nodes if n.label == "Art. 5º")
        incisos = [n for n in nodes if n.parent_id == art5.node_id and n.kind == "item"]
        assert len(incisos) >= 19  # the definitions of Art. 5º


def test_bad_inputs_fail_with_the_file_and_the_reason(tmp_path: Path):
    real = SHARED / "real-pdfs"
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    not_pdf = tmp_path / "notes.pdf"
    not_pdf.write_text("just text", encoding="utf-8")
    cases = {empty: "empty", not_pdf: "not a PDF"}
    if real.exists():
        encrypted = tmp_path / "password-example.pdf"
        shutil.copy(real / "password-example.pdf", encrypted)
        cases[encrypted] = "encrypted"
        scanned = tmp_path / "scan.pdf"
        shutil.copy(real / "issue-203-decimalize.pdf", scanned)
        cases[scanned] = "no page has a text layer"
    for path, reason in cases.items():
        with pytest.raises(PdfError) as err:
            extract(path)
        assert str(path) in str(err.value) and reason in str(err.value)


def test_page_limit_is_enforced():
    pdf = SAMPLE_LAKE / "raw" / "manual-beneficiario" / "v7.pdf"
    assert count_pages(pdf) >= 2
    with pytest.raises(PdfError, match="over the limit of 1 pages"):
        count_pages(pdf, max_pages=1)
