"""A seeded generator of random tables with exact ground truth, printed by two PDF
producers (headless Chromium from HTML/CSS, and reportlab): the `synth` source of
bench/tables.py. See bench/README.md and docs/tables.md."""
