"""The next commands `trecho materialize` prints (the Dagster UI, a search), written to run
as printed from any folder: absolute paths, the lake (and a --model) named."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import rag_assets

WORKSPACE = Path(rag_assets.__file__).resolve().parent.parent / "workspace.yaml"
"""The code location file of a source checkout (absent from an installed package)."""
UI_URL = "http://127.0.0.1:3000"


def tool(name: str) -> str:
    """A console script of this environment: its bare name when that is what PATH finds,
    else its absolute path (the virtualenv is not activated)."""
    here = Path(sys.executable).with_name(name)
    found = shutil.which(name)
    if not here.is_file() or (found and Path(found).resolve() == here.resolve()):
        return name
    return str(here)


def ui_hint(lake: Any, dagster_home: Path, model: str | None = None) -> str:
    """How to open the Dagster UI on this lake (its root: a local path, absolute, or a
    URL) and instance: `trecho ui` (`cli/ui.py`: the instance's dagster.yaml written
    first), with DAGSTER_HOME said when it is not the lake's own."""
    from rag_assets.core.lake import Lake

    own = Lake(lake).dagster_home.resolve() == dagster_home.resolve()
    assigned = "" if own else f"DAGSTER_HOME={shlex.quote(str(dagster_home.resolve()))} "
    extra = f" --model {shlex.quote(model)}" if model else ""
    lake_arg = shlex.quote(str(lake))
    return f"{assigned}{tool('trecho')} ui --lake {lake_arg}{extra}   (then {UI_URL})"


def deployment_ui_hint(instance: Any) -> str | None:
    """Where a deployment's runs are seen, when the instance is a deployment's (its runs
    stored off this machine, e.g. deploy/dagster.yaml's Postgres): its own webserver, not
    a `trecho ui` on this machine. None for a local instance (SQLite under its home)."""
    if "sqlite" in type(instance.run_storage).__module__:
        return None
    return (
        "the deployment's webserver (`dagster-webserver -w deploy/workspace.yaml`): this "
        f"command's runs are in its instance (DAGSTER_HOME={instance.root_directory})"
    )


def search_hint(lake: Any, model: str | None = None) -> str:
    """A first search of this lake."""
    extra = f" --model {shlex.quote(model)}" if model else ""
    lake_arg = shlex.quote(str(lake))
    return f'{tool("trecho")} search "qual o limite de vibração?" -k 3 --lake {lake_arg}{extra}'
