"""Questions drawn from the lake itself: a lake of reports with tables and no question
file gets a retrieval figure per kind of question from the eval report asset (real PDFs
generated with fpdf2, a real Dagster instance, real LanceDB, the bundled model); a metric
nothing measured is shown as not measured, never as 0."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from dagster import DagsterInstance

from rag_assets.core.corpus import load_version
from rag_assets.core.eval.drawn import DrawSettings, draw_questions, kinds_of, units_of
from rag_assets.core.eval.written import QuestionWriter
from rag_assets.core.lake.layout import Lake
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import FONT_DIR
from .test_contextual import fake_llm
from .test_report import materialization_metadata, run_eval_report

# slow: three reports indexed through Dagster, then eval reports
pytestmark = pytest.mark.slow

SYLLABLES = "ka ro mi sel tun dar vo pre lin gos ther bal nu qua fen dri mor tac wel zin".split()
KEYS = ["atlas-report@2024", "borealis-review@2024", "cinder-survey@2025"]
COLUMNS = ["Region", "Budget", "Staff", "Sites"]


def word(rng: random.Random) -> str:
    """A made-up word of three syllables: rare in the lake, so a known item is findable."""
    return "".join(rng.choice(SYLLABLES) for _ in range(3))


def paragraph(rng: random.Random) -> str:
    """Four English sentences around made-up words (English by its function words)."""
    sentences = [
        f"The {word(rng)} of the {word(rng)} is {word(rng)} and the {word(rng)} was "
        f"{word(rng)} in the {word(rng)} for this period."
        for _ in range(4)
    ]
    return " ".join(sentences)


def write_report(path: Path, seed: int) -> None:
    """A report: a title, six numbered sections of two paragraphs, two ruled tables with
    a caption, a header row and ten rows labelled by region."""
    from fpdf import FPDF

    rng = random.Random(seed)
    pdf = FPDF(format="A4")
    pdf.set_creation_date(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 18)
    title = f"Annual report {seed}: {word(rng).capitalize()} {word(rng)}"
    pdf.multi_cell(0, 10, title, new_x="LMARGIN", new_y="NEXT")
    for section in range(1, 7):
        pdf.set_font("DejaVu", "B", 13)
        pdf.ln(3)
        title = f"{section}. {word(rng).capitalize()} {word(rng)}"
        pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", "", 10)
        for _ in range(2):
            pdf.multi_cell(0, 5, paragraph(rng), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        if section in (2, 5):
            pdf.add_page()
            pdf.set_font("DejaVu", "B", 10)
            number = 1 if section == 2 else 2
            pdf.multi_cell(
                0, 6, f"Table {number}. Figures by region", new_x="LMARGIN", new_y="NEXT"
            )
            pdf.set_font("DejaVu", "", 10)
            labels: list[str] = []
            while len(labels) < 10:
                label = f"{word(rng).capitalize()} {word(rng).capitalize()}"
                if label not in labels:
                    labels.append(label)
            with pdf.table(col_widths=(60, 35, 35, 35), text_align="LEFT") as table:
                head = table.row()
                for name in COLUMNS:
                    head.cell(name)
                for label in labels:
                    row = table.row()
                    row.cell(label)
                    for _ in COLUMNS[1:]:
                        row.cell(f"{rng.randint(10, 999):,}.{rng.randint(0, 9)}")
            pdf.add_page()
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


@pytest.fixture(scope="module")
def report_lake(tmp_path_factory, embedder) -> Lake:
    """Three generated reports indexed by the index_documents job; no question file."""
    root = tmp_path_factory.mktemp("drawn") / "lake"
    for seed, key in enumerate(KEYS, start=1):
        doc, version = key.split("@")
        write_report(root / "raw" / doc / f"{version}.pdf", seed)
    lake = Lake(root)
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, KEYS)
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    for key in KEYS:
        assert job.execute_in_process(partition_key=key, instance=instance).success, key
    return lake


def versions_of(lake: Lake) -> dict[str, Any]:
    return {key: load_version(lake, key) for key in KEYS}


def test_a_lake_without_question_file_is_measured_on_questions_drawn_from_it(report_lake: Lake):
    assert not report_lake.eval_dir.exists() or not list(report_lake.eval_dir.glob("*.jsonl"))
    run = run_eval_report(report_lake, strategies=["fixed_tokens-256-o0"], offsets=1)
    assert run.success
    meta = materialization_metadata(run)
    assert meta["questions"] >= 50
    drawn = meta["questions_drawn"]
    assert drawn["table"] >= 20 and drawn["section"] >= 10
    # every retrieval figure has questions behind it (no twin or out-of-scope question)
    assert set(meta["not_measured"]) == {"twin_confusion", "answered_out_of_scope"}
    folder = Path(meta["report"]).parent
    payload = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    assert payload["sources"] == [f"drawn ({meta['questions']}, seed 0)"]
    # every table question names a row label, a column heading and a value the table holds
    rows = {
        (" ".join(r.cells[0].split()), h, c)
        for v in versions_of(report_lake).values()
        for r in v.rows
        for h, c in zip(r.header, r.cells, strict=False)
    }
    tables = [q for q in payload["per_question"] if "table" in q["tags"]]
    assert len(tables) >= 20
    assert all(q["answerable"] and tuple(q["expected"]) in rows for q in tables)
    # hit@k per kind, in the JSON and in the report's tag table
    for kind in ("table", "section"):
        figures = payload["by_tag"]["default"][kind]
        assert figures["questions"] >= 10 and figures["hit@3"] is not None
        assert payload["by_tag"]["fixed_tokens-256-o0"][kind]["hit@3"] is not None
    # every row carries its header: a table question finds a chunk holding the value with
    # its heading and label
    assert payload["by_tag"]["default"]["table"]["hit@3"] >= 0.8
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert re.search(r"^\| table \| \d+ \| \d\.\d\d \|", report, re.M)
    assert re.search(r"^\| section \| \d+ \| \d\.\d\d \|", report, re.M)
    assert "drawn from the lake: " in report


def test_nothing_measured_is_not_a_number_anywhere(report_lake: Lake):
    run = run_eval_report(report_lake, strategies=["fixed_tokens-256-o0"], offsets=1, draw=0)
    assert run.success
    meta = materialization_metadata(run)
    assert meta["questions"] == 0
    assert meta["not_measured"]["hit@3"] == "no questions"
    assert meta["default hit@3"] == "– (no questions)"
    assert isinstance(meta["default orphans"], float)  # damage is measured without questions
    folder = Path(meta["report"]).parent
    payload = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    default = payload["strategies"]["default"]
    assert default["hit@3"] is None and default["mrr@10"] is None and default["tokens@3"] is None
    assert payload["not_measured"]["hit@3"] == "no questions"
    row = next(
        line
        for line in (folder / "report.md").read_text().splitlines()
        if line.startswith("| default |")
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:6] == ["–", "–", "–", "–"]  # hit@1, hit@3, hit@5, mrr@10
    assert "0.00" not in cells[2:6]
    # the CLI says the same: null in its JSON
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "rag_assets.cli",
            "eval",
            "--lake",
            str(report_lake.root),
            "--json",
            "--draw",
            "0",
            "--strategies",
            "fixed_tokens-256-o0",
            "--offsets",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = json.loads(out.stdout)
    assert printed["strategies"]["default"]["hit@1"] is None
    assert printed["not_measured"]["mrr@10"] == "no questions"


def test_the_draw_is_deterministic_spread_and_keeps_the_header_words_out(report_lake: Lake):
    versions = versions_of(report_lake)
    first = draw_questions(versions, 60, DrawSettings(seed=3))
    again = draw_questions(versions, 60, DrawSettings(seed=3))
    other = draw_questions(versions, 60, DrawSettings(seed=4))
    assert [q.id for q in first] == [q.id for q in again]
    assert [q.id for q in first] != [q.id for q in other]
    units, _ = units_of(versions, DrawSettings())
    kinds = kinds_of(first)
    # half table questions, the rest known items; too few units: tables make up the rest
    assert len(first) == 60 and kinds["section"] == len(units) < 30 < kinds["table"]
    assert {q.doc_id for q in first if "table" in q.tags} == {k.split("@")[0] for k in KEYS}
    assert {q.doc_id for q in first if "section" in q.tags} == {k.split("@")[0] for k in KEYS}
    said = {u.node_ids: u.said for u in units}
    sections = [q for q in first if "section" in q.tags]
    assert sections
    for q in sections:  # a known-item query never repeats its unit's heading or path
        assert not set(q.question.split()) & said[q.units]


def test_an_llm_writes_questions_once_and_a_dead_one_skips_them(report_lake: Lake, tmp_path):
    versions = versions_of(report_lake)

    def reply(request: dict) -> tuple[int, bytes]:
        passage = request["messages"][-1]["content"].split("<passage>")[1]
        words = passage.split()[:6]
        content = f"What does the report say about {' '.join(words)}?"
        return 200, json.dumps({"choices": [{"message": {"content": content}}]}).encode()

    from rag_assets.core.chunking.contextual import Situator

    cache = tmp_path / "written.jsonl"
    with fake_llm(reply) as served:
        ask = Situator(served.url, "m", None, tmp_path).ask  # type: ignore[arg-type]
        writer = QuestionWriter(ask, "m", cache)
        drawn = draw_questions(versions, 40, DrawSettings(writer=writer))
        calls = served.calls
        written = [q for q in drawn if "written" in q.tags]
        assert len(written) == 10 and calls == 10
        assert all(q.question.startswith("What does the report say about") for q in written)
        again = draw_questions(versions, 40, DrawSettings(writer=QuestionWriter(ask, "m", cache)))
        assert served.calls == calls  # every question came from the cache
        assert [q.id for q in again] == [q.id for q in drawn]
    # an endpoint that is down: no written question, the others are still drawn
    dead = Situator("http://127.0.0.1:9/v1", "m", None, tmp_path, timeout_s=1).ask  # type: ignore[arg-type]
    writer = QuestionWriter(dead, "other-model", tmp_path / "other.jsonl")
    drawn = draw_questions(versions, 40, DrawSettings(writer=writer))
    assert len(drawn) == 40 and "written" not in kinds_of(drawn) and writer.failures
