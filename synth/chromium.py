"""The Chromium producer: a document spec as HTML/CSS, printed by headless Chromium
(Playwright driving Debian's /usr/bin/chromium; no browser is downloaded).

Each PDF page is one fixed-size `<section>`; a script in the page shrinks a page's tables
until nothing overflows, then reads every cell's box from the DOM (CSS px, 0.75 pt each,
relative to its page). Spans are `colspan`/`rowspan`, so the truth is what was printed.
"""

from __future__ import annotations

import html
import io
import os
import shutil
from pathlib import Path
from typing import Any

from .spec import Doc, Page, Table
from .truth import Boxes

CHROMIUM = os.environ.get("TRECHO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
PX = 0.75  # points per CSS px
FONTS = {
    "sans": "font-family:'DejaVu Sans'",
    "serif": "font-family:'DejaVu Serif'",
    "condensed": "font-family:'DejaVu Sans';font-stretch:condensed",
    "mono": "font-family:'DejaVu Sans Mono'",
}
STYLE_CSS = """
body{margin:0;padding:0}
section{position:relative;overflow:hidden;break-after:page}
section:last-child{break-after:auto}
.inner{position:absolute;left:0;top:0;box-sizing:border-box;overflow:hidden}
.cols{display:flex;gap:18pt;align-items:flex-start}
.cols>.col{flex:1 1 0;min-width:0;overflow:hidden}
p{margin:0 0 6pt 0;font-size:9pt;line-height:1.3;text-align:justify}
.tblock{margin:0 0 14pt 0}
.tblock p.title{font-weight:bold;font-size:1.1em;text-align:left;margin-bottom:4pt}
.tblock p.note{font-size:.85em;margin:3pt 0 0 0}
table{border-collapse:collapse;font-size:1em}
th,td{padding:1.5pt 4pt;vertical-align:bottom;line-height:1.2}
th{font-weight:normal;text-align:center}
th.stubh{text-align:left}
td.v{text-align:right;white-space:nowrap}
td.stub{text-align:left}
tr.group td.stub{font-style:italic}
tr.total td{font-weight:bold}
sup{font-size:.65em;line-height:0}
table.booktabs{border-top:1.2pt solid #000;border-bottom:1.2pt solid #000}
table.booktabs thead tr:last-child th{border-bottom:.6pt solid #000}
table.grid th,table.grid td{border:.5pt solid #000}
table.shaded{border-collapse:separate;border-spacing:1.5pt}
table.shaded th{background:#c9d4e2}
table.shaded td{background:#eef1f6}
table.zebra thead th{background:#dde3ea;border-bottom:.8pt solid #000}
table.zebra tbody tr:nth-child(even) td{background:#ececec}
table.borderless thead tr:last-child th{padding-bottom:4pt}
th.g>div{border-bottom:.5pt solid #000;padding-bottom:1pt}
table.hl th{text-align:left}
table.vm th{vertical-align:middle}
table.vt th{vertical-align:top}
table.crowd th{padding:.4pt .3pt}
table.crowd td{padding:1pt 1.2pt}
table.loose tr.group td,table.loose tr.total td{padding-top:.8em}
.ld{position:relative}
.ld>.lead{position:absolute;right:0;bottom:0;overflow:hidden;white-space:pre}
"""
FIT_AND_MEASURE = """() => {
  const pages = [...document.querySelectorAll('section')];
  const over = (e) => e.scrollWidth > e.clientWidth + 0.5 || e.scrollHeight > e.clientHeight + 0.5;
  const out = [];
  for (const sec of pages) {
    const boxes = [...sec.querySelectorAll('.fitbox')];
    for (let k = 0; k < 60 && boxes.some(over); k++) {
      const inner = sec.querySelector('.inner');
      const filler = inner.querySelectorAll('.filler');
      if (filler.length && inner.scrollHeight > inner.clientHeight + 0.5) {
        filler[filler.length - 1].remove();
        continue;
      }
      for (const t of sec.querySelectorAll('.tblock'))
        t.style.fontSize = (parseFloat(t.style.fontSize) * 0.93).toFixed(3) + 'pt';
    }
    for (const lead of sec.querySelectorAll('.lead')) {  // dots from the label's end, as fit
      const box = lead.parentElement.getBoundingClientRect();
      const lines = lead.previousElementSibling.getClientRects();
      const end = lines[lines.length - 1].right - box.left + 2;
      lead.style.left = end + 'px';
      lead.textContent = ' .'.repeat(20);
      const dot = lead.scrollWidth / 20;
      const n = Math.floor((box.width - end) / dot) - 1;
      lead.textContent = n > 0 ? ' .'.repeat(n) : '';
    }
    const s = sec.getBoundingClientRect();
    const page = {};
    for (const e of sec.querySelectorAll('[data-k]')) {
      const r = e.getBoundingClientRect();
      page[e.dataset.k] = [r.left - s.left, r.top - s.top, r.right - s.left, r.bottom - s.top];
    }
    out.push({fits: !boxes.some(over), boxes: page});
  }
  return out;
}"""


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def table_html(t: Table, ti: int) -> str:
    """One table block: title, table with spans, notes; every truth cell tagged `data-k`."""
    k = f"t{ti}-"
    hr = t.header_rows
    rows_html = []
    gap = f' style="padding-right:{t.stub_gap:.1f}pt"' if t.stub_gap else ""
    for r in range(hr):
        cells = []
        if r == 0:
            cells.append(
                f'<th class="stubh" rowspan="{hr}" data-k="{k}stub"{gap}>{esc(t.stub_head)}</th>'
            )
        for i, h in sorted(enumerate(t.heads), key=lambda x: x[1].first):
            if h.level != r:
                continue
            span = h.last - h.first + 1
            group = t.group_rules and span > 1 and t.style != "grid"
            width = (
                f'style="max-width:{t.head_width:.0f}pt;min-width:min-content;margin:auto"'
                if span == 1
                else ""
            )
            cls = ' class="g"' if group else ""
            cells.append(
                f'<th{cls} colspan="{span}" rowspan="{h.rows}" data-k="{k}h{i}">'
                f"<div {width}>{esc(h.text)}</div></th>"
            )
        if r == hr - 1 and t.units:
            cells.extend(f'<th data-k="{k}u{j}">{esc(u)}</th>' for j, u in enumerate(t.units))
        rows_html.append("<tr>" + "".join(cells) + "</tr>")
    body = []
    for i, row in enumerate(t.rows):
        cls = "total" if row.total else "group" if row.values is None else ""
        label = esc(row.label) + (" (continued)" if row.continued else "")
        if row.mark:
            label += f"<sup>{esc(row.mark)}</sup>"
        width = f"max-width:{t.stub_width:.0f}pt;" if t.stub_width else ""
        lead = t.leaders and row.values is not None
        if lead:
            label = f'<span>{label}</span><span class="lead"></span>'
        stub = (
            f'<td class="stub" data-k="{k}s{i}"{gap}><div class="{"ld" if lead else ""}" '
            f'style="{width}padding-left:{row.level * 1.1:.1f}em">{label}</div></td>'
        )
        if row.alone and row.values is not None:  # the label's line, then its values' line
            body.append(f'<tr class="{cls}">{stub}<td colspan="{t.n_cols}"></td></tr>')
            stub = f'<td class="stub"{gap}></td>'
        values = []
        for j in range(t.n_cols):
            if row.values is None:
                values.append('<td class="v"></td>')
                continue
            text = esc(row.values[j]) + (
                f"<sup>{esc(row.marks[j])}</sup>" if j in row.marks else ""
            )
            values.append(f'<td class="v" data-k="{k}v{i}-{j}">{text}</td>')
        body.append(f'<tr class="{cls}">' + stub + "".join(values) + "</tr>")
    notes = "".join(f'<p class="note">{esc(n)}</p>' for n in t.notes)
    classes = " ".join(
        [t.style]
        + (["hl"] if t.head_align == "left" else [])
        + ({"middle": ["vm"], "top": ["vt"]}.get(t.head_valign, []))
        + (["loose"] if t.loose else [])
        + (["crowd"] if t.crowded else [])
    )
    return (
        f'<div class="tblock" style="{FONTS[t.font]};font-size:{t.size}pt">'
        f'<p class="title">{esc(t.title)}</p>'
        f'<table class="{classes}" data-k="{k}table"><thead>{"".join(rows_html)}</thead>'
        f"<tbody>{''.join(body)}</tbody></table>{notes}</div>"
    )


def page_html(doc: Doc, page: Page, first: int) -> str:
    """One page section: its tables (numbered from `first`) and prose."""
    w, h = doc.size
    iw, ih = (h, w) if doc.turn else (w, h)  # the laid-out box, before turning it
    margin = 42
    tables = [table_html(t, first + n) for n, t in enumerate(page.tables)]
    prose = [f'<p class="filler">{esc(p)}</p>' for p in page.prose]
    if page.columns:
        cut = max(1, len(prose) // 3)
        left = prose[:cut] + tables + prose[cut : cut + 1]
        right = prose[cut + 1 :]
        content = (
            f'<div class="cols"><div class="col fitbox">{"".join(left)}</div>'
            f'<div class="col">{"".join(right)}</div></div>'
        )
    else:
        content = "".join(prose[:1] + tables + prose[1:])
    turn = ""
    if doc.turn:
        turn = f"transform-origin:0 0;transform:translateY({iw}pt) rotate(-90deg);"
    return (
        f'<section style="width:{w}pt;height:{h - 1}pt">'
        f'<div class="inner fitbox" style="width:{iw}pt;height:{ih}pt;padding:{margin}pt;{turn}">'
        f"{content}</div></section>"
    )


def doc_html(doc: Doc) -> str:
    """The whole document: one section a page."""
    w, h = doc.size
    parts = []
    n = 0
    for page in doc.pages:
        parts.append(page_html(doc, page, n))
        n += len(page.tables)
    css = f"@page{{size:{w}pt {h}pt;margin:0}}" + STYLE_CSS
    head = f"<!doctype html><html><head><meta charset='utf-8'><style>{css}</style></head>"
    return f"{head}<body>{''.join(parts)}</body></html>"


class Session:
    """One headless Chromium for many documents (starting it costs about a second)."""

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        self._page = self._browser.new_page()
        self._page.emulate_media(media="print")

    def render(self, doc: Doc) -> tuple[bytes, list[Boxes], bool]:
        """The PDF of `doc`, each page's boxes (top-based points), and whether all fit."""
        w, h = doc.size
        self._page.set_viewport_size({"width": round(w / PX), "height": round(h / PX)})
        self._page.set_content(doc_html(doc))
        measured: list[dict[str, Any]] = self._page.evaluate(FIT_AND_MEASURE)
        pdf = self._page.pdf(prefer_css_page_size=True, print_background=True)
        pages = [{k: tuple(v * PX for v in box) for k, box in m["boxes"].items()} for m in measured]
        return pdf, pages, all(m["fits"] for m in measured)  # type: ignore[return-value]

    def close(self) -> None:
        self._browser.close()
        self._pw.stop()


def rotate(pdf: bytes) -> bytes:
    """The same PDF with /Rotate 90 on every page (a sideways table shown upright)."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(pdf)
    for page in doc:
        page.set_rotation(90)
    buffer = io.BytesIO()
    doc.save(buffer)
    doc.close()
    return buffer.getvalue()


def sizes(pdf: bytes) -> list[tuple[float, float]]:
    """Each page's width and height in points, as written."""
    import pypdfium2

    doc = pypdfium2.PdfDocument(pdf)
    out = [doc[i].get_size() for i in range(len(doc))]
    doc.close()
    return out


def write(session: Session, doc: Doc, path: Path) -> tuple[list[Boxes], list[float], bool]:
    """Print `doc` to `path`; each page's boxes on the page as displayed, and its height."""
    pdf, pages, fits = session.render(doc)
    drawn = sizes(pdf)
    heights = [ph for _, ph in drawn]
    if doc.turn == "rotate":  # shown turned a quarter clockwise: x from the bottom up
        pdf = rotate(pdf)
        pages = [
            {k: (ph - b[3], b[0], ph - b[1], b[2]) for k, b in boxes.items()}
            for boxes, (_, ph) in zip(pages, drawn, strict=True)
        ]
        heights = [pw for pw, _ in drawn]
    path.write_bytes(pdf)
    return pages, heights, fits
