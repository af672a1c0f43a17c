"""Search hits as rows for people and LLMs: the hit's columns, and its parent's
text (small-to-big)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_assets.core.index import (
    Hit,
)
from rag_assets.core.lake.layout import Lake


def parent_texts(lake: Lake, hits: Sequence[Hit]) -> list[str | None]:
    """The whole parent unit of each hit (its article, section or table), for small-to-big:
    the small chunk is what search matched, the parent is what an LLM should read. A
    table's parent text is its caption and its linearized rows (`Medida: Vibração;
    Unidade: mm/s; ...`), one a line, not the table as printed: a value keeps its header.
    A table that was not read into rows (flagged, indexed as its printed lines) gives
    its printed text. Each version's nodes, text and rows are read once, however many
    of its chunks were hit."""
    from rag_assets.core.corpus import load_doc, load_nodes

    spans: dict[str, tuple[dict[str, Any], str]] = {}
    tables: dict[str, dict[str, str]] = {}
    out: list[str | None] = []
    for hit in hits:
        if not hit.parent_id:
            out.append(None)
            continue
        key = hit.partition_key
        if key not in spans:
            spans[key] = ({n.node_id: n for n in load_nodes(lake, key)}, load_doc(lake, key).text)
        nodes, text = spans[key]
        node = nodes.get(hit.parent_id)
        if node is not None and node.kind == "table":
            if key not in tables:
                tables[key] = _linearized_tables(lake, key)
            if hit.parent_id in tables[key]:
                out.append(tables[key][hit.parent_id])
                continue
        out.append(None if node is None else text[node.char_start : node.char_end])
    return out


def _linearized_tables(lake: Lake, key: str) -> dict[str, str]:
    """Each linearized table of a version by its node id: its caption line (when it has
    one), then its rows in order, each `header: value; ...`."""
    from rag_assets.core.corpus import load_rows

    rows: dict[str, list[Any]] = {}
    for row in load_rows(lake, key):
        rows.setdefault(row.table_id, []).append(row)
    tables = {}
    for table_id, members in rows.items():
        members.sort(key=lambda r: r.row_index)
        caption = members[0].caption.strip()
        tables[table_id] = "\n".join(([caption] if caption else []) + [r.text for r in members])
    return tables


def hit_rows(lake: Lake, hits: Sequence[Hit], expand: bool = False) -> list[dict[str, Any]]:
    """Hits as `trecho search --json` prints them and `trecho serve` returns them: every
    field of each hit, plus its whole parent unit as `parent_text` when `expand` is on."""
    rows = [hit.to_json() for hit in hits]
    if expand:
        for row, parent in zip(rows, parent_texts(lake, hits), strict=True):
            row["parent_text"] = parent
    return rows
