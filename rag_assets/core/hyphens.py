"""Hyphens at line ends: which join a word cut in two and which belong to the word.

Shared by the page reader (lines joined across line breaks, `extract.hyphenation`) and
the table reader (a cell printed over several lines, `tables`).
"""

from __future__ import annotations

import re

HYPHENS = "-\u2010\u00ad"  # hyphen-minus, hyphen, soft hyphen
# a word's second half that is a pronoun joined by a real hyphen: dar-lhe, fazê-lo, trata-se
CLITICS = {"lhe", "lhes"}
ACCENTED_CLITICS = {"lo", "la", "los", "las"}  # after an accented verb ending: fazê-lo
# first halves that always keep their hyphen (pós-graduação, auxílio-doença, vale-transporte)
HYPHEN_PREFIXES = {
    "vice", "pós", "pré", "pró", "recém", "além", "aquém", "grã", "grão",
    "auxílio", "salário", "vale", "seguro", "decreto",
}  # fmt: skip
HYPHEN_SUFFIXES = {"feira"}  # segunda-feira
VOWEL_PREFIXES = {"bem"}  # bem-estar, bem-humorado: before a vowel or h it is a compound


def keep_hyphen(first: str, second: str, vocabulary: set[str] | None = None) -> bool:
    """Whether `first-` at a line end and `second` on the next line form a hyphenated word
    (`dar-lhe`, `bem-estar`) rather than one word cut by the line break (`trata-mento`).

    The document itself decides first: a form it prints elsewhere on one line wins. Then
    Portuguese rules: `lhe(s)` after a hyphen is a pronoun; `lo/la/los/las` after an
    accented verb ending (`fazê-lo`); `se` after a verb (`trata-se`, `aplicar-se`); a
    first half that always takes a hyphen (`pós-`, `vice-`, `auxílio-`), `bem-` before a
    vowel or h (`bem-estar`), `-feira`; a word already hyphenated (`bem-te-`). Anything
    else is a word cut in two.
    """
    vocab = vocabulary or set()
    head, tail = first.lower(), second.lower()
    joined, hyphenated = head + tail, f"{head}-{tail}"
    if hyphenated in vocab and joined not in vocab:
        return True
    if joined in vocab and hyphenated not in vocab:
        return False
    if tail in CLITICS or "-" in head or head in HYPHEN_PREFIXES or tail in HYPHEN_SUFFIXES:
        return True
    if head in VOWEL_PREFIXES and tail[:1] in "aeiouáéíóúâêôãõh":
        return True
    if tail in ACCENTED_CLITICS and head[-1:] in "áéêíóôú":
        return True
    return tail == "se" and len(head) >= 4 and head[-1] in "aeiouáéêóôr"


def one_line(text: str) -> str:
    """A table cell printed over several lines, as one line; hyphenated words joined."""

    def join(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(3)
        soft = match.group(2) == "\u00ad"
        keep = not soft and (not second[0].islower() or keep_hyphen(first, second))
        return f"{first}{'-' if keep else ''}{second}"

    text = re.sub(rf"([^\W\d_]+)([{HYPHENS}])\n([^\W\d_]+)", join, text)
    return re.sub(r"\s+", " ", text).strip()
