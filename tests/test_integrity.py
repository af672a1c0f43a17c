"""Nothing corrupts, nothing phones home, nothing misleads (issue 34): commands started at
once on one lake, hostile PDFs, what leaves the machine, and status lines that tell the
truth. Real `trecho` processes on real lakes; hostile PDFs written byte by byte."""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
from pathlib import Path

import pytest

from .conftest import REPO, copy_lake
from .test_serve import Server, free_port, serve_env


def trecho(*args: str, **env: str) -> subprocess.Popen[str]:
    """A `trecho` command in its own process, output captured."""
    return subprocess.Popen(
        [sys.executable, "-m", "rag_assets.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=serve_env(**env),
        cwd=REPO,
    )


def alembic_heads(home: Path) -> dict[str, list[str]]:
    """The migration heads stamped in each SQLite database of a Dagster home."""
    heads: dict[str, list[str]] = {}
    for db in sorted(home.rglob("*.db")):
        with sqlite3.connect(db) as connection:
            tables = {r[0] for r in connection.execute("select name from sqlite_master")}
            if "alembic_version" in tables:
                rows = connection.execute("select version_num from alembic_version").fetchall()
                heads[db.name] = [r[0] for r in rows]
    return heads


@pytest.mark.slow
def test_three_first_runs_at_once_share_one_sound_instance(tmp_path: Path) -> None:
    """Three `trecho materialize` on a new lake at the same moment: the instance is made
    once, the commands take turns (the waiting ones say on which lock), none prints a
    traceback, and the instance serves the next command."""
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    args = ("materialize", "--skip-eval", "--lake", str(lake.root))
    started = [trecho(*args) for _ in range(3)]
    done = [(p.wait(timeout=900), *p.communicate()) for p in started]
    for code, out, err in done:
        assert code == 0, out + err
        assert "Traceback" not in err, err
    assert sum("[1/1] manual-operacao@v1 ... ok" in out for _, out, _ in done) == 1
    waited = [err for _, _, err in done if "waiting for the lock" in err]
    assert len(waited) == 2
    assert all(str(lake.root / ".trecho-runs.lock") in err for err in waited)
    heads = alembic_heads(lake.root / ".dagster")
    assert {"runs.db", "schedules.db"} <= set(heads)
    assert all(len(found) == 1 for found in heads.values()), heads
    again = trecho(*args)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, out + err
    assert "up to date" in out


# -- nothing leaves the machine ---------------------------------------------------------

LOCAL = re.compile(
    r"sa_family=AF_UNIX"
    r"|sa_family=AF_INET, sin_port=htons\(\d+\), sin_addr=inet_addr\(\"127\."
    r"|sa_family=AF_INET6, sin6_port=htons\(\d+\), [^)]*inet_pton\(AF_INET6, \"(::1|::ffff:127\.)"
)
"""A `connect` strace prints for a socket that stays on this machine."""


def traced(log: Path, *args: str, home: Path) -> subprocess.Popen[str]:
    """A `trecho` command under `strace -f -e trace=connect` (every process it starts
    followed), with the product's default model (OpenVINO's path where the CPU has it)
    and `home` as its home folder."""
    env = {k: v for k, v in serve_env(HOME=str(home)).items() if k != "TRECHO_MODEL"}
    strace = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(log)]
    return subprocess.Popen(
        [*strace, sys.executable, "-m", "rag_assets.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
        start_new_session=True,
    )


def remote_connections(log: Path) -> list[str]:
    """The `connect` calls of a strace log to anything but a unix or loopback socket."""
    calls = [line for line in log.read_text().splitlines() if " connect(" in line]
    return [line for line in calls if not LOCAL.search(line)]


@pytest.mark.slow
def test_status_materialize_and_a_served_search_connect_to_nothing_outside(
    tmp_path: Path,
) -> None:
    """No DNS query, no usage report: every socket the commands open is a unix socket or
    loopback; no client id lands in the home folder; LanceDB never warns of a fork."""
    assert shutil.which("strace"), "strace is missing: scripts/setup.sh installs it"
    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    home = tmp_path / "home"
    home.mkdir()
    for command in (("materialize", "--skip-eval"), ("status",)):
        log = tmp_path / f"{command[0]}.strace"
        process = traced(log, *command, "--lake", str(lake.root), home=home)
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, out + err
        assert remote_connections(log) == [], command
        assert "fork" not in err, err
    log = tmp_path / "serve.strace"
    port = free_port()
    serve = ("serve", "--lake", str(lake.root), "--port", str(port))
    process = traced(log, *serve, home=home)
    server = Server(f"http://127.0.0.1:{port}", process, log)  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 300
        while True:
            assert process.poll() is None and time.monotonic() < deadline
            try:
                server.call("GET", "/health")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        status, answer = server.call("POST", "/search", {"query": "limite de vibração"})
        assert status == 200 and answer["hits"]
    finally:
        os.killpg(process.pid, signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert remote_connections(log) == []
    assert "fork" not in err, err
    assert not (home / "intel").exists()  # OpenVINO's client id and stats
    assert not (home / ".cache" / "Microsoft").exists()  # ONNX Runtime's device id, events


# -- bounded memory for any PDF ---------------------------------------------------------

PEAK = """
import re, sys
from pathlib import Path
from rag_assets.core.extract import PdfError, extract
for name in sys.argv[1:]:
    try:
        extract(Path(name))
        print("read", name)
    except PdfError as exc:
        print(str(exc))
status = Path("/proc/self/status").read_text()
print(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1))
"""
"""Read hostile PDFs in a fresh process and print its peak resident memory (`VmHWM`, this
program's own: `ru_maxrss` would count the forking test process, folded in at exec)."""


def peak_run(*paths: str | Path) -> subprocess.CompletedProcess[str]:
    """`PEAK` run on `paths` in a fresh process: a line per PDF, then the peak (kB)."""
    return subprocess.run(
        [sys.executable, "-c", PEAK, *map(str, paths)],
        capture_output=True,
        text=True,
        env=serve_env(),
        cwd=REPO,
        timeout=600,
    )


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    """One of each hostile PDF."""
    from synth.hostile import giant_image, huge_page, inflating_stream

    folder = tmp_path_factory.mktemp("hostile")
    return {
        "huge": huge_page(folder / "huge.pdf"),
        "user_unit": huge_page(folder / "user-unit.pdf", 14400, user_unit=75000),
        "inflating": inflating_stream(folder / "inflating.pdf", 96),
        "giant_image": giant_image(folder / "giant-image.pdf"),
    }


def test_hostile_pdfs_fail_with_one_line_each_in_bounded_memory(
    hostile: dict[str, Path],
) -> None:
    """A 200-inch page (with or without /UserUnit), a stream inflating past the limit and
    an image declaring 40 billion pixels: each fails with one line naming the file and
    the limit, and the process never grows past a few hundred megabytes (the 200-inch
    page took 6.3 GB and 74 s before the render cap)."""
    files = [str(p) for p in hostile.values()]
    done = peak_run(*files)
    assert done.returncode == 0, done.stderr
    *lines, peak = done.stdout.splitlines()
    assert len(lines) == 4
    huge, user_unit, inflating, giant = lines
    assert huge.startswith(f"{hostile['huge']}: page 1 is 200 x 200 inches")
    assert "under the 70 dpi text needs" in huge
    assert user_unit.startswith(
        f"{hostile['user_unit']}: page 1 is 15,000,000 x 15,000,000 inches "
        "(14,400 x 14,400 units of /UserUnit 75000)"
    )
    assert inflating.startswith(f"{hostile['inflating']}: stream 4 inflates to over 67,108,864")
    assert giant.startswith(f"{hostile['giant_image']}: page 1 holds an image of 200,000 x")
    assert int(peak) < 600_000  # kilobytes


def test_a_large_page_is_read_by_ocr_at_a_resolution_within_the_pixel_cap(
    tmp_path: Path,
) -> None:
    """A 3,000-point page (with a /UserUnit pdfium and pdfplumber ignore as well) is
    rendered at the resolution that fits the cap, not at 200 dpi (35 million pixels)."""
    import pdfplumber
    from PIL import Image

    from rag_assets.core.extract.ocr import _render, ocr_dpi
    from rag_assets.core.layout.render import MAX_RENDER_PIXELS
    from synth.hostile import huge_page

    path = huge_page(tmp_path / "large.pdf", 3000, user_unit=10)
    with pdfplumber.open(path) as pdf:
        dpi = ocr_dpi(path, pdf.pages[0], 1, 200)
        image = _render(pdf.pages[0], dpi, tmp_path, 1)
    width, height = Image.open(image).size
    assert 70 <= dpi < 200
    assert width * height <= MAX_RENDER_PIXELS
    assert width == pytest.approx(3000 / 72 * dpi, abs=2)


@pytest.mark.parametrize(("unit", "inches"), [(None, "200 x 200"), (75000, "15,000,000 x")])
def test_the_page_size_refused_is_said_in_inches_with_its_user_unit(
    tmp_path: Path, unit: float | None, inches: str
) -> None:
    """A page of 14,400 units at /UserUnit 75000 is 15 million inches wide; the message
    said 200 inches (the units read as points)."""
    import pdfplumber

    from rag_assets.core.extract.model import PdfError
    from rag_assets.core.extract.ocr import ocr_dpi
    from synth.hostile import huge_page

    path = huge_page(tmp_path / "huge.pdf", 14400, user_unit=unit)
    with pdfplumber.open(path) as pdf, pytest.raises(PdfError) as refused:
        ocr_dpi(path, pdf.pages[0], 1, 200)
    said = f" (14,400 x 14,400 units of /UserUnit {unit})" if unit else ""
    assert str(refused.value).startswith(f"{path}: page 1 is {inches}")
    assert f"inches{said}; within the cap" in str(refused.value)


def text_pdf(path: Path, pages: int) -> Path:
    """A PDF of `pages` A4 pages, each holding about 3,000 characters of prose."""
    from fpdf import FPDF

    words = "contrato cliente prazo valor pagamento entrega garantia multa parte".split()
    pdf = FPDF(format="A4")
    for number in range(pages):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 14)
        pdf.cell(0, 8, f"{number + 1}. Disposições", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        for paragraph in range(6):
            text = " ".join(words[(number + paragraph + i) % len(words)] for i in range(80))
            pdf.multi_cell(0, 5, text + ".", new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_memory_to_read_a_pdf_does_not_grow_with_its_pages(tmp_path: Path) -> None:
    """A 60-page text PDF is read in about the memory of one page: each page's parsed
    objects are let go once it is read (kept, they took ~7.5 MB a page: 0.54 GB for these
    60 pages, 1.67 GB for 200, before)."""
    path = text_pdf(tmp_path / "long.pdf", 60)
    done = peak_run(path)
    assert done.returncode == 0, done.stderr
    line, peak = done.stdout.splitlines()
    assert line == f"read {path}"
    assert int(peak) < 250_000  # kilobytes


def test_a_page_drawing_too_much_is_refused_by_page_in_bounded_memory(tmp_path: Path) -> None:
    """A page drawing ten million glyphs from 3 KB (forms drawing forms) and a page of
    110,000 glyphs are each refused with one line naming the file and the page once the
    page passes `MAX_PAGE_OBJECTS` (before, the first was laid out glyph by glyph, about
    2 KB a glyph, and the second read at ~330 MB)."""
    from synth.hostile import nested_forms

    forms = nested_forms(tmp_path / "forms.pdf")
    lines = "\n".join(f"{i} " + "prazo valor multa " * 19 for i in range(320))
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format=(7200, 7200))
    pdf.set_font("Helvetica", size=10)
    pdf.add_page()
    pdf.cell(0, 12, "Page one, read.")
    pdf.add_page()
    pdf.multi_cell(0, 12, lines)
    pdf.output(str(tmp_path / "dense.pdf"))
    dense = tmp_path / "dense.pdf"
    done = peak_run(forms, dense)
    assert done.returncode == 0, done.stderr
    *lines_out, peak = done.stdout.splitlines()
    limit = "characters, paths and images (the limit of one page); the PDF is refused"
    assert lines_out == [
        f"{forms}: page 1 draws over 100,000 {limit}",
        f"{dense}: page 2 draws over 100,000 {limit}",
    ]
    assert int(peak) < 600_000  # kilobytes


def test_stream_sizes_are_measured_without_inflating_them_whole() -> None:
    """`inflated_size` counts exactly up to the limit and stops just past it."""
    import zlib

    from rag_assets.core.extract.bounds import inflated_size

    data = zlib.compress(b"x" * (5 << 20) + b"end")
    assert inflated_size(data, 10 << 20) == (5 << 20) + 3
    assert (1 << 20) < inflated_size(data, 1 << 20) <= (2 << 20)
    assert inflated_size(b"not zlib", 100) == 0


# -- status that tells the truth --------------------------------------------------------


def run_closed(*args: str) -> subprocess.CompletedProcess[str]:
    """A `trecho` command whose stdout reader is gone before it starts (`| head -0`)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "rag_assets.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=serve_env(),
            cwd=REPO,
            timeout=900,
        )
    finally:
        os.close(write_end)


def status_lines(lake_root: Path) -> dict[str, str]:
    """`trecho status`'s live lines, by key: the rest of the line after the key."""
    process = trecho("status", "--lake", str(lake_root))
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, out + err
    lines = [line.split(None, 2) for line in out.splitlines() if line.startswith("  live ")]
    return {key: rest for _, key, rest in lines}


@pytest.mark.slow
def test_status_names_a_replaced_file_and_why_a_run_failed(tmp_path: Path) -> None:
    """A run whose reader left goes on to the end; a file replaced since it was indexed
    reads `changed, not yet indexed` with both hashes; a failed run's reason shows."""
    from rag_assets.core.lake.layout import sha256_file
    from synth.hostile import huge_page, inflating_stream

    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    pdf = lake.root / "raw" / "manual-operacao" / "v1.pdf"
    (lake.root / "raw" / "poster").mkdir()
    poster = huge_page(lake.root / "raw" / "poster" / "v1.pdf")
    done = run_closed("materialize", "--skip-eval", "--lake", str(lake.root))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr  # one failed
    assert "Failed: poster@v1" in done.stderr
    first = status_lines(lake.root)
    assert first["manual-operacao@v1"].endswith("chunks  indexed")  # not abandoned
    assert first["poster@v1"].endswith(
        f"FAILED (not indexed): {poster}: page 1 is 200 x 200 inches; within the cap of 16,000,000 "
        "pixels OCR would read it at 20 dpi, under the 70 dpi text needs; the PDF is refused"
    )
    old = sha256_file(pdf)
    inflating_stream(pdf, 80)
    new = sha256_file(pdf)
    changed = f"changed, not yet indexed (indexed {old[:12]}, now {new[:12]})"
    assert status_lines(lake.root)["manual-operacao@v1"].endswith(changed)
    process = trecho("materialize", "--skip-eval", "--lake", str(lake.root))
    out, err = process.communicate(timeout=600)
    assert process.returncode == 1 and "Traceback" not in err
    assert status_lines(lake.root)["manual-operacao@v1"].endswith(
        f"{changed}; its run failed: {pdf}: stream 4 inflates to over 67,108,864 bytes (the limit "
        "of one stream's content); the PDF is refused"
    )


@pytest.mark.parametrize(
    ("memo", "said"),
    [
        ({"entries": []}, "its entries are an array, not an object"),
        ({"entries": {"sha256": ["not", "an object"]}}, "of 'sha256' are not an object"),
        ({"entries": "x"}, "its entries are a string, not an object"),
        ({"entries": 3}, "its entries are a number, not an object"),
        ([1, 2], "memo is discarded"),
        ("{not json", "memo is discarded"),
    ],
)
def test_a_memo_of_the_wrong_shape_is_rebuilt_with_one_warning(
    tmp_path: Path, memo: object, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, an `entries` that was no object failed every command (AttributeError)
    and the file was never rewritten."""
    import json

    from rag_assets.core.lake.layout import Lake
    from rag_assets.core.lake.listing import MEMO_FORMAT, MEMO_NAME

    lake = copy_lake(tmp_path / "lake", ["manual-operacao"], [])
    path = lake.local_cache_dir / MEMO_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    shaped = (
        {"format": MEMO_FORMAT, "root": str(lake.root), **memo} if isinstance(memo, dict) else memo
    )
    path.write_text(shaped if isinstance(shaped, str) else json.dumps(shaped))
    with caplog.at_level("WARNING"):
        fresh = Lake(lake.root)
        assert fresh.memo.get("sha256", "manual-operacao@v1", "1:2:3:4") is None
        fresh.memo.save()
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "memo is discarded and rebuilt" in warnings[0]
    assert str(path) in warnings[0] and said in warnings[0]  # in words: "a number", never "a int"
    rewritten = json.loads(path.read_text())
    assert rewritten["format"] == MEMO_FORMAT and isinstance(rewritten["entries"], dict)
    with caplog.at_level("WARNING"):
        caplog.clear()
        Lake(lake.root).memo.get("sha256", "manual-operacao@v1", None)
    assert not caplog.records  # rebuilt once, quiet after


def test_a_sidecar_naming_a_key_twice_is_refused_by_name(tmp_path: Path) -> None:
    """YAML takes the last of two `valid_to` without a word; the sidecar is refused."""
    from rag_assets.core.lake.layout import LakeError
    from rag_assets.core.lake.sidecar import Sidecar

    path = tmp_path / "v1.yaml"
    path.write_text("title: Manual\nvalid_to: 2024-12-31\nstatus: active\nvalid_to: 2030-01-01\n")
    with pytest.raises(
        LakeError, match=r"v1.yaml: sidecar key 'valid_to' is given twice \(lines 2 and 4\)"
    ):
        Sidecar.read(path)
    path.write_text("metadata: {owner: a, owner: b}\n")
    with pytest.raises(LakeError, match="sidecar key 'owner' is given twice"):
        Sidecar.read(path)
    path.write_text("title: Manual\nmetadata: {owner: a, unit: b}\n")
    assert Sidecar.read(path).metadata == {"owner": "a", "unit": "b"}
