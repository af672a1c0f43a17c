"""The reportlab producer: a document spec drawn on a reportlab canvas, each table a
platypus `Table` (spans as SPAN commands, wrapped cells as Paragraphs) laid out first so
that every cell's box is known from its column and row positions before it is drawn.

Layout happens in the page's own upright frame (top-based points); a sideways page is
drawn turned a quarter on a portrait page (and, for `rotate`, shown upright by /Rotate).
Same seed, same bytes (`invariant`: fixed dates and file id).
"""

from __future__ import annotations

from pathlib import Path
from xml.sax.saxutils import escape

from .spec import Doc, Page, Table
from .truth import Boxes

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = {  # regular, bold, italic
    "sans": ("Helvetica", "Helvetica-Bold", "Helvetica-Oblique"),
    "serif": ("Times-Roman", "Times-Bold", "Times-Italic"),
    "condensed": ("DejaVuCond", "DejaVuCond-Bold", "DejaVuCond-Oblique"),
    "mono": ("Courier", "Courier-Bold", "Courier-Oblique"),
}
MARGIN = 42.0
GAP = 18.0  # between text columns
_registered = False


def register() -> None:
    """Register the DejaVu Sans Condensed faces (the standard 14 need nothing)."""
    global _registered
    if _registered:
        return
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    for name, file in (
        ("DejaVuCond", "DejaVuSansCondensed.ttf"),
        ("DejaVuCond-Bold", "DejaVuSansCondensed-Bold.ttf"),
        ("DejaVuCond-Oblique", "DejaVuSansCondensed-Oblique.ttf"),
    ):
        pdfmetrics.registerFont(TTFont(name, str(FONT_DIR / file)))
    _registered = True


class Laid:
    """A table laid out at one font size: the platypus Table, its size, its cell spans."""

    def __init__(self, t: Table, size: float) -> None:
        from reportlab.lib.enums import TA_CENTER, TA_LEFT, TA_RIGHT
        from reportlab.lib.styles import ParagraphStyle
        from reportlab.pdfbase.pdfmetrics import stringWidth
        from reportlab.platypus import Paragraph
        from reportlab.platypus import Table as RLTable

        regular, bold, italic = FONTS[t.font]
        self.t, self.size = t, size
        pad = 3.0
        lead = size * 1.2
        head = ParagraphStyle(
            "h",
            fontName=regular,
            fontSize=size,
            leading=lead,
            alignment=TA_LEFT if t.head_align == "left" else TA_CENTER,
        )
        left = ParagraphStyle("l", parent=head, alignment=TA_LEFT)
        right = ParagraphStyle("r", parent=head, alignment=TA_RIGHT)
        hr, n = t.header_rows, t.n_cols
        grid: list[list[object]] = [["" for _ in range(n + 1)] for _ in range(hr + len(t.rows))]
        spans: dict[str, tuple[int, int, int, int]] = {}  # key -> c0, r0, c1, r1
        commands: list[tuple[object, ...]] = [
            ("VALIGN", (0, 0), (-1, -1), "BOTTOM"),
            ("LEFTPADDING", (0, 0), (-1, -1), pad),
            ("RIGHTPADDING", (0, 0), (-1, -1), pad),
            ("TOPPADDING", (0, 0), (-1, -1), 1.5),
            ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
            ("VALIGN", (0, 0), (-1, hr - 1), t.head_valign.upper()),
        ]
        self.leaders: list[tuple[int, float, str]] = []  # row, where its label ends, font

        def width(text: str, font: str = regular) -> float:
            return stringWidth(text, font, size)

        grid[0][0] = Paragraph(escape(t.stub_head), left)
        spans["stub"] = (0, 0, 0, hr - 1)
        col_w = [0.0] * (n + 1)
        for i, h in enumerate(t.heads):
            grid[h.level][1 + h.first] = Paragraph(escape(h.text), head)
            spans[f"h{i}"] = (1 + h.first, h.level, 1 + h.last, h.level + h.rows - 1)
            if h.first == h.last:  # a one-column heading wraps at about 70 pt
                longest = max(width(w) for w in h.text.split())
                col_w[1 + h.first] = max(col_w[1 + h.first], longest, min(width(h.text), 70.0))
        for j, unit in enumerate(t.units):
            grid[hr - 1][1 + j] = Paragraph(escape(unit), head)
            spans[f"u{j}"] = (1 + j, hr - 1, 1 + j, hr - 1)
            col_w[1 + j] = max(col_w[1 + j], width(unit))
        for c0, r0, c1, r1 in spans.values():
            if (c0, r0) != (c1, r1):
                commands.append(("SPAN", (c0, r0), (c1, r1)))
        stub_cap = t.stub_width * size / 8.0 if t.stub_width else 1e9
        for i, row in enumerate(t.rows):
            r = hr + i
            indent = row.level * size * 1.1
            label = escape(row.label) + (" (continued)" if row.continued else "")
            if row.mark:
                label += f'<super><font size="{size * 0.65:.2f}">{escape(row.mark)}</font></super>'

            style = ParagraphStyle(f"s{i}", parent=left, leftIndent=indent)
            if row.total:
                style.fontName = bold
            elif row.values is None:
                style.fontName = italic
            grid[r][0] = Paragraph(label, style)
            if t.loose and (row.total or row.values is None):
                commands.append(("TOPPADDING", (0, r), (-1, r), size * 0.8))
            spans[f"s{i}"] = (0, r, 0, r)
            longest = max(width(w, style.fontName) for w in label.split())
            col_w[0] = max(col_w[0], indent + longest, min(indent + width(label), stub_cap))
            for j, value in enumerate(row.values or []):
                text = escape(value)
                extra = 0.0
                if j in row.marks:
                    mark = escape(row.marks[j])
                    text += f'<super><font size="{size * 0.65:.2f}">{mark}</font></super>'

                    extra = width(row.marks[j]) * 0.7
                vstyle = ParagraphStyle("vb", parent=right, fontName=bold) if row.total else right
                grid[r][1 + j] = Paragraph(text, vstyle)
                col_w[1 + j] = max(col_w[1 + j], width(value, vstyle.fontName) + extra + 1)
                spans[f"v{i}-{j}"] = (1 + j, r, 1 + j, r)
        self.widths = [w + 2 * pad + 0.5 for w in col_w]
        for i, row in enumerate(t.rows):  # dot leaders after labels printed on one line
            font = bold if row.total else regular
            end = pad + row.level * size * 1.1 + width(row.label, font)
            end += width(row.mark) * 0.7 + 1 if row.mark else 0
            if t.leaders and row.values is not None and end < self.widths[0] - pad - 4:
                self.leaders.append((i, end, font))
        self.spans = spans
        self.flow = RLTable(grid, colWidths=self.widths, style=commands)
        self.w, self.h = self.flow.wrap(1e6, 1e6)

    def box(self, key: str) -> tuple[float, float, float, float]:
        """A cell's box relative to the table's top left (x0, top, x1, bottom)."""
        c0, r0, c1, r1 = self.spans[key]
        cp, rp = self.flow._colpositions, self.flow._rowpositions
        return cp[c0], self.h - rp[r0], cp[c1 + 1], self.h - rp[r1 + 1]


def fit(t: Table, width: float, height: float) -> Laid:
    """The table laid out at its size or smaller, until it fits `width` x `height`."""
    size = t.size
    laid = Laid(t, size)
    while (laid.w > width or laid.h > height) and size > 3:
        size *= 0.93
        laid = Laid(t, size)
    return laid


class Writer:
    """Draws one document's pages, collecting each page's boxes in upright page points."""

    def __init__(self, doc: Doc, path: Path) -> None:
        from reportlab.pdfgen.canvas import Canvas

        register()
        self.doc = doc
        w, h = doc.size
        # reportlab takes a /Rotate page's size as shown (it writes the MediaBox swapped)
        shown = (h, w) if doc.turn == "rotate" else (w, h)
        self.c = Canvas(str(path), pagesize=shown, invariant=1, pageCompression=1)
        self.iw, self.ih = (h, w) if doc.turn else (w, h)  # the upright frame

    def text_block(self, text: str, x: float, top: float, width: float, size: float) -> float:
        """A justified paragraph at (x, top); returns its height."""
        from reportlab.lib.enums import TA_JUSTIFY
        from reportlab.lib.styles import ParagraphStyle
        from reportlab.platypus import Paragraph

        style = ParagraphStyle("p", fontName="Times-Roman", fontSize=size, leading=size * 1.3)
        style.alignment = TA_JUSTIFY
        para = Paragraph(escape(text), style)
        _, h = para.wrap(width, 1e6)
        para.drawOn(self.c, x, self.ih - top - h)
        return h

    def measure_text(self, text: str, width: float, size: float) -> float:
        """The height a paragraph would take (to leave out prose the page has no room for)."""
        from reportlab.lib.styles import ParagraphStyle
        from reportlab.platypus import Paragraph

        style = ParagraphStyle("p", fontName="Times-Roman", fontSize=size, leading=size * 1.3)
        return Paragraph(escape(text), style).wrap(width, 1e6)[1]

    def table(
        self, t: Table, x: float, top: float, width: float, room: float
    ) -> tuple[float, dict]:
        """Title, table and notes at (x, top); returns the height used and the boxes."""
        regular, bold, _ = FONTS[t.font]
        title_h = t.size * 1.6
        notes_h = len(t.notes) * t.size * 1.3
        laid = fit(t, width, max(40.0, room - title_h - notes_h))
        size = laid.size
        c = self.c
        c.setFont(bold, size * 1.1)
        c.drawString(x, self.ih - top - size * 1.1, t.title)
        ttop = top + size * 1.6
        boxes = {k: self._at(laid.box(k), x, ttop) for k in laid.spans}
        boxes["table"] = (x, ttop, x + laid.w, ttop + laid.h)
        self.decorate(t, laid, boxes, before=True)
        laid.flow.drawOn(c, x, self.ih - ttop - laid.h)
        self.decorate(t, laid, boxes, before=False)
        y = ttop + laid.h
        c.setFont(regular, size * 0.85)
        for note in t.notes:
            y += size * 1.2
            c.drawString(x, self.ih - y, note[:160])
        return y - top + size, boxes

    @staticmethod
    def _at(b: tuple[float, float, float, float], x: float, top: float) -> tuple[float, ...]:
        return (b[0] + x, b[1] + top, b[2] + x, b[3] + top)

    def rect(self, b: tuple[float, ...], inset: float, grey: tuple[float, float, float]) -> None:
        self.c.setFillColorRGB(*grey)
        w, h = b[2] - b[0] - 2 * inset, b[3] - b[1] - 2 * inset
        self.c.rect(b[0] + inset, self.ih - b[3] + inset, w, h, stroke=0, fill=1)
        self.c.setFillColorRGB(0, 0, 0)

    def line(self, x0: float, x1: float, y: float, width: float) -> None:
        self.c.setLineWidth(width)
        self.c.line(x0, self.ih - y, x1, self.ih - y)

    def decorate(self, t: Table, laid: Laid, boxes: dict, before: bool) -> None:
        """Fills (drawn before the text), rules and dot leaders (after) of the table."""
        from reportlab.pdfbase.pdfmetrics import stringWidth

        tb = boxes["table"]
        if before:
            if t.style == "shaded":
                cells = [k for k in boxes if k != "table"]
                for i, row in enumerate(t.rows):  # empty value cells of group rows
                    if row.values is None:
                        for j in range(t.n_cols):
                            b = boxes[f"s{i}"]  # on the page, as the cells' boxes
                            cp = laid.flow._colpositions
                            boxes_ = (tb[0] + cp[1 + j], b[1], tb[0] + cp[2 + j], b[3])
                            self.rect(boxes_, 0.75, (0.93, 0.94, 0.96))
                for k in cells:
                    head = k[0] in "hu" or k == "stub"
                    self.rect(boxes[k], 0.75, (0.79, 0.83, 0.89) if head else (0.93, 0.94, 0.96))
            if t.style == "zebra":
                for i in range(len(t.rows)):
                    if i % 2:
                        b = boxes[f"s{i}"]
                        self.rect((tb[0], b[1], tb[2], b[3]), 0, (0.92, 0.92, 0.92))
                head_bottom = boxes["stub"][3]
                self.rect((tb[0], tb[1], tb[2], head_bottom), 0, (0.87, 0.89, 0.92))
            return
        head_bottom = boxes["stub"][3]
        if t.style == "grid":
            for k, b in boxes.items():
                if k == "table":
                    continue
                self.c.setLineWidth(0.5)
                self.c.rect(b[0], self.ih - b[3], b[2] - b[0], b[3] - b[1], stroke=1, fill=0)
            for i, row in enumerate(t.rows):
                if row.values is None:
                    b = boxes[f"s{i}"]
                    self.c.rect(b[2], self.ih - b[3], tb[2] - b[2], b[3] - b[1], stroke=1, fill=0)
        elif t.style == "booktabs":
            self.line(tb[0], tb[2], tb[1], 1.2)
            self.line(tb[0], tb[2], head_bottom, 0.6)
            self.line(tb[0], tb[2], tb[3], 1.2)
        elif t.style == "zebra":
            self.line(tb[0], tb[2], head_bottom, 0.8)
        for i, end, font in laid.leaders:
            b = boxes[f"s{i}"]
            dot = stringWidth(" .", font, laid.size)
            n = int((b[2] - 3.0 - (b[0] + end + 2)) / dot)
            if n > 0:
                self.c.setFont(font, laid.size)
                self.c.drawString(b[0] + end + 2, self.ih - b[3] + 1.5 + laid.size * 0.25, " ." * n)
        if t.group_rules and t.style != "grid":
            for i, h in enumerate(t.heads):
                if h.last > h.first:
                    b = boxes[f"h{i}"]
                    self.line(b[0] + 3, b[2] - 3, b[3] - 0.5, 0.5)

    def page(self, page: Page, first: int) -> Boxes:
        """Draw one page; every truth box keyed `t<n>-<key>` in upright page points."""
        c = self.c
        c.saveState()
        if self.doc.turn:  # the upright frame turned a quarter onto the portrait page
            c.transform(0, 1, -1, 0, self.ih, 0)
        out: Boxes = {}
        width = self.iw - 2 * MARGIN
        bottom = self.ih - MARGIN
        top = MARGIN
        if page.columns:
            width = (width - GAP) / 2
            cut = max(1, len(page.prose) // 3)
            for text in page.prose[:cut]:
                if top + self.measure_text(text, width, 9) < bottom - 120:
                    top += self.text_block(text, MARGIN, top, width, 9) + 6
            for n, t in enumerate(page.tables):
                used, boxes = self.table(t, MARGIN, top, width, bottom - top)
                out.update({f"t{first + n}-{k}": v for k, v in boxes.items()})
                top += used + 8
            for text in page.prose[cut : cut + 1]:
                if top + self.measure_text(text, width, 9) < bottom:
                    top += self.text_block(text, MARGIN, top, width, 9) + 6
            top = MARGIN
            for text in page.prose[cut + 1 :]:
                if top + self.measure_text(text, width, 9) < bottom:
                    top += self.text_block(text, MARGIN + width + GAP, top, width, 9) + 6
        else:
            prose = list(page.prose)
            if prose:
                top += self.text_block(prose.pop(0), MARGIN, top, width, 9) + 8
            share = (bottom - top) / max(1, len(page.tables))
            for n, t in enumerate(page.tables):
                room = bottom - top if n == len(page.tables) - 1 else share
                used, boxes = self.table(t, MARGIN, top, width, room)
                out.update({f"t{first + n}-{k}": v for k, v in boxes.items()})
                top += used + 10
            for text in prose:
                if top + self.measure_text(text, width, 9) < bottom:
                    top += self.text_block(text, MARGIN, top, width, 9) + 6
        c.restoreState()
        if self.doc.turn == "rotate":
            c.setPageRotation(90)
        c.showPage()
        if self.doc.turn == "sideways":  # upright frame -> the portrait page, top-based
            ph = self.doc.size[1]
            out = {k: (b[1], ph - b[2], b[3], ph - b[0]) for k, b in out.items()}
        return out


def write(doc: Doc, path: Path) -> tuple[list[Boxes], list[float], bool]:
    """Draw `doc` into `path`; each page's boxes on the page as displayed, its height."""
    writer = Writer(doc, path)
    pages = []
    n = 0
    for page in doc.pages:
        pages.append(writer.page(page, n))
        n += len(page.tables)
    writer.c.save()
    w, h = doc.size
    shown = w if doc.turn == "rotate" else h
    return pages, [shown] * len(pages), True
