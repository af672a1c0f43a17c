"""Building the node list of one document line by line: units opened, closed and
stretched over the text they hold (`tree.py` decides what each line opens)."""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.core.extract import Line, OutlineEntry
from rag_assets.core.lake import DocText, Node
from rag_assets.core.structure.headings import LETTERED
from rag_assets.core.structure.language import DEFAULT_LANGUAGE, table_word
from rag_assets.core.structure.markers import NUMBERED, STRUCTURAL_KINDS, id_segment

MAX_SECTION_LEVEL = 4  # sections stay above articles (5) and their §, incisos, alíneas


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
        self.table_word = table_word(DEFAULT_LANGUAGE)  # a table with no caption: `Table 3`

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
        """Close deeper-or-equal units and open a new one starting at this line. A heading
        (part, chapter, section) also closes the text units open above it: text is never
        the parent of a heading, nor a segment of its path."""
        heading = kind in STRUCTURAL_KINDS
        while len(self.stack) > 1 and (
            self.stack[-1].node.level >= level or (heading and self.stack[-1].node.kind == "text")
        ):
            self._close(self.stack.pop())
        parent = self.stack[-1]
        parent.own_open = False
        segment = self._segment_for(kind, label, title, parent)
        node = self._new(kind, label, title, level, parent.node, line.char_start, segment)
        node.char_end = line.char_end
        self.stack.append(_Open(node, segment, [text] if text else []))
        self._extend(line.char_end)
        return node

    def open_outline(self, entry: OutlineEntry, line: Line, printed: bool = False) -> Node:
        """Open the section an outline entry names at `line`: the printed heading itself
        (`printed`; a run-in heading's line), else the first line at the place the entry
        points to. Either way the section is titled as the outline spells it (its spaces
        and accents whole where a text layer lost them, its words whole where the print
        wrapped them), numbered as printed where the outline leaves the number out."""
        own = NUMBERED.match(entry.title) or LETTERED.match(entry.title)
        shown = (NUMBERED.match(line.text) or LETTERED.match(line.text)) if printed else None
        if own:
            label, title = own.group(1).rstrip("."), own.group(2)
        elif shown:
            label, title = shown.group(1).rstrip("."), entry.title
        else:
            label, title = "", entry.title
        level = min(entry.level, MAX_SECTION_LEVEL)
        text = line.text if printed else ""
        return self.open("section", level, label, title.strip(), line, text)

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
