# trecho — the two commands to know: `make demo` and `make test`.

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
LAKE := data_lake
DAGSTER_HOME_DIR := $(abspath $(LAKE)/.dagster)
PYTEST_ARGS ?=
# Start offsets of the eval's size-based strategies in `make demo` (1: one run each, the
# quick report; `make demo EVAL_OFFSETS=4` for the mean and range over 4 offsets).
EVAL_OFFSETS ?= 1

export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: help setup setup-demo demo test test-fast lint ui corpus clean-derived

help:
	@echo "make demo           install what trecho runs, index the sample corpus, write the eval report"
	@echo "make test           install what the tests need too, run the test suite"
	@echo "make test-fast      the same without the tests marked slow (under 3 minutes)"
	@echo "make setup          the test profile: Debian packages, .venv, torch (CPU), trecho[dev,...]"
	@echo "make setup-demo     the demo profile: what trecho runs, no test tools (idempotent)"
	@echo "make lint           ruff check + ruff format --check"
	@echo "make ui             Dagster UI on the lake's instance (http://127.0.0.1:3000)"
	@echo "make corpus         rebuild the sample PDFs, sidecars and question files"
	@echo "make clean-derived  delete everything trecho derived from $(LAKE)/raw"

# Idempotent, offline once done (a stamp per profile): scripts/setup.sh, docs/development.md.
setup:
	bash scripts/setup.sh test

setup-demo:
	bash scripts/setup.sh demo

# Every asset of every live sample version, then the eval report; ends with its path.
demo: setup-demo
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) $(BIN)/trecho materialize --lake $(LAKE) \
		--eval-offsets $(EVAL_OFFSETS)
	@latest=$$(ls -1d $(LAKE)/reports/*/ 2>/dev/null | sort | tail -n 1); \
	if [ -n "$$latest" ]; then echo; echo "Eval report: $${latest}report.html"; \
	else echo "no eval report was written" >&2; exit 1; fi

test: setup
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The quick tier while editing: every test not marked `slow` (see pyproject.toml).
test-fast: setup
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS)

lint:
	@test -x $(BIN)/ruff || bash scripts/setup.sh test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# `trecho ui` writes the instance's dagster.yaml (telemetry off, one run per version in
# the queue) before it starts the webserver and daemon; Ctrl-C stops them all.
ui: setup-demo
	DAGSTER_HOME=$(DAGSTER_HOME_DIR) $(BIN)/trecho ui --lake $(LAKE)

corpus: setup
	$(BIN)/python scripts/make_sample_corpus.py --lake $(LAKE)

clean-derived:
	rm -rf $(LAKE)/derived $(LAKE)/lancedb $(LAKE)/reports $(LAKE)/cache $(LAKE)/outcomes $(LAKE)/.dagster
