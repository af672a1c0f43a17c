"""Character offsets of every line, table and table row in the document text."""

from __future__ import annotations

from rag_assets.core.extract.model import Page
from rag_assets.core.lake import DocText


def _assign_offsets(pages: list[Page]) -> DocText:
    parts: list[str] = []
    starts: list[int] = []
    offset = 0
    for page in pages:
        page.char_start = offset
        starts.append(offset)
        for line in page.lines:
            line.char_start = offset
            line.char_end = offset + len(line.text)
            offset = line.char_end + 1
            parts.append(line.text)
        for table in page.tables:
            inside = [ln for ln in page.lines if ln.table == table.index]
            if inside:
                table.char_start = min(ln.char_start for ln in inside)
                table.char_end = max(ln.char_end for ln in inside)
            spans: list[tuple[int, int]] = []
            for bbox in table.row_bboxes:
                row_lines = [
                    ln for ln in inside if bbox[1] - 1 <= (ln.top + ln.bottom) / 2 <= bbox[3] + 1
                ]
                if row_lines:
                    spans.append(
                        (
                            min(ln.char_start for ln in row_lines),
                            max(ln.char_end for ln in row_lines),
                        )
                    )
                else:
                    spans.append((-1, -1))
            mixed = any(
                ln.table < 0 and table.char_start < ln.char_start < table.char_end
                for ln in page.lines
            )
            # text printed among its lines (a chart around a legend box): its rows cannot be
            # told from that text, so it is not read as rows (it is indexed as its lines)
            table.row_spans = [(-1, -1)] * len(spans) if mixed else spans
    text = "\n".join(parts)
    return DocText(text=text, page_starts=starts)
