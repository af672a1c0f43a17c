"""`extract` and `structure` use the table package through its public face only
(`rag_assets.core.tables`, its `__all__`), never one of its modules: the stages inside
may be rearranged without touching them."""

from __future__ import annotations

import ast
from pathlib import Path

import rag_assets.core.tables as tables

CORE = Path(__file__).resolve().parents[1] / "rag_assets" / "core"
PACKAGE = "rag_assets.core.tables"


def _table_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import of the table package in a source file."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE):
            found.append((node.module or "", [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(a.name, []) for a in node.names if a.name.startswith(PACKAGE)]
    return found


def _sources() -> list[Path]:
    return sorted(p for stage in ("extract", "structure") for p in (CORE / stage).rglob("*.py"))


def test_extract_and_structure_import_only_the_public_face() -> None:
    assert len(_sources()) >= 10  # the walk found the stages' modules
    wrong = [
        f"{path.relative_to(CORE)}: {module} {names}"
        for path in _sources()
        for module, names in _table_imports(path)
        if module != PACKAGE or not set(names) <= set(tables.__all__)
    ]
    assert not wrong, "imports past rag_assets.core.tables' public face:\n" + "\n".join(wrong)


def test_the_check_sees_a_deep_import(tmp_path: Path) -> None:
    """The walk catches a module reached past the package's face, and a private name."""
    source = tmp_path / "m.py"
    source.write_text(
        "from rag_assets.core.tables.aligned import aligned_tables\n"
        "from rag_assets.core.tables import TableReader\n"
        "import rag_assets.core.tables.finish\n"
    )
    assert _table_imports(source) == [
        ("rag_assets.core.tables.aligned", ["aligned_tables"]),
        ("rag_assets.core.tables", ["TableReader"]),
        ("rag_assets.core.tables.finish", []),
    ]
    assert "TableReader" in tables.__all__ and "aligned_tables" not in tables.__all__
