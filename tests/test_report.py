"""The eval report as the eval_report asset writes it (real Dagster instance, real LanceDB,
the bundled model): the files, the metadata, the checks, and the strategy list."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetCheckSeverity, DagsterInstance

from rag_assets.core.chunking.sized import offsets_for
from rag_assets.core.corpus import load_doc, load_info, load_nodes, load_rows, load_version
from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.eval.evaluation import EvalResult, resolve_strategies, strategy_families
from rag_assets.core.eval.regression import previous_report
from rag_assets.core.eval.report import render_markdown, write_report
from rag_assets.core.eval.report.html import render_html
from rag_assets.core.index import default_min_score
from rag_assets.core.lake.layout import Lake, LakeError
from rag_assets.core.lake.parquet import read_stage
from rag_assets.core.stages import FOLDERS, PAGE_TEXT, RAW_PDF, STRUCTURE_TREE
from rag_assets.definitions import build_definitions
from rag_assets.orchestration.partitions import DOC_VERSIONS

from .conftest import copy_lake

# slow: a lake indexed through Dagster, then eval reports
pytestmark = pytest.mark.slow

LIVE = ["manual-beneficiario@v7", "manual-operacao@v1"]
CHECKS = {
    "default_no_orphan_table_values",
    "default_no_mid_line_starts",
    "default_not_truncated",
    "default_hit3_not_regressed",
}


@pytest.fixture(scope="module")
def indexed_lake(tmp_path_factory, embedder) -> Lake:
    """The two sample manuals indexed once by the index_documents job."""
    lake = copy_lake(
        tmp_path_factory.mktemp("report") / "lake",
        ["manual-operacao", "manual-beneficiario"],
        ["manuais.jsonl"],
    )
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, LIVE)
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    for key in LIVE:
        assert job.execute_in_process(partition_key=key, instance=instance).success, key
    return lake


@pytest.fixture
def lake(indexed_lake: Lake, tmp_path: Path) -> Lake:
    """A private copy of the indexed lake (its reports and index may be changed)."""
    shutil.copytree(indexed_lake.root, tmp_path / "lake")
    return Lake(tmp_path / "lake")


def run_eval_report(lake: Lake, **config: Any) -> Any:
    """Materialize eval_report on a fresh instance; the run result (failures allowed)."""
    defs = build_definitions(str(lake.root))
    return defs.resolve_job_def("eval_report_job").execute_in_process(
        instance=DagsterInstance.ephemeral(),
        run_config={"ops": {"eval_report": {"config": config}}},
        raise_on_error=False,
    )


def materialization_metadata(run: Any) -> dict[str, Any]:
    [event] = run.get_asset_materialization_events()
    return {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}


def checks_of(run: Any) -> dict[str, Any]:
    return {c.check_name: c for c in run.get_asset_check_evaluations()}


def test_eval_report_writes_html_markdown_and_json_and_passes_its_checks(lake: Lake):
    run = run_eval_report(lake, strategies=["fixed_tokens-256-o0"], offsets=2)
    assert run.success
    metadata = materialization_metadata(run)
    html = Path(metadata["report"])
    assert html.name == "report.html" and html.parent.parent == lake.reports_dir
    assert {p.name for p in html.parent.iterdir()} == {"report.html", "report.md", "metrics.json"}
    text = html.read_text(encoding="utf-8")
    assert "<table" in text and "data:image/svg+xml;base64," in text
    assert "http://" not in text and "https://" not in text  # readable offline
    assert "| default |" in metadata["metrics_table"]
    assert "| fixed_tokens-256-o0 |" in metadata["metrics_table"]
    assert "gemea" in metadata["hit@3_by_tag"]

    metrics = json.loads((html.parent / "metrics.json").read_text(encoding="utf-8"))
    assert set(metrics["strategies"]) == {"default", "fixed_tokens-256-o0"}
    assert set(metrics["offsets"]["fixed_tokens-256-o0"]) == {"s0", "s128"}
    # per document: both manuals, with their own questions and chunks
    per_doc = metrics["by_doc"]["default"]
    assert set(per_doc) == {"manual-beneficiario", "manual-operacao"}
    assert all(d["questions"] > 0 and d["chunks"] > 0 for d in per_doc.values())
    assert sum(d["questions"] for d in per_doc.values()) == metrics["questions"]
    # every chunk's path is headings only; the manuals carry no bookmarks
    assert all(d["off_heading_paths"] == 0 and d["bookmarks"] == 0 for d in per_doc.values())
    # abstention at the model's default min_score: m12 (out of scope) has no expected answer
    default = metrics["strategies"]["default"]
    assert metrics["min_score"] == default_min_score(Embedder(model="all-MiniLM-L6-v2"))
    assert default["out_of_scope_questions"] == 1
    assert 0 <= default["answered_out_of_scope"] <= 1 and 0 <= default["refused_in_scope"] <= 1
    sweep = {p["min_score"]: p for p in metrics["sweep"]}
    assert metrics["min_score"] in sweep and len(sweep) > 2
    lowest, highest = sweep[min(sweep)], sweep[max(sweep)]
    assert lowest["refused_in_scope"] == 0 and lowest["answered_out_of_scope"] == 1
    assert highest["answered_out_of_scope"] == 0 and highest["hit@3"] <= lowest["hit@3"]
    # each question with its top hits (path, fused score, cosine, relevance)
    asked = {q["id"]: q for q in metrics["per_question"]}
    assert set(asked) == {f"m{i:02d}" for i in range(1, 13)}
    assert asked["m12"]["expected"] == [] and asked["m12"]["rank"] is None
    first = asked["m01"]["hits"][0]
    assert first["path"] and first["cosine"] is not None and first["score"] != first["cosine"]
    assert any(h["relevant"] for h in asked["m01"]["hits"][:3])  # m01 is a hit@3
    assert metrics["uncovered"] == [] and metrics["start_offsets"] == 2
    for section in ('id="abstention"', 'id="sweep"', 'id="questions"'):
        assert section in text
    assert "qual o limite de vibração?" in text and "mean over 2 start offsets" in text
    markdown = (html.parent / "report.md").read_text(encoding="utf-8")
    assert "## Abstention (min_score)" in markdown and "## Each question" in markdown
    # readable time: the folder and the title
    assert re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\dZ(-\d+)?", html.parent.name)
    assert re.search(r"trecho eval report, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", text)

    checks = checks_of(run)
    assert set(checks) == CHECKS
    assert all(c.passed for c in checks.values())
    regression = checks["default_hit3_not_regressed"]
    assert regression.severity == AssetCheckSeverity.WARN
    assert "none" in regression.metadata["previous_report"].value  # first report of the lake
    assert regression.description == (  # what it compared, in words (none before: issue 56)
        "nothing compared: no earlier report over the same question files and mode"
    )


def test_a_hit3_drop_against_the_previous_report_warns_without_failing(lake: Lake):
    first = run_eval_report(lake, strategies=["default"])
    assert first.success
    first_json = Path(materialization_metadata(first)["report"]).parent / "metrics.json"
    # two new questions the manuals answer elsewhere than expected: hit@3 must fall
    questions = lake.eval_dir / "manuais.jsonl"
    hard = [
        {
            "id": "x01",
            "question": "qual o limite de vibração?",
            "doc_id": "manual-beneficiario",
            "expected": ["1.1"],
            "tags": ["nova"],
        },
        {
            "id": "x02",
            "question": "Qual a temperatura máxima que a bomba pode atingir?",
            "doc_id": "manual-beneficiario",
            "expected": ["2.2"],
            "tags": ["nova"],
        },
    ]
    with questions.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in hard)

    second = run_eval_report(lake, strategies=["default"], hit3_tolerance=0.05)
    assert second.success  # a warning, not a failure
    check = checks_of(second)["default_hit3_not_regressed"]
    assert not check.passed and check.severity == AssetCheckSeverity.WARN
    assert check.metadata["previous_report"].value == str(first_json)
    assert check.metadata["drop"].value > 0.05
    said = check.description or ""
    assert said.startswith("default policy's hit@3 ") and str(first_json) in said, said
    assert "(each report over its questions, same question files and mode): fell 0." in said
    assert said.endswith("tolerance 0.05")
    assert materialization_metadata(second)["reused"] == "no: evaluated now"  # new questions
    # a tolerance wider than the drop lets it pass
    third = run_eval_report(lake, strategies=["default"], hit3_tolerance=1.0)
    assert checks_of(third)["default_hit3_not_regressed"].passed
    # nothing the eval reads changed since the second: its result is reused, and said so
    assert materialization_metadata(third)["reused"] != "no: evaluated now"
    assert (
        materialization_metadata(third)["metrics_table"]
        == (materialization_metadata(second)["metrics_table"])
    )


def test_previous_report_is_the_latest_over_the_same_questions_and_mode(tmp_path: Path):
    result = EvalResult(
        strategies={"default": {"hit@3": 0.5, "tokens@3": 200.0, "questions": 4.0}},
        ranges={},
        by_tag={},
        questions=4,
        mode="hybrid",
    )
    reports = tmp_path / "reports"
    older = write_report(result, reports, ["a.jsonl"])
    other_questions = write_report(result, reports, ["b.jsonl"])
    result.mode = "vector"
    other_mode = write_report(result, reports, ["a.jsonl"])
    result.mode = "hybrid"
    current = write_report(result, reports, ["a.jsonl"])
    assert previous_report(reports, current, ["a.jsonl"], "hybrid")[0] == older / "metrics.json"
    assert previous_report(reports, current, ["b.jsonl"], "hybrid")[0] == (
        other_questions / "metrics.json"
    )
    assert previous_report(reports, current, ["a.jsonl"], "vector")[0] == (
        other_mode / "metrics.json"
    )
    assert previous_report(reports, older, ["a.jsonl"], "hybrid") is None
    # a report folder of the earlier name format (before readable names) is still older
    legacy = reports / "20240101T000000000000Z"
    legacy.mkdir()
    (legacy / "metrics.json").write_text(
        (older / "metrics.json").read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert previous_report(reports, older, ["a.jsonl"], "hybrid")[0] == legacy / "metrics.json"
    assert previous_report(reports, current, ["a.jsonl"], "hybrid")[0] == older / "metrics.json"


def test_damaged_live_chunks_fail_the_eval_report_run_after_writing_it(lake: Lake):
    # the operations manual re-indexed with 128-token windows: chunks start mid-line
    instance = DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DOC_VERSIONS, LIVE)
    job = build_definitions(str(lake.root)).resolve_job_def("index_documents")
    job.execute_in_process(
        partition_key="manual-operacao@v1",
        instance=instance,
        run_config={"ops": {"chunks": {"config": {"strategy": "fixed_tokens-128-o0"}}}},
        raise_on_error=False,
    )
    run = run_eval_report(lake, strategies=["default"])
    assert not run.success
    checks = checks_of(run)
    mid_line = checks["default_no_mid_line_starts"]
    assert not mid_line.passed and mid_line.severity == AssetCheckSeverity.ERROR
    assert mid_line.metadata["mid_line_starts"].value > 0
    # the report that shows the damage is there to read
    [folder] = lake.reports_dir.iterdir()
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["strategies"]["default"]["mid_line_starts"] > 0
    assert (folder / "report.html").is_file()


ISSUE_STRATEGIES = {
    # the strategies issue 6 asks to compare with the default policy
    "fixed_tokens-512-o64",
    "fixed_tokens-512-o128",
    "fixed_tokens-128-o0",
    "fixed_tokens-256-o0",
    "structural",
    "structural-no-repack",
    "legal-article",
    "legal-paragraph",
    "legal-point",
    "default-noheader",
}


def test_all_names_every_strategy_and_each_one_chunks_a_real_document(indexed_lake, embedder):
    names = resolve_strategies(["all"])
    assert ISSUE_STRATEGIES <= set(names)
    assert any(n.startswith("recursive-") for n in names)
    assert "default" not in names  # always evaluated, never twice
    assert resolve_strategies(["all", "legal-point", "default"]) == names
    families = strategy_families(names, 4, embedder)
    for name in names:
        if name.startswith("fixed_tokens-"):  # size-based: four start offsets
            size = int(name.split("-")[1])
            assert set(families[name]) == {f"s{o}" for o in offsets_for(size, 4)}
    version = load_version(indexed_lake, "manual-operacao@v1")
    counter = embedder.token_counter()
    text = version.doc.text
    for name, variants in families.items():
        for variant, chunker in variants.items():
            chunks = chunker(version, counter)
            assert chunks, (name, variant)
            assert all(
                c.body.strip() and 0 <= c.char_start < c.char_end <= len(text) for c in chunks
            )
            assert len({c.chunk_id for c in chunks}) == len(chunks), (name, variant)
            if name.endswith("-noheader"):
                assert all(not c.header for c in chunks), name


def test_a_version_is_loaded_in_one_call_as_its_stage_files_say(lake: Lake):
    """`load_version` reads the documents row, pages, tree and table rows at once: the
    same as each read alone; a missing file is named by its stage, the first one."""
    key = "manual-operacao@v1"
    version = load_version(lake, key)
    assert (version.info, version.status, version.valid_to) == load_info(lake, key)
    assert version.doc == load_doc(lake, key) and version.nodes == load_nodes(lake, key)
    assert version.rows == load_rows(lake, key) and version.nodes and version.rows
    assert version.sha256 == read_stage(lake, FOLDERS[RAW_PDF], key)["sha256"][0]
    lake.stage_path(FOLDERS[STRUCTURE_TREE], key).unlink()
    with pytest.raises(LakeError, match="materialize the 'structure_tree' stage"):
        load_version(lake, key)
    lake.stage_path(FOLDERS[PAGE_TEXT], key).unlink()
    with pytest.raises(LakeError, match="materialize the 'page_text' stage"):
        load_version(lake, key)


def test_the_report_speaks_of_one_start_offset_when_one_ran():
    metrics = {m: 0.5 for m in ("hit@1", "hit@3", "hit@5", "mrr@10", "tokens@3")}
    metrics |= {"orphans": 0.0, "mid_line_starts": 0.0, "truncated": 0.0, "questions": 4.0}
    result = EvalResult(
        strategies={"default": dict(metrics), "fixed_tokens-512-o64": dict(metrics)},
        ranges={},
        by_tag={},
        questions=4,
        mode="hybrid",
    )
    markdown = render_markdown(result, "report", ["a.jsonl"])
    assert "one start offset" in markdown and "mean over" not in markdown
    page = render_html(result, "report", ["a.jsonl"])
    assert "one start offset" in page and "min–max over start offsets" not in page
    result.start_offsets = 4
    assert "mean over 4 start offsets" in render_markdown(result, "report", ["a.jsonl"])
