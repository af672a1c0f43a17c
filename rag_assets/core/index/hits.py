"""Search hits as rows for people and LLMs: the hit's columns, and its parent's
text (small-to-big)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rag_assets.core.index import (
    Hit,
)
from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.core.stages import FOLDERS, PAGE_TEXT, STRUCTURE_TREE

PARENT_STAGES = (STRUCTURE_TREE, PAGE_TEXT)
"""The stages a parent unit's text is read from."""


def parent_texts(lake: Lake, hits: Sequence[Hit]) -> list[str | None]:
    """The whole parent unit of each hit (its article, section or table), for small-to-big:
    the small chunk is what search matched, the parent is what an LLM should read. Each
    version's nodes and text are read once, however many of its chunks were hit. A hit
    of a version purged since the search read the table (its files gone) has none."""
    from rag_assets.core.corpus import load_doc, load_nodes

    spans: dict[str, tuple[dict[str, tuple[int, int]], str]] = {}
    out: list[str | None] = []
    for hit in hits:
        if not hit.parent_id:
            out.append(None)
            continue
        key = hit.partition_key
        if key not in spans:
            try:
                nodes = {n.node_id: (n.char_start, n.char_end) for n in load_nodes(lake, key)}
                spans[key] = (nodes, load_doc(lake, key).text)
            except LakeError:  # purged after the search read its table version: no parent
                if all(lake.stage_path(FOLDERS[s], key).exists() for s in PARENT_STAGES):
                    raise
                spans[key] = ({}, "")
        nodes, text = spans[key]
        span = nodes.get(hit.parent_id)
        out.append(None if span is None else text[span[0] : span[1]])
    return out


def hit_rows(lake: Lake, hits: Sequence[Hit], expand: bool = False) -> list[dict[str, Any]]:
    """Hits as `trecho search --json` prints them and `trecho serve` returns them: every
    field of each hit, plus its whole parent unit as `parent_text` when `expand` is on."""
    rows = [hit.to_json() for hit in hits]
    if expand:
        for row, parent in zip(rows, parent_texts(lake, hits), strict=True):
            row["parent_text"] = parent
    return rows
