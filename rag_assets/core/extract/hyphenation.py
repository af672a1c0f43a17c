"""Words hyphenated across lines joined, and compounds that keep their hyphen told apart."""

from __future__ import annotations

import re

from rag_assets.core.extract.model import Line, Page

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


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:-[^\W\d_]+)*", text.lower())


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


TRAILING = re.compile(rf"(?:^|\s)(\S*[^\W\d_])([{HYPHENS}])$")
LEADING = re.compile(r"^([^\W\d_]+)")
ALINEA = re.compile(r"^[a-z]\)")


def _join_pair(prev: Line, nxt: Line, vocab: set[str]) -> bool:
    """Move the first word of `nxt` up to complete the hyphenated word ending `prev`."""
    end = TRAILING.search(prev.text)
    if end is None or not nxt.text:
        return False
    token, _, rest = nxt.text.partition(" ")
    lead = LEADING.match(token)
    soft = end.group(2) == "\u00ad"
    if lead is None or ALINEA.match(token) or (not soft and not token[0].islower()):
        return False
    first = end.group(1)
    head = re.search(r"[^\W\d_]+$", first)
    keep = not soft and (
        "-" in first or keep_hyphen(head.group(0) if head else first, lead.group(1), vocab)
    )
    prev.text = prev.text[:-1] + ("-" if keep else "") + token
    nxt.text = rest.strip()
    return True


def _join_hyphenated(pages: list[Page]) -> int:
    """Join words hyphenated across lines (and pages), outside tables; returns how many.

    The second half moves up to the first line, so every line (and every offset computed
    after) still holds whole words; a line left empty is dropped.
    """
    # every word the document prints, its tables' too (`1 work-hour` in a table says how
    # `work-` / `hour` is spelled in the prose)
    vocab = set(_words("\n".join(line.text for page in pages for line in page.lines)))
    joined = 0
    previous: Line | None = None
    for page in pages:
        for line in page.lines:
            if line.table >= 0:
                previous = None
                continue
            if previous is not None and _join_pair(previous, line, vocab):
                joined += 1
            if line.text:
                previous = line
    for page in pages:
        page.lines = [line for line in page.lines if line.text]
    return joined


def _dehyphenate_cell(text: str) -> str:
    """A table cell printed over several lines, as one line; hyphenated words joined."""

    def join(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(3)
        soft = match.group(2) == "\u00ad"
        keep = not soft and (not second[0].islower() or keep_hyphen(first, second))
        return f"{first}{'-' if keep else ''}{second}"

    text = re.sub(rf"([^\W\d_]+)([{HYPHENS}])\n([^\W\d_]+)", join, text)
    return re.sub(r"\s+", " ", text).strip()
