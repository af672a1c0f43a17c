"""What lets `trecho serve` and `trecho mcp` answer about a second after start: the code
they run before listening imports none of the heavy libraries (LanceDB, torch, polars,
the chunkers); those load on the engine's background thread (serve/boot.py). The
servers themselves, answering while they load, are tested in tests/test_serve.py."""

from __future__ import annotations

import subprocess
import sys

from .conftest import REPO

HEAVY = ("lancedb", "torch", "polars", "sentence_transformers", "rag_assets.core.index")

CHECK = f"""
import sys
import rag_assets.cli, rag_assets.serve.api, rag_assets.serve.boot, rag_assets.serve.mcp_server
print(" ".join(m for m in {HEAVY!r} if m in sys.modules) or "none")
"""


def test_the_servers_code_before_listening_imports_nothing_heavy() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"},
        check=True,
    )
    assert out.stdout.strip() == "none", out.stdout


def test_the_engine_is_still_had_from_the_package() -> None:
    from rag_assets import serve
    from rag_assets.serve.engine import Engine

    assert serve.Engine is Engine
