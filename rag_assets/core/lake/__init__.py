"""The data lake: layout and keys, sidecars, Parquet IO, file locks, schemas,
loading a version back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rag_assets.core.faces import lazy_names

# The names other packages use from modules the face does not load: each imported from
# its module on first use, so that importing the package costs no more than the modules
# a caller asks for (`_LAZY`; the imports below are for type checkers and readers).
if TYPE_CHECKING:
    from rag_assets.core.lake.layout import (
        Lake,
        LakeError,
        LakePath,
        RawVersion,
        local_lock_path,
        sha256_file,
        split_key,
        store_problem,
        validate_key_part,
        version_sha256,
        write_atomically,
    )
    from rag_assets.core.lake.lease import PURGE, held_lease
    from rag_assets.core.lake.listing import folder_states, gc_paused, json_kind, path_state
    from rag_assets.core.lake.locks import file_lock, remove_lock, this_process, waited_lock
    from rag_assets.core.lake.parquet import (
        Derived,
        read_stage,
        read_stages,
        remove_stage_files,
        write_stage,
    )
    from rag_assets.core.lake.schemas import (
        CHUNKS,
        DOCUMENTS,
        NODES,
        PAGES,
        TABLE_ROWS,
        Chunk,
        DocText,
        Node,
        content_hash,
    )
    from rag_assets.core.lake.sidecar import ACTIVE, STATUSES, Sidecar

__all__ = [
    "remove_lock",
    "ACTIVE",
    "CHUNKS",
    "DOCUMENTS",
    "NODES",
    "PAGES",
    "STATUSES",
    "TABLE_ROWS",
    "Chunk",
    "Derived",
    "DocText",
    "Lake",
    "LakeError",
    "LakePath",
    "Node",
    "RawVersion",
    "Sidecar",
    "content_hash",
    "file_lock",
    "folder_states",
    "gc_paused",
    "held_lease",
    "PURGE",
    "json_kind",
    "local_lock_path",
    "path_state",
    "read_stage",
    "read_stages",
    "remove_stage_files",
    "sha256_file",
    "split_key",
    "store_problem",
    "this_process",
    "validate_key_part",
    "version_sha256",
    "waited_lock",
    "write_atomically",
    "write_stage",
]

_LAZY: dict[str, str] = {
    "remove_lock": "rag_assets.core.lake.locks",
    "ACTIVE": "rag_assets.core.lake.sidecar",
    "CHUNKS": "rag_assets.core.lake.schemas",
    "Chunk": "rag_assets.core.lake.schemas",
    "DOCUMENTS": "rag_assets.core.lake.schemas",
    "Derived": "rag_assets.core.lake.parquet",
    "DocText": "rag_assets.core.lake.schemas",
    "Lake": "rag_assets.core.lake.layout",
    "LakeError": "rag_assets.core.lake.layout",
    "LakePath": "rag_assets.core.lake.layout",
    "NODES": "rag_assets.core.lake.schemas",
    "Node": "rag_assets.core.lake.schemas",
    "PAGES": "rag_assets.core.lake.schemas",
    "RawVersion": "rag_assets.core.lake.layout",
    "STATUSES": "rag_assets.core.lake.sidecar",
    "Sidecar": "rag_assets.core.lake.sidecar",
    "TABLE_ROWS": "rag_assets.core.lake.schemas",
    "content_hash": "rag_assets.core.lake.schemas",
    "file_lock": "rag_assets.core.lake.locks",
    "folder_states": "rag_assets.core.lake.listing",
    "gc_paused": "rag_assets.core.lake.listing",
    "held_lease": "rag_assets.core.lake.lease",
    "PURGE": "rag_assets.core.lake.lease",
    "json_kind": "rag_assets.core.lake.listing",
    "local_lock_path": "rag_assets.core.lake.layout",
    "path_state": "rag_assets.core.lake.listing",
    "read_stage": "rag_assets.core.lake.parquet",
    "read_stages": "rag_assets.core.lake.parquet",
    "remove_stage_files": "rag_assets.core.lake.parquet",
    "sha256_file": "rag_assets.core.lake.layout",
    "split_key": "rag_assets.core.lake.layout",
    "store_problem": "rag_assets.core.lake.layout",
    "this_process": "rag_assets.core.lake.locks",
    "validate_key_part": "rag_assets.core.lake.layout",
    "version_sha256": "rag_assets.core.lake.layout",
    "waited_lock": "rag_assets.core.lake.locks",
    "write_atomically": "rag_assets.core.lake.layout",
    "write_stage": "rag_assets.core.lake.parquet",
}


__getattr__ = lazy_names(__name__, _LAZY)
