"""The eval report: `report.html` (tables and plots, readable offline), `report.md` and
`metrics.json`, in `reports/<timestamp>/`.

By concern: `markdown` (the tables and `report.md`), `plots` (matplotlib SVG), `html` (the
self-contained page). The comparison with the previous report is `core/eval/regression.py`.
"""

from __future__ import annotations

import datetime as dt
import json

from rag_assets.core.eval.evaluation import EvalResult
from rag_assets.core.eval.report.html import render_html
from rag_assets.core.eval.report.markdown import markdown_table, models_table, render_markdown
from rag_assets.core.lake.layout import LakePath

__all__ = ["markdown_table", "models_table", "render_markdown", "write_report"]


def write_report(result: EvalResult, reports_dir: LakePath, sources: list[str]) -> LakePath:
    """Write `report.html`, `report.md` and `metrics.json` into a new timestamped folder;
    returns the folder."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    folder = reports_dir / stamp
    folder.mkdir(parents=True, exist_ok=False)
    title = "trecho eval report"
    (folder / "report.md").write_text(render_markdown(result, title, sources), encoding="utf-8")
    (folder / "report.html").write_text(
        render_html(result, title, sources, created_at=stamp), encoding="utf-8"
    )
    payload = result.to_json() | {"sources": sources, "created_at": stamp}
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return folder
