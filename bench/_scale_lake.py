"""The lakes `bench/scale.py` measures.

- `layout(n)`: n document versions over documents of one to four versions each, some
  revoked, the older ones superseded by the newest in force: the same shape for both
  lakes below, so their figures compare.
- `write_real_corpus`: those versions as small real PDFs (the sample-corpus generator's
  renderer, `scripts/make_sample_corpus.py`) with their sidecars, for the real CLI.
- `execute_index_run`: the index job for one version in a process of its own, as a run
  worker starts it (the Dask benches).
- `synthesize`: the state `trecho materialize` leaves on those versions, written at the
  Parquet, LanceDB and Dagster level with no PDF read and nothing embedded: placeholder
  raw files, every live version's derived files, its rows (random unit vectors) in the
  model's table and the embedding cache, the removal ledger of the versions not live,
  the Dagster instance's dynamic partitions and one materialization per stage and version
  carrying the code version it ran with. The planning paths (status, the sensor tick,
  a no-change rerun, the reconcile plan) then see an indexed lake of that size.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import importlib.util
import json
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import yaml

from rag_assets.core.lake.layout import Lake, sha256_file
from rag_assets.core.lake.parquet import write_stage
from rag_assets.core.lake.schemas import (
    CHUNKS,
    DOCUMENTS,
    NODES,
    PAGES,
    TABLE_ROWS,
    content_hash,
)
from rag_assets.core.stages import FOLDERS, PIPELINE

REPO = Path(__file__).resolve().parents[1]
START = dt.date(2019, 1, 7)
CHUNKS_PER_VERSION = 8
PLACEHOLDER_BYTES = 12_000
"""About what a one-page sample PDF weighs (the real ones below: 10-20 kB)."""


@dataclass(frozen=True)
class VersionSpec:
    """One version of the layout and what the steady state makes of it."""

    doc_id: str
    number: int
    valid_from: dt.date
    status: str
    live: bool
    reason: str
    """Why it is not live (empty when live): `revoked` or `superseded by <key>`."""

    @property
    def version(self) -> str:
        """The version name (`v3`)."""
        return f"v{self.number}"

    @property
    def key(self) -> str:
        """The partition key."""
        return f"{self.doc_id}@{self.version}"

    def sidecar(self) -> dict[str, Any]:
        """The version's sidecar."""
        return {
            "title": f"Norma {self.doc_id}",
            "valid_from": self.valid_from,
            "status": self.status,
            "type": "norma",
            "metadata": {"owner": f"area-{int(self.doc_id[4:]) % 7}"},
        }


def layout(n: int) -> list[VersionSpec]:
    """`n` versions: document i has 1, 2, 1 or 3 versions (i mod 4), each in force 200
    days after the one before; the newest version of every tenth document is revoked,
    and every twentieth document is a single revoked version. The newest version not
    revoked is live; the older ones are superseded by it."""
    out: list[VersionSpec] = []
    i = 0
    while len(out) < n:
        doc = f"doc-{i:05d}"
        count = min((1, 2, 1, 3)[i % 4], n - len(out))
        revoked = {count} if i % 10 == 7 or (i % 20 == 4 and count == 1) else set()
        starts = {j: START + dt.timedelta(days=200 * j + i % 30) for j in range(1, count + 1)}
        kept = [j for j in starts if j not in revoked]
        newest = max(kept) if kept else None
        for j, start in starts.items():
            if j in revoked:
                live, reason = False, "revoked"
            elif j == newest:
                live, reason = True, ""
            else:
                live, reason = False, f"superseded by {doc}@v{newest}"
            status = "revoked" if j in revoked else "active"
            out.append(VersionSpec(doc, j, start, status, live, reason))
        i += 1
    return out


def paragraphs(spec: VersionSpec) -> list[tuple[str, str]]:
    """The version's sections (heading, text): most text is shared by the versions of a
    document (the embedding cache serves it again), one sentence names the version."""
    doc = spec.doc_id
    out = []
    for s in range(1, CHUNKS_PER_VERSION + 1):
        days = 10 + s + (spec.number if s == 3 else 0)
        text = (
            f"A seção {s} da norma {doc} trata do controle {s} da área responsável. "
            f"O prazo de revisão do controle {s} é de {days} dias, contados da última "
            f"auditoria registrada pela equipe de conformidade do documento {doc}."
        )
        if s == 1:
            text += f" Esta é a versão {spec.number}, em vigor desde {spec.valid_from}."
        out.append((f"{s}. Controle {s}", text))
    return out


def write_sidecar(path: Path, spec: VersionSpec) -> None:
    """The version's YAML sidecar."""
    path.write_text(yaml.safe_dump(spec.sidecar(), sort_keys=False), encoding="utf-8")


def _corpus_module() -> Any:
    """scripts/make_sample_corpus.py, loaded once from its path (scripts/ is no package)."""
    if "make_sample_corpus" in sys.modules:
        return sys.modules["make_sample_corpus"]
    path = REPO / "scripts" / "make_sample_corpus.py"
    spec = importlib.util.spec_from_file_location("make_sample_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["make_sample_corpus"] = module
    spec.loader.exec_module(module)
    return module


def render_pdf(spec: VersionSpec, changed: str = "") -> bytes:
    """A one-page PDF of the version, by the sample-corpus generator's renderer; with
    `changed` (a mark of the change), one sentence differs (a new file at the same key)."""
    corpus = _corpus_module()
    blocks: list[tuple[Any, ...]] = [
        ("title", f"Norma {spec.doc_id}"),
        ("label", f"Versão {spec.number}"),
    ]
    for heading, text in paragraphs(spec):
        blocks += [("h2", heading), ("p", text + (f" Texto revisto {changed}." if changed else ""))]
    sidecar = {"title": f"Norma {spec.doc_id}", "metadata": {"owner": "bench"}}
    manual = corpus.ManualSpec(spec.doc_id, spec.version, sidecar, f"Norma {spec.doc_id}")
    manual.blocks = blocks
    return corpus.render(manual)


def write_real_corpus(root: Path, specs: Sequence[VersionSpec]) -> int:
    """Every version of `specs` as a real PDF and its sidecar under `root/raw`; bytes
    written."""
    total = 0
    for spec in specs:
        pdf = root / "raw" / spec.doc_id / f"{spec.version}.pdf"
        pdf.parent.mkdir(parents=True, exist_ok=True)
        data = render_pdf(spec)
        pdf.write_bytes(data)
        write_sidecar(pdf.with_suffix(".yaml"), spec)
        total += len(data)
    (root / "eval").mkdir(parents=True, exist_ok=True)
    return total


def placeholder(spec: VersionSpec) -> bytes:
    """Bytes standing for a version's PDF (never opened: every version is up to date)."""
    seed = hashlib.sha256(spec.key.encode()).digest()
    body = (seed * (PLACEHOLDER_BYTES // len(seed) + 1))[:PLACEHOLDER_BYTES]
    return b"%PDF-1.4\n% synthetic " + spec.key.encode() + b"\n" + body + b"\n%%EOF\n"


def write_raw(root: Path, specs: Sequence[VersionSpec]) -> None:
    """A raw lake not indexed yet: a placeholder PDF and the sidecar of every version."""
    for spec in specs:
        pdf = root / "raw" / spec.doc_id / f"{spec.version}.pdf"
        pdf.parent.mkdir(parents=True, exist_ok=True)
        pdf.write_bytes(placeholder(spec))
        write_sidecar(pdf.with_suffix(".yaml"), spec)
    (root / "eval").mkdir(parents=True, exist_ok=True)


def _chunk_rows(spec: VersionSpec) -> list[dict[str, Any]]:
    """The version's chunks as the default policy would leave them (one per section)."""
    rows, offset = [], 0
    title = f"Norma {spec.doc_id}"
    for ordinal, (heading, body) in enumerate(paragraphs(spec)):
        header = f"{title} > {heading}"
        text = f"{header}\n{body}"
        rows.append(
            {
                "chunk_id": f"{spec.key}#c{ordinal}",
                "partition_key": spec.key,
                "doc_id": spec.doc_id,
                "version": spec.version,
                "strategy": "policy",
                "parent_id": f"{spec.key}#n{ordinal}",
                "ordinal": ordinal,
                "kind": "section",
                "path": heading,
                "header": header,
                "body": body,
                "text": text,
                "token_count": len(text.split()),
                "truncated": False,
                "char_start": offset,
                "char_end": offset + len(body),
                "page_start": 1,
                "page_end": 1,
                "content_hash": content_hash(text),
            }
        )
        offset += len(body) + 1
    return rows


def _write_derived(lake: Lake, spec: VersionSpec, sha: str) -> list[dict[str, Any]]:
    """A live version's five Parquet files; returns its chunk rows."""
    chunks = _chunk_rows(spec)
    key = spec.key
    text = "\n".join(row["body"] for row in chunks)
    sidecar = spec.sidecar()
    document = {
        "partition_key": key,
        "doc_id": spec.doc_id,
        "version": spec.version,
        "title": sidecar["title"],
        "source_path": f"raw/{spec.doc_id}/{spec.version}.pdf",
        "sha256": sha,
        "n_pages": 1,
        "status": spec.status,
        "valid_from": spec.valid_from,
        "valid_to": None,
        "ingested_at": dt.datetime.now(dt.UTC),
        "doc_type": sidecar["type"],
        "metadata_json": json.dumps(sidecar["metadata"], ensure_ascii=False, default=str),
    }
    page = {
        "partition_key": key,
        "page": 1,
        "text": text,
        "char_start": 0,
        "has_text_layer": True,
        "ocr": False,
        "lines": [],
        "tables": [],
        "rotation": 0,
        "columns": False,
    }
    nodes = [
        {
            "node_id": row["parent_id"],
            "partition_key": key,
            "parent_id": None,
            "kind": "section",
            "label": str(row["ordinal"] + 1),
            "title": row["path"],
            "level": 1,
            "ordinal": row["ordinal"],
            "text": row["body"],
            "page_start": 1,
            "page_end": 1,
            "char_start": row["char_start"],
            "char_end": row["char_end"],
        }
        for row in chunks
    ]
    write_stage(lake, FOLDERS["raw_pdf"], key, [document], DOCUMENTS)
    write_stage(lake, FOLDERS["page_text"], key, [page], PAGES)
    write_stage(lake, FOLDERS["structure_tree"], key, nodes, NODES)
    write_stage(lake, FOLDERS["linearized_tables"], key, [], TABLE_ROWS)
    write_stage(lake, FOLDERS["chunks"], key, chunks, CHUNKS)
    return chunks


def _vectors(hashes: Sequence[str], dim: int) -> np.ndarray:
    """One random unit vector per text hash, the same for the same hash."""
    out = np.empty((len(hashes), dim), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = np.random.default_rng(int(h, 16)).standard_normal(dim)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _write_index(db: Path, embedder: Any, rows: list[dict[str, Any]], specs: dict) -> None:
    """The model's table (one commit per 100 versions, then the indexes built as
    `trecho materialize` leaves them), the embedding cache and the active-model pointer."""
    from rag_assets.core.index import Index, ModelRef, store_schema, write_active
    from rag_assets.core.index.cache import EmbeddingCache

    dim = embedder.dimension
    hashes = sorted({row["content_hash"] for row in rows})
    vectors = _vectors(hashes, dim)
    by_hash = {h: i for i, h in enumerate(hashes)}
    index = Index(db, embedder)
    step = 100 * CHUNKS_PER_VERSION
    for start in range(0, len(rows), step):
        part = rows[start : start + step]
        columns = {name: [row[name] for row in part] for name in CHUNKS.names}
        spec_of = [specs[row["partition_key"]] for row in part]
        flat = vectors[[by_hash[row["content_hash"]] for row in part]].reshape(-1)
        columns["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(flat), dim)
        columns["status"] = [s.status for s in spec_of]
        columns["valid_from"] = [s.valid_from for s in spec_of]
        columns["valid_to"] = [None] * len(part)
        columns["title"] = [f"Norma {s.doc_id}" for s in spec_of]
        table = pa.table(columns, schema=store_schema(dim))
        if start == 0:
            index.db.create_table(index.table_name, table)
        else:
            index.db.open_table(index.table_name).add(table)
    index.update_indexes(max_lag_rows=0)
    EmbeddingCache(db, embedder).add(hashes, vectors)
    write_active(db, ModelRef.of(embedder))


def _record_materializations(instance: Any, keys: Sequence[str], code: dict[str, str]) -> None:
    """One materialization per stage and version, tagged with the code version it ran
    with, in the instance's asset index (what the reconcile plan reads back).

    Written with Dagster's own insert statements in one transaction: the public
    `report_runless_asset_event` stores one at a time (13 ms each here, 8 minutes for a
    10,000-version lake); runs write the same records."""
    from dagster import AssetMaterialization
    from dagster._core.events import DagsterEvent, DagsterEventType, StepMaterializationData
    from dagster._core.events.log import EventLogEntry
    from dagster._core.instance.utils import RUNLESS_JOB_NAME, RUNLESS_RUN_ID

    storage = instance.event_log_storage
    now = dt.datetime.now(dt.UTC).timestamp()
    with storage.index_transaction() as conn:
        for stage in PIPELINE:
            for key in keys:
                materialization = AssetMaterialization(
                    asset_key=stage, partition=key, tags={"dagster/code_version": code[stage]}
                )
                event = DagsterEvent(
                    event_type_value=DagsterEventType.ASSET_MATERIALIZATION.value,
                    job_name=RUNLESS_JOB_NAME,
                    event_specific_data=StepMaterializationData(materialization),
                )
                entry = EventLogEntry(
                    user_message="",
                    level=20,
                    job_name=RUNLESS_JOB_NAME,
                    run_id=RUNLESS_RUN_ID,
                    error_info=None,
                    timestamp=now,
                    dagster_event=event,
                )
                event_id = conn.execute(storage.prepare_insert_event(entry)).inserted_primary_key[0]
                storage._store_asset_event_tags(conn, [entry], [event_id])
                storage._store_asset_event(conn, entry, event_id)


def synthesize(root: Path, specs: Sequence[VersionSpec], embedder: Any) -> dict[str, int]:
    """The steady state of an indexed lake on `specs` under `root` (see the module
    docstring); returns counts (versions, live, chunks)."""
    from dagster import DagsterInstance
    from dagster._core.instance.ref import InstanceRef

    from rag_assets.orchestration.partitions import DOC_VERSIONS
    from rag_assets.orchestration.plans import stage_code_versions

    lake = Lake(root)
    rows: list[dict[str, Any]] = []
    ledger: dict[str, Any] = {}
    removed_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    write_raw(root, specs)
    for spec in specs:
        sha = sha256_file(root / "raw" / spec.doc_id / f"{spec.version}.pdf")
        if spec.live:
            rows += _write_derived(lake, spec, sha)
        else:
            removal = {"reason": spec.reason, "removed_at": removed_at, "sha256": sha}
            history = [{"event": "removed", "at": removed_at, **removal}]
            history[0].pop("removed_at")
            ledger[spec.key] = {**removal, "removed": True, "history": history}
    lake.tombstones_path.write_text(json.dumps(ledger, indent=2, sort_keys=True) + "\n")
    live = [spec.key for spec in specs if spec.live]
    _write_index(lake.lancedb_dir, embedder, rows, {s.key: s for s in specs})
    home = lake.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n", encoding="utf-8")
    with DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        instance.add_dynamic_partitions(DOC_VERSIONS, live)
        _record_materializations(instance, live, stage_code_versions(embedder))
    return {"versions": len(specs), "live": len(live), "chunks": len(rows)}


def execute_index_run(key: str, env: dict[str, str]) -> subprocess.Popen:
    """`dagster job execute` of the index job for one version, as a run worker does."""
    command = [
        str(Path(sys.executable).with_name("dagster")),
        *("job", "execute", "-m", "rag_assets.definitions", "-a", "defs"),
        *("-j", "index_documents", "--tags", json.dumps({"dagster/partition": key})),
    ]
    return subprocess.Popen(
        command,
        env=env,
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
