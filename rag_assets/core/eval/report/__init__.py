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
from rag_assets.core.lake import LakePath

__all__ = ["markdown_table", "models_table", "render_markdown", "report_time", "write_report"]


FOLDER_TIME = "%Y-%m-%d_%H-%M-%SZ"
"""A report folder's name: its UTC time, readable (`2026-05-03_14-02-11Z`), `-2`, `-3`...
appended when a report of the same second exists. Older reports were named
`%Y%m%dT%H%M%S%fZ`; `report_time` reads both."""
OLD_FOLDER_TIME = "%Y%m%dT%H%M%S%fZ"


def report_time(name: str) -> tuple[dt.datetime, int]:
    """When the report folder `name` was written, and its same-second number (0 for the
    first), for time order across both folder name formats; a name in neither sorts first."""
    stem, _, number = name.partition("Z-")
    for form, text in ((FOLDER_TIME, stem + "Z" if number else name), (OLD_FOLDER_TIME, name)):
        try:
            when = dt.datetime.strptime(text, form)
        except ValueError:
            continue
        return when, int(number) if number.isdigit() else 0
    return dt.datetime.min, 0


def write_report(result: EvalResult, reports_dir: LakePath, sources: list[str]) -> LakePath:
    """Write `report.html`, `report.md` and `metrics.json` into a new folder named by its
    readable UTC time (`FOLDER_TIME`); returns the folder."""
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    stamp = now.strftime(FOLDER_TIME)
    folder, number = reports_dir / stamp, 1
    while True:
        try:
            folder.mkdir(parents=True, exist_ok=False)
            break
        except FileExistsError:
            number += 1
            folder = reports_dir / f"{stamp}-{number}"
    readable = now.strftime("%Y-%m-%d %H:%M:%S UTC")
    title = f"trecho eval report, {readable}"
    (folder / "report.md").write_text(render_markdown(result, title, sources), encoding="utf-8")
    (folder / "report.html").write_text(
        render_html(result, title, sources, created_at=readable), encoding="utf-8"
    )
    created = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    payload = result.to_json() | {"sources": sources, "created_at": created}
    (folder / "metrics.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return folder
