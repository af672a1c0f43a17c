"""Seed ranges as a bench's command line names them, shared by the generated corpora."""

from __future__ import annotations

from collections.abc import Mapping


def parse_seeds(text: str, named: Mapping[str, range]) -> range | list[int]:
    """Seeds from `text`: names of `named` ranges joined by `+` (`report+wide-report`),
    `A-B` (inclusive) or `A,B,C`."""
    if all(part in named for part in text.split("+")):
        return [s for part in text.split("+") for s in named[part]]
    if "-" in text:
        a, b = text.split("-", 1)
        return range(int(a), int(b) + 1)
    return [int(s) for s in text.split(",") if s]
