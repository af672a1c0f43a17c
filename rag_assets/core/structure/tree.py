"""The structure tree: the document's own units (headings, articles, §, incisos, alíneas,
numbered sections, tables) detected from numbering and typography.

Every node spans its whole unit (children included) in the document text, so that the eval
can judge any chunking by overlap, and so that a parent can be handed to the LLM whole.

What opens a unit (markers, heading typography, labels and ids) is `markers.py`; reading
a built tree (a unit's path and name, the untitled share) is `paths.py`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rag_assets.core.extract import Line
from rag_assets.core.lake.schemas import DocText, Node
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
    heading_like,
    id_segment,
    merge_wrapped_headings,
    ordinal_sign,
    title_line,
    title_of,
)
from rag_assets.core.structure.paths import TABLE_KINDS
from rag_assets.core.tables import (
    DEFAULT_SETTINGS,
    LogicalTable,
    TableSettings,
    continued_note,
)


@dataclass
class _Open:
    node: Node
    segment: str
    text_parts: list[str]
    own_open: bool = True  # still collecting lines before its first child


class TreeBuilder:
    """Builds the node list of one document from its lines, in reading order."""

    def __init__(self, partition_key: str, doc: DocText, title: str) -> None:
        self.key = partition_key
        self.doc = doc
        self.nodes: list[Node] = []
        self.ids: set[str] = set()
        self.ordinals: dict[str | None, int] = {}
        root = self._new("document", "", title, 0, None, 0, "")
        self.stack: list[_Open] = [_Open(root, "", [])]
        self.last_article: tuple[int, str] = (0, "")

    def _new(
        self,
        kind: str,
        label: str,
        title: str,
        level: int,
        parent: Node | None,
        start: int,
        segment: str,
    ) -> Node:
        parent_id = parent.node_id if parent else None
        base = self.key if parent is None else f"{self.key}#{segment}"
        node_id, n = base, 1
        while node_id in self.ids:
            n += 1
            node_id = f"{base}~{n}"
        self.ids.add(node_id)
        ordinal = self.ordinals.get(parent_id, 0)
        self.ordinals[parent_id] = ordinal + 1
        page = self.doc.page_at(start)
        node = Node(
            node_id,
            self.key,
            parent_id,
            kind,
            label,
            title,
            level,
            ordinal,
            "",
            page,
            page,
            start,
            start,
        )
        self.nodes.append(node)
        return node

    def _segment_for(self, kind: str, label: str, title: str, parent: _Open) -> str:
        own = id_segment(kind, label, title)
        if kind == "text":
            own = f"txt-{self.ordinals.get(parent.node.node_id, 0) + 1}"
        if kind == "article" or parent.node.kind == "document":
            return own
        return f"{parent.segment}/{own}"

    def open(self, kind: str, level: int, label: str, title: str, line: Line, text: str) -> Node:
        """Close deeper-or-equal units and open a new one starting at this line."""
        while len(self.stack) > 1 and self.stack[-1].node.level >= level:
            self._close(self.stack.pop())
        parent = self.stack[-1]
        parent.own_open = False
        segment = self._segment_for(kind, label, title, parent)
        node = self._new(kind, label, title, level, parent.node, line.char_start, segment)
        node.char_end = line.char_end
        self.stack.append(_Open(node, segment, [text] if text else []))
        self._extend(line.char_end)
        return node

    def leaf(
        self,
        kind: str,
        label: str,
        title: str,
        text: str,
        start: int,
        end: int,
        parent: Node | None = None,
    ) -> Node:
        """Add a unit that holds no further units (a table, a table row) under a parent
        (the innermost open unit by default)."""
        if parent is None:
            parent = self.stack[-1].node
        base = parent.node_id.split("#", 1)[1] if "#" in parent.node_id else ""
        segment = f"{base}/{id_segment(kind, label, title)}".lstrip("/")
        node = self._new(kind, label, title, parent.level + 1, parent, start, segment)
        node.text, node.char_end = text, end
        node.page_start, node.page_end = self.doc.pages_of(start, end)
        self._extend(end)
        return node

    def add_text(self, line: Line) -> None:
        """Attach a plain line to the innermost open unit."""
        top = self.stack[-1]
        if top.own_open:
            top.text_parts.append(line.text)
        else:
            # text after a child (e.g. a closing sentence of a section): keep it in a text unit
            self.open("text", top.node.level + 1, "", "", line, line.text)
        self._extend(line.char_end)

    def extend_to(self, end: int) -> None:
        """Stretch every open unit to cover text up to `end`."""
        self._extend(end)

    def _extend(self, end: int) -> None:
        for item in self.stack:
            item.node.char_end = max(item.node.char_end, end)

    def _close(self, item: _Open) -> None:
        node = item.node
        node.text = "\n".join(item.text_parts)
        node.page_start, node.page_end = self.doc.pages_of(node.char_start, node.char_end)

    def finish(self) -> list[Node]:
        """Close every open unit and return the nodes in document order."""
        while self.stack:
            self._close(self.stack.pop())
        return self.nodes


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
) -> list[Node]:
    """Build the tree of units of one document.

    `lines` are every page's lines with offsets; `tables` maps (page, table index) to the
    logical table that piece belongs to (`tables_by_piece`); `title` names the root node;
    `settings` say how long a "continued" note between a table's pieces may be. A table is
    one node wherever its pieces are printed, named by its caption (`Tabela 2 – ...`
    printed just above or just below it) or else by its title row.
    """
    body = body_font_size(lines)
    builder = TreeBuilder(partition_key, doc, title)
    lines = merge_wrapped_headings(list(lines), body)
    max_size = max((ln.size for ln in lines), default=0.0)
    logical = dict(tables)
    pending_caption: Line | None = None
    emitted: set[int] = set()  # id() of the logical tables already in the tree
    span = (-1, -1)  # span of the last table emitted
    skip: set[int] = set()  # lines used as a caption below a table
    awaiting: Node | None = None  # a unit opened by a bare marker, its title on the next line
    first_content = True
    for i, line in enumerate(lines):
        page = doc.page_at(line.char_start)
        table = logical.get((page, line.table)) if line.table >= 0 else None
        if table is not None:
            if id(table) in emitted:
                continue
            emitted.add(id(table))
            below = None
            if pending_caption is None:
                below = _caption_below(lines, i, table, logical, doc)
                if below is not None:
                    skip.add(below)
            caption = pending_caption or (lines[below] if below is not None else None)
            _add_table(builder, table, caption)
            span = (table.char_start, max(table.char_end, caption.char_end if caption else -1))
            pending_caption = None
            continue
        if i in skip:
            continue
        if span[0] <= line.char_start < span[1] and continued_note(line.text, settings):
            continue  # "(continua)" between the pieces of a table
        if pending_caption is not None:
            builder.add_text(pending_caption)
            pending_caption = None
        if first_content and line.size == max_size and line.size > body and page == 1:
            first_content = False
            root = builder.stack[0]
            root.node.title = root.node.title or line.text
            root.text_parts.append(line.text)
            continue
        first_content = False
        if CAPTION.match(line.text) and i + 1 < len(lines) and lines[i + 1].table >= 0:
            pending_caption = line
            continue
        if awaiting is not None and title_line(line, body):
            awaiting.title = line.text  # "CHAPTER I" / "General Provisions" on two lines
            builder.stack[-1].text_parts.append(line.text)
            builder.extend_to(line.char_end)
            awaiting = None
            continue
        awaiting = None
        if not _add_marker(builder, line, body):
            builder.add_text(line)
            continue
        opened = builder.stack[-1].node
        if opened.kind in (*STRUCTURAL_KINDS, "article") and opened.label and not opened.title:
            awaiting = opened
    if pending_caption is not None:
        builder.add_text(pending_caption)
    return builder.finish()


def _caption_below(
    lines: Sequence[Line],
    i: int,
    table: LogicalTable,
    logical: Mapping[tuple[int, int], LogicalTable],
    doc: DocText,
) -> int | None:
    """Index of a caption line printed right below a table (not above the next one)."""
    j = i + 1
    while j < len(lines) and lines[j].table >= 0:
        if logical.get((doc.page_at(lines[j].char_start), lines[j].table)) is not table:
            return None  # another table follows directly
        j += 1
    if j >= len(lines) or not CAPTION.match(lines[j].text):
        return None
    if j + 1 < len(lines) and lines[j + 1].table >= 0:
        return None  # it names the next table
    return j


def _add_table(builder: TreeBuilder, table: LogicalTable, caption_line: Line | None) -> None:
    """A table node (named by its caption, else its title row) with one node a data row,
    whether its columns are named or not (`LogicalTable.named`); a table with no data row
    is a `table_text` node holding its printed lines (see `unstructured_tables`)."""
    caption = caption_line.text if caption_line else table.title
    cap = CAPTION.match(caption)
    count = sum(1 for n in builder.nodes if n.kind in TABLE_KINDS) + 1
    label = f"{cap.group(1).capitalize()} {cap.group(2)}" if cap else f"Tabela {count}"
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


def _add_marker(builder: TreeBuilder, line: Line, body: float) -> bool:
    """Open a unit if the line starts with a marker; False if it is plain text."""
    text = line.text
    for kind, level, pattern, guarded in LEGAL_MARKERS:
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
            builder.open(kind, level, label, caput_title(text[match.end() :]), line, text)
            return True
        if kind in ("item", "point") and not _inside_legal_unit(builder):
            return False
        if kind in STRUCTURAL_KINDS:
            keyword = match.group(1).rstrip(".")
            keyword = "Section" if keyword.lower() == "sec" else keyword.capitalize()
            label = f"{keyword} {match.group(2)}"
            if guarded and "." in match.group(2) and kind == "section":
                level = min(4, level + match.group(2).count("."))
            title = title_of(text, match.end())
            builder.open(kind, level, label, title, line, text)
            return True
        label = match.group(0).strip().rstrip("-–—").strip()
        if kind == "paragraph" and "nico" in fold(label):
            label = "Parágrafo único"
        builder.open(kind, level, label, "", line, text)
        return True
    numbered = NUMBERED.match(text)
    if numbered and heading_like(line, body):
        number = numbered.group(1)
        depth = number.count(".") + 1
        builder.open("section", 1 + depth, number, numbered.group(2).strip(), line, text)
        return True
    if heading_like(line, body) and not text.endswith((".", ";", ",")):
        level = 2 if line.size > body + 0.5 else 3
        builder.open("section", level, "", text, line, text)
        return True
    return False


def _inside_legal_unit(builder: TreeBuilder) -> bool:
    return any(item.node.kind in ("article", "paragraph", "item") for item in builder.stack)
