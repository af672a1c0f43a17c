"""Every `rag_assets.core` module imports alone, in a fresh interpreter: none works only
because another module happened to be imported first (an import cycle such as
`core.index` -> `models` -> `lifecycle.versions` -> `core.index` fails that way)."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import rag_assets.core

REPO = Path(__file__).resolve().parents[1]

# One interpreter for all modules: before each import every `rag_assets` module is
# dropped from sys.modules, so each is imported as if alone (third-party packages stay
# loaded, which makes it ~100x faster than one interpreter per module).
ALONE = textwrap.dedent(
    """
    import importlib, sys, traceback
    failed = []
    for name in sys.argv[1:]:
        for loaded in [m for m in sys.modules if m.split(".")[0] == "rag_assets"]:
            del sys.modules[loaded]
        try:
            importlib.import_module(name)
        except Exception as exc:
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    print("\\n".join(failed))
    sys.exit(1 if failed else 0)
    """
)


def _alone(modules: list[str]) -> list[str]:
    """The modules of `modules` that fail to import alone, with their error."""
    run = subprocess.run(
        [sys.executable, "-c", ALONE, *modules],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert run.returncode in (0, 1), run.stderr
    return [line for line in run.stdout.splitlines() if line]


def core_modules() -> list[str]:
    """Every module and package under rag_assets/core."""
    return sorted(
        m.name for m in pkgutil.walk_packages(rag_assets.core.__path__, "rag_assets.core.")
    )


def test_every_core_module_imports_alone() -> None:
    modules = core_modules()
    assert len(modules) > 50 and "rag_assets.core.lifecycle.versions" in modules
    failed = _alone(modules)
    assert not failed, "core modules that fail to import alone:\n" + "\n".join(failed)


def test_the_check_sees_a_cycle(tmp_path: Path) -> None:
    """Two modules importing a name from each other at the top fail when the second is
    imported first, and the check names it."""
    package = tmp_path / "rag_assets_cycle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from rag_assets_cycle.b import B\nA = 1\n")
    (package / "b.py").write_text("from rag_assets_cycle.a import A\nB = 2\n")
    run = subprocess.run(
        [sys.executable, "-c", ALONE, "rag_assets_cycle.b"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert run.returncode == 1 and "rag_assets_cycle.b: ImportError" in run.stdout


PRIVATE = "dagster._"
KNOWN_PRIVATE: dict[str, list[str]] = {}
"""Files allowed a private Dagster import (none since issue 46: the automation switch is
set through the instance's public cursor storage, `concurrency.PAUSED_KEY`)."""


def private_dagster_imports(root: Path) -> dict[str, list[str]]:
    """Source file (relative to `root`) -> the private Dagster modules (`dagster._...`)
    it imports, for every file under rag_assets/ and resources/."""
    found: dict[str, list[str]] = {}
    for path in sorted(
        p for top in ("rag_assets", "resources") for p in (root / top).rglob("*.py")
    ):
        modules = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                modules.append(node.module or "")
            elif isinstance(node, ast.Import):
                modules += [alias.name for alias in node.names]
        private = sorted({m for m in modules if m.startswith(PRIVATE)})
        if private:
            found[path.relative_to(root).as_posix()] = private
    return found


def test_no_private_dagster_import() -> None:
    """`dagster._...` is Dagster's inside and breaks on upgrades: only the known exceptions
    remain (and the list shrinks when one is fixed)."""
    assert private_dagster_imports(REPO) == KNOWN_PRIVATE


def test_the_check_sees_a_private_import(tmp_path: Path) -> None:
    """An import of a private Dagster module is found, at the top or inside a function,
    as `import` or `from`; the public `dagster` is not."""
    (tmp_path / "rag_assets").mkdir()
    (tmp_path / "rag_assets" / "m.py").write_text(
        "import dagster\nfrom dagster import asset\n"
        "def f():\n    from dagster._utils import iterate_with_context\n"
        "import dagster._core.errors as errors\n"
    )
    assert private_dagster_imports(tmp_path) == {
        "rag_assets/m.py": ["dagster._core.errors", "dagster._utils"]
    }
