"""Reading a built tree: a unit's path from the top (`Capítulo 4 > Tabela 1`) and how it is
named there, the share of text under no titled unit, the tables kept as printed lines and
those read without named columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_assets.core.lake import DocText, Node
from rag_assets.core.structure.markers import squash
from rag_assets.core.tables import TableRow

TABLE_KINDS = ("table", "table_text")


def unstructured_tables(nodes: Sequence[Node]) -> list[dict[str, object]]:
    """The tables indexed as their printed lines (`table_text`), by node id and pages (no
    text: Dagster keeps what it is shown): a reader's limit the user is told about (a
    warning check), not a reason to refuse the version."""
    return [
        {"table": n.node_id, "pages": [n.page_start, n.page_end]}
        for n in nodes
        if n.kind == "table_text"
    ]


def unnamed_tables(nodes: Sequence[Node], rows: Sequence[TableRow]) -> list[dict[str, object]]:
    """The tables read without named columns, by node id and pages: their rows are
    indexed as bare cells under the table's printed header lines (`TableRow.header_lines`),
    so no value leaves without its header text, but no value is named by its column. A
    reader's limit the user is told about (a warning check, the eval's damage table)."""
    lines = {r.table_id: len(r.header_lines) for r in rows if not r.header}
    return [
        {
            "table": n.node_id,
            "pages": [n.page_start, n.page_end],
            "header_lines": lines[n.node_id],
        }
        for n in nodes
        if n.kind == "table" and n.node_id in lines
    ]


def bare_heading(node: Node) -> bool:
    """Whether a heading unit holds nothing but its own heading line: its text lives on
    in its units' paths, not in a chunk of its own. A section the outline opened above
    a line that does not print its title holds that line, not its heading."""
    text = node.text.strip()
    if "\n" in text:
        return False
    if not node.title:
        return True
    heading = squash(f"{node.label}{node.title}")
    # the line is the heading (a run-in heading's line goes on: it holds text of its own)
    return squash(node.title) in squash(text) and len(squash(text)) <= len(heading) + 3


def path_of(node: Node, by_id: dict[str, Node]) -> list[Node]:
    """The ancestors of a node from the top (document excluded), the node included."""
    chain: list[Node] = []
    current: Node | None = node
    while current is not None and current.kind != "document":
        chain.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    return list(reversed(chain))


def display_name(node: Node) -> str:
    """How a unit is named in a section path: its printed label and title; "" for a unit
    that names nothing (a text unit, an untitled section), which a path leaves out."""
    if node.kind in ("article", "paragraph", "item", "point"):
        return node.label
    if node.kind == "table_row":
        return f"linha {node.label}"
    if node.kind in ("text", "document"):
        return ""
    parts = [p for p in (node.label, node.title) if p]
    if node.kind in TABLE_KINDS and node.title:
        return node.title
    return " ".join(parts)


def path_names(node: Node, by_id: dict[str, Node]) -> list[str]:
    """The section path of a unit, top first, its own name last: headings, articles and
    their parts, tables; never a text unit."""
    return [name for name in map(display_name, path_of(node, by_id)) if name]


TITLED_KINDS = ("part", "chapter", "section", "article", "table", "table_text")


def table_paths(nodes: Sequence[Node]) -> dict[str, str]:
    """Each table node's path (`Capítulo 4 > Tabela 1`): the context its rows carry."""
    by_id = {n.node_id: n for n in nodes}
    return {n.node_id: " > ".join(path_names(n, by_id)) for n in nodes if n.kind == "table"}


def untitled_share(nodes: Sequence[Node], doc: DocText) -> float:
    """Share of the text that sits in no titled unit (no section, article or table above it).

    On a kind of PDF the parser understands this is small; a sudden rise means headings
    stopped being recognised.
    """
    by_id = {n.node_id: n for n in nodes}
    total = untitled = 0
    for node in nodes:
        if node.kind == "table_row":
            continue
        size = len(node.text)
        total += size
        if not any(a.kind in TITLED_KINDS for a in path_of(node, by_id)):
            untitled += size
    return untitled / total if total else 0.0
