"""The house rules a newcomer can rely on (issues 46 and 58), checked on the source
itself (no import, no model): no module over 400 lines, no private Dagster import, the
core never reading the settings, at most two functions taking more than eight
parameters; no import loop and no import from a lower floor up to a higher one
(`FLOORS`, imports inside functions and under `TYPE_CHECKING` counted).
Each rule's check is also shown to catch a breach."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

from dagster import AssetKey

from rag_assets.core.corpus import VERSION_STAGES
from rag_assets.core.stages import CHUNKS, PIPELINE, READS

from .house_graph import (
    PACKAGES,
    defined_names,
    edges,
    import_lines,
    loops,
    modules,
    upward,
)
from .test_imports import private_dagster_imports

REPO = Path(__file__).resolve().parents[1]
MAX_LINES = 400
MAX_PARAMS = 8
LONG_SIGNATURES_ALLOWED = 2
"""`ChunkBuilder.chunk` (the chunk record's own fields) and `ContextualChunker.__init__`
(the situating step's knobs) are the two left."""

FLOORS: tuple[tuple[str, ...], ...] = (
    (
        "rag_assets.offline",
        "rag_assets.core.stages",
        "rag_assets.core.errors",
        "rag_assets.core.faces",
    ),
    ("rag_assets", "rag_assets.core.hosts", "rag_assets.core.hyphens"),
    ("rag_assets.core.lake",),
    ("rag_assets.core.rules",),
    ("rag_assets.core.embedding",),
    ("rag_assets.core.request",),
    ("rag_assets.core.page",),
    ("rag_assets.core.tables",),
    ("rag_assets.core.layout",),
    ("rag_assets.core.extract",),
    ("rag_assets.core.structure",),
    ("rag_assets.core.chunking",),
    ("rag_assets.core.corpus",),
    ("rag_assets.core.index",),
    ("rag_assets.core.lifecycle",),
    ("rag_assets.core.eval",),
    ("rag_assets.core.pipeline",),
    ("rag_assets.core",),
    ("rag_assets.settings",),
    ("resources",),
    ("rag_assets.orchestration",),
    ("rag_assets.assets",),
    ("rag_assets.definitions",),
    ("rag_assets.serve",),
    ("rag_assets.cli",),
)
"""The house, lowest floor first (docs/development.md draws it): a unit imports its own
modules and those of the floors below it, never one beside or above it. The core's
leaves, the lake, the lifecycle rules, the embedder, the search request; the page's
geometry (boxes, glyphs) under the page readers (tables, layout, extract), the
structure; chunking and the corpus; the index
(the one door to LanceDB), the lifecycle above it, the eval; the pipeline (the stage
bodies) on top of the core. Then the settings, the resources, the orchestration, the
assets and the definitions; the server and the CLI."""


def sources(root: Path) -> Iterator[Path]:
    """Every Python file under rag_assets/ and resources/ of `root`."""
    for top in PACKAGES:
        yield from sorted((root / top).rglob("*.py"))


def long_modules(root: Path) -> dict[str, int]:
    """Module (relative to `root`) -> its line count, for those over MAX_LINES."""
    counts = {
        p.relative_to(root).as_posix(): len(p.read_text("utf-8").splitlines())
        for p in sources(root)
    }
    return {path: n for path, n in counts.items() if n > MAX_LINES}


def settings_readers(root: Path) -> list[str]:
    """The rag_assets/core modules (relative to `root`) that import rag_assets.settings,
    at the top or inside a function: only the settings read the environment."""
    return [
        path.relative_to(root).as_posix()
        for path in sorted((root / "rag_assets" / "core").rglob("*.py"))
        if import_lines(path, "rag_assets.settings")
    ]


def long_signatures(root: Path) -> dict[str, int]:
    """`module:line name` -> parameter count (self and cls not counted, *args and
    **kwargs counted), for every function taking more than MAX_PARAMS."""
    found = {}
    for path in sources(root):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                named = [x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]]
                named += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
                n = len([x for x in named if x not in ("self", "cls")])
                if n > MAX_PARAMS:
                    found[f"{path.relative_to(root).as_posix()}:{node.lineno} {node.name}"] = n
    return found


def test_no_module_over_400_lines() -> None:
    assert long_modules(REPO) == {}


def test_no_private_dagster_import() -> None:
    assert private_dagster_imports(REPO) == {}


def test_the_core_never_reads_the_settings() -> None:
    assert settings_readers(REPO) == []


def test_at_most_two_functions_take_more_than_eight_parameters() -> None:
    found = long_signatures(REPO)
    assert len(found) <= LONG_SIGNATURES_ALLOWED, found


def test_the_checks_see_a_breach(tmp_path: Path) -> None:
    """A long module, a core module reaching the settings (inside a function too) and a
    long signature are each found; a method's self is not counted."""
    core = tmp_path / "rag_assets" / "core"
    core.mkdir(parents=True)
    (tmp_path / "resources").mkdir()
    (core / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (core / "ok.py").write_text("x = 1\n" * MAX_LINES)
    (core / "reach.py").write_text("def f():\n    from rag_assets.settings import cache_root\n")
    (core / "reach2.py").write_text("from rag_assets import settings\n")
    (core / "clean.py").write_text("from rag_assets.core import stages\n")
    (tmp_path / "resources" / "sig.py").write_text(
        "def long(a, b, c, d, e, f, g, h, *rest): ...\n"
        "class C:\n    def fits(self, a, b, c, d, e, f, g, h): ...\n"
    )
    assert long_modules(tmp_path) == {"rag_assets/core/big.py": MAX_LINES + 1}
    assert settings_readers(tmp_path) == ["rag_assets/core/reach.py", "rag_assets/core/reach2.py"]
    assert long_signatures(tmp_path) == {"resources/sig.py:1 long": 9}


def test_no_import_loop() -> None:
    assert loops(REPO) == []


def test_no_import_from_a_lower_floor_up() -> None:
    assert upward(REPO, FLOORS) == []


def test_the_graph_checks_see_a_breach(tmp_path: Path) -> None:
    """A loop closed by an import inside a function, one closed under TYPE_CHECKING (and
    one through a package's face) are found; an import up a floor is found, one down
    is not."""
    core = tmp_path / "rag_assets" / "core"
    (core / "index").mkdir(parents=True)
    (core / "lifecycle").mkdir()
    (tmp_path / "resources").mkdir()
    (tmp_path / "rag_assets" / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "index" / "__init__.py").write_text("from .models import promote\n")
    (core / "index" / "models.py").write_text(
        "def promote():\n    from rag_assets.core.lifecycle.versions import scan\n"
    )
    (core / "lifecycle" / "__init__.py").write_text("")
    (core / "lifecycle" / "versions.py").write_text("from rag_assets.core.index import Index\n")
    (core / "lake.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import keys\n"
    )
    (core / "keys.py").write_text("from rag_assets.core.lake import x\n")
    assert loops(tmp_path) == [
        [
            "rag_assets.core.index",
            "rag_assets.core.index.models",
            "rag_assets.core.lifecycle.versions",
        ],
        ["rag_assets.core.keys", "rag_assets.core.lake"],
    ]
    floors = (("rag_assets.core.index",), ("rag_assets.core.lifecycle",))
    assert upward(tmp_path, floors) == [
        "rag_assets.core.index.models:2 -> rag_assets.core.lifecycle.versions"
    ]


def lineage_breaches(
    parents: Mapping[str, set[str]], reads: Mapping[str, tuple[str, ...]]
) -> dict[str, tuple[list[str], list[str]]]:
    """Stage -> (its asset's deps, what `reads` says it reads), for each stage whose
    two differ: the lineage drawn must be the data's."""
    return {
        stage: (sorted(parents.get(stage, set())), sorted(reads.get(stage, ())))
        for stage in PIPELINE
        if parents.get(stage, set()) != set(reads.get(stage, ()))
    }


def asset_parents() -> dict[str, set[str]]:
    """Each partitioned stage's parents in the code location's asset graph."""
    from rag_assets.definitions import build_definitions

    graph = build_definitions().resolve_asset_graph()
    return {
        stage: {k.to_user_string() for k in graph.get(AssetKey(stage)).parent_keys}
        for stage in PIPELINE
    }


def test_the_lineage_is_the_reads_table() -> None:
    """Each stage asset's deps are what `stages.READS` says it reads, and the chunks
    stage reads a version from those files (`corpus.VERSION_STAGES`)."""
    assert lineage_breaches(asset_parents(), READS) == {}
    assert VERSION_STAGES == READS[CHUNKS]


def test_the_lineage_check_sees_a_breach() -> None:
    """A stage that reads more than its asset declares (the chunks stage before issue 58:
    a chain drawn, four stages read) is found."""
    chain = {s: {b} for b, s in zip(PIPELINE, PIPELINE[1:], strict=False)}
    found = lineage_breaches(chain, READS)
    assert found["chunks"] == (["linearized_tables"], sorted(READS[CHUNKS]))
    assert "page_text" not in found


def core_packages(root: Path) -> list[str]:
    """Every package directly under rag_assets/core of `root` (a folder with a face)."""
    core = root / "rag_assets" / "core"
    return sorted(
        f"rag_assets.core.{d.name}" for d in core.iterdir() if (d / "__init__.py").exists()
    )


def face_breaches(root: Path) -> list[str]:
    """Imports of a core package's modules from outside the package (`source:line ->
    module`): every other module goes through the package's face, its `__init__`."""
    packages = core_packages(root)
    found = set()
    for edge in edges(root):
        for package in packages:
            inside = edge.target.startswith(package + ".")
            mine = edge.source == package or edge.source.startswith(package + ".")
            if inside and not mine:
                found.add(f"{edge.source}:{edge.line} -> {edge.target}")
    return sorted(found)


GEOMETRY = ("Box", "Word", "box_iou", "covered", "centred_in", "is_upright", "runs_upward")
GEOMETRY += ("SUPERSCRIPTS", "UPRIGHT_TILT")
"""The page's geometry: boxes and their measures, glyphs and which way they run."""


def geometry_outside_page(root: Path) -> list[str]:
    """Modules other than rag_assets/core/page that define a GEOMETRY name at their top
    (`module: name`): the page readers stand on one floor of it."""
    found = []
    for module, (path, _) in modules(root).items():
        if module.startswith("rag_assets.core.page"):
            continue
        for node in ast.parse(path.read_text("utf-8"), str(path)).body:
            found += [f"{module}: {n}" for n in defined_names(node) if n in GEOMETRY]
    return sorted(found)


def test_every_core_package_is_entered_by_its_face() -> None:
    assert face_breaches(REPO) == []


def test_the_page_geometry_is_one_floor() -> None:
    assert geometry_outside_page(REPO) == []


def test_the_face_and_floor_checks_see_a_breach(tmp_path: Path) -> None:
    """A module reaching into another package's module (at the top and inside a
    function) is found, one using the face or its own package's modules is not; a box
    defined in the tables is found."""
    core = tmp_path / "rag_assets" / "core"
    for package in ("lake", "tables", "page"):
        (core / package).mkdir(parents=True)
        (core / package / "__init__.py").write_text("")
    (tmp_path / "resources").mkdir()
    (core / "lake" / "layout.py").write_text("from rag_assets.core.lake.keys import k\n")
    (core / "lake" / "keys.py").write_text("k = 1\n")
    (core / "tables" / "boxes.py").write_text(
        "from rag_assets.core.lake import Lake\nBox = tuple\n"
        "def f():\n    from rag_assets.core.lake.layout import Lake\n"
    )
    (core / "page" / "boxes.py").write_text("Box = tuple\n")
    assert face_breaches(tmp_path) == [
        "rag_assets.core.tables.boxes:4 -> rag_assets.core.lake.layout"
    ]
    assert geometry_outside_page(tmp_path) == ["rag_assets.core.tables.boxes: Box"]


def lancedb_outside_index(root: Path) -> list[str]:
    """Modules outside rag_assets/core/index that import LanceDB (`module:line`), at the
    top or inside a function: the index is the one door to the store (`Catalogue` for
    what concerns the store as a whole)."""
    found = []
    for module, (path, _) in modules(root).items():
        if module == "rag_assets.core.index" or module.startswith("rag_assets.core.index."):
            continue
        found += [f"{module}:{line}" for line in import_lines(path, "lancedb")]
    return sorted(found)


def index_subclasses_outside(root: Path) -> list[str]:
    """Classes outside rag_assets/core/index built on `Index` (`module: class`): the
    core would call back up into them (its reads go through `current_table`)."""
    found = []
    for module, (path, _) in modules(root).items():
        if module.startswith("rag_assets.core.index"):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if isinstance(node, ast.ClassDef) and any(
                (isinstance(b, ast.Name) and b.id == "Index")
                or (isinstance(b, ast.Attribute) and b.attr == "Index")
                for b in node.bases
            ):
                found.append(f"{module}: {node.name}")
    return sorted(found)


def test_lancedb_is_opened_by_the_index_only() -> None:
    assert lancedb_outside_index(REPO) == []
    assert index_subclasses_outside(REPO) == []


def test_the_lancedb_check_sees_a_breach(tmp_path: Path) -> None:
    """LanceDB imported by the lifecycle (at the top) and by the server (inside a
    function) is found; by the index it is not."""
    core = tmp_path / "rag_assets" / "core"
    (core / "index").mkdir(parents=True)
    (core / "lifecycle").mkdir()
    (tmp_path / "rag_assets" / "serve").mkdir()
    (tmp_path / "resources").mkdir()
    (core / "index" / "store.py").write_text("import lancedb\n")
    (core / "lifecycle" / "purge.py").write_text("import lancedb\n")
    (tmp_path / "rag_assets" / "serve" / "engine.py").write_text(
        "def pointer():\n    from lancedb import connect\nclass ServedIndex(index.Index): ...\n"
    )
    assert lancedb_outside_index(tmp_path) == [
        "rag_assets.core.lifecycle.purge:1",
        "rag_assets.serve.engine:2",
    ]
    assert index_subclasses_outside(tmp_path) == ["rag_assets.serve.engine: ServedIndex"]


def sys_path_edits(root: Path) -> list[str]:
    """Places in tests/ that change `sys.path` (`file:line`): a test imports what it
    needs as any module does, from the installed packages and the repository's root."""
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno}")
    return sorted(set(found))


def bench_imports_of_tests(root: Path) -> list[str]:
    """Imports of the tests' modules in bench/ (`file:line`): the benches stand on the
    product and on `synth`, never on the tests."""
    found = [
        f"{path.relative_to(root).as_posix()}:{line}"
        for path in sorted((root / "bench").rglob("*.py"))
        for line in import_lines(path, "tests")
    ]
    return sorted(found)


def test_no_test_edits_sys_path() -> None:
    assert sys_path_edits(REPO) == []


def test_bench_imports_nothing_from_the_tests() -> None:
    assert bench_imports_of_tests(REPO) == []


def test_the_tests_and_bench_checks_see_a_breach(tmp_path: Path) -> None:
    """A test putting bench/ on the path (insert or append) and a bench importing the
    tests' module are found; `sys.argv` and a bench importing synth are not."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "bench").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text(
        "import sys\nsys.path.insert(0, 'bench')\nargs = sys.argv\n"
    )
    (tmp_path / "tests" / "test_b.py").write_text("import sys\nsys.path.append('bench')\n")
    (tmp_path / "bench" / "hostile.py").write_text(
        "from tests.hostile_pdfs import huge_page\nfrom synth.hostile import giant_image\n"
    )
    assert sys_path_edits(tmp_path) == ["tests/test_a.py:2", "tests/test_b.py:2"]
    assert bench_imports_of_tests(tmp_path) == ["bench/hostile.py:1"]
