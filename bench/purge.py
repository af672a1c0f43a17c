"""What removing a version's text from disk costs: a revocation that only deletes the
rows (LanceDB deletion masks: the text stays in the data files and older table versions)
against the one trecho does (delete + compaction + deletion of older versions + full-text
index rebuild), side by side on identical tables.

Rows are the lake's real chunks repeated into versions of 50 rows each, with random unit
vectors (no model needed: the cost depends on rows and text, not on what the vectors
mean). For each table size, two identical databases are built; one version is removed
from each, the two ways in alternating order, `--rounds` times; medians are reported.

    python bench/purge.py                     # 2,000 and 20,000 rows
    python bench/purge.py --sizes 5000 --rounds 2
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import header, load_chunk_frames, median, timed  # noqa: E402

from rag_assets.core.index import Removal, delete_partition_everywhere, fts_config, store_schema
from rag_assets.core.index.store import model_tables
from rag_assets.core.lake.schemas import CHUNKS  # noqa: E402

ROWS_PER_VERSION = 50
DIM = 384


def build(folder: Path, base: pa.Table, n: int, seed: int) -> None:
    """A database with one model table of `n` rows (versions of 50 rows) and its
    full-text index, written in several commits as runs would."""
    import lancedb

    rng = np.random.default_rng(seed)
    picks = rng.integers(0, base.num_rows, n)
    rows = base.take(pa.array(picks)).to_pylist()
    for i, row in enumerate(rows):
        key = f"doc{i // ROWS_PER_VERSION:05d}@v1"
        row.update(partition_key=key, doc_id=key.split("@")[0], version="v1")
        row["chunk_id"] = f"{row['chunk_id']}~{i}"
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    table = pa.Table.from_pylist(rows, schema=CHUNKS)
    extra = [
        pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), DIM),
        pa.array(["active"] * n),
        pa.array([None] * n, pa.date32()),
        pa.array([None] * n, pa.date32()),
        pa.array(["t"] * n),
    ]
    data = pa.Table.from_arrays([*table.columns, *extra], schema=store_schema(DIM))
    db = lancedb.connect(str(folder))
    step = max(1, n // 10)
    tbl = db.create_table("chunks__bench", data.slice(0, step))
    for start in range(step, n, step):  # ten commits: older versions pile up as in use
        tbl.add(data.slice(start, step))
    tbl.create_index("text", config=fts_config())


def delete_rows_only(uri: Path, key: str) -> Removal:
    """The version's rows deleted from every model's table and nothing else (LanceDB's
    deletion masks: the text stays on disk): what the purge is measured against."""
    import lancedb

    db, out = lancedb.connect(str(uri)), Removal()
    where = f"partition_key = '{key}'"
    for name in model_tables(uri):
        tbl = db.open_table(name)
        out.rows += int(tbl.count_rows(where))
        tbl.delete(where)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    header("Removing a version: rows only vs. text gone from disk", args)
    frames = load_chunk_frames(quick=True)
    base = pa.concat_tables([f.to_arrow().cast(CHUNKS) for f in frames.values()])
    print(f"  {base.num_rows} real chunks repeated; {ROWS_PER_VERSION} rows per version")
    for n in args.sizes:
        times: dict[str, list[float]] = {"rows only": [], "purged": []}
        for r in range(args.rounds):
            root = Path(tempfile.mkdtemp(prefix="trecho-purge-"))
            try:
                for side in ("rows only", "purged"):
                    build(root / side.replace(" ", "_"), base, n, seed=r)
                key = f"doc{r:05d}@v1"
                order = ["rows only", "purged"] if r % 2 == 0 else ["purged", "rows only"]
                for side in order:
                    uri = root / side.replace(" ", "_")
                    remove = delete_partition_everywhere if side == "purged" else delete_rows_only
                    seconds, removal = timed(lambda uri=uri, key=key, f=remove: f(uri, key))
                    assert removal.rows == ROWS_PER_VERSION
                    times[side].append(seconds)
            finally:
                shutil.rmtree(root, ignore_errors=True)
        rows_only, purged = median(times["rows only"]), median(times["purged"])
        ratios = [p / d for p, d in zip(times["purged"], times["rows only"], strict=True)]
        print(
            f"  {n:>7} rows: rows only {rows_only:.3f}s, purged {purged:.3f}s "
            f"(median ratio {median(ratios):.1f}x)"
        )


if __name__ == "__main__":
    main()
