"""scripts/setup.sh's two profiles as the make targets and CI use them: `make demo` sets up
what trecho runs, `make test` and `.ci/run` what the tests need too (docs/development.md,
"Setup profiles"). The installs themselves are timed by bench/demo_clone.py on fresh
clones; here, what can be checked without installing."""

from __future__ import annotations

import re
import subprocess

from .conftest import REPO


def make_dry_run(target: str) -> str:
    """The commands `make -n TARGET` would run."""
    out = subprocess.run(
        ["make", "-n", target], cwd=REPO, capture_output=True, text=True, check=True
    )
    return out.stdout


def test_make_demo_sets_up_the_demo_profile_and_make_test_the_test_profile() -> None:
    assert "bash scripts/setup.sh demo" in make_dry_run("demo")
    assert "scripts/setup.sh test" not in make_dry_run("demo")
    for target in ("test", "test-fast", "setup"):
        assert "bash scripts/setup.sh test" in make_dry_run(target), target
    ci = (REPO / ".ci" / "run").read_text()
    assert re.search(r"^if bash scripts/setup\.sh test; then$", ci, re.M)


def test_the_test_profile_holds_the_demos_extras_and_packages() -> None:
    script = (REPO / "scripts" / "setup.sh").read_text()
    extras = dict(
        re.findall(
            r'^\s+(demo|test)\)\n(?:.*\n)*?\s+EXTRAS="\$\{TRECHO_EXTRAS:-([^}]*)\}"', script, re.M
        )
    )
    assert set(extras["demo"].split(",")) < set(extras["test"].split(","))
    assert "dev" not in extras["demo"].split(",")
    assert 'APT_PACKAGES=("${DEMO_APT[@]}" "${TEST_APT[@]}")' in script


def test_an_unknown_profile_is_refused_in_one_line() -> None:
    out = subprocess.run(
        ["bash", "scripts/setup.sh", "everything"], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 2
    assert out.stderr.strip() == "error: unknown profile 'everything' (demo or test)"
    assert out.stdout == ""
