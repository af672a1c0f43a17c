"""Helpers shared by the bench scripts: the machine, medians and percentiles, real chunks.

Nothing here times anything on its own; the scripts interleave the sides they compare
(A B, then B A, ...) and report medians of paired ratios, so that drift on a shared
machine hits both sides alike.
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TQDM_DISABLE", "1")

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # the repository's root: where the `synth` package is
    sys.path.insert(0, str(REPO))
LAKE = Path(os.environ.get("TRECHO_LAKE", REPO / "data_lake"))
SHARED_PDFS = REPO.parent / "shared" / "corpora" / "real-pdfs"


def machine() -> str:
    """One line about where the figures come from: cores, CPU model, load, versions."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return (
        f"machine: {os.cpu_count()} cores ({model}), load average {load}, "
        f"Python {platform.python_version()}"
    )


def versions_line() -> str:
    """Versions of the libraries whose speed is measured."""
    from importlib.metadata import PackageNotFoundError, version

    names = ("torch", "sentence-transformers", "lancedb", "pdfplumber", "pdfminer.six")
    out = []
    for name in names:
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return "libraries: " + ", ".join(out)


def median(values: Sequence[float]) -> float:
    """Median of a non-empty sequence."""
    return float(statistics.median(values))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of a non-empty sequence, by linear interpolation."""
    data = sorted(values)
    if len(data) == 1:
        return float(data[0])
    pos = (len(data) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def spread(values: Sequence[float]) -> str:
    """`median (min-max)` of ratios, two decimals."""
    return f"{median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds an action took, and what it returned."""
    start = time.perf_counter()
    out = action()
    return time.perf_counter() - start, out


def clocked(action: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall seconds, CPU seconds of this process (all its threads), and the result.

    On a shared machine the wall time also counts the time other processes held the
    cores; the process CPU time mostly does not, so a ratio of CPU times is a second,
    steadier reading of the same comparison (it misses waits on I/O and locks)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = action()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def rotated(items: Sequence[Any], shift: int) -> list[Any]:
    """`items` rotated left by `shift`: each round starts with a different side."""
    shift %= max(1, len(items))
    return [*items[shift:], *items[:shift]]


def first_pages(files: Iterable[Path], count: int = 5) -> Iterator[Any]:
    """The first `count` pdfplumber pages of each PDF, skipping the files and pages that
    cannot be read (the encrypted and malformed ones of the real-world corpus)."""
    import pdfplumber

    for path in files:
        try:
            pdf = pdfplumber.open(path)
        except Exception:  # noqa: BLE001
            continue
        with pdf:
            for page in pdf.pages[:count]:
                try:
                    page.chars  # noqa: B018 - parsed here, so a broken page is skipped
                except Exception:  # noqa: BLE001
                    continue
                yield page


def header(title: str, args: Any) -> None:
    """Print what is measured, with the machine and the options."""
    print(f"== {title}")
    print(machine())
    print(versions_line())
    opts = ", ".join(f"{k}={v}" for k, v in sorted(vars(args).items()))
    print(f"options: {opts}")
    print(
        "Ratios are medians over interleaved rounds (A B / B A ...); absolute times are "
        "medians too, and drift with the machine's load."
    )
    sys.stdout.flush()


def load_chunk_frames(quick: bool = False) -> dict[str, Any]:
    """Real chunks per version (polars DataFrames with the CHUNKS columns).

    Read from `<lake>/derived/chunks/*.parquet` when the lake has been materialized;
    otherwise the sample PDFs of `<lake>/raw` are extracted and chunked with the default
    policy through the core API (slower: a minute or two).
    """
    import polars as pl

    from rag_assets.core import stages
    from rag_assets.core.lake.schemas import CHUNKS

    folder = LAKE / "derived" / stages.FOLDERS[stages.CHUNKS]
    files = sorted(folder.glob("*.parquet"))
    frames: dict[str, Any] = {}
    for path in files:
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # a file being rewritten by a concurrent run
            print(f"  (skipped {path.name}: {exc})")
            continue
        if frame.height and set(CHUNKS.names) <= set(frame.columns):
            frames[path.stem] = frame.select(CHUNKS.names)
    if frames:
        return frames
    print(f"  no chunk files under {folder}: chunking the raw PDFs")
    return chunk_raw_pdfs(quick)


def chunk_raw_pdfs(quick: bool = False) -> dict[str, Any]:
    """The default policy's chunks of every PDF under `<lake>/raw`, via the core API."""
    import polars as pl
    import pyarrow as pa

    from rag_assets.core.chunking import Policy, PolicyChunker
    from rag_assets.core.corpus import source_from_pdf
    from rag_assets.core.embedding.embedder import Embedder
    from rag_assets.core.lake.layout import make_key
    from rag_assets.core.lake.schemas import CHUNKS
    from rag_assets.core.lake.sidecar import Sidecar

    embedder = Embedder()
    counter = embedder.token_counter()
    chunker = PolicyChunker(Policy(), embedder)
    frames: dict[str, Any] = {}
    pdfs = sorted((LAKE / "raw").glob("*/*.pdf"))
    if quick:
        pdfs = sorted(pdfs, key=lambda p: p.stat().st_size)[:2]
    for pdf in pdfs:
        key = make_key(pdf.parent.name, pdf.stem)
        source = source_from_pdf(pdf, key, Sidecar.read(pdf.with_suffix(".yaml")))
        chunks = chunker(source, counter)
        table = pa.Table.from_pylist([c.as_row() for c in chunks], schema=CHUNKS)
        frames[key] = pl.from_arrow(table)
    return frames
