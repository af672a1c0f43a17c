"""The eval: questions, strategies side by side, metrics, regressions and the report."""
