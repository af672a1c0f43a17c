"""trecho, SLANet-plus, the per-table choice between them and its oracle, from one
reading of each PDF (bench/tables.py's readers `trecho`, `SLANet-plus`, `choice`,
`oracle`; docs/tables.md, "The benchmark").

trecho reads the PDF once (its chunks as `trecho materialize` indexes them); the model
reads each of trecho's table regions (`SlanetRegions`, cached). A combined reading takes,
for each region, trecho's table chunks or the model's rows: `choice` by evidence alone
(`synth.choice.prefer_model`), `oracle` by the truth (the reading that holds more of the
file's cells, region by region): the most a per-table choice could reach."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from synth.choice import View, doubt, prefer_model, view
from synth.slanet import Rows, SlanetRegions, slanet_table, slanet_texts
from synth.table_metrics import Reading, holds
from synth.table_readers import trecho_parts
from synth.table_truth import TruthTable, norm

Key = tuple[int, int]  # (page, table index on the page)


def trecho_view(table: Any) -> View:
    """trecho's reading of one page's table as a `View` (a piece continuing a table from
    the page before takes its header from there: never in doubt for want of one)."""
    head = table.rows[: table.header_rows]
    paths = list(table.header)
    if table.continues and not paths:
        paths = ["", *["continued"] * max(0, max((len(r) for r in table.rows), default=1) - 1)]
    words = sum(len((c or "").split()) for r in head for c in r)
    return view(paths, table.rows[table.header_rows :], words)


def model_view(rows: Rows) -> View:
    """The model's reading of one region as a `View`."""
    paths, body, head_words = slanet_table(rows)
    return view(paths, body, head_words)


class Joint:
    """The four readings of a PDF, the work done once per PDF (`truth`: the file's truth
    tables, set before reading it, for the oracle only). `dump`: a JSON-lines file where
    the oracle writes each region's views, the choice, and what the model's reading gains
    there against the truth (for reading the choice's evidence)."""

    def __init__(self, cache: Path | None, dump: Path | None = None) -> None:
        self.parts = trecho_parts()
        self.model = SlanetRegions(cache)
        self.dump = dump
        self.truth: Sequence[TruthTable] = []
        self.name = ""
        self.last: tuple[Path, dict[str, Any]] | None = None
        self.chosen = self.oracle_chosen = self.doubted = self.read_tables = 0

    def _trecho(self, pdf: Path) -> dict[str, Any]:
        if self.last and self.last[0] == pdf:
            return self.last[1]
        start = time.perf_counter()
        reading, extraction, chunks = self.parts(pdf)
        work: dict[str, Any] = {"reading": reading, "seconds": time.perf_counter() - start}
        tables = {}
        if extraction is not None and not reading.refused:
            for page in extraction.pages:
                for table in page.tables:
                    tables[(page.page, table.index)] = table
        work["extraction"], work["tables"], work["chunks"] = extraction, tables, chunks
        self.last = (pdf, work)
        return work

    def _model(self, pdf: Path) -> dict[str, Any]:
        work = self._trecho(pdf)
        if "model" not in work:
            extraction = work["extraction"]
            work["model"] = self.model(pdf, extraction) if extraction is not None else {}
        return work

    def trecho(self, pdf: Path) -> Reading:
        """trecho's reading, as `trecho_reader` gives it."""
        work = self._trecho(pdf)
        work["reading"].seconds = work["seconds"]
        return work["reading"]

    def slanet(self, pdf: Path) -> Reading:
        """The model's reading alone: its rows of every region of trecho's."""
        work = self._model(pdf)
        base: Reading = work["reading"]
        texts = [t for rows, _ in work["model"].values() for t in slanet_texts(rows)]
        seconds = sum(s for _, s in work["model"].values())
        refused = base.refused if work["extraction"] is None else ""
        return Reading(texts, base.regions, refused, seconds=seconds)

    def combined(self, work: dict[str, Any], keys: set[Key], seconds: float) -> Reading:
        """trecho's reading with the model's rows for the regions `keys`."""
        base: Reading = work["reading"]
        spans = [
            (work["tables"][k].char_start, work["tables"][k].char_end)
            for k in keys
            if work["tables"][k].char_start >= 0
        ]
        texts = [
            c.text
            for c in work["chunks"]
            if c.kind != "table" or not any(c.char_start < e and c.char_end > s for s, e in spans)
        ]
        for k in sorted(keys):
            texts.extend(slanet_texts(work["model"][k][0]))
        return Reading(
            texts, base.regions, base.refused, base.unstructured, base.unnamed, seconds=seconds
        )

    def views(self, work: dict[str, Any]) -> dict[Key, tuple[View, View]]:
        """Each region's views: trecho's and the model's."""
        return {
            k: (trecho_view(t), model_view(work["model"].get(k, ([], 0.0))[0]))
            for k, t in work["tables"].items()
        }

    def choice(self, pdf: Path) -> Reading:
        """The choice by evidence: the model's rows where `prefer_model` says so; its
        seconds trecho's and the model's on the tables in doubt only."""
        work = self._model(pdf)
        views = self.views(work)
        keys = {k for k, (t, m) in views.items() if prefer_model(t, m)}
        doubted = [k for k, (t, _) in views.items() if doubt(t)]
        self.read_tables += len(views)
        self.doubted += len(doubted)
        self.chosen += len(keys)
        seconds = work["seconds"] + sum(work["model"].get(k, ([], 0.0))[1] for k in doubted)
        return self.combined(work, keys, seconds)

    def held(self, reading: Reading) -> int:
        """The truth's cells a reading holds (`table_metrics.Score`'s test)."""
        if reading.refused:
            return 0
        texts = [norm(t) for t in reading.texts or []]
        targets = [t for table in self.truth for t in table.targets()]
        return sum(holds(texts, [norm(t.cell), norm(t.head), norm(t.label)]) for t in targets)

    def oracle(self, pdf: Path) -> Reading:
        """The better reading of each region judged against the truth (`truth`): the
        model's rows where they hold more of the file's cells than trecho's."""
        work = self._model(pdf)
        views = self.views(work)
        base = self.held(work["reading"])
        keys, records = set(), []
        for k, (t, m) in views.items():
            gain = self.held(self.combined(work, {k}, 0.0)) - base
            if gain > 0:
                keys.add(k)
            records.append(
                {"file": self.name, "key": list(k), "trecho": t.__dict__, "model": m.__dict__}
                | {"gain": gain, "doubt": doubt(t), "chosen": prefer_model(t, m)}
            )
        self.oracle_chosen += len(keys)
        if self.dump is not None:
            with self.dump.open("a", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in records)
        seconds = work["seconds"] + sum(s for _, s in work["model"].values())
        return self.combined(work, keys, seconds)

    def tally(self) -> str:
        """How many regions the choice doubted, gave the model, and the oracle gave it;
        the counters start again."""
        line = (
            f"choice: {self.read_tables} tables read, {self.doubted} in doubt (read again by "
            f"the model), {self.chosen} given the model's reading; oracle: {self.oracle_chosen}"
        )
        self.chosen = self.oracle_chosen = self.doubted = self.read_tables = 0
        return line
