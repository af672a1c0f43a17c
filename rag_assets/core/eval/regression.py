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
from rag_assets.core.lake.layout import LakePath

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
    """The default policy's hit@3 now and in the previous comparable report."""

    current: float
    previous: float | None
    previous_path: str
    tolerance: float

    @property
    def drop(self) -> float:
        """How far hit@3 fell (negative: it rose); 0 without a previous report."""
        return 0.0 if self.previous is None else round(self.previous - self.current, 4)

    @property
    def passed(self) -> bool:
        """hit@3 fell by no more than the tolerance (or nothing to compare with)."""
        return self.drop <= self.tolerance + 1e-9


def hit3_regression(
    result: EvalResult, previous: tuple[LakePath, dict[str, Any]] | None, tolerance: float
) -> Regression:
    """Compare the default policy's hit@3 with a previous report's (see `previous_report`)."""
    current = float(result.strategies["default"]["hit@3"])
    if previous is None:
        return Regression(current, None, "", tolerance)
    path, payload = previous
    before = payload.get("strategies", {}).get("default", {}).get("hit@3")
    return Regression(current, None if before is None else float(before), str(path), tolerance)
