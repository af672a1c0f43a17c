"""Pages without a text layer read by OCR (Tesseract's hOCR)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag_assets.core.extract.model import Line, PdfError
from rag_assets.core.lake import LakePath
from rag_assets.core.layout import MAX_RENDER_PIXELS, render_scale

# a page that is mostly one image with under this many characters of text is a scan
# (a signature stamp or a page number printed on it): it is read by OCR too
THIN_TEXT_CHARS = 200
SCAN_COVER = 0.6

MIN_OCR_DPI = 70
"""The coarsest resolution a page is read by OCR at: a page so large that the render cap
(`MAX_RENDER_PIXELS`) leaves it under this (over about 2 square metres) fails its
version, as its text would be too small to read."""


@dataclass
class OcrSettings:
    """How pages without a text layer are read: Tesseract's command, languages and dpi.

    `languages` is Tesseract's `-l` value (`por+eng`: Portuguese and English); words
    Tesseract itself gives a confidence under `min_confidence` (0-100) are dropped, as
    they are almost always noise (specks, stamps, scripts it has no model for).
    """

    languages: str = "por+eng"
    dpi: int = 200
    command: str = "tesseract"
    min_confidence: int = 20
    enabled: bool = True
    workers: int = 0  # Tesseract processes at once; 0: one per CPU core, at most 4
    timeout_s: int = 600  # per page


def _tesseract_ready(path: LakePath, pages: list[int], settings: OcrSettings) -> str:
    """The Tesseract executable, after checking it and its language data are installed."""
    need = f"page(s) {', '.join(map(str, pages))} are scanned (no usable text layer) and need OCR"
    exe = shutil.which(settings.command)
    if exe is None:
        raise PdfError(
            f"{path}: {need}, but Tesseract is missing ('{settings.command}' is not on PATH); "
            "install tesseract-ocr with tesseract-ocr-por and tesseract-ocr-eng"
        )
    try:
        listed = subprocess.run(
            [exe, "--list-langs"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise PdfError(f"{path}: {need}, but Tesseract ({exe}) does not run: {exc}") from exc
    have = {
        ln.strip()
        for ln in (listed.stdout + "\n" + listed.stderr).splitlines()
        if ln.strip() and " " not in ln.strip()
    }
    missing = [lang for lang in settings.languages.split("+") if lang and lang not in have]
    if missing:
        raise PdfError(
            f"{path}: {need}, but Tesseract is missing the language data for "
            f"{'+'.join(missing)} (installed: {', '.join(sorted(have)) or 'none'}); install "
            + ", ".join(f"tesseract-ocr-{m}" for m in missing)
        )
    return exe


def _bbox(title: str) -> tuple[float, float, float, float] | None:
    match = re.search(r"bbox (\d+) (\d+) (\d+) (\d+)", title)
    if match is None:
        return None
    x0, top, x1, bottom = (float(v) for v in match.groups())
    return x0, top, x1, bottom


def _title_value(title: str, key: str) -> float | None:
    match = re.search(rf"{key} ([\d.]+)", title)
    return float(match.group(1)) if match else None


def ocr_lines(hocr: str, dpi: int, min_confidence: int = 20) -> list[Line]:
    """Text lines from Tesseract's hOCR, in its reading order, placed in PDF points.

    A line's size is Tesseract's estimate of its text height (`x_size`) in whole points, so
    headings set larger than the body still stand out; OCR knows no bold.
    """
    scale = 72.0 / dpi
    root = ET.fromstring(hocr)
    lines: list[Line] = []
    for element in root.iter():
        classes = (element.get("class") or "").split()
        if not {"ocr_line", "ocr_header", "ocr_caption", "ocr_textfloat"} & set(classes):
            continue
        words = []
        for word in element.iter():
            if "ocrx_word" not in (word.get("class") or ""):
                continue
            text = "".join(word.itertext()).strip()
            confidence = _title_value(word.get("title") or "", "x_wconf")
            if text and (confidence is None or confidence >= min_confidence):
                words.append(text)
        box = _bbox(element.get("title") or "")
        if not words or box is None:
            continue
        height = _title_value(element.get("title") or "", "x_size") or (box[3] - box[1])
        lines.append(
            Line(
                text=" ".join(words),
                x0=box[0] * scale,
                top=box[1] * scale,
                bottom=box[3] * scale,
                size=float(round(height * scale)),
                bold=False,
            )
        )
    return lines


def ocr_words(hocr: str, dpi: int, min_confidence: int = 20) -> list[dict[str, Any]]:
    """Tesseract's words from its hOCR, placed in PDF points as pdfplumber gives words
    (`text`, `x0`, `x1`, `top`, `bottom`): what a table is read from on a scanned page."""
    scale = 72.0 / dpi
    words: list[dict[str, Any]] = []
    for word in ET.fromstring(hocr).iter():
        if "ocrx_word" not in (word.get("class") or ""):
            continue
        text = "".join(word.itertext()).strip()
        title = word.get("title") or ""
        confidence = _title_value(title, "x_wconf")
        box = _bbox(title)
        if not text or box is None or (confidence is not None and confidence < min_confidence):
            continue
        x0, top, x1, bottom = (v * scale for v in box)
        words.append({"text": text, "x0": x0, "x1": x1, "top": top, "bottom": bottom})
    return words


def _image_cover(page: Any) -> float:
    """Share of the page covered by images (overlaps counted twice, capped at 1)."""
    area = float(page.width * page.height) or 1.0
    covered = 0.0
    for image in page.images:
        width = min(image["x1"], page.width) - max(image["x0"], 0)
        height = min(image["bottom"], page.height) - max(image["top"], 0)
        covered += max(0.0, width) * max(0.0, height)
    return min(1.0, covered / area)


def ocr_dpi(path: LakePath, page: Any, number: int, dpi: int) -> int:
    """The resolution a page (pdfplumber's) is read by OCR at: `dpi`, lowered so its
    image holds at most `MAX_RENDER_PIXELS` pixels; a page that would need less than
    `MIN_OCR_DPI` fails its version here, before anything is rendered."""
    width, height = float(page.width), float(page.height)
    resolution = int(render_scale(width, height, dpi) * 72)
    if resolution < MIN_OCR_DPI:
        unit = _user_unit(page)  # the page's size in inches; rendering ignores it
        scaled = f" ({width:,.0f} x {height:,.0f} units of /UserUnit {unit:g})" if unit != 1 else ""
        raise PdfError(
            f"{path}: page {number} is {width * unit / 72:,.0f} x {height * unit / 72:,.0f} "
            f"inches{scaled}; within the cap of {MAX_RENDER_PIXELS:,} pixels OCR would read "
            f"it at {resolution} dpi, under the {MIN_OCR_DPI} dpi text needs; the PDF is refused"
        )
    return resolution


def _user_unit(page: Any) -> float:
    """A page's /UserUnit (the size of its unit in 1/72 inch; 1 when absent or unreadable):
    pdfplumber and pdfium measure a page in units, so a message in inches scales by it."""
    from pdfminer.pdftypes import resolve1

    try:
        unit = float(resolve1(page.page_obj.attrs.get("UserUnit", 1)))
    except (TypeError, ValueError):
        return 1.0
    return unit if unit > 0 else 1.0


def _render(page: Any, dpi: int, folder: Path, number: int) -> Path:
    """The page as a greyscale PNG at `dpi` (from `ocr_dpi`: within the pixel cap)."""
    image = page.to_image(resolution=dpi).original.convert("L")
    target = folder / f"page-{number:05d}.png"
    image.save(target, dpi=(dpi, dpi))
    return target


def _tesseract(
    exe: str, image: Path, dpi: int, settings: OcrSettings, path: LakePath, number: int
) -> str:
    env = dict(os.environ)
    env.setdefault("OMP_THREAD_LIMIT", "1")  # one thread a page: several pages at once
    command = [exe, str(image), "stdout", "-l", settings.languages, "--dpi", str(dpi)]
    try:
        done = subprocess.run(
            [*command, "hocr"],
            capture_output=True,
            text=True,
            env=env,
            timeout=settings.timeout_s,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise PdfError(f"{path}: OCR of page {number} failed ({exc})") from exc
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise PdfError(f"{path}: OCR of page {number} failed (Tesseract: {reason[0]})")
    return done.stdout


def _ocr(
    path: LakePath, exe: str, images: dict[int, tuple[Path, int]], settings: OcrSettings
) -> dict[int, tuple[list[Line], list[dict[str, Any]]]]:
    """OCR rendered pages (each with the dpi it was rendered at) with Tesseract, a few at
    a time; lines and words per page number."""
    workers = settings.workers or min(4, os.cpu_count() or 1)

    def run(number: int) -> tuple[int, tuple[list[Line], list[dict[str, Any]]]]:
        image, dpi = images[number]
        hocr = _tesseract(exe, image, dpi, settings, path, number)
        try:
            lines = ocr_lines(hocr, dpi, settings.min_confidence)
            return number, (lines, ocr_words(hocr, dpi, settings.min_confidence))
        except ET.ParseError as exc:
            raise PdfError(f"{path}: OCR of page {number} gave unreadable output ({exc})") from exc

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(pool.map(run, sorted(images)))
