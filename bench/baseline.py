"""trecho end to end vs a plain baseline pipeline on the same PDFs and questions.

The baseline is the common recipe: pdfplumber `extract_text` per page → a recursive
splitter at 512 tokens with 64 of overlap → the same model → LanceDB. trecho is
`trecho materialize` (extraction, structure, tables, chunking, embedding, checks).

Both are timed on a cold start (the model already loaded, empty stores), then judged by
the same eval code on the same questions. The baseline's chunks know nothing of trecho's
text: for judging only, each one is located in trecho's extracted text by its word
shingles (running headers and page numbers the baseline kept are simply not matched).

Usage::

    python bench/baseline.py            # manuals + LGPD + CDC, every question file
    python bench/baseline.py --quick    # the two manuals, manuais.jsonl
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shutil
import tempfile
import time
from bisect import bisect_left
from dataclasses import replace
from pathlib import Path

import pdfplumber
import polars as pl

from rag_assets.core.chunking.sized import recursive
from rag_assets.core.corpus import Version, load_chunks
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.eval.evaluation import EvalOptions, evaluate
from rag_assets.core.eval.questions import Question, load_questions
from rag_assets.core.eval.runner import indexed_versions
from rag_assets.core.index import Index, Stamp
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.schemas import Chunk, DocText

REPO = Path(__file__).resolve().parents[1]
WORD = re.compile(r"\w+")
SHINGLE = 5


def plain_text(pdf: Path) -> DocText:
    """What the baseline reads: pdfplumber's text of every page, pages joined by newlines."""
    with pdfplumber.open(pdf) as doc:
        pages = [page.extract_text() or "" for page in doc.pages]
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + 1
    return DocText("\n".join(pages), starts)


class Locator:
    """Finds where a piece of foreign text lies in trecho's text, by word shingles."""

    def __init__(self, text: str) -> None:
        self.words = [(m.group().lower(), m.start(), m.end()) for m in WORD.finditer(text)]
        self.where: dict[tuple[str, ...], list[int]] = {}
        tokens = [w[0] for w in self.words]
        for i in range(len(tokens) - SHINGLE + 1):
            self.where.setdefault(tuple(tokens[i : i + SHINGLE]), []).append(i)

    def _first(self, tokens: list[str], after: int, reverse: bool) -> int | None:
        starts = range(len(tokens) - SHINGLE, -1, -1) if reverse else range(len(tokens))
        for i in starts:
            hits = self.where.get(tuple(tokens[i : i + SHINGLE]), [])
            j = bisect_left(hits, after)
            if j < len(hits):
                return (
                    hits[j]
                    + (SHINGLE - 1 if reverse else 0)
                    + (len(tokens) - SHINGLE - i if reverse else -i)
                )
        return None

    def span(self, piece: str, after: int) -> tuple[int, int, int] | None:
        """(char start, char end, word index of the start) of `piece`, searched from word
        `after` on; None when no shingle of it is found."""
        tokens = [m.group().lower() for m in WORD.finditer(piece)]
        if len(tokens) < SHINGLE:
            return None
        first = self._first(tokens, after, reverse=False)
        if first is None:
            return None
        first = max(first, 0)
        last = self._first(tokens, first, reverse=True)
        last = min(last if last is not None else first, len(self.words) - 1)
        return self.words[first][1], self.words[max(last, first)][2], first


def baseline_chunks(version: Version, pdf: Path, embedder: Embedder) -> tuple[list[Chunk], float]:
    """The baseline's chunks of one version, located in trecho's text; and the seconds its
    own work took (extraction and splitting)."""
    start = time.perf_counter()
    raw = plain_text(pdf)
    info = version.info
    pieces = recursive(raw, info.partition_key, embedder.token_counter(), size=512)
    seconds = time.perf_counter() - start
    locator = Locator(version.doc.text)
    located, cursor = [], 0
    for chunk in pieces:
        span = locator.span(chunk.text, max(cursor - 200, 0))
        if span is None:
            continue
        s, e, cursor = span
        located.append(
            replace(
                chunk,
                strategy="plain-baseline",
                char_start=s,
                char_end=e,
                page_start=version.doc.page_at(s),
                page_end=version.doc.page_at(max(e - 1, s)),
            )
        )
    return located, seconds


def materialize(lake: Path) -> float:
    """Seconds of a cold `trecho materialize --skip-eval`."""
    from rag_assets.cli import main

    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(["materialize", "--skip-eval", "--lake", str(lake)])
    if code != 0:
        raise SystemExit(out.getvalue())
    return time.perf_counter() - start


def main() -> None:
    """Time both pipelines, judge both, print one table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="the two manuals only")
    args = parser.parse_args()
    docs = ["manual-operacao", "manual-beneficiario"] + ([] if args.quick else ["lgpd", "cdc"])
    files = ["manuais.jsonl"] + ([] if args.quick else ["leis-dev.jsonl"])
    embedder = Embedder()
    assert embedder.max_tokens  # load the model before any timing
    with tempfile.TemporaryDirectory(prefix="trecho-baseline-") as tmp:
        root = Path(tmp) / "lake"
        for doc in docs:
            shutil.copytree(REPO / "data_lake" / "raw" / doc, root / "raw" / doc)
        os.environ["DAGSTER_HOME"] = str(Path(tmp) / "dagster_home")
        trecho_s = materialize(root)
        lake = Lake(root)
        index = Index(lake.lancedb_dir, embedder)
        versions = indexed_versions(lake, index)

        chunks: dict[str, list[Chunk]] = {}
        plain_s = 0.0
        plain_db = Index(Path(tmp) / "plain-db", embedder)
        for key, version in versions.items():
            located, seconds = baseline_chunks(version, lake.raw_paths(key)[0], embedder)
            start = time.perf_counter()
            vectors = embedder.embed_passages([c.text for c in located])
            plain_db.upsert_partition(
                key,
                pl.DataFrame([c.as_row() for c in located]),
                vectors,
                Stamp("active", version.info.valid_from, version.valid_to, version.info.title),
            )
            plain_s += seconds + time.perf_counter() - start
            chunks[key] = located

        questions: list[Question] = [
            q
            for name in files
            for q in load_questions(REPO / "data_lake" / "eval" / name)
            if q.doc_id is None or q.doc_id in {v.info.doc_id for v in versions.values()}
        ]
        live = [c for key in versions for c in load_chunks(lake, key)]
        result = evaluate(
            versions,
            questions,
            embedder,
            index,
            live,
            EvalOptions(
                strategies={"plain-baseline": {"": lambda v, _c: chunks[v.info.partition_key]}}
            ),
        )
    n_chunks = {"default": len(live), "plain-baseline": sum(len(c) for c in chunks.values())}
    times = {"default": trecho_s, "plain-baseline": plain_s}
    print(f"documents: {', '.join(docs)}; {len(questions)} questions; {os.cpu_count()} CPUs")
    print()
    print(
        "| pipeline | time ÷ baseline | chunks | hit@3 | mrr@10 | tokens@3 | orphans |"
        " mid-line starts | truncated |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in (("default", "trecho (default policy)"), ("plain-baseline", "plain")):
        m = result.strategies[name]
        print(
            f"| {label} | {times[name] / plain_s:.2f} ({times[name]:.0f} s) | {n_chunks[name]} "
            f"| {m['hit@3']:.2f} | {m['mrr@10']:.2f} | {m['tokens@3']:.0f} | {m['orphans']:.0f} "
            f"| {m['mid_line_starts']:.0f} | {m['truncated']:.0f} |"
        )


if __name__ == "__main__":
    main()
