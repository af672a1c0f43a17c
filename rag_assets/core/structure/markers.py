"""Recognising units in a line: the markers that open them (Título, Art., §, incisos,
alíneas, English Part/Chapter/Section/Article, numbered sections, table captions), the
typography of headings, and how a unit's label is written, compared and turned into an id.

`tree.py` reads the lines with these and builds the tree.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from rag_assets.core.extract import Line

ROMAN = r"[IVXLCDM]+"
ORD = r"\s*(?:º|°|o|ª)?"
DOTTED = r"\d+(?:\.\d+)*"

# kind, level, pattern (on the start of a line), guarded; order matters. A guarded
# (English) marker opens a unit only when the line reads as a heading (see `guard_ok`):
# "Section 3 describes the method" at a line start is prose, "Section 3. Scope" is not.
LEGAL_MARKERS: list[tuple[str, int, re.Pattern[str], bool]] = [
    ("part", 1, re.compile(rf"^(T[ÍI]TULO|PART)\s+({ROMAN}|\d+)\b", re.I), False),
    ("part", 1, re.compile(rf"^(TITLE|Title)\s+({ROMAN}|\d+)\b"), True),
    ("chapter", 2, re.compile(rf"^(CAP[ÍI]TULO)\s+({ROMAN}|\d+)\b", re.I), False),
    ("chapter", 2, re.compile(rf"^(CHAPTER|Chapter)\s+({ROMAN}|\d+)\b"), True),
    ("section", 4, re.compile(rf"^(SUBSE[ÇC][ÃA]O)\s+({ROMAN}|\d+)\b", re.I), False),
    ("section", 4, re.compile(rf"^(SUBSECTION|Subsection)\s+({ROMAN}|{DOTTED})\b"), True),
    ("section", 3, re.compile(rf"^(SE[ÇC][ÃA]O)\s+({ROMAN}|\d+)\b", re.I), False),
    ("section", 3, re.compile(rf"^(SECTION|Section|SEC\.|Sec\.)\s*({ROMAN}|{DOTTED})\b"), True),
    # digits may come letter-spaced out of justified text: "Art. 5 7." is Art. 57
    (
        "article",
        5,
        re.compile(rf"^(Art\.|Artigo)\s*(\d+(?: \d)*(?:-[A-Z])?){ORD}\.?(?=\s|$)"),
        False,
    ),
    ("article", 5, re.compile(r"^(ARTICLE|Article)\s+(\d+(?:-[A-Z])?)\b\.?"), True),
    (
        "paragraph",
        6,
        re.compile(r"^(Parágrafo único|Paragrafo unico)\.?(?=\s|$|[.:—–-])", re.I),
        False,
    ),
    ("paragraph", 6, re.compile(rf"^(§)\s*(\d+){ORD}\.?(?=\s|$)"), False),
    ("item", 7, re.compile(rf"^({ROMAN})\s*[-–—]\s+"), False),
    ("point", 8, re.compile(r"^([a-z])\)\s+"), False),
    ("point", 8, re.compile(r"^\(([a-z])\)\s+"), False),
]
NUMBERED = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+(\S.*)$")
# A table's caption in the languages trecho meets: its word and number (`Table A-1.`,
# `Tableau 3 :`, `Tabela 2 –`, `表 4`); group 1 the word, group 2 the number.
CAPTION = re.compile(
    r"^(Tabela|Table|Quadro|Tableau|Tabla|Cuadro|Tabelle|Tabella|Tab\.|表|표)\s*"
    r"((?:[A-Z]{1,2}[-.‑–]?)?\d+(?:[.\-‑–]\d+)*[a-z]?|(?-i:[IVXLC]+))(?=$|[\s.:,;–—\-)])",
    re.I,
)
HEADING_MAX_CHARS = 120
STRUCTURAL_KINDS = ("part", "chapter", "section")


def fold(text: str) -> str:
    """Lowercase ASCII form of a text (accents dropped), for ids and label matching."""
    nfkd = unicodedata.normalize("NFKD", text)
    return "".join(c for c in nfkd if not unicodedata.combining(c)).lower()


def squash(text: str) -> str:
    """A text's letters and digits only, lower case, accents dropped: what survives a text
    layer that runs words together or prints accents apart (`t´opicos`)."""
    return "".join(c for c in fold(text) if c.isalnum())


def slug(text: str, limit: int = 40) -> str:
    """An id-safe slug of a label or title."""
    value = re.sub(r"[^a-z0-9.]+", "-", fold(re.sub(r"(?<=\d)[º°ª]", "", text)))
    return value.strip("-.")[:limit].strip("-.") or "x"


def normalize_label(label: str) -> str:
    """Compare labels as docs/design.md says: case, `º/°/o`, dots and spaces ignored."""
    value = fold(label).replace("º", "").replace("°", "").replace("ª", "")
    value = re.sub(r"(\d)o\b", r"\1", value)
    return re.sub(r"[\s.]+", "", value)


def article_number(label: str) -> tuple[int, str]:
    """(number, letter suffix) of an article label, for order: `Art. 5-A` is (5, "A")."""
    match = re.search(r"(\d+)(?:-([A-Z]))?", label)
    if not match:
        return (0, "")
    return (int(match.group(1)), match.group(2) or "")


def id_segment(kind: str, label: str, title: str) -> str:
    """The node id segment of a unit: a kind prefix and its number (else its title)."""
    number = re.sub(
        r"^(art\.?|artigo|article|§|t[ií]tulo|title|part|cap[ií]tulo|chapter|subsection|"
        r"se[çc][ãa]o|section|sec\.|tabela|table|quadro)\s*",
        "",
        label,
        flags=re.I,
    )
    prefix = {
        "part": "tit",
        "chapter": "cap",
        "article": "art",
        "paragraph": "par",
        "item": "inc",
        "point": "ali",
        "table": "tab",
        "table_text": "tab",
        "table_row": "row",
    }.get(kind, "sec")
    if kind == "paragraph" and "nico" in fold(label):
        return "par-unico"
    if kind == "section" and re.match(r"(?i)subse", label):
        prefix = "subsec"
    text = number if number.strip() else title
    return f"{prefix}-{slug(text.strip(') '))}"


def body_font_size(lines: Sequence[Line]) -> float:
    """The most common font size, weighted by text length: the size of running text."""
    weights: dict[float, int] = {}
    for line in lines:
        weights[line.size] = weights.get(line.size, 0) + len(line.text)
    return max(weights, key=lambda s: weights[s]) if weights else 0.0


def heading_like(line: Line, body: float) -> bool:
    """A short line outside tables, bold or larger than running text (`body`)."""
    if len(line.text) > HEADING_MAX_CHARS or line.table >= 0:
        return False
    return line.bold or line.size >= body + 1.5


def merge_wrapped_headings(
    lines: list[Line], body: float, bump: float = 1.5, nouns: bool = False
) -> list[Line]:
    """Join a heading printed over two lines (same style, directly below) into one line:
    lines in bold, or `bump` points or more over the body's size. `nouns`: the language
    capitalises its nouns (German), so a wrap may start with a capital."""

    def loud(line: Line) -> bool:
        short = len(line.text) <= HEADING_MAX_CHARS and line.table < 0
        return heading_like(line, body) or (short and line.size >= body + bump)

    merged: list[Line] = []
    for line in lines:
        prev = merged[-1] if merged else None
        if (
            prev is not None
            and loud(prev)
            and loud(line)
            and prev.bold == line.bold
            and prev.size == line.size
            and 0 <= line.top - prev.bottom < prev.size * 0.8
            and not NUMBERED.match(line.text)
            and not any(p.match(line.text) for _, _, p, _ in LEGAL_MARKERS)
            and (nouns or goes_on(prev.text, line.text))
        ):
            prev.text = f"{prev.text} {line.text}"
            prev.bottom = line.bottom
            prev.char_end = line.char_end
            prev.x1 = max(prev.x1, line.x1)
            continue
        merged.append(Line(**vars(line)))
    return merged


# Words a heading never ends on: articles, prepositions and conjunctions that leave a
# sentence open (English, Portuguese, French, Spanish, German, Italian).
OPEN_ENDINGS = frozenset(
    (
        "the of and to in for with a an at by from or on as that is are was were be "
        "o os as de da do das dos e em no na nos nas para com por ao pelo pela que um uma "
        "le la les des du et en un une pour dans par au aux à sur qui "
        "el los las del y con al su sus "
        "der die das und den von zu mit dem des ein eine für auf im ist "
        "il lo gli di della delle dei nel alla che "
        "but than which while when where into about between after before "
        "mas entre sobre como quando onde após "
        "mais comme lorsque avec sans selon "
        "pero cuando donde sin según "
        "wie als dass oder aber sowie nach bei über unter durch"
    ).split()
)


def goes_on(first: str, second: str) -> bool:
    """Whether `second` reads as the wrap of a heading line `first`: it starts in lower
    case, or `first` is in capitals or title case, or `first` stops on a comma or a word
    that leaves it open; a capitalised line under a heading in sentence case is a new
    sentence (a bold lead-in under a bold heading), not its wrap."""
    start = next((c for c in second if c.isalpha()), "")
    words = first.rstrip().split()
    if start.islower() or first.rstrip().endswith((",", ";", ":", "–", "—", "-")):
        return True
    if words and words[-1].lower() in OPEN_ENDINGS:
        return True
    letters = [c for c in first if c.isalpha()]
    if letters and all(c.isupper() for c in letters):
        return True
    longer = [w for w in re.findall(r"[^\W\d_]+", first) if len(w) >= 4]
    return bool(longer) and sum(1 for w in longer if w[0].isupper()) * 2 > len(longer)


def title_of(text: str, marker_end: int) -> str:
    """The title printed after a heading's marker (`Capítulo II – Da Vigência`)."""
    rest = text[marker_end:].strip(" .-–—:")
    return rest


def caput_title(text: str) -> str:
    """An article's title: the first sentence of its caput, at most 160 characters."""
    first = re.split(r"(?<=[.:;])\s", text.strip(" -–—"), maxsplit=1)[0]
    return first[:160]


def title_line(line: Line, body: float) -> bool:
    """A heading line that names the unit whose bare marker is printed just above it."""
    if line.table >= 0 or not heading_like(line, body) or NUMBERED.match(line.text):
        return False
    return not any(p.match(line.text) for _, _, p, _ in LEGAL_MARKERS)


def guard_ok(line: Line, body: float, keyword: str, rest: str) -> bool:
    """Whether an English marker line is a heading: printed as one, in capitals, alone on
    its line, or followed by a title after a separator (`Section 2. Scope`)."""
    if heading_like(line, body) or keyword.isupper():
        return True
    rest = rest.strip()
    return not rest or rest[0] in ".:–—-"


def ordinal_sign(marker: str) -> str:
    """The ordinal sign printed after an article number (`º`), or ""."""
    match = re.search(r"\d(º|°|o|ª)", marker)
    return match.group(1) if match else ""
