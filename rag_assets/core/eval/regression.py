"""Has the default policy's hit@3 regressed? The latest comparable earlier report
(`previous_report`) and the judgement against it (`hit3_regression`), which the eval
report's `default_hit3_not_regressed` check reads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag_assets.core.eval.evaluation import EvalResult
from rag_assets.core.eval.metrics import hit_at
from rag_assets.core.eval.questions import mean_measured
from rag_assets.core.lake import LakePath

log = logging.getLogger(__name__)


def previous_report(
    reports_dir: LakePath, before: LakePath, sources: Sequence[str], mode: str
) -> tuple[LakePath, dict[str, Any]] | None:
    """The latest `metrics.json` written before the folder `before` over the same question
    files and retrieval mode (other reports measure something else); None if there is none.

    Report folders are named by their UTC time (`report.report_time` reads old and new
    names alike); unreadable files are skipped with a warning.
    """
    from rag_assets.core.eval.report import report_time

    folders = sorted(
        (p for p in reports_dir.iterdir() if p.is_dir()), key=lambda p: report_time(p.name)
    )
    for folder in reversed(folders):
        if report_time(folder.name) >= report_time(before.name):
            continue
        path = folder / "metrics.json"
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("skipping the earlier report %s: %s", path, exc)
            continue
        if sorted(payload.get("sources", [])) == sorted(sources) and payload.get("mode") == mode:
            return path, payload
    return None


@dataclass(frozen=True)
class Regression:
    """The default policy's hit@3 now and in the previous comparable report, over the
    questions both asked (`shared`; None: the reports' own figures, the earlier one kept
    no per-question results)."""

    current: float | None
    previous: float | None
    previous_path: str
    tolerance: float
    shared: int | None = None

    @property
    def drop(self) -> float:
        """How far hit@3 fell (negative: it rose); 0 when there is nothing to compare."""
        if self.previous is None or self.current is None:
            return 0.0
        return round(self.previous - self.current, 4)

    @property
    def passed(self) -> bool:
        """hit@3 fell by no more than the tolerance (or nothing to compare with)."""
        return self.drop <= self.tolerance + 1e-9


def _hit3(ranks: Sequence[int | None]) -> float | None:
    return mean_measured([hit_at(r, 3) for r in ranks])


def hit3_regression(
    result: EvalResult, previous: tuple[LakePath, dict[str, Any]] | None, tolerance: float
) -> Regression:
    """Compare the default policy's hit@3 with a previous report's (see `previous_report`).
    When questions were drawn from the lake, like with like: over the scored questions
    both reports asked (same id and text), since a lake that changed draws other
    questions. Over question files alone, by the overall hit@3 (a question added to a file
    is part of what the user measures)."""
    current = result.strategies["default"]["hit@3"]
    if previous is None:
        return Regression(current, None, "", tolerance)
    path, payload = previous
    before_questions = payload.get("per_question")
    if result.drawn and before_questions and result.per_question:
        then = {
            (q["id"], q.get("question", "")): q.get("rank")
            for q in before_questions
            if q.get("answerable")
        }
        now = {(r.id, r.question): r.rank for r in result.per_question if r.answerable}
        shared = sorted(set(then) & set(now))
        return Regression(
            _hit3([now[k] for k in shared]),
            _hit3([then[k] for k in shared]),
            str(path),
            tolerance,
            len(shared),
        )
    before = payload.get("strategies", {}).get("default", {}).get("hit@3")
    return Regression(current, None if before is None else float(before), str(path), tolerance)
