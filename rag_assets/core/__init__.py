"""The core of trecho: pure Python, no Dagster import, unit-tested on its own."""
