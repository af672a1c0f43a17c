"""Every chunk names its real section: the PDF's own outline opens sections, headings are
found by evidence (never a prose fragment, a table-of-contents line or a rotated banner),
no text unit shows in a path, tables are named by their captions or in the document's
language, and the stage says how far its paths can be trusted. Real PDFs written with
fpdf2, read by the real extraction."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fpdf import FPDF

from rag_assets.core.chunking.structural import StructuralChunker
from rag_assets.core.corpus import read_pdf
from rag_assets.core.extract import OutlineEntry
from rag_assets.core.lake.schemas import Node
from rag_assets.core.structure.language import detect_language
from rag_assets.core.structure.paths import path_names
from rag_assets.core.structure.quality import path_quality
from rag_assets.core.structure.settings import StructureSettings
from tests.conftest import FONT_DIR

PROSE = {
    "en": (
        "The survey covers every household of the region and the results are weighted by "
        "the population of each district, as the methods section describes in detail."
    ),
    "fr": (
        "Le sondage couvre tous les ménages de la région et les résultats sont pondérés par "
        "la population de chaque district, comme le décrit la section des méthodes."
    ),
    "pt": (
        "A pesquisa cobre todos os domicílios da região e os resultados são ponderados pela "
        "população de cada distrito, como a seção de métodos descreve em detalhe."
    ),
}


class Doc:
    """A small report written with fpdf2: body text at 10 pt, headings as asked."""

    def __init__(self) -> None:
        self.pdf = FPDF(format="A4")
        self.pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
        self.pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
        self.pdf.set_auto_page_break(True, 20)
        self.pdf.add_page()

    def text(self, text: str, size: float = 10, bold: bool = False, gap: float = 1.5) -> Doc:
        self.pdf.set_font("DejaVu", "B" if bold else "", size)
        self.pdf.multi_cell(0, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(gap)
        return self

    def heading(self, text: str, size: float = 14, bookmark: int | None = None) -> Doc:
        self.pdf.ln(4)
        if bookmark is not None:
            self.pdf.start_section(text, level=bookmark)
        return self.text(text, size=size, bold=size == 14, gap=2)

    def table(self, rows: list[list[str]]) -> Doc:
        self.pdf.set_font("DejaVu", "", 9)
        with self.pdf.table(width=120, align="LEFT") as table:
            for row in rows:
                line = table.row()
                for cell in row:
                    line.cell(cell)
        self.pdf.ln(2)
        return self

    def page(self) -> Doc:
        self.pdf.add_page()
        return self

    def banner(self, text: str) -> Doc:
        """Text printed sideways in the left margin, as report covers carry."""
        self.pdf.set_font("DejaVu", "B", 16)
        with self.pdf.rotation(90, x=8, y=200):
            self.pdf.text(8, 200, text)
        return self

    def write(self, path: Path) -> Path:
        self.pdf.output(str(path))
        return path


def headings(nodes: list[Node]) -> list[str]:
    return [" ".join(p for p in (n.label, n.title) if p) for n in nodes if n.kind == "section"]


@pytest.fixture
def read(tmp_path: Path) -> Callable[..., tuple]:
    def run(doc: Doc, name: str = "doc", **settings: bool) -> tuple:
        pdf = doc.write(tmp_path / f"{name}.pdf")
        structure = StructureSettings(**settings) if settings else None
        return read_pdf(pdf, f"{name}@v1", structure=structure)

    return run


def test_the_outline_opens_sections_the_print_alone_does_not_show(read: Callable) -> None:
    # headings printed as plain body text: no size, no weight, nothing but the bookmarks
    doc = Doc()
    doc.pdf.start_section("Scope of the survey", level=0)
    doc.text("Scope of the survey").text(PROSE["en"])
    doc.pdf.start_section("Sampling frame", level=1)
    doc.text("Sampling frame").text(PROSE["en"])
    doc.pdf.start_section("Weights", level=0)
    doc.text("Weights").text(PROSE["en"])
    source, extraction = read(doc)
    assert [e.title for e in extraction.outline] == [
        "Scope of the survey",
        "Sampling frame",
        "Weights",
    ]
    assert headings(source.nodes) == ["Scope of the survey", "Sampling frame", "Weights"]
    by_id = {n.node_id: n for n in source.nodes}
    frame = next(n for n in source.nodes if n.title == "Sampling frame")
    assert path_names(frame, by_id) == ["Scope of the survey", "Sampling frame"]
    # without the outline the same lines are prose: nothing shows them as headings
    rules_only, _ = read(doc, name="rules", use_outline=False)
    assert headings(rules_only.nodes) == []


def test_outline_quality_counts_bookmark_titles_found(read: Callable) -> None:
    doc = Doc().heading("Results", bookmark=0).text(PROSE["en"])
    doc.heading("Discussion", bookmark=0).text(PROSE["en"])
    source, extraction = read(doc)
    quality = path_quality(source.nodes, "en", extraction.outline)
    assert (quality.bookmarks_found, quality.bookmarks) == (2, 2)
    missing = [*extraction.outline, OutlineEntry("Annex on methods", 1, 1)]
    assert path_quality(source.nodes, "en", missing).bookmarks_share == pytest.approx(2 / 3)


def test_fragments_toc_lines_and_banners_are_never_headings(read: Callable) -> None:
    doc = Doc().banner("EXECUTIVE SUMMARY")
    doc.text("Contents", size=14, bold=True)
    for entry, page in (("1 Introduction", 2), ("2 Methods", 2), ("3 Results", 3)):
        doc.text(f"{entry} {'.' * 60} {page}", gap=0.5)
    doc.page().heading("1 Introduction").text(PROSE["en"])
    # a bold line of running prose that stops mid-sentence, and one starting in lower case
    doc.text("Borrowing a large amount as an undergraduate does not appear to", bold=True)
    doc.text(PROSE["en"])
    doc.text("of $33,200 by 2003 (table 4)", bold=True).text(PROSE["en"])
    doc.heading("2 Methods").text(PROSE["en"])
    source, _ = read(doc)
    # the contents page holds no heading, its title included: its lines point elsewhere
    assert headings(source.nodes) == ["1 Introduction", "2 Methods"]
    quality = path_quality(source.nodes, "en")
    assert quality.bad_units == 0, quality.examples


def test_no_text_unit_shows_in_a_path(read: Callable, counter) -> None:
    # text after a table in a section opens a text unit; the next heading must not nest in it
    doc = Doc().heading("Income").text(PROSE["en"])
    doc.table([["Region", "Income"], ["North", "120"], ["South", "95"]])
    doc.text("The south trails the north by a fifth, as in the previous survey round.")
    doc.text("Regional detail", size=12, bold=True, gap=1).text(PROSE["en"])
    source, _ = read(doc)
    by_id = {n.node_id: n for n in source.nodes}
    detail = next(n for n in source.nodes if n.title == "Regional detail")
    assert by_id[detail.parent_id].kind != "text"
    chunks = StructuralChunker(200)(source, counter)
    for chunk in chunks:
        assert "text" not in chunk.path.split(" > "), chunk.path


def test_tables_are_named_by_their_caption_above_or_below(read: Callable) -> None:
    doc = Doc().heading("Coverage").text(PROSE["en"])
    doc.text("Table A-1. Coverage of target populations, by region", gap=0.5)
    doc.table([["Region", "Covered"], ["North", "91%"], ["South", "88%"]])
    doc.text(PROSE["en"])
    doc.table([["Year", "Households"], ["2020", "1,204"], ["2021", "1,310"]])
    doc.text("Table A-2: Households surveyed by year", gap=3)
    doc.text(PROSE["en"])
    source, _ = read(doc)
    tables = [(n.label, n.title) for n in source.nodes if n.kind == "table"]
    assert tables == [
        ("Table A-1", "Table A-1. Coverage of target populations, by region"),
        ("Table A-2", "Table A-2: Households surveyed by year"),
    ]


@pytest.mark.parametrize(
    ("language", "word"), [("en", "Table"), ("fr", "Tableau"), ("pt", "Tabela")]
)
def test_a_table_without_caption_is_named_in_the_documents_language(
    read: Callable, language: str, word: str
) -> None:
    doc = Doc().text(PROSE[language]).text(PROSE[language])
    doc.table([["Zone", "2020"], ["Nord", "12"], ["Sud", "15"]]).text(PROSE[language])
    source, _ = read(doc, name=language)
    labels = [n.label for n in source.nodes if n.kind in ("table", "table_text")]
    assert labels == [f"{word} 1"]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (PROSE["en"], "en"),
        (PROSE["fr"], "fr"),
        (PROSE["pt"], "pt"),
        (
            "Die Erhebung umfasst alle Haushalte der Region und die Ergebnisse werden mit der "
            "Bevölkerung gewichtet, wie es im Abschnitt über die Methoden beschrieben wird.",
            "de",
        ),
        (
            "La encuesta cubre todos los hogares de la región y los resultados se ponderan por "
            "la población de cada distrito, como lo describe la sección de métodos.",
            "es",
        ),
        ("项目经验和教育经历的测试文本，用于检测文件的语言。", "zh"),
    ],
)
def test_language_is_detected_from_the_documents_words(text: str, code: str) -> None:
    assert detect_language(text) == code


def test_the_path_metric_flags_segments_that_are_no_heading() -> None:
    def node(node_id: str, parent: str | None, kind: str, label: str, title: str) -> Node:
        return Node(node_id, "d@1", parent, kind, label, title, 1, 0, "x", 1, 1, 0, 1)

    nodes = [
        node("d@1", None, "document", "", "Doc"),
        node("d@1#a", "d@1", "section", "", "Results"),
        node("d@1#a/t", "d@1#a", "text", "", ""),
        node("d@1#b", "d@1", "section", "", "of the households in the region and"),
        node("d@1#b/t", "d@1#b", "text", "", ""),
        node("d@1#c", "d@1", "table", "Tabela 1", ""),
    ]
    quality = path_quality(nodes, "en")
    # the fragment heading spoils itself and its text; the Portuguese label in an English
    # document spoils its table; "Results" and its text are fine
    assert (quality.bad_units, quality.units) == (3, 5)
    assert path_quality(nodes, "pt").bad_units == 2


def run_in(doc: Doc, head: str, prose: str) -> Doc:
    """A paragraph opened by a run-in heading: `head.` in bold, the prose on the line."""
    doc.pdf.ln(4)
    doc.pdf.set_font("DejaVu", "B", 10)
    doc.pdf.write(5, f"{head}. ")
    doc.pdf.set_font("DejaVu", "", 10)
    doc.pdf.write(5, prose)
    doc.pdf.ln(7)
    return doc


def test_run_in_headings_open_sections_and_keep_their_paragraph(read: Callable, counter) -> None:
    doc = Doc().text(PROSE["en"]).heading("Methods").text(PROSE["en"])
    run_in(doc, "Sampling", PROSE["en"])
    run_in(doc, "Weighting", PROSE["en"])
    source, _ = read(doc)
    assert headings(source.nodes) == ["Methods", "Sampling", "Weighting"]
    by_id = {n.node_id: n for n in source.nodes}
    weighting = next(n for n in source.nodes if n.title == "Weighting")
    assert path_names(weighting, by_id) == ["Methods", "Weighting"]
    # the paragraph the heading opens is indexed under it, not dropped as a bare heading
    chunks = StructuralChunker(200)(source, counter)
    assert any(c.path.endswith("Weighting") and "Weighting. The survey" in c.body for c in chunks)


def test_a_bold_lead_in_running_on_and_a_title_block_are_no_sections(read: Callable) -> None:
    doc = Doc().text("Literacy survey: annual report", size=18, bold=True)
    doc.text("National Statistics Office · 2024", size=11, gap=6)
    doc.heading("Results").text(PROSE["en"])
    # a bold run filling the first line of a paragraph whose sentence goes on below it
    doc.pdf.set_font("DejaVu", "B", 10)
    doc.pdf.write(5, "Spending on training reached 38,746 thousand euros, " * 2)
    doc.pdf.set_font("DejaVu", "", 10)
    doc.pdf.write(5, "well within the approved budget for the year, as planned.")
    doc.pdf.ln(7)
    source, _ = read(doc)
    assert headings(source.nodes) == ["Results"]
    assert "National Statistics Office" in source.nodes[0].text  # the root's title block


def test_a_caption_wrapped_under_its_table_names_it_whole(read: Callable) -> None:
    doc = Doc().heading("Costs").text(PROSE["en"])
    doc.table([["Region", "Cost"], ["North", "12"], ["South", "15"]])
    doc.text("Table 4. Costs per beneficiary in the", gap=0)
    doc.text("northern and southern regions", gap=6)
    doc.text(PROSE["en"])
    source, _ = read(doc)
    [table] = [n for n in source.nodes if n.kind == "table"]
    assert table.title == "Table 4. Costs per beneficiary in the northern and southern regions"


def test_a_wrapped_german_heading_is_one_heading(read: Callable) -> None:
    german = (
        "Die Erhebung umfasst alle Haushalte der Region und die Ergebnisse werden mit der "
        "Bevölkerung jedes Bezirks gewichtet, wie es der Abschnitt über die Methoden beschreibt."
    )
    doc = Doc().text(german)
    doc.pdf.ln(4)
    doc.text("Vergleich mit früheren", size=14, bold=True, gap=0)
    doc.text("Erhebungsrunden", size=14, bold=True, gap=2)
    doc.text(german)
    source, _ = read(doc, name="de")
    assert headings(source.nodes) == ["Vergleich mit früheren Erhebungsrunden"]


def test_the_eval_reports_bookmarks_found_and_off_heading_paths(read: Callable, counter) -> None:
    from rag_assets.core.chunking import PolicyChunker
    from rag_assets.core.corpus import Version
    from rag_assets.core.eval.evaluation import by_document
    from rag_assets.core.eval.report.markdown import doc_table

    doc = Doc().text(PROSE["en"]).heading("Results", bookmark=0).text(PROSE["en"])
    doc.heading("Discussion", bookmark=0).text(PROSE["en"])
    source, extraction = read(doc)
    version = Version(**vars(source), outline=extraction.outline)
    chunks = PolicyChunker()(source, counter)
    per_doc = by_document(chunks, {"doc@v1": version}, [])["doc"]
    assert (per_doc["bookmarks_found"], per_doc["bookmarks"]) == (2, 2)
    assert per_doc["off_heading_paths"] == 0

    class Result:  # what the per-document table reads of an eval result
        strategies = {"default": {}}
        by_doc = {"default": {"doc": per_doc}}

    assert "| doc | default |" in doc_table(Result()) and "2 of 2" in doc_table(Result())


def tagged_pdf(path: Path, blocks: list[tuple[str, str]]) -> Path:
    """A one-page tagged PDF written by hand: each (tag, text) block one marked-content
    line in Helvetica at 10 pt, a structure element of that tag (`H1`, `H2`, `P`) pointing
    at it; no outline, no bold, no size: only the tags say which lines are headings."""
    objs: dict[int, bytes] = {}
    content = []
    y = 760
    mcid = 0
    elems: list[tuple[str, int]] = []
    for tag, text in blocks:
        content.append(f"/{tag} <</MCID {mcid}>> BDC BT /F1 10 Tf 72 {y} Td ({text}) Tj ET EMC")
        elems.append((tag, mcid))
        mcid += 1
        y -= 20
    stream = "\n".join(content).encode("latin-1")
    objs[1] = (
        b"<< /Type /Catalog /Pages 2 0 R /StructTreeRoot 6 0 R /MarkInfo << /Marked true >> >>"
    )
    objs[2] = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
    objs[3] = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R /StructParents 0 >>"
    )
    objs[4] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    objs[5] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    first = 7
    refs = []
    for k, (tag, m) in enumerate(elems):
        n = first + k
        objs[n] = f"<< /Type /StructElem /S /{tag} /P 6 0 R /Pg 3 0 R /K {m} >>".encode()
        refs.append(f"{n} 0 R")
    parent_tree = first + len(elems)
    objs[6] = (
        f"<< /Type /StructTreeRoot /K [{' '.join(refs)}] /ParentTree {parent_tree} 0 R >>".encode()
    )
    objs[first + len(elems)] = f"<< /Nums [0 [{' '.join(refs)}]] >>".encode()
    out = bytearray(b"%PDF-1.7\n")
    offsets: dict[int, int] = {}
    for n in sorted(objs):
        offsets[n] = len(out)
        out += b"%d 0 obj\n" % n + objs[n] + b"\nendobj\n"
    xref = len(out)
    size = max(objs) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for n in range(1, size):
        out += b"%010d 00000 n \n" % offsets[n]
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, xref)
    path.write_bytes(bytes(out))
    return path


def test_a_tagged_pdfs_headings_open_sections(tmp_path: Path) -> None:
    pdf = tagged_pdf(
        tmp_path / "tagged.pdf",
        [
            ("H1", "Scope of the survey"),
            ("P", "The survey covers every household of the region and is weighted."),
            ("H2", "Sampling frame"),
            ("P", "The frame is the census list of dwellings kept by the statistics office."),
            ("H1", "Weights"),
            ("P", "Weights follow the population of each district in the last census."),
        ],
    )
    source, extraction = read_pdf(pdf, "tagged@v1")
    assert {e.source for e in extraction.outline} == {"tagged"}
    assert headings(source.nodes) == ["Scope of the survey", "Sampling frame", "Weights"]
    by_id = {n.node_id: n for n in source.nodes}
    frame = next(n for n in source.nodes if n.title == "Sampling frame")
    assert path_names(frame, by_id) == ["Scope of the survey", "Sampling frame"]


def test_a_table_bookmark_names_its_table_and_opens_no_section(read: Callable) -> None:
    doc = Doc().text(PROSE["en"]).heading("Results", bookmark=0).text(PROSE["en"])
    doc.pdf.start_section("Table 2. Households reached by region", level=1)
    doc.table([["Region", "Households"], ["North", "1,204"], ["South", "1,310"]])
    doc.text(PROSE["en"])
    source, extraction = read(doc)
    assert headings(source.nodes) == ["Results"]
    [table] = [n for n in source.nodes if n.kind == "table"]
    assert (table.label, table.title) == ("Table 2", "Table 2. Households reached by region")
    assert path_quality(source.nodes, "en", extraction.outline).bookmarks_share == 1.0
