"""The import graph of `rag_assets/` and `resources/`, read from the source (no import):
what tests/test_house.py checks the house's shape against. Every import counts, at the
top of a module, inside a function or under `TYPE_CHECKING`: each one is a dependency
the design must hold, whenever it runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("rag_assets", "resources")


@dataclass(frozen=True)
class Edge:
    """One import: `source` (a module) imports `target` (the module named, or the
    package when a name is taken from its face), at `line`."""

    source: str
    target: str
    line: int


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module under PACKAGES of `root`: dotted name -> (file, is a package)."""
    found: dict[str, tuple[Path, bool]] = {}
    for top in PACKAGES:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if package else parts)] = (path, package)
    return found


def _named(node: ast.ImportFrom, module: str, package: bool) -> str:
    """The module an `ImportFrom` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def defined_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines or assigns (not imports)."""
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def face_names(path: Path) -> set[str]:
    """The names a package's face binds at its top (imported, defined, assigned)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text("utf-8"), str(path)).body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        names |= set(defined_names(node))
    return names


def import_lines(path: Path, target: str) -> list[int]:
    """The lines of `path` that import `target` or a module under it (absolute imports,
    at the top, inside a function or under TYPE_CHECKING)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        if any(n == target or n.startswith(target + ".") for n in names):
            found.append(node.lineno)
    return found


def edges(root: Path) -> Iterator[Edge]:
    """Every import between modules of `root`'s PACKAGES (a module importing itself is
    left out: no edge). A name taken from a package is an edge to the package's face,
    unless the face does not bind it and a submodule has that name."""
    known = modules(root)
    bound = {m: face_names(path) for m, (path, package) in known.items() if package}
    for module, (path, package) in known.items():
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                named = _named(node, module, package)
                for alias in node.names:
                    sub = f"{named}.{alias.name}"
                    by_face = alias.name in bound.get(named, set())
                    targets.append(sub if sub in known and not by_face else named)
            for target in targets:
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != module:
                    yield Edge(module, target, node.lineno)


def loops(root: Path) -> list[list[str]]:
    """The import loops of `root`: each strongly connected set of modules (more than
    one), sorted; none in a house whose floors stand one on another."""
    graph: dict[str, set[str]] = {m: set() for m in modules(root)}
    for edge in edges(root):
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def floor_of(module: str, floors: tuple[tuple[str, ...], ...]) -> tuple[int, str] | None:
    """(floor number, the unit on it) of `module`: the longest unit name it is or sits
    under; None for a module on no floor."""
    best: tuple[int, str] | None = None
    for number, units in enumerate(floors):
        for unit in units:
            if (module == unit or module.startswith(unit + ".")) and (
                best is None or len(unit) > len(best[1])
            ):
                best = (number, unit)
    return best


def upward(root: Path, floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """Imports from a lower floor up to a higher one (`floors`: units, lowest first; a
    unit may import its own modules, and any unit on a lower floor), as
    `source:line -> target`."""
    found: set[str] = set()
    for edge in edges(root):
        source, target = floor_of(edge.source, floors), floor_of(edge.target, floors)
        if source is None or target is None or source[1] == target[1]:
            continue
        if target[0] >= source[0]:
            found.add(f"{edge.source}:{edge.line} -> {edge.target}")
    return sorted(found)
