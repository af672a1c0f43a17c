"""Search hits: the `Hit` record a retriever's rows become (with its fused score, cosine
and BM25), the `min_score` cut, and hits as rows for people and LLMs (the hit's columns,
and its parent's text: small-to-big)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from rag_assets.core.index.fusion import Fused, Ranked
from rag_assets.core.index.store import (
    HIT_COLUMNS,
    TableMoved,
)
from rag_assets.core.lake import ACTIVE, Lake, LakeError
from rag_assets.core.stages import FOLDERS, PAGE_TEXT, STRUCTURE_TREE


@dataclass
class Hit:
    """One retrieved chunk, with where it comes from and which retrievers found it.

    `score` is higher-is-better: cosine similarity (vector), BM25 (fts) or the fused RRF
    score (hybrid): a rank score, the same for the best answer to any question. `ranks` maps
    each retriever that found the chunk to its 1-based rank. Beside it, the real
    similarities: `cosine`, between the query's and the chunk's vectors (vector and hybrid
    modes; in hybrid also for a chunk only full text found, from its stored vector), and
    `bm25`, the full-text score (fts mode, and hybrid when full text found the chunk among
    its candidates); None where not measured. `min_score` thresholds are on `cosine`.
    """

    chunk_id: str
    partition_key: str
    doc_id: str
    version: str
    title: str
    path: str
    header: str
    body: str
    text: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    parent_id: str | None
    kind: str
    token_count: int
    score: float
    retrievers: list[str] = field(default_factory=list)
    ranks: dict[str, int] = field(default_factory=dict)
    strategy: str = ""
    status: str = ACTIVE
    valid_from: dt.date | None = None
    valid_to: dt.date | None = None
    cosine: float | None = None
    bm25: float | None = None

    @classmethod
    def from_row(
        cls,
        row: dict[str, Any],
        score: float,
        ranks: dict[str, int],
        cosine: float | None = None,
        bm25: float | None = None,
    ) -> Hit:
        """A hit from its row, its score, the rank each retriever that found it gave, and
        its cosine and BM25 scores where measured."""
        return cls(
            chunk_id=row["chunk_id"],
            partition_key=row["partition_key"],
            doc_id=row["doc_id"],
            version=row["version"],
            title=row.get("title") or "",
            path=row.get("path") or "",
            header=row.get("header") or "",
            body=row.get("body") or "",
            text=row.get("text") or "",
            page_start=int(row["page_start"]),
            page_end=int(row["page_end"]),
            char_start=int(row["char_start"]),
            char_end=int(row["char_end"]),
            parent_id=row.get("parent_id"),
            kind=row.get("kind") or "",
            token_count=int(row.get("token_count") or 0),
            score=float(score),
            retrievers=list(ranks),
            ranks=dict(ranks),
            strategy=row.get("strategy") or "",
            status=row.get("status") or ACTIVE,
            valid_from=row.get("valid_from"),
            valid_to=row.get("valid_to"),
            cosine=None if cosine is None else round(float(cosine), 6),
            bm25=None if bm25 is None else round(float(bm25), 6),
        )

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (dates as ISO strings)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["retrievers"], out["ranks"] = list(self.retrievers), dict(self.ranks)
        for key in ("valid_from", "valid_to"):
            if out[key] is not None:
                out[key] = out[key].isoformat()
        return out


def fetch_hits(
    tbl: Any, answers: list[list[Fused]], vectors: np.ndarray | None = None
) -> list[list[Hit]]:
    """The hits of fused rankings, their hit columns read by row id for these chunks only
    (one read for every answer), on the handle the retrievers read: the same table
    version, so the same rows. A hit only full text found gets its cosine to its query
    (`vectors`, one per answer) from its stored vector, read with the hit columns."""
    ids = list(dict.fromkeys(f.row["_rowid"] for fused in answers for f in fused))
    lacking = vectors is not None and any(f.cosine is None for a in answers for f in a)
    columns = [*HIT_COLUMNS, "vector"] if lacking else HIT_COLUMNS
    rows = tbl.take_row_ids(ids).select(columns).with_row_id().to_list() if ids else []
    by_id = {row["_rowid"]: row for row in rows}
    missing = [i for i in ids if i not in by_id]
    if missing:  # a handle reads one version: only a broken or vanished table gets here
        raise TableMoved(
            f"table {tbl.name} (version {tbl.version}): {len(missing)} of the {len(ids)} "
            "ranked chunks could not be read back; search again"
        )
    out = []
    for i, fused in enumerate(answers):
        hits = []
        for f in fused:
            row = by_id[f.row["_rowid"]]
            cosine = f.cosine
            if cosine is None and vectors is not None:
                cosine = _cosine(vectors[i], row["vector"])
            hits.append(Hit.from_row(row, f.score, f.ranks, cosine, f.scores.get("fts")))
        out.append(hits)
    return out


def _cosine(query: np.ndarray, stored: Sequence[float]) -> float:
    """The cosine similarity of a query vector and a stored chunk vector (what the vector
    retriever's `1 - cosine distance` gives)."""
    other = np.asarray(stored, dtype=np.float32)
    norm = float(np.linalg.norm(query) * np.linalg.norm(other))
    return float(np.dot(query, other) / norm) if norm else 0.0


def ranked_hits(rows: Ranked, retriever: str) -> list[Hit]:
    """One retriever's answer as hits (its rows hold the hit columns); its score is the
    hit's `cosine` (vector) or `bm25` (fts)."""
    vector = retriever == "vector"
    return [
        Hit.from_row(
            row, score, {retriever: rank}, score if vector else None, None if vector else score
        )
        for rank, (score, row) in enumerate(rows, start=1)
    ]


def above_min_score(hits: list[Hit], min_score: float | None) -> list[Hit]:
    """The hits whose cosine is at least `min_score` (None: every hit). A hit without a
    cosine (fts mode) is kept: the threshold does not apply to it."""
    if min_score is None:
        return hits
    return [h for h in hits if h.cosine is None or h.cosine >= min_score]


PARENT_STAGES = (STRUCTURE_TREE, PAGE_TEXT)
"""The stages a parent unit's text is read from."""


def parent_texts(lake: Lake, hits: Sequence[Hit]) -> list[str | None]:
    """The whole parent unit of each hit (its article, section or table), for small-to-big:
    the small chunk is what search matched, the parent is what an LLM should read. A
    table's parent text is its caption and its linearized rows (`Medida: Vibração;
    Unidade: mm/s; ...`), one a line, not the table as printed: a value keeps its header.
    A table that was not read into rows (flagged, indexed as its printed lines) gives
    its printed text. Each version's nodes, text and rows are read once, however many
    of its chunks were hit. A hit of a version purged since the search read the table
    (its files gone) has none."""
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
            try:
                nodes = {n.node_id: n for n in load_nodes(lake, key)}
                spans[key] = (nodes, load_doc(lake, key).text)
            except LakeError:  # purged after the search read its table version: no parent
                if all(lake.stage_path(FOLDERS[s], key).exists() for s in PARENT_STAGES):
                    raise
                spans[key] = ({}, "")
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
