"""The structure of a document: the tree of units (tree) and its tables read as rows (tables)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.structure.language import detect_language
    from rag_assets.core.structure.markers import normalize_label, squash
    from rag_assets.core.structure.outline import outline_found
    from rag_assets.core.structure.paths import (
        bare_heading,
        path_names,
        path_of,
        table_paths,
        unnamed_tables,
        unstructured_tables,
        untitled_share,
    )
    from rag_assets.core.structure.quality import (
        PATH_THRESHOLD,
        PathQuality,
        chunks_off_headings,
        path_quality,
    )
    from rag_assets.core.structure.settings import DEFAULT_STRUCTURE, StructureSettings
    from rag_assets.core.structure.tree import build_tree, tables_by_piece

__all__ = [
    "DEFAULT_STRUCTURE",
    "PATH_THRESHOLD",
    "PathQuality",
    "StructureSettings",
    "bare_heading",
    "build_tree",
    "chunks_off_headings",
    "detect_language",
    "normalize_label",
    "outline_found",
    "path_names",
    "path_of",
    "path_quality",
    "squash",
    "table_paths",
    "tables_by_piece",
    "unnamed_tables",
    "unstructured_tables",
    "untitled_share",
]

_LAZY: dict[str, str] = {
    "DEFAULT_STRUCTURE": "rag_assets.core.structure.settings",
    "PATH_THRESHOLD": "rag_assets.core.structure.quality",
    "PathQuality": "rag_assets.core.structure.quality",
    "StructureSettings": "rag_assets.core.structure.settings",
    "bare_heading": "rag_assets.core.structure.paths",
    "build_tree": "rag_assets.core.structure.tree",
    "chunks_off_headings": "rag_assets.core.structure.quality",
    "detect_language": "rag_assets.core.structure.language",
    "normalize_label": "rag_assets.core.structure.markers",
    "outline_found": "rag_assets.core.structure.outline",
    "path_names": "rag_assets.core.structure.paths",
    "path_of": "rag_assets.core.structure.paths",
    "path_quality": "rag_assets.core.structure.quality",
    "squash": "rag_assets.core.structure.markers",
    "table_paths": "rag_assets.core.structure.paths",
    "tables_by_piece": "rag_assets.core.structure.tree",
    "unnamed_tables": "rag_assets.core.structure.paths",
    "unstructured_tables": "rag_assets.core.structure.paths",
    "untitled_share": "rag_assets.core.structure.paths",
}


__getattr__ = lazy_names(__name__, _LAZY)
