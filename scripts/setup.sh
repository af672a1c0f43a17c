#!/usr/bin/env bash
# Idempotent setup of a trecho checkout: Debian packages, .venv, torch (CPU), the package.
#
#   bash scripts/setup.sh            # what `make setup` runs
#
# Environment:
#   PYTHON=/path/to/python3.11    interpreter used to create .venv (default: python3.11,
#                                 else python3 when it is 3.11)
#   TRECHO_SETUP_FORCE=1          re-run pip even when pyproject.toml has not changed
#   TRECHO_SKIP_APT=1             never touch Debian packages
#   TRECHO_EXTRAS=dev,s3          the package extras to install (default dev,s3,dask,postgres,onnx,serve)
#
# Safe to run again: Debian packages already present are not reinstalled, an existing
# .venv on Python 3.11 is kept, and pip is skipped while pyproject.toml and this script
# are unchanged since the last successful install (stamp in .venv/).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$(pwd)"
VENV="$ROOT/.venv"
STAMP="$VENV/.trecho-setup-stamp"
TORCH_VERSION="2.13.0"
# dev: tests and lint; s3, dask, postgres, onnx, serve: what the object-store, deploy, ONNX
# and serve tests run on
EXTRAS="${TRECHO_EXTRAS:-dev,s3,dask,postgres,onnx,serve}"
export HF_HUB_OFFLINE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1

# Debian packages: fonts for scripts/make_sample_corpus.py; Tesseract (por, eng) for OCR;
# Chromium for the browser tests (the HTML eval report and the Dagster UI, driven by
# Playwright through /usr/bin/chromium: Playwright's own browser download is never used).
# PostgreSQL for the test of the Postgres-backed Dagster instance (deploy/dagster.yaml).
# fonts-dejavu-extra: the condensed and oblique faces of bench/synth's generated tables.
# strace: the test that nothing connects outside loopback; time: GNU time -v for the
# peak-memory figures of hostile PDFs (docs/lifecycle.md).
APT_PACKAGES=(fonts-dejavu-core fonts-dejavu-extra tesseract-ocr tesseract-ocr-por tesseract-ocr-eng chromium
    postgresql strace time)

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
    "$PY" -m venv "$VENV"
else
    say ".venv exists ($("$VENV/bin/python" --version 2>&1))"
fi

# -- 3. Python packages ------------------------------------------------------------------
stamp_value() { cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1; }

if [ "${TRECHO_SETUP_FORCE:-}" != "1" ] && [ -f "$STAMP" ] \
    && [ "$(cat "$STAMP")" = "$(stamp_value)" ] && [ -x "$VENV/bin/trecho" ] \
    && "$VENV/bin/python" -c 'import rag_assets, torch, pytest' >/dev/null 2>&1; then
    say "Python packages up to date (pyproject.toml unchanged; TRECHO_SETUP_FORCE=1 to reinstall)"
else
    rm -f "$STAMP"
    # torch first and pinned: an unpinned torch would pull a multi-GB CUDA build; the
    # CPU wheel of this version is what pip finds here.
    say "pip install torch==$TORCH_VERSION"
    "$VENV/bin/python" -m pip install -q "torch==$TORCH_VERSION"
    say "pip install -e .[$EXTRAS]"
    "$VENV/bin/python" -m pip install -q -e ".[$EXTRAS]"
    stamp_value >"$STAMP"
fi

say "ready: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)')," \
    "$("$VENV/bin/trecho" --help >/dev/null && echo 'trecho CLI ok')"
say "activate with: . .venv/bin/activate"
