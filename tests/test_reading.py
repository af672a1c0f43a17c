"""Page text, structure tree and tables on real PDFs: the samples, the laws, generated
documents (hyphenation, rotated pages, columns, English headings, tables over pages) and
bad input."""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from fpdf import FPDF
from fpdf.fonts import FontFace

from rag_assets.core.extract import PdfError, count_pages, extract
from rag_assets.core.structure.paths import display_name, path_of
from rag_assets.core.structure.tree import build_tree, tables_by_piece
from rag_assets.core.tables import PageTable, join_tables, linearize_tables

from .conftest import FONT_DIR, SAMPLE_LAKE, SHARED

REAL = SHARED / "real-pdfs"


def new_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.set_font("DejaVu", "", 11)
    return pdf


def one_line_each(pdf: FPDF, lines: list[str]) -> None:
    for text in lines:
        pdf.cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")


def assert_spans_point_at_the_text(extraction) -> None:
    """Every line's and page's offsets point at their own text in the document text."""
    text = extraction.doc.text
    for page in extraction.pages:
        assert text[page.char_start : page.char_start + len(page.text)] == page.text
        for line in page.lines:
            assert text[line.char_start : line.char_end] == line.text


def test_manual_sections_table_and_no_running_lines(tree_of):
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


def test_table_rows_carry_their_header(tree_of):
    extraction, nodes = tree_of(SAMPLE_LAKE / "raw" / "manual-operacao" / "v1.pdf")
    by_id = {n.node_id: n for n in nodes}
    paths = {n.node_id: " > ".join(display_name(a) for a in path_of(n, by_id)) for n in nodes}
    rows = linearize_tables("doc@v1", nodes, extraction.logical_tables(), paths)
    assert [r.header for r in rows][0] == ["Medida", "Unidade", "Limite", "Ação"]
    vib = next(r for r in rows if r.cells[0] == "Vibração")
    assert vib.text == "Medida: Vibração; Unidade: mm/s; Limite: 4,5; Ação: Parar o equipamento"
    assert extraction.doc.text[vib.char_start : vib.char_end].startswith("Vibração")


ARTICLE_LINE = re.compile(r"^Art\.\s*(\d+(?: \d)*)(?:-([A-Z]))?")


def printed_article_at(text: str) -> list[tuple[int, tuple[int, str]]]:
    """(offset, article number) where each article's heading line starts, read off the
    text: a line opening with `Art. N` whose number is past the last one (a line starting
    with an earlier article is a cross-reference)."""
    found: list[tuple[int, tuple[int, str]]] = []
    offset = 0
    for line in text.split("\n"):
        match = ARTICLE_LINE.match(line)
        if match:
            number = (int(match.group(1).replace(" ", "")), match.group(2) or "")
            if not found or number > found[-1][1]:
                found.append((offset, number))
        offset += len(line) + 1
    return found


def article_number(label: str) -> tuple[int, str]:
    match = re.search(r"(\d+)(?:-([A-Z]))?", label.replace(" ", ""))
    assert match, label
    return int(match.group(1)), match.group(2) or ""


@pytest.mark.parametrize(("law", "articles"), [("lgpd", 80), ("cdc", 130)])
@pytest.mark.slow
def test_law_articles_and_clauses_sit_under_the_right_article(tree_of, law: str, articles: int):
    # the same bytes as ../shared/corpora/leis/<law>.pdf
    pdf = SAMPLE_LAKE / "raw" / law / ("2018.pdf" if law == "lgpd" else "1990.pdf")
    extraction, nodes = tree_of(pdf)
    text = extraction.doc.text
    kinds = Counter(n.kind for n in nodes)
    assert kinds["article"] == articles  # the count the corpus README gives
    numbers = sorted({article_number(n.label)[0] for n in nodes if n.kind == "article"})
    assert numbers == list(range(1, numbers[-1] + 1))  # no article number skipped
    by_id = {n.node_id: n for n in nodes}
    printed = printed_article_at(text)
    assert len(printed) == articles
    for node in nodes:
        if node.kind in ("paragraph", "item", "point"):
            chain = path_of(node, by_id)
            article = next(a for a in chain if a.kind == "article")
            assert node.node_id.startswith(article.node_id + "/")
            # the article whose heading is the last one printed before the clause
            expected = [n for start, n in printed if start <= node.char_start][-1]
            assert article_number(article.label) == expected, (node.label, node.text[:60])
            assert article.char_start <= node.char_start < node.char_end <= article.char_end
        if node.kind == "point":
            assert by_id[node.parent_id].kind in ("item", "paragraph")
    running = "texto compilado"  # the running header of every page
    assert running not in text and all(running not in n.text for n in nodes)
    assert not any(re.search(r"^Página \d+$", n.text, re.M) for n in nodes)
    assert not re.search(r"^Página \d+$", text, re.M)
    if law == "lgpd":
        art4 = next(n for n in nodes if n.label == "Art. 4º")
        under = [n for n in nodes if n.parent_id == art4.node_id]
        assert [n.label for n in under if n.kind == "item"] == ["I", "II", "III", "IV"]
        assert [n.label for n in under if n.kind == "paragraph"] == ["§ 1º", "§ 2º", "§ 3º", "§ 4º"]
        inciso3 = next(n for n in under if n.label == "III")
        alineas = [n.label for n in nodes if n.parent_id == inciso3.node_id]
        assert alineas == ["a)", "b)", "c)", "d)"]  # segurança pública ... investigação
        art5 = next(n for n in nodes if n.label == "Art. 5º")
        incisos = [n for n in nodes if n.parent_id == art5.node_id and n.kind == "item"]
        assert len(incisos) >= 19  # the definitions of Art. 5º


def test_words_hyphenated_across_lines_are_joined_and_compounds_kept(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    one_line_each(
        pdf,
        [
            "O controlador deve garantir o trata-",
            "mento adequado dos dados e dar-",
            "lhe ciência, zelando pelo bem-",
            "estar do titular; a informação será presta-",
            "da até a segunda-",
            "feira seguinte. Aplica-",
            "se o disposto no art. 7º, inclusive o COVID-",
            "19 e o inciso II-",
            "a) deste artigo.",
        ],
    )
    path = tmp_path / "hifen.pdf"
    pdf.output(str(path))
    extraction = extract(path)
    flat = " ".join(extraction.doc.text.split())
    assert "o tratamento adequado" in flat
    assert "dar-lhe ciência" in flat and "bem-estar do titular" in flat
    assert "será prestada até a segunda-feira" in flat
    assert "Aplica-se o disposto" in flat
    assert "COVID- 19" in flat  # a number after the hyphen: not a word cut in two
    assert "inciso II- a) deste" in flat  # an alínea opens the next line, left alone
    assert extraction.stats["hyphenations_joined"] == 6
    assert_spans_point_at_the_text(extraction)
    assert extraction.pages[0].lines[0].text.endswith("o tratamento")


def test_rotated_pages_read_in_order(tree_of, tmp_path: Path, turned):
    lines = [
        "Art. 1º Primeira linha do texto.",
        "Art. 2º Segunda linha logo abaixo.",
        "Art. 3º Terceira linha, a última.",
    ]
    # 1: upright text on a page displayed turned by /Rotate 90
    plain = tmp_path / "plain.pdf"
    pdf = new_pdf()
    pdf.add_page()
    one_line_each(pdf, lines)
    pdf.output(str(plain))
    rotated = turned(plain, tmp_path / "rotate90.pdf")
    # 2: a landscape page drawn sideways on a portrait sheet, no /Rotate
    sideways = tmp_path / "sideways.pdf"
    pdf = new_pdf()
    pdf.add_page()
    with pdf.rotation(90, x=105, y=148):
        pdf.set_xy(40, 120)
        for text in lines:
            pdf.cell(0, 7, text, new_x="LMARGIN", new_y="NEXT")
            pdf.set_x(40)
    pdf.output(str(sideways))
    for path in (rotated, sideways):
        extraction, nodes = tree_of(path)
        assert [line.text for line in extraction.pages[0].lines] == lines, path.name
        assert extraction.pages[0].rotation != 0
        assert [n.label for n in nodes if n.kind == "article"] == ["Art. 1º", "Art. 2º", "Art. 3º"]


def test_two_columns_read_column_by_column(tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    first = [f"Primeira coluna, frase {i}, sobre o tratamento de dados." for i in range(1, 9)]
    second = [f"Segunda coluna, frase {i}, sobre os direitos do titular." for i in range(1, 9)]
    with pdf.text_columns(ncols=2, gutter=12) as cols:
        cols.write(text=" ".join(first))
        cols.new_column()
        cols.write(text=" ".join(second))
    path = tmp_path / "colunas.pdf"
    pdf.output(str(path))
    extraction = extract(path)
    assert extraction.pages[0].columns
    assert " ".join(extraction.doc.text.split()) == " ".join(first + second)
    assert_spans_point_at_the_text(extraction)


def test_english_headings_are_chapters_sections_and_articles(tree_of, make_pdf, tmp_path: Path):
    path = make_pdf(
        tmp_path / "regulation.pdf",
        [
            ("Regulation on the Protection of Data", 16, True),
            ("CHAPTER I", 13, True),
            ("General Provisions", 13, True),
            ("Article 1", 11, True),
            ("Subject matter", 11, True),
            ("This Regulation lays down rules relating to the protection of persons.", 10, False),
            ("Section 2. Scope", 11, False),
            ("Article 2", 11, False),
            ("This Regulation applies to:", 10, False),
            ("(a) the processing of personal data wholly by automated means;", 10, False),
            ("(b) the processing other than by automated means.", 10, False),
            ("Section 3 describes how these rules apply and is plain prose.", 10, False),
            ("CHAPTER II", 13, True),
            ("Principles", 13, True),
            ("ARTICLE 3", 11, False),
            ("Personal data shall be processed lawfully and fairly.", 10, False),
        ],
    )
    _, nodes = tree_of(path)
    by_id = {n.node_id: n for n in nodes}
    by_label = {n.label: n for n in nodes if n.label}
    chapters = [(n.label, n.title) for n in nodes if n.kind == "chapter"]
    assert chapters == [("Chapter I", "General Provisions"), ("Chapter II", "Principles")]
    assert by_label["Section 2"].kind == "section" and by_label["Section 2"].title == "Scope"
    assert "Section 3" not in by_label  # prose that starts with "Section 3" is no heading
    articles = [n for n in nodes if n.kind == "article"]
    assert [a.label for a in articles] == ["Article 1", "Article 2", "Article 3"]
    assert articles[0].title == "Subject matter"
    assert [by_id[a.parent_id].label for a in articles] == ["Chapter I", "Section 2", "Chapter II"]
    assert by_id[by_label["Section 2"].parent_id].label == "Chapter I"
    points = [n for n in nodes if n.kind == "point"]
    assert [p.label for p in points] == ["(a)", "(b)"]
    assert all(by_id[p.parent_id].label == "Article 2" for p in points)


def test_a_table_continued_on_the_next_page_is_one_table(tree_of, tmp_path: Path):
    pdf = new_pdf()
    pdf.add_page()
    pdf.multi_cell(
        0,
        6,
        "Os limites abaixo valem para todas as bombas da linha.",
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.cell(0, 8, "Tabela 1 – Limites por equipamento", new_x="LMARGIN", new_y="NEXT")
    long_action = "Parar o equipamento e chamar a manutenção do turno"
    with pdf.table(col_widths=(30, 25, 20, 60), headings_style=FontFace(emphasis="BOLD")) as t:
        row = t.row()
        for heading in ("Equipamento", "Medida", "Limite", "Ação"):
            row.cell(heading)
        for i in range(1, 61):
            row = t.row()
            action = long_action if i % 7 == 0 else "Registrar"
            for cell in (f"Bomba {i:02d}", "Vibração", f"{i % 9},5", action):
                row.cell(cell)
    pdf.multi_cell(0, 6, "Fim da tabela de limites.")
    path = tmp_path / "tabela.pdf"
    pdf.output(str(path))
    extraction, nodes = tree_of(path)
    pages = len(extraction.pages)
    assert pages >= 2 and all(p.tables for p in extraction.pages)
    [table] = [n for n in nodes if n.kind == "table"]
    assert (table.label, table.page_start, table.page_end) == ("Tabela 1", 1, pages)
    assert table.title == "Tabela 1 – Limites por equipamento"
    rows = linearize_tables("doc@v1", nodes, extraction.logical_tables(), {})
    assert len(rows) == 60  # the header printed again on every page is not a row
    assert {r.table_id for r in rows} == {table.node_id}
    assert {r.page for r in rows} == set(range(1, pages + 1))
    assert all(r.text.startswith(f"Equipamento: Bomba {i:02d}; ") for i, r in enumerate(rows, 1))
    assert len({r.row_index for r in rows}) == 60  # ids stay unique over the pages
    assert rows[-1].text == "Equipamento: Bomba 60; Medida: Vibração; Limite: 6,5; Ação: Registrar"
    assert f"Ação: {long_action}" in rows[6].text  # a cell printed over two lines, joined
    for r in rows:  # every row points at its own printed lines
        assert r.cells[0] in extraction.doc.text[r.char_start : r.char_end]
    assert "Fim da tabela" in extraction.doc.text


def test_a_row_cut_by_the_page_break_is_one_row():
    rows = [["Medida", "Ação"], ["Ruído", "Revisar"], ["Vibração", "Parar o"]]
    first = PageTable(0, (0, 0, 0, 0), rows, [], header_rows=1, header=["Medida", "Ação"], page=1)
    cut = [["", "equipamento"], ["Calor", "Ventilar"]]
    rest = PageTable(0, (0, 0, 0, 0), cut, [], continues=True, page=2)
    [table] = join_tables([first, rest])
    assert [r.cells for r in table.rows] == [
        ["Ruído", "Revisar"],
        ["Vibração", "Parar o equipamento"],
        ["Calor", "Ventilar"],
    ]


@pytest.mark.skipif(not REAL.exists(), reason="shared real-world PDFs not available")
def test_headers_over_several_rows_name_every_column():
    extraction = extract(REAL / "senate-expenditures.pdf")
    [table] = extraction.logical_tables()
    assert table.header == [
        "DOCUMENTNO.",
        "DATE POSTED",
        "PAYEENAME",
        "OBLIGATION/SERVICE DATES > START",
        "OBLIGATION/SERVICE DATES > END",
        "DESCRIPTION",
        "AMOUNT($)",
    ]
    extraction = extract(REAL / "issue-53-example.pdf")
    tables = extraction.logical_tables()
    assert tables[0].title == "1.1 JAL Group International Passenger Traffic Data"
    cargo = tables[3].header
    assert cargo[1:3] == ["International > Cargo > Ton", "International > Cargo > y.o.y(%)"]
    assert cargo[7] == "Domestic > Mail > Ton"


def test_bad_inputs_fail_with_the_file_and_the_reason(tmp_path: Path):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    not_pdf = tmp_path / "notes.pdf"
    not_pdf.write_text("just text", encoding="utf-8")
    cases = {empty: "empty", not_pdf: "not a PDF"}
    if REAL.exists():
        encrypted = tmp_path / "password-example.pdf"
        shutil.copy(REAL / "password-example.pdf", encrypted)
        cases[encrypted] = "encrypted"
        malformed = tmp_path / "malformed.pdf"
        shutil.copy(REAL / "malformed-from-issue-932.pdf", malformed)
        cases[malformed] = "malformed PDF, page 1 draws all its text outside the page"
    for path, reason in cases.items():
        with pytest.raises(PdfError) as err:
            extract(path)
        assert str(path) in str(err.value) and reason in str(err.value)


def test_page_limit_is_enforced():
    pdf = SAMPLE_LAKE / "raw" / "manual-beneficiario" / "v7.pdf"
    assert count_pages(pdf) >= 2
    with pytest.raises(PdfError, match="over the limit of 1 pages"):
        count_pages(pdf, max_pages=1)


STATES = [("Alabama", "209", "1,234", "33", "4"), ("Alaska", "17", "2,050", "8", "12")]
STATES += [("Arizona", "88", "3,407", "21", "9"), ("Arkansas", "40", "905", "5", "2")]


def column_ruled_pdf(path: Path) -> Path:
    """A table ruled by columns only (no line between its rows) under a two-level header:
    `State` over both header rows, `Permit` and `Sale` each over `Handgun` and `Long gun`."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    pdf.set_xy(20, 20)
    pdf.cell(0, 6, "Background checks by state")
    x = [20.0, 60.0, 90.0, 120.0, 150.0, 180.0]
    top, mid, head, row_h = 30.0, 37.0, 44.0, 7.0
    bottom = head + row_h * len(STATES) + 2
    for y in (top, head, bottom):
        pdf.line(x[0], y, x[-1], y)
    pdf.line(x[1], mid, x[-1], mid)  # under the group headings only
    for i, xi in enumerate(x):
        pdf.line(xi, mid if i in (2, 4) else top, xi, bottom)
    pdf.text(x[0] + 2, 40, "State")
    pdf.text(x[1] + 2, 35, "Permit")
    pdf.text(x[3] + 2, 35, "Sale")
    for i, name in enumerate(["Handgun", "Long gun", "Handgun", "Long gun"]):
        pdf.text(x[i + 1] + 2, 42, name)
    for r, values in enumerate(STATES):
        for i, value in enumerate(values):
            pdf.text(x[i] + 2, head + row_h * (r + 1) - 2, value)
    pdf.output(str(path))
    return path


def test_a_column_ruled_table_is_read_by_its_lines_under_a_two_level_header(tmp_path: Path):
    extraction = extract(column_ruled_pdf(tmp_path / "ruled.pdf"))
    [table] = extraction.logical_tables()
    assert table.header == [
        "State",
        "Permit > Handgun",
        "Permit > Long gun",
        "Sale > Handgun",
        "Sale > Long gun",
    ]
    assert [r.cells for r in table.rows] == [list(values) for values in STATES]
    lines = [ln for page in extraction.pages for ln in page.lines]
    nodes = build_tree("doc@v1", extraction.doc, lines, tables_by_piece([table]), "doc")
    rows = linearize_tables("doc@v1", nodes, [table], {})
    assert rows[0].text == (
        "State: Alabama; Permit > Handgun: 209; Permit > Long gun: 1,234; "
        "Sale > Handgun: 33; Sale > Long gun: 4"
    )
    for row, (state, *_) in zip(rows, STATES, strict=True):  # each row points at its line
        assert extraction.doc.text[row.char_start : row.char_end].startswith(state)


def test_unruled_number_rows_at_the_top_of_every_page_are_kept(tmp_path: Path):
    """Rows of bare numbers (an unruled table) opening each page look alike once their
    numbers are blanked, as running headers do; they are data and stay in the text."""
    pages = [
        [("2010", "54,876", "38,716"), ("2011", "55,120", "39,004")],
        [("2012", "56,000", "40,100"), ("2013", "57,310", "41,250")],
    ]
    pdf = new_pdf()
    for n, rows in enumerate(pages, start=1):
        pdf.add_page()
        for row in rows:
            pdf.cell(0, 7, "        ".join(row), new_x="LMARGIN", new_y="NEXT")
        one_line_each(pdf, [f"Traffic at the port on sheet {n}.", f"Note {n} on the figures."])
    path = tmp_path / "numbers.pdf"
    pdf.output(str(path))
    words = extract(path).doc.text.split()
    for rows in pages:
        for row in rows:
            for value in row:
                assert value in words


COUNTRIES = [("Austria", "86.2", "13.8", "3,375"), ("Belgium", "0", "100.0", "3,973")]
COUNTRIES += [("Czech Republic", "98.6", "1.4", "17,655")]


def test_rows_ruled_without_column_lines_are_cut_into_the_header_columns(tmp_path: Path):
    """Column rules under the header only: each data row is one ruled cell over the whole
    width, and its values still go to the columns they are printed in."""
    pdf = new_pdf()
    pdf.add_page()
    x = [20.0, 70.0, 105.0, 140.0, 175.0]
    top, head, row_h = 30.0, 40.0, 8.0
    bottom = head + row_h * len(COUNTRIES)
    for y in [top, head] + [head + row_h * (r + 1) for r in range(len(COUNTRIES))]:
        pdf.line(x[0], y, x[-1], y)
    for i, xi in enumerate(x):
        pdf.line(xi, top, xi, bottom if i in (0, len(x) - 1) else head)
    for i, name in enumerate(["Country", "Domestic (%)", "Imported (%)", "Total (n)"]):
        pdf.text(x[i] + 2, head - 3, name)
    for r, values in enumerate(COUNTRIES):
        for i, value in enumerate(values):
            pdf.text(x[i] + 2, head + row_h * (r + 1) - 2.5, value)
    path = tmp_path / "header-ruled.pdf"
    pdf.output(str(path))
    [table] = extract(path).logical_tables()
    assert table.header == ["Country", "Domestic (%)", "Imported (%)", "Total (n)"]
    assert [r.cells for r in table.rows] == [list(values) for values in COUNTRIES]


GROWTH = [
    ("1996", "3.7", "1.6", "1.7"),
    ("2000", "5.0", "3.9", "3.9"),
    ("2006 (*)", "3.5", "2.0", "2.1"),
]


def test_columns_printed_beside_the_ruled_box_are_the_tables(tmp_path: Path):
    """Only the middle columns are ruled: the years left of the box (the stub column) and
    the last column right of it are still the table's, on its rows."""
    pdf = new_pdf()
    pdf.add_page()
    pdf.text(20, 20, "GDP growth (percentage change on previous year)")
    x_stub, x, x_last = 20.0, [50.0, 90.0, 130.0], 140.0
    top, row_h = 30.0, 8.0
    bottom = top + row_h * (len(GROWTH) + 1)
    for r in range(len(GROWTH) + 2):
        pdf.line(x[0], top + row_h * r, x[-1], top + row_h * r)
    for xi in x:
        pdf.line(xi, top, xi, bottom)
    baseline = [top + row_h * (r + 1) - 2.5 for r in range(len(GROWTH) + 1)]
    for name, xi in (("Finland", x[0] + 2), ("EU-15", x[1] + 2), ("EU-25", x_last)):
        pdf.text(xi, baseline[0], name)
    for r, (year, *values) in enumerate(GROWTH, start=1):
        pdf.text(x_stub, baseline[r], year)
        for xi, value in zip((x[0] + 2, x[1] + 2, x_last), values, strict=True):
            pdf.text(xi, baseline[r], value)
    pdf.text(20, bottom + 10, "Source: national accounts.")
    path = tmp_path / "beside.pdf"
    pdf.output(str(path))
    extraction = extract(path)
    [table] = extraction.logical_tables()
    assert table.header[1:] == ["Finland", "EU-15", "EU-25"]
    assert [r.cells for r in table.rows] == [list(row) for row in GROWTH]
    assert "Source: national accounts." not in " ".join(c for r in table.rows for c in r.cells)
