"""Cold run vs rerun with nothing changed vs rerun with one clause of one document changed.

Runs `trecho materialize --skip-eval` (in this process, a temp lake and a temp Dagster
instance) on copies of the sample corpus plus a generated 30-section policy, then:

1. again with nothing changed (trecho skips up-to-date versions);
2. again with `--force` (every stage re-runs; vectors come from the embedding cache);
3. after editing one clause of the generated policy (a new file at the same key).

Prints each run's time as a share of the cold run and the number of texts embedded
(rows added to the model's embedding cache). Usage::

    python bench/rerun.py            # manuals + laws + the generated policy
    python bench/rerun.py --quick    # manuals + the generated policy
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def write_policy(path: Path, changed: bool) -> None:
    """A 30-section policy; with `changed`, one sentence of section 17 differs."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", str(FONT))
    pdf.add_page()
    pdf.set_font("DejaVu", "", 16)
    pdf.multi_cell(0, 9, "Política de Segurança da Informação", new_x="LMARGIN", new_y="NEXT")
    for n in range(1, 31):
        pdf.set_font("DejaVu", "", 13)
        pdf.multi_cell(0, 8, f"{n}. Controle {n}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", "", 10)
        days = 45 if changed and n == 17 else 30
        body = (
            f"O controle {n} exige revisão a cada {days} dias pelo responsável da área. "
            f"Os registros do controle {n} são guardados por cinco anos e auditados "
            "anualmente pela equipe de conformidade, que reporta ao comitê de riscos."
        )
        pdf.multi_cell(0, 5, body, new_x="LMARGIN", new_y="NEXT")
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(path))


def cached_vectors(lake: Path) -> int:
    """How many texts the default model's embedding cache holds."""
    from rag_assets.core.embedding.embedder import Embedder
    from rag_assets.core.index.cache import EmbeddingCache

    return EmbeddingCache(lake / "lancedb", Embedder()).count()


def run(lake: Path, *extra: str) -> tuple[float, int, str]:
    """One `trecho materialize`: seconds, texts embedded, and its output."""
    from rag_assets.cli import main

    before = cached_vectors(lake)
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        code = main(["materialize", "--skip-eval", "--lake", str(lake), *extra])
    seconds = time.perf_counter() - start
    if code != 0:
        raise SystemExit(out.getvalue())
    return seconds, cached_vectors(lake) - before, out.getvalue()


def main() -> None:
    """Run the four materializations and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="manuals only (no laws)")
    args = parser.parse_args()
    docs = ["manual-operacao", "manual-beneficiario"] + ([] if args.quick else ["lgpd", "cdc"])
    with tempfile.TemporaryDirectory(prefix="trecho-bench-") as tmp:
        lake = Path(tmp) / "lake"
        for doc in docs:
            shutil.copytree(REPO / "data_lake" / "raw" / doc, lake / "raw" / doc)
        (lake / "eval").mkdir()
        policy = lake / "raw" / "politica" / "v1.pdf"
        write_policy(policy, changed=False)
        os.environ["DAGSTER_HOME"] = str(Path(tmp) / "dagster_home")
        from rag_assets.core.embedding.embedder import Embedder

        assert Embedder().max_tokens  # load the model first: every run below finds it loaded
        rows = []
        cold = run(lake)
        rows.append(("cold run", cold))
        rows.append(("rerun, nothing changed", run(lake)))
        rows.append(("rerun --force, nothing changed", run(lake, "--force")))
        write_policy(policy, changed=True)
        rows.append(("one clause of one document changed", run(lake)))
    print(f"documents: {', '.join(docs)} + politica (30 sections); machine: {os.cpu_count()} CPUs")
    print()
    print("| run | time ÷ cold | texts embedded |")
    print("|---|---:|---:|")
    for name, (seconds, embedded, _) in rows:
        print(f"| {name} | {seconds / cold[0]:.3f} ({seconds:.1f} s) | {embedded} |")


if __name__ == "__main__":
    main()
