"""The structure tree: the document's own units (sections, articles, §, incisos, alíneas,
tables and their rows) with labels, levels and spans.

Where the PDF states its sections (an outline or tagged headings: `outline.py`), they open
the sections; headings found by evidence (`headings.py`) open sections only below them, or
everywhere in a PDF without one; legal markers keep their own tree (`markers.py`). A text
unit is never the parent of a heading. A table is named by its caption, else its title row,
else a label in the document's language (`language.py`).

Every node spans its whole unit (children included) in the document text, so that the eval
can judge any chunking by overlap, and so that a parent can be handed to the LLM whole.
Building the node list is `builder.py`; reading a built tree (a unit's path and name, the
untitled share) is `paths.py`; how far its paths can be trusted is `quality.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag_assets.core.extract import Line, OutlineEntry
from rag_assets.core.lake import DocText, Node
from rag_assets.core.structure.builder import MAX_SECTION_LEVEL, TreeBuilder
from rag_assets.core.structure.headings import (
    LETTERED,
    text_veto,
)
from rag_assets.core.structure.language import NOUN_CAPS, detect_language, table_word
from rag_assets.core.structure.markers import (
    CAPTION,
    LEGAL_MARKERS,
    NUMBERED,
    STRUCTURAL_KINDS,
    article_number,
    body_font_size,
    caput_title,
    fold,
    guard_ok,
    merge_wrapped_headings,
    ordinal_sign,
    squash,
    title_line,
    title_of,
)
from rag_assets.core.structure.outline import plan_outline
from rag_assets.core.structure.paths import TABLE_KINDS
from rag_assets.core.structure.sections import decide_headings, document_title_at, title_block
from rag_assets.core.structure.settings import DEFAULT_STRUCTURE, StructureSettings
from rag_assets.core.tables import (
    DEFAULT_SETTINGS,
    LogicalTable,
    TableSettings,
    continued_note,
)


def tables_by_piece(tables: Sequence[LogicalTable]) -> dict[tuple[int, int], LogicalTable]:
    """Every (page, table index) piece mapped to the logical table it belongs to."""
    return {key: table for table in tables for key in table.keys}


def build_tree(
    partition_key: str,
    doc: DocText,
    lines: Sequence[Line],
    tables: Mapping[tuple[int, int], LogicalTable],
    title: str,
    settings: TableSettings = DEFAULT_SETTINGS,
    outline: Sequence[OutlineEntry] = (),
    structure: StructureSettings = DEFAULT_STRUCTURE,
) -> list[Node]:
    """Build the tree of units of one document.

    `lines` are every page's lines with offsets; `tables` maps (page, table index) to the
    logical table that piece belongs to (`tables_by_piece`); `title` names the root node;
    `settings` say how long a "continued" note between a table's pieces may be. Where the
    PDF states its sections (`outline`: bookmarks or tagged headings), each entry opens a
    section at the line it names, and headings found by evidence (`headings.py`, tuned
    by `structure`) only open sections below it. A table is one node wherever its pieces
    are printed, named by its caption (`Table 2 – ...` printed just above or just below
    it), else its title row, else a label in the document's language (`Tableau 3`).
    """
    body = body_font_size(lines)
    language = detect_language(doc.text)
    lines = merge_wrapped_headings(list(lines), body, structure.bump_by, language in NOUN_CAPS)
    pages = [doc.page_at(line.char_start) for line in lines]
    plan = plan_outline(lines, pages, outline if structure.use_outline else (), structure)
    title_at = document_title_at(lines, pages, body, plan)
    block = title_block(lines, title_at, body, plan)
    decided = decide_headings(lines, pages, body, plan, structure, block)
    builder = TreeBuilder(partition_key, doc, title)
    builder.table_word = table_word(language)
    logical = dict(tables)
    pending_caption: Line | None = None
    emitted: set[int] = set()  # id() of the logical tables already in the tree
    span = (-1, -1)  # span of the last table emitted
    cells = ""  # its cells' letters, to know its own lines printed outside its region
    skip: set[int] = set()  # lines used as a caption below a table, or a caption's wrap
    awaiting: Node | None = None  # a unit opened by a bare marker, its title on the next line
    for i, line in enumerate(lines):
        page = pages[i]
        for entry in plan.before.get(i, ()):
            builder.open_outline(entry, line)
        table = logical.get((page, line.table)) if line.table >= 0 else None
        if table is not None:
            if id(table) in emitted:
                continue
            emitted.add(id(table))
            below = None
            if pending_caption is None:
                below = _caption_below(lines, i, table, logical, pages)
                if below is not None:
                    skip.add(below)
                    below_line = lines[below]
                    if _caption_wrap(lines, below):
                        skip.add(below + 1)
                        below_line = _joined(below_line, lines[below + 1])
            caption = pending_caption or (below_line if below is not None else None)
            bookmark = "" if caption else plan.table_title(page, line.top)
            _add_table(builder, table, caption, bookmark)
            span = (table.char_start, max(table.char_end, caption.char_end if caption else -1))
            cells = squash(" ".join(c for row in table.rows for c in row.cells))
            pending_caption = None
            continue
        if i in skip:
            continue
        if span[0] <= line.char_start < span[1]:
            if continued_note(line.text, settings):
                continue  # "(continua)" between the pieces of a table
            if squash(line.text) and squash(line.text) in cells:
                continue  # a cell printed beside the table's region: its rows hold it
        if pending_caption is not None:
            builder.add_text(pending_caption)
            pending_caption = None
        if i in plan.matched:
            entry, wrapped = plan.matched[i]
            if wrapped:
                skip.add(i + 1)
                line = _joined(line, lines[i + 1])
            if not _add_marker(builder, line, body, min(entry.level, MAX_SECTION_LEVEL)):
                builder.open_outline(entry, line, printed=True)
            awaiting = None
            continue
        if i in block:
            root = builder.stack[0]
            if i == title_at:
                root.node.title = root.node.title or line.text
            root.text_parts.append(line.text)
            continue
        wrap = _caption_above(lines, i, structure)
        if wrap is not None:
            if wrap:
                skip.add(i + 1)
                line = _joined(line, lines[i + 1])
            pending_caption = line
            continue
        if awaiting is not None and title_line(line, body) and text_veto(line.text) is None:
            awaiting.title = line.text  # "CHAPTER I" / "General Provisions" on two lines
            builder.stack[-1].text_parts.append(line.text)
            builder.extend_to(line.char_end)
            awaiting = None
            continue
        awaiting = None
        if page in decided.toc:
            builder.add_text(line)  # a table of contents holds no heading
            continue
        if _add_marker(builder, line, body):
            pass
        elif i in decided.levels:
            _open_heading(builder, line, decided.levels[i], decided.runs.get(i, line.text))
        else:
            builder.add_text(line)
            continue
        opened = builder.stack[-1].node
        if opened.kind in (*STRUCTURAL_KINDS, "article") and opened.label and not opened.title:
            awaiting = opened
    if pending_caption is not None:
        builder.add_text(pending_caption)
    return builder.finish()


def _joined(line: Line, wrap: Line) -> Line:
    """A heading or caption printed over two lines, as one."""
    joined = Line(**vars(line))
    joined.text = f"{line.text} {wrap.text}"
    joined.bottom, joined.char_end = wrap.bottom, wrap.char_end
    joined.x1 = max(line.x1, wrap.x1)
    return joined


def _caption_above(lines: Sequence[Line], i: int, structure: StructureSettings) -> int | None:
    """Whether line `i` is the caption of the table right below it: None if not, else how
    many of the lines after it are the caption's wrap (0 or 1)."""
    if not CAPTION.match(lines[i].text) or lines[i].table >= 0:
        return None
    for wrap in range(structure.caption_lines):
        k = i + 1 + wrap
        if k >= len(lines):
            return None
        if lines[k].table >= 0:
            return wrap
        if CAPTION.match(lines[k].text) or not _caption_wrap(lines, k - 1):
            return None
    return None


def _open_heading(builder: TreeBuilder, line: Line, level: int, head: str) -> None:
    """Open a section at a heading found by evidence (`2.1 Scope`, `RESULTS`); `head` is
    the heading's text, the line's own or the bold words opening it (a run-in heading,
    whose line goes on with the section's first sentence)."""
    numbered = NUMBERED.match(head) or LETTERED.match(head)
    if numbered:
        label, title = numbered.group(1).rstrip("."), numbered.group(2).strip()
    else:
        label, title = "", head
    builder.open("section", level, label, title.rstrip(".:").strip(), line, line.text)


def _caption_below(
    lines: Sequence[Line],
    i: int,
    table: LogicalTable,
    logical: Mapping[tuple[int, int], LogicalTable],
    pages: Sequence[int],
) -> int | None:
    """Index of a caption line printed right below a table (not above the next one)."""
    j = i + 1
    while j < len(lines) and lines[j].table >= 0:
        if logical.get((pages[j], lines[j].table)) is not table:
            return None  # another table follows directly
        j += 1
    if j >= len(lines) or not CAPTION.match(lines[j].text):
        return None
    if j + 1 < len(lines) and lines[j + 1].table >= 0:
        return None  # it names the next table
    return j


def _caption_wrap(lines: Sequence[Line], k: int) -> bool:
    """Whether the line after caption `k` goes on with it: same type, closer below it
    than the space between paragraphs, the caption not ended by a full stop."""
    if k + 1 >= len(lines) or lines[k].text.rstrip().endswith("."):
        return False
    wrap, caption = lines[k + 1], lines[k]
    gap = wrap.top - caption.bottom
    same = wrap.size == caption.size and wrap.bold == caption.bold and wrap.table < 0
    return same and 0 <= gap < caption.size * 0.5 and not CAPTION.match(wrap.text)


def _add_table(
    builder: TreeBuilder, table: LogicalTable, caption_line: Line | None, bookmark: str = ""
) -> None:
    """A table node (named by its caption, else the PDF's bookmark pointing at it, else
    its title row) with one node a data row, whether its columns are named or not
    (`LogicalTable.named`); a table with no data row is a `table_text` node holding its
    printed lines (see `unstructured_tables`)."""
    caption = caption_line.text if caption_line else (bookmark or table.title)
    cap = CAPTION.match(caption)
    count = sum(1 for n in builder.nodes if n.kind in TABLE_KINDS) + 1
    label = (
        f"{cap.group(1).capitalize()} {cap.group(2)}" if cap else f"{builder.table_word} {count}"
    )
    start, end = table.char_start, table.char_end
    if caption_line is not None:
        start = caption_line.char_start if start < 0 else min(start, caption_line.char_start)
        end = max(end, caption_line.char_end)
    if not table.structured:
        if start < 0:
            return  # no printed line of its own (a box around a chart's legend)
        text = builder.doc.text[start:end]
        builder.leaf("table_text", label, caption, text, start, end)
        builder.stack[-1].own_open = False
        return
    node = builder.leaf("table", label, caption, caption, start, end)
    builder.stack[-1].own_open = False  # text after the table goes to a new text unit
    for row in table.rows:
        if row.char_start >= 0:
            text = " | ".join(row.cells)
            builder.leaf("table_row", str(row.index), "", text, row.char_start, row.char_end, node)


def _add_marker(builder: TreeBuilder, line: Line, body: float, level: int | None = None) -> bool:
    """Open a unit if the line starts with a legal or structural marker (`Art. 5º`, `§ 2º`,
    `CAPÍTULO II`, `Section 3.`); False if it does not. `level` places a part, chapter or
    section where the document's outline says."""
    text = line.text
    for kind, depth, pattern, guarded in LEGAL_MARKERS:
        match = pattern.match(text)
        if not match:
            continue
        if guarded and not guard_ok(line, body, match.group(1), text[match.end() :]):
            continue
        if kind == "article":
            digits = match.group(2).replace(" ", "")
            number = article_number(digits)
            if number <= builder.last_article:
                return False  # a reference to an earlier article at a line start
            builder.last_article = number
            if guarded:
                label = f"Article {digits}"
            else:
                label = f"Art. {digits}{ordinal_sign(match.group(0))}"
            builder.open(kind, depth, label, caput_title(text[match.end() :]), line, text)
            return True
        if kind in ("item", "point") and not _inside_legal_unit(builder):
            return False
        if kind in STRUCTURAL_KINDS:
            keyword = match.group(1).rstrip(".")
            keyword = "Section" if keyword.lower() == "sec" else keyword.capitalize()
            label = f"{keyword} {match.group(2)}"
            if guarded and "." in match.group(2) and kind == "section":
                depth = min(4, depth + match.group(2).count("."))
            title = title_of(text, match.end())
            builder.open(kind, depth if level is None else level, label, title, line, text)
            return True
        label = match.group(0).strip().rstrip("-–—").strip()
        if kind == "paragraph" and "nico" in fold(label):
            label = "Parágrafo único"
        builder.open(kind, depth, label, "", line, text)
        return True
    return False


def _inside_legal_unit(builder: TreeBuilder) -> bool:
    return any(item.node.kind in ("article", "paragraph", "item") for item in builder.stack)
