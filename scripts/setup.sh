#!/usr/bin/env bash
# Idempotent setup of a trecho checkout, by profile: Debian packages, .venv, torch (CPU),
# the package and the extras the profile runs.
#
#   bash scripts/setup.sh demo     # what `make demo` runs: what trecho itself runs (the
#                                  # pipeline, the eval report, `trecho serve` and `trecho mcp`)
#   bash scripts/setup.sh test     # what `make test` and CI run: the demo's, plus the test
#                                  # and deploy extras and the Debian packages the tests use
#   bash scripts/setup.sh          # the same as `test`
#
# Environment:
#   PYTHON=/path/to/python3.11    interpreter used to create .venv (default: python3.11,
#                                 else python3 when it is 3.11)
#   TRECHO_SETUP_FORCE=1          install again even when the profile's stamp is current
#   TRECHO_SKIP_APT=1             never touch Debian packages
#   TRECHO_EXTRAS=serve,s3        the package extras to install (default: the profile's)
#   TRECHO_INSTALLER=pip          create .venv and install with pip alone (default: uv
#                                 where it can be had and installs, pip otherwise)
#
# Safe to run again: Debian packages already present are not reinstalled, an existing
# .venv on Python 3.11 is kept, and nothing is installed while pyproject.toml and this
# script are unchanged since the profile's last successful install (a stamp per profile
# in .venv/; the test profile's stamp covers the demo's), so a rerun needs no network.
#
# The installer: uv (the version pinned below, installed once by pip into
# ~/.cache/trecho/tools, shared by every checkout) creates .venv and installs into it:
# it resolves and downloads in parallel and links files from its cache, where pip unpacks
# every wheel again (torch alone: over a minute). pip does it all where uv cannot be had
# or fails. torch comes first, pinned: its CPU wheel, which pip's configuration points to
# (find-links), where an unpinned torch, or PyPI's, is a multi-GB CUDA build; uv takes
# that same wheel from the same folder, and where it is not there, pip installs torch.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
VENV="$ROOT/.venv"
TORCH_VERSION="2.13.0"
UV_VERSION="0.13.9"
PROFILE="${1:-test}"
export HF_HUB_OFFLINE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1
export PIP_ROOT_USER_ACTION=ignore
TOOLS="${XDG_CACHE_HOME:-$HOME/.cache}/trecho/tools"

# Debian packages. Both profiles: Tesseract (por, eng) for OCR. The test profile adds:
# fonts for scripts/make_sample_corpus.py and bench/synth's generated tables (the
# condensed and oblique faces of fonts-dejavu-extra); Chromium for the browser tests (the
# HTML eval report and the Dagster UI, driven by Playwright through /usr/bin/chromium:
# Playwright's own browser download is never used); PostgreSQL for the test of the
# Postgres-backed Dagster instance (deploy/dagster.yaml); redis-server for the Celery
# executor's test (the broker a dagster-celery worker takes steps from); strace for the
# test that nothing connects outside loopback; time: GNU time -v for the peak-memory
# figures of hostile PDFs (docs/lifecycle.md).
DEMO_APT=(tesseract-ocr tesseract-ocr-por tesseract-ocr-eng)
TEST_APT=(fonts-dejavu-core fonts-dejavu-extra chromium postgresql redis-server strace time)
# Extras. demo: serve (`trecho serve`, `trecho mcp`). test: dev (tests and lint); s3,
# dask, celery, postgres, onnx: what the object-store, deploy and ONNX tests run on.
case "$PROFILE" in
    demo)
        APT_PACKAGES=("${DEMO_APT[@]}")
        EXTRAS="${TRECHO_EXTRAS:-serve}"
        CHECK_DISTS="trecho torch fastapi mcp"
        ;;
    test)
        APT_PACKAGES=("${DEMO_APT[@]}" "${TEST_APT[@]}")
        EXTRAS="${TRECHO_EXTRAS:-dev,s3,dask,celery,postgres,onnx,serve}"
        CHECK_DISTS="trecho torch fastapi mcp pytest playwright"
        ;;
    *)
        echo "error: unknown profile '$PROFILE' (demo or test)" >&2
        exit 2
        ;;
esac

# What the CLI, `trecho materialize` and the servers import at start (see step 3).
WARM_IMPORTS="rag_assets.cli, rag_assets.definitions, rag_assets.orchestration.materialize,
rag_assets.serve.api, rag_assets.serve.mcp_server, rag_assets.serve.engine"
WARM_IMPORTS="${WARM_IMPORTS//$'\n'/ }"

say() { printf '==> %s\n' "$*"; }

# -- 1. Debian packages -----------------------------------------------------------------
apt_missing() {
    local pkg
    for pkg in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
            printf '%s\n' "$pkg"
        fi
    done
}

apt_install() {
    # apt_install PKG... : install what is missing, quietly; returns non-zero on failure
    local missing
    mapfile -t missing < <(apt_missing "$@")
    if [ "${#missing[@]}" -eq 0 ]; then
        say "Debian packages already installed: $*"
        return 0
    fi
    if [ "${TRECHO_SKIP_APT:-}" = "1" ]; then
        say "TRECHO_SKIP_APT=1: not installing Debian packages ${missing[*]}"
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        say "no apt-get here: install these yourself if needed: ${missing[*]}"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        say "not root: skipping apt-get; install these yourself if needed: ${missing[*]}"
        say "  sudo apt-get install -y --no-install-recommends ${missing[*]}"
        return 0
    fi
    say "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    say "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

apt_install "${APT_PACKAGES[@]}"

# -- 2. Python 3.11 and the virtual environment -------------------------------------------
is_py311() { "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1; }

find_python() {
    local candidate
    for candidate in "${PYTHON:-}" python3.11 python3; do
        [ -n "$candidate" ] || continue
        if command -v "$candidate" >/dev/null 2>&1 && is_py311 "$candidate"; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

find_uv() {
    # find_uv PYTHON: the pinned uv, installed into $TOOLS by PYTHON's pip the first time;
    # non-zero where it cannot be had (or TRECHO_INSTALLER=pip)
    [ "${TRECHO_INSTALLER:-uv}" = "uv" ] || return 1
    local dir="$TOOLS/uv-$UV_VERSION"
    if [ ! -x "$dir/bin/uv" ]; then
        say "pip install uv==$UV_VERSION (into $dir, once)" >&2
        rm -rf "$dir.partial"
        "$1" -m pip install -q --target "$dir.partial" "uv==$UV_VERSION" >&2 \
            && mv "$dir.partial" "$dir" || { rm -rf "$dir.partial"; return 1; }
    fi
    printf '%s\n' "$dir/bin/uv"
}

if [ -x "$VENV/bin/python" ] && ! is_py311 "$VENV/bin/python"; then
    say ".venv is not a working Python 3.11 environment: recreating it"
    rm -rf "$VENV"
fi

if [ ! -x "$VENV/bin/python" ]; then
    if ! PY="$(find_python)"; then
        say "no Python 3.11 found: trying Debian's python3.11"
        apt_install python3.11 python3.11-venv
        PY="$(find_python)" || {
            echo "error: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2
            exit 1
        }
    fi
    say "creating .venv with $PY ($("$PY" --version 2>&1))"
    if UV="$(find_uv "$PY")"; then
        "$UV" venv -q --seed --python "$PY" "$VENV"
    else
        "$PY" -m venv "$VENV"
    fi
else
    say ".venv exists ($("$VENV/bin/python" --version 2>&1))"
fi

# -- 3. Python packages ------------------------------------------------------------------
stamp_of() { printf '%s' "$VENV/.trecho-setup-$1"; }
stamp_value() { cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1; }
current() {  # current PROFILE: its stamp matches pyproject.toml and this script
    [ -f "$(stamp_of "$1")" ] && [ "$(cat "$(stamp_of "$1")")" = "$(stamp_value)" ]
}

up_to_date() {
    [ "${TRECHO_SETUP_FORCE:-}" != "1" ] || return 1
    [ -z "${TRECHO_EXTRAS:-}" ] || return 1  # other extras than the profile's: install them
    current "$PROFILE" || { [ "$PROFILE" = demo ] && current test; } || return 1
    [ -x "$VENV/bin/trecho" ] && installed $CHECK_DISTS
}

installed() {  # installed DIST...: each is installed (read from its metadata: no import)
    "$VENV/bin/python" -c 'import sys
from importlib.metadata import version
for name in sys.argv[1:]:
    version(name)' "$@" >/dev/null 2>&1
}

has_torch() {
    "$VENV/bin/python" -c "from importlib.metadata import version as v
import sys; sys.exit(v('torch').split('+')[0] != '$TORCH_VERSION')" >/dev/null 2>&1
}

torch_wheels() {
    # the folder of pip's find-links holding torch's CPU wheel of the pinned version
    local links dir
    links="${PIP_FIND_LINKS:-$("$VENV/bin/python" -m pip config get global.find-links 2>/dev/null || true)}"
    for dir in $links; do
        dir="${dir#file://}"
        if compgen -G "$dir/torch-$TORCH_VERSION+cpu-*.whl" >/dev/null; then
            printf '%s\n' "$dir"
            return 0
        fi
    done
    return 1
}

install_torch() {
    local uv wheels
    if uv="$(find_uv "$VENV/bin/python")" && wheels="$(torch_wheels)"; then
        say "uv pip install torch==$TORCH_VERSION+cpu (from $wheels)"
        "$uv" pip install -q --python "$VENV/bin/python" --find-links "$wheels" \
            "torch==$TORCH_VERSION+cpu" && return 0
        say "uv could not install torch: pip does"
    fi
    say "pip install torch==$TORCH_VERSION"
    "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION"
}

install_package() {
    local uv
    if uv="$(find_uv "$VENV/bin/python")"; then
        say "uv pip install -e .[$EXTRAS]"
        "$uv" pip install -q --python "$VENV/bin/python" -e ".[$EXTRAS]" && return 0
        say "uv could not install: pip does"
    fi
    say "pip install -e .[$EXTRAS]"
    "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
}

if up_to_date; then
    say "Python packages of profile $PROFILE up to date (TRECHO_SETUP_FORCE=1 to reinstall)"
else
    rm -f "$(stamp_of "$PROFILE")"
    if has_torch; then
        say "torch $TORCH_VERSION already installed"
    else
        install_torch
    fi
    install_package
    # uv compiles no bytecode (pip compiles every file it installs: minutes here); Python
    # writes a module's .pyc at its first import, except where PYTHONDONTWRITEBYTECODE is
    # set, where every process would compile again what it imports. So the modules the
    # CLI, `trecho materialize` and the servers import at start are compiled once, here
    # (seconds): what `trecho serve` and `trecho mcp` answering at once relies on.
    say "compiling what trecho imports at start"
    env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" -c "import $WARM_IMPORTS" 2>/dev/null \
        || say "importing $WARM_IMPORTS failed (trecho will still run)"
    has_torch || {
        echo "error: torch $TORCH_VERSION is no longer the one installed" >&2
        exit 1
    }
    [ -n "${TRECHO_EXTRAS:-}" ] || stamp_value >"$(stamp_of "$PROFILE")"
    rm -f "$VENV/.trecho-setup-stamp"  # the one stamp of before the profiles
fi

torch_version="$("$VENV/bin/python" -c 'from importlib.metadata import version as v
print(v("torch"))')"
say "ready ($PROFILE): torch $torch_version, $("$VENV/bin/trecho" --help >/dev/null && echo 'trecho CLI ok')"
say "activate with: . .venv/bin/activate"
