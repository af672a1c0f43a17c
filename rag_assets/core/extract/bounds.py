"""Limits that keep one hostile PDF from taking the machine's memory: what its streams
inflate to, and how large an image it may declare on a page read by OCR. A PDF past a
limit fails its own version with one line (`PdfError`), before anything large is made.

Rendering has its own cap, shared by every reader of pages as pixels (OCR here, the
layout model in `core.layout`): `core.layout.render.MAX_RENDER_PIXELS`. The limits are
stated in docs/lifecycle.md ("Bounded memory").
"""

from __future__ import annotations

import zlib
from typing import Any

import pdfplumber.page
from pdfminer.pdftypes import LITERALS_FLATE_DECODE, PDFStream
from pdfminer.psparser import LIT

from rag_assets.core.extract.model import PdfError
from rag_assets.core.lake import LakePath

MAX_STREAM_BYTES = 64 * 1024 * 1024
"""The most one stream of a PDF (a page's content, a form, a font) may inflate to. The
densest real pages (maps, plans) hold a few megabytes; a stream that inflates to a
gigabyte took 3.2 GB of memory and 45 s in pdfminer before this limit."""

MAX_DECODED_BYTES = 1024 * 1024 * 1024
"""The most all of a PDF's streams together may inflate to (images not counted)."""

MAX_IMAGE_PIXELS = 256_000_000
"""The most pixels an image on a page read by OCR may declare: an A0 scan at 400 dpi
(about 240 million) passes, a 200,000 x 200,000 pixel image does not."""

MAX_PAGE_OBJECTS = 100_000
"""The most characters, paths and images one page may draw (each glyph one): ten times
the densest page of the sample and real-PDF corpora (9,880 characters). Reading a page
holds about 2 KB per object while it is read (pdfplumber's dicts, lines and words), so
this bounds the part of a page's reading that grows with what it draws (~200 MB); it
also stops a page that draws a form which draws a form ... (millions of glyphs from a
few bytes) as soon as it passes the limit."""

_CHUNK = 1 << 20
_IMAGE = LIT("Image")


def inflated_size(data: bytes, limit: int) -> int:
    """How many bytes zlib `data` inflates to, counted in 1 MB pieces that are dropped
    as they come (memory stays at one piece); counting stops past `limit`. Corrupt data
    counts what inflated before the error, as pdfminer's own recovery reads it."""
    inflater = zlib.decompressobj()
    total = 0
    tail = data
    try:
        while True:
            out = inflater.decompress(tail, _CHUNK)
            total += len(out)
            tail = inflater.unconsumed_tail
            if total > limit or inflater.eof or (not tail and len(out) < _CHUNK):
                return total
    except zlib.error:
        return total


def _inflate_within(data: bytes, limit: int) -> bytes | None:
    """`data` inflated, or None when it inflates past `limit` (never held past it)."""
    size = inflated_size(data, limit)
    if size > limit:
        return None
    try:
        return zlib.decompressobj().decompress(data, limit + 1)
    except zlib.error:
        return b""


def decoded_size(stream: PDFStream, limit: int) -> int:
    """How many bytes `stream` decodes to, as pdfminer would decode it, counted without
    holding more than `limit` bytes: its Flate filters are measured (the filter nearly
    every PDF uses and the one a small file inflates by a thousand times); a stream with
    other filters counts its raw bytes. A result over `limit` means past the limit."""
    data = stream.rawdata if stream.rawdata is not None else stream.data or b""
    if stream.rawdata is not None and stream.decipher and stream.objid is not None:
        data = stream.decipher(stream.objid, stream.genno or 0, data, stream.attrs)
    filters = [f for f, _ in stream.get_filters()]
    for n, name in enumerate(filters):
        if name not in LITERALS_FLATE_DECODE:
            break
        if n == len(filters) - 1:
            return inflated_size(data, limit)
        inflated = _inflate_within(data, limit)
        if inflated is None:
            return limit + 1
        data = inflated
    return len(data)


def check_streams(path: LakePath, document: Any) -> None:
    """Refuse a PDF (pdfminer's `PDFDocument`) one of whose streams inflates past
    `MAX_STREAM_BYTES`, or all of whose streams together inflate past
    `MAX_DECODED_BYTES`, before pdfminer decodes any of them whole. Image streams are
    not counted (text extraction never decodes them; OCR bounds their pixels)."""
    total = 0
    for xref in getattr(document, "xrefs", []):
        for objid in xref.get_objids():
            try:
                obj = document.getobj(objid)
            except Exception:  # a broken object: pdfminer skips or refuses it later
                continue
            if not isinstance(obj, PDFStream) or obj.get("Subtype") is _IMAGE:
                continue
            size = decoded_size(obj, MAX_STREAM_BYTES)
            if size > MAX_STREAM_BYTES:
                raise PdfError(
                    f"{path}: stream {objid} inflates to over {MAX_STREAM_BYTES:,} bytes "
                    "(the limit of one stream's content); the PDF is refused"
                )
            total += size
            if total > MAX_DECODED_BYTES:
                raise PdfError(
                    f"{path}: its streams inflate to over {MAX_DECODED_BYTES:,} bytes "
                    "together (the limit of one PDF's content); the PDF is refused"
                )


def check_images(path: LakePath, page: Any, number: int) -> None:
    """Refuse a page about to be rendered for OCR (a pdfplumber page) that places an
    image declaring more than `MAX_IMAGE_PIXELS` pixels: rendering decodes it."""
    for image in page.images:
        width, height = (int(v) for v in image.get("srcsize") or (0, 0))
        if width * height > MAX_IMAGE_PIXELS:
            raise PdfError(
                f"{path}: page {number} holds an image of {width:,} x {height:,} pixels, "
                f"over the limit of {MAX_IMAGE_PIXELS:,} pixels for OCR; the PDF is refused"
            )


class PageTooDense(Exception):
    """A page drew more than `MAX_PAGE_OBJECTS` objects (raised while pdfminer reads it)."""

    def __init__(self, page: int) -> None:
        super().__init__(
            f"page {page} draws over {MAX_PAGE_OBJECTS:,} characters, paths and images "
            "(the limit of one page); the PDF is refused"
        )


class _BoundedAggregator(pdfplumber.page.PDFPageAggregatorWithMarkedContent):
    """pdfplumber's layout device, counting the objects a page draws (every character,
    path and image passes through `tag_cur_item`) and stopping past the limit."""

    drawn = 0

    def tag_cur_item(self) -> None:
        """Count the object just drawn; past `MAX_PAGE_OBJECTS`, stop reading the page."""
        self.drawn += 1
        if self.drawn > MAX_PAGE_OBJECTS:
            raise PageTooDense(int(self.pageno))
        super().tag_cur_item()


# every pdfplumber page trecho reads is laid out by the counting device (`Page.layout`
# looks the class up in its module each time it lays a page out)
pdfplumber.page.PDFPageAggregatorWithMarkedContent = _BoundedAggregator


def too_dense(exc: BaseException) -> PageTooDense | None:
    """The `PageTooDense` behind an error pdfplumber raised while laying a page out (it
    wraps whatever pdfminer raises), or None."""
    seen: BaseException | None = exc
    for _ in range(4):
        if seen is None:
            return None
        if isinstance(seen, PageTooDense):
            return seen
        inner = seen.args[0] if seen.args and isinstance(seen.args[0], BaseException) else None
        seen = inner or seen.__cause__ or seen.__context__
    return None
