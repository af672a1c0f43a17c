"""The structure-aware chunker behind the default policy.

Units come from the document's own structure (article caput, §, inciso, alínea, section
text, table row); consecutive units of one container (an article, a section, a table) are
packed up to a token budget; a chunk that does not start its container repeats the
container's lead (the article's caput, the table's caption); every chunk carries a context
header; no chunk exceeds what the model reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rag_assets.core.chunking.base import (
    PATH_SEP,
    ChunkBuilder,
    Chunker,
    DocInfo,
    Source,
    make_header,
)
from rag_assets.core.chunking.units import (
    Unit,
    fit_to_budget,
    lead_of,
    line_units,
    sentence_units,
    split_row,
)
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.lake import Chunk, DocText, Node
from rag_assets.core.structure import bare_heading, path_names
from rag_assets.core.tables import TableRow

LEGAL_KINDS = ("article", "paragraph", "item", "point")


@dataclass
class Container:
    """Units that may be packed together, with what every chunk of them must repeat."""

    node: Node
    path: str
    lead: str
    units: list[Unit] = field(default_factory=list)


def _printed_runs(doc: DocText, node: Node) -> list[tuple[str, int]]:
    """A node's text as runs of the document text with their offsets.

    A paragraph around a table holds the lines before and after it, not the table's:
    its text is not one slice of the document, and offsets counted in it would land
    inside the wrong words after the table. Each run of its lines that follow one
    another in the document is read where it is printed.
    """
    same = doc.text[node.char_start : node.char_start + len(node.text)]
    if same.replace("\n", " ") == node.text.replace("\n", " "):
        return [(node.text, node.char_start)]  # one slice (a heading's lines joined)
    runs: list[tuple[str, int]] = []
    cursor, end = node.char_start, -1
    for line in node.text.split("\n"):
        if not line.strip():
            continue
        pos = doc.text.find(line, cursor, node.char_end + 1)
        if pos < 0:
            return [(node.text, node.char_start)]  # not its printed lines: as before
        if runs and pos == end + 1:
            runs[-1] = (doc.text[runs[-1][1] : pos + len(line)], runs[-1][1])
        else:
            runs.append((line, pos))
        cursor = end = pos + len(line)
    return runs or [(node.text, node.char_start)]


def _containers(
    doc: DocText, nodes: Sequence[Node], rows: Sequence[TableRow], counter: TokenCounter
) -> list[Container]:
    by_id = {n.node_id: n for n in nodes}
    order: list[str] = []
    containers: dict[str, Container] = {}

    def container_of(node: Node) -> Node:
        current: Node | None = node
        while current is not None:
            if current.kind in ("article", "table", "table_text"):
                return current
            if current.kind in ("document", "part", "chapter", "section"):
                return current
            current = by_id.get(current.parent_id) if current.parent_id else None
        return node

    def get(node: Node) -> Container:
        if node.node_id not in containers:
            names = path_names(node, by_id)
            lead = ""
            if node.kind == "article":
                lead = lead_of(node.text, counter) if node.text else node.label
            elif node.kind in ("table", "table_text"):
                lead = node.title
            containers[node.node_id] = Container(node, PATH_SEP.join(names), lead)
            order.append(node.node_id)
        return containers[node.node_id]

    for node in nodes:
        if node.kind in ("table", "table_row") or not node.text.strip():
            continue
        if node.kind in ("part", "chapter", "section") and bare_heading(node):
            continue  # a bare heading: it lives on in the path of its units' headers
        seg = node.node_id.split("#", 1)[1] if "#" in node.node_id else "doc"
        own_end = node.char_start + len(node.text)
        if doc.text[node.char_start : own_end] != node.text:
            own_end = node.char_end  # merged heading lines: fall back to the unit's span
        box = get(container_of(node))
        if node.kind in LEGAL_KINDS:
            box.units.append(Unit(seg, node.text, node.char_start, own_end, node.label))
        elif node.kind == "table_text":
            box.units.extend(line_units(seg, node.text, node.char_start))
        else:
            for k, (text, start) in enumerate(_printed_runs(doc, node)):
                box.units.extend(sentence_units(f"{seg}~r{k}" if k else seg, text, start))
    for row in rows:
        table = by_id.get(row.table_id)
        if table is None:
            continue
        seg = f"{row.table_id.split('#', 1)[1]}/row-{row.row_index}"
        box = get(table)
        if row.header_lines and not box.units:
            box.lead = table_lead(box.lead, row.header_lines, counter)
        box.units.append(
            Unit(seg, row.text, row.char_start, row.char_end, f"linha {row.row_index}")
        )
    return [containers[k] for k in order if containers[k].units]


ROW_ROOM = 64
"""Tokens a chunk of a table read without named columns keeps for its context header and
a piece of its row (a label and a value or two) beside the table's header lines."""


def table_lead(caption: str, header_lines: Sequence[str], counter: TokenCounter) -> str:
    """What every chunk of a table read without named columns repeats above its rows: its
    caption, then its printed title and header lines, verbatim (so a reader can map the
    numbers), every one of them that fits beside a piece of a row (`ROW_ROOM`: a row too
    long is cut into pieces, each under the lines). Lines past that are more than the
    model reads: the values they head are flagged, not refused (`Orphan.reader`)."""
    lines = [caption] if caption else []
    budget = max(counter.max_tokens // 2, counter.max_tokens - ROW_ROOM)
    for line in header_lines:
        if line in lines:
            continue  # the title, already the caption
        if counter.count("\n".join([*lines, line])) - counter.overhead > budget:
            break
        lines.append(line)
    return "\n".join(lines)


def structural_chunks(
    source: Source,
    counter: TokenCounter,
    target_tokens: int = 200,
    repack: bool = True,
    header_mode: str = "full",
    strategy: str = "structural",
    pack_table_rows: bool = False,
) -> list[Chunk]:
    """Chunks cut at the document's own units, packed up to `target_tokens` when `repack`.

    Table rows are one per chunk (caption + linearized row) unless `pack_table_rows`.

    No chunk's token count (header, lead and model prefix included) exceeds the model's
    maximum: a unit too long is split into sentences, then words, each part repeating the
    header and the lead.
    """
    doc, nodes, rows, info = source.doc, source.nodes, source.rows, source.info
    chunks: list[Chunk] = []
    render = _Render(doc, info, counter, strategy, header_mode)
    tables = sorted(n.char_start for n in nodes if n.kind in ("table", "table_text"))
    for box in _containers(doc, nodes, rows, counter):
        # the budget allows for the longest path a piece may get (its first unit's label)
        longest = max((u.label for u in box.units), key=len, default="")
        widest = make_header(info, f"{box.path}{PATH_SEP}{longest}", header_mode)
        fixed = counter.count(f"{widest}\n{box.lead}\n" if box.lead else f"{widest}\n")
        room = max(16, counter.max_tokens - fixed)
        units: list[Unit] = []
        fit = split_row if box.node.kind == "table" else fit_to_budget
        for unit in box.units:
            units.extend(fit(unit, room, counter))
        for unit, n in zip(units, counter.count_many([u.text for u in units]), strict=True):
            unit.tokens = n - counter.overhead
        groups: list[list[Unit]] = []
        budget = min(target_tokens, counter.max_tokens) - fixed
        for unit in units:
            packs = repack and (pack_table_rows or box.node.kind != "table")
            if groups and any(groups[-1][-1].end <= t < unit.start for t in tables):
                packs = False  # text before a table and text after it are not one chunk
            if groups and packs and sum(u.tokens for u in groups[-1]) + unit.tokens <= budget:
                groups[-1].append(unit)
            else:
                groups.append([unit])
        for group in groups:
            chunks.extend(render.emit(box, group))
    for ordinal, chunk in enumerate(chunks):
        chunk.ordinal = ordinal
    return chunks


def _contiguous_text(doc: DocText, group: list[Unit]) -> list[str]:
    """The document's own text for runs of adjacent units (original spacing kept)."""
    runs: list[list[Unit]] = []
    for unit in group:
        if runs and 0 <= unit.start - runs[-1][-1].end <= 1:
            runs[-1].append(unit)
        else:
            runs.append([unit])
    return [doc.text[run[0].start : run[-1].end] for run in runs]


@dataclass
class _Render:
    """Turns groups of units of one document into chunks (ids unique within it)."""

    doc: DocText
    info: DocInfo
    counter: TokenCounter
    strategy: str
    header_mode: str
    seen: set[str] = field(default_factory=set)
    build: ChunkBuilder = field(init=False)

    def __post_init__(self) -> None:
        self.build = ChunkBuilder.of(self.info, self.doc, self.counter, self.strategy)

    def emit(self, box: Container, group: list[Unit]) -> list[Chunk]:
        """Chunks of a group, split further until each fits the model (never truncated)."""
        chunk = self.chunk(box, group)
        if not chunk.truncated:
            return [chunk]
        self.seen.discard(chunk.chunk_id)
        if len(group) > 1:
            half = len(group) // 2
            return self.emit(box, group[:half]) + self.emit(box, group[half:])
        excess = chunk.token_count - self.counter.max_tokens
        unit = group[0]
        budget = max(8, self.counter.count(unit.text) - self.counter.overhead - excess - 2)
        fit = split_row if box.node.kind == "table" else fit_to_budget
        pieces = fit(unit, budget, self.counter)
        return [c for piece in pieces for c in self.emit(box, [piece])]

    def chunk(self, box: Container, group: list[Unit]) -> Chunk:
        """One chunk of a group: header, lead, the document's own text, exact span."""
        doc, info, seen = self.doc, self.info, self.seen
        first, last = group[0], group[-1]
        starts_container = first.start <= box.node.char_start
        body_parts = (
            _contiguous_text(doc, group) if box.node.kind != "table" else [u.text for u in group]
        )
        if box.lead and not (starts_container and box.node.kind == "article"):
            if not body_parts[0].startswith(box.lead):
                body_parts.insert(0, box.lead)
        body = "\n".join(body_parts)
        path = box.path
        if first.label and not starts_container and box.node.kind != "table":
            path = f"{path}{PATH_SEP}{first.label}" if path else first.label
        header = make_header(info, path, self.header_mode)
        chunk_id = f"{info.partition_key}#{first.seg}"
        if len(group) > 1:
            chunk_id += f"..{last.seg.rsplit('/', 1)[-1]}"
        base, n = chunk_id, 1
        while chunk_id in seen:
            n += 1
            chunk_id = f"{base}~{n}"
        seen.add(chunk_id)
        return self.build.chunk(
            chunk_id,
            first.start,
            last.end,
            header,
            body,
            kind=box.node.kind,
            parent_id=box.node.node_id,
            path=path,
        )


@dataclass(frozen=True)
class StructuralChunker(Chunker):
    """Strategy `structural`: tree units packed up to `target_tokens`
    (`structural-no-repack`: one unit per chunk)."""

    target_tokens: int = 200
    repack: bool = True
    header_mode: str = "full"

    @property
    def name(self) -> str:
        """`structural` or `structural-no-repack`."""
        return "structural" if self.repack else "structural-no-repack"

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The version's tree units, packed within their container."""
        return structural_chunks(
            source,
            counter,
            target_tokens=self.target_tokens,
            repack=self.repack,
            header_mode=self.header_mode,
            strategy=self.name,
        )
