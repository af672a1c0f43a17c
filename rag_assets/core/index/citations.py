"""Article citations in a query ("art. 37", "artigo 6º", "Art. 54-C"), matched against
the section paths the chunks carry.

A user who names an article wants that article. Neither retriever reliably gives it:
the embedding of "qual é o conteúdo do art. 37?" carries little of the number, and full
text finds "37" in every chunk that refers to the article as well. So hybrid search
adds a third list when the query cites articles: the chunks whose path holds one of
them (`... > Art. 37 > § 1º`), ranked by cosine to the query, fused like the other two
(see `rag_assets.core.index`).
"""

from __future__ import annotations

import re

CITATION = re.compile(r"\bart(?:igo)?s?\.?\s*(\d{1,4})\s*[º°o]?(?:\s*-\s*([a-z])\b)?", re.I)
"""`art. 37`, `art 37`, `artigo 6º`, `arts. 7`, `art. 54-C` (case-insensitive)."""
ORDINALS = "º°"
"""The ordinal marks a path may print after an article number (`Art. 6º` for 1-9,
`Art. 43` from 10)."""


def cited_articles(query: str) -> list[str]:
    """The article labels a query cites, as paths print them (`Art. 37`, `Art. 54-C`),
    in order, without duplicates."""
    labels = []
    for match in CITATION.finditer(query):
        suffix = f"-{match.group(2).upper()}" if match.group(2) else ""
        labels.append(f"Art. {int(match.group(1))}{suffix}")
    return list(dict.fromkeys(labels))


def path_filter(labels: list[str]) -> str | None:
    """SQL condition on `path`: a segment of it is one of `labels` (`Art. 37` and
    `Art. 37º` match, `Art. 137` and `Art. 37-A` do not); None without labels."""
    for label in labels:
        if not re.fullmatch(r"Art\. \d+(-[A-Z])?", label):
            raise ValueError(f"not an article label: {label!r}")
    if not labels:
        return None
    cited = "|".join(label.replace(".", r"\.") for label in labels)
    return f"regexp_like(path, '(^| > )({cited})[{ORDINALS}]?( >|$)')"
