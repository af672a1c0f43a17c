"""The language of a document, detected once from its own words, and what a table is called
in it: a table with no caption is named `Table 3` in English, `Tableau 3` in French,
`Tabela 3` in Portuguese, never in a language the document is not written in.

Detection counts each language's commonest words (articles, prepositions, conjunctions):
a document's running text holds hundreds of them, so a plain count separates the languages
trecho meets without a model. Chinese, Japanese and Korean are told by their scripts.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

STOPWORDS: dict[str, frozenset[str]] = {
    "pt": frozenset(
        "o os as da do das dos em no na nos nas um uma para com não por que se ao aos à "
        "pelo pela é são ou como mais foi".split()
    ),
    "en": frozenset(
        "the of and to in is that for with as on by are this be from or which was it an "
        "at not have has".split()
    ),
    "fr": frozenset(
        "le la les des du de et en un une est pour dans que qui sur par au aux pas sont "
        "ce cette avec ou".split()
    ),
    "es": frozenset(
        "el la los las del de y en un una es para con que por se al su sus como más o "
        "fue son".split()
    ),
    "de": frozenset(
        "der die das und in den von zu mit ist im dem des ein eine für auf nicht sich "
        "auch werden wird oder".split()
    ),
    "it": frozenset(
        "il lo la gli le di del della e in un una per con che non è sono da al nel alla "
        "dei delle".split()
    ),
}
# Words several languages share ("de", "la", "en") count for each; the distinctive ones
# decide. What a table is called in each language trecho may meet.
TABLE_WORD: dict[str, str] = {
    "pt": "Tabela",
    "en": "Table",
    "fr": "Tableau",
    "es": "Tabla",
    "de": "Tabelle",
    "it": "Tabella",
    "zh": "表",
    "ja": "表",
    "ko": "표",
}
DEFAULT_LANGUAGE = "en"
NOUN_CAPS = frozenset({"de"})  # languages that capitalise every noun
WORD = re.compile(r"[^\W\d_]+")
SCRIPTS = (("ja", re.compile(r"[\u3040-\u30ff]")), ("ko", re.compile(r"[\uac00-\ud7af]")))
HAN = re.compile(r"[\u4e00-\u9fff]")
SAMPLE_CHARS = 200_000


@lru_cache(maxsize=8)
def detect_language(text: str) -> str:
    """The language a document is written in (an ISO 639-1 code: pt, en, fr, es, de, it,
    zh, ja, ko), from its text; English when nothing tells. Cached: the tree, its stage's
    metadata and every strategy the eval measures ask of the same version's text."""
    sample = text[:SAMPLE_CHARS]
    letters = sum(1 for c in sample if c.isalpha()) or 1
    for code, script in SCRIPTS:
        if len(script.findall(sample)) > letters * 0.1:
            return code
    if len(HAN.findall(sample)) > letters * 0.2:
        return "zh"
    counts: Counter[str] = Counter()
    for word in WORD.findall(sample.lower()):
        if len(word) < 2:
            continue  # `a`, `e`, `o`, `y`: too often a letter of a code or a unit
        for code, words in STOPWORDS.items():
            if word in words:
                counts[code] += 1
    if not counts:
        return DEFAULT_LANGUAGE
    return counts.most_common(1)[0][0]


def table_word(language: str) -> str:
    """What a table is called in `language` (`Table` where trecho knows no word)."""
    return TABLE_WORD.get(language, TABLE_WORD[DEFAULT_LANGUAGE])
