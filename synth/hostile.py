"""Hostile PDFs written byte by byte (no PDF library writes these): a huge media box, a
/UserUnit, a content stream that inflates to far more than its file, an image that
declares billions of pixels. Each is a few hundred bytes to a few hundred kilobytes."""

from __future__ import annotations

import zlib
from pathlib import Path


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF file of `objects` (numbered from 1; 1 is the catalog), with its xref."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    start = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{start}\n%%EOF\n".encode()
    )
    return bytes(out)


def _stream(data: bytes, attrs: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), attrs) + data + b"\nendstream"


def _one_page(
    size: tuple[float, float], content: bytes, page: bytes = b"", content_attrs: bytes = b""
) -> list[bytes]:
    """Catalog, pages, one page of `size` points drawing `content` (object 4)."""
    return [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] /Contents 4 0 R %s >>" % (*size, page),
        _stream(content, content_attrs),
    ]


BOX = b"0 0 0 rg 100 100 500 500 re f"
"""One filled rectangle and no text: a page the reader sends to OCR."""


def huge_page(path: Path, points: float = 14400, user_unit: float | None = None) -> Path:
    """One page `points` wide and high (14,400: 200 inches, the largest the PDF format
    allows without /UserUnit), with `user_unit` when given, showing one rectangle."""
    extra = b"/UserUnit %g" % user_unit if user_unit else b""
    path.write_bytes(_pdf(_one_page((points, points), BOX, extra)))
    return path


def inflating_stream(path: Path, megabytes: int) -> Path:
    """One A4 page whose content stream inflates to `megabytes` MB of spaces then a
    rectangle (about 1 KB compressed per MB inflated)."""
    deflate = zlib.compressobj(9)
    block = b" " * (1 << 20)
    data = b"".join(deflate.compress(block) for _ in range(megabytes))
    data += deflate.compress(BOX) + deflate.flush()
    path.write_bytes(_pdf(_one_page((595, 842), data, content_attrs=b"/Filter /FlateDecode")))
    return path


def giant_image(path: Path, pixels: int = 200_000) -> Path:
    """One A4 page covered by an image declaring `pixels` x `pixels` grey pixels, with
    1 KB of data."""
    objects = _one_page((595, 842), b"q 595 0 0 842 0 0 cm /Im1 Do Q")
    objects[2] = objects[2].replace(
        b"/Contents 4 0 R", b"/Contents 4 0 R /Resources << /XObject << /Im1 5 0 R >> >>"
    )
    attrs = b"/Type /XObject /Subtype /Image /Width %d /Height %d " % (pixels, pixels)
    attrs += b"/ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode"
    objects.append(_stream(zlib.compress(bytes(1000)), attrs))
    path.write_bytes(_pdf(objects))
    return path


def nested_forms(path: Path, depth: int = 7, fan: int = 10) -> Path:
    """One A4 page drawing a form that draws the next form `fan` times, `depth` forms
    deep, the last showing ten letters: `10 * fan**(depth - 1)` glyphs (ten million by
    default) from 3 KB, each a separate object once pdfminer lays the page out."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    first = 6  # objects 1-4: catalog, pages, page, its content; 5: the font
    objects = _one_page((595, 842), b"q 1 0 0 1 50 700 cm /F0 Do Q")
    objects[2] = objects[2].replace(
        b"/Contents 4 0 R",
        b"/Contents 4 0 R /Resources << /XObject << /F0 %d 0 R >> >>" % first,
    )
    objects.append(font)
    for level in range(depth):
        if level == depth - 1:
            body, resources = b"BT /H 8 Tf 0 0 Td (AAAAAAAAAA) Tj ET", b"/Font << /H 5 0 R >>"
        else:
            body = b" ".join(b"q 1 0 0 1 0 %d cm /F Do Q" % -i for i in range(fan))
            resources = b"/XObject << /F %d 0 R >>" % (first + level + 1)
        attrs = b"/Type /XObject /Subtype /Form /BBox [0 0 595 842] /Resources << %s >>"
        objects.append(_stream(body, attrs % resources))
    path.write_bytes(_pdf(objects))
    return path
