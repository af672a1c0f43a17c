"""Questions drawn from the lake itself, so a lake with no question file still gets a
retrieval figure, and a lake with one gets more of its documents measured.

Three kinds, each tagged (`drawn`, and `table`, `section` or `written`), so the report
shows hit@k per kind:

- **table**: a row of a table read with named columns gives a question naming the row's
  label, a column's heading and the table (`What is the Amount of Travel in Table 3?`, in
  the document's language). It is answered when one retrieved chunk holds the value with
  that heading and that label (the rule of `answer_contains`): the product's table promise,
  measured on the user's own tables.
- **section** (known-item): a unit's own distinctive words, sampled as Azzopardi, de Rijke
  and Balog build simulated known-item queries ("Building simulated queries for known-item
  topics", SIGIR 2007: the discriminative term-selection model, each word of the unit
  drawn with weight inversely proportional to how many units of the lake hold it). Words
  of the unit's heading, its section path and the document's title are left out, so the
  context header alone cannot answer it. The unit is the answer: a chunk
  overlapping it (in any version of the document holding the same text).
- **written**: with an LLM configured (any OpenAI-compatible endpoint, as for contextual
  chunks), a question the LLM writes for a sampled unit, cached by the unit's text, the
  model and the prompt; never required.

Everything is deterministic: the same lake, seed and size draw the same questions (ids
are digests of what a question asks and expects, so an eval can compare the questions two
runs share).
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from rag_assets.core.corpus import Version
from rag_assets.core.eval.questions import Question, digest
from rag_assets.core.eval.written import QuestionWriter
from rag_assets.core.lake import Node
from rag_assets.core.structure import detect_language, path_names
from rag_assets.core.tables import UNNAMED_COLUMN, TableRow

T = TypeVar("T")
DRAWN = "drawn"
TABLE, SECTION, WRITTEN = "table", "section", "written"
KINDS = (TABLE, SECTION, WRITTEN)

TABLE_QUESTION: dict[str, tuple[str, str]] = {
    # (with the table's name, without it)
    "en": ("What is the {heading} of {label} in {table}?", "What is the {heading} of {label}?"),
    "pt": (
        "Qual é o valor de {heading} para {label} em {table}?",
        "Qual é o valor de {heading} para {label}?",
    ),
    "es": (
        "¿Cuál es el valor de {heading} para {label} en {table}?",
        "¿Cuál es el valor de {heading} para {label}?",
    ),
    "fr": (
        "Quelle est la valeur de {heading} pour {label} dans {table} ?",
        "Quelle est la valeur de {heading} pour {label} ?",
    ),
    "de": (
        "Welchen Wert hat {heading} für {label} in {table}?",
        "Welchen Wert hat {heading} für {label}?",
    ),
    "it": (
        "Qual è il valore di {heading} per {label} in {table}?",
        "Qual è il valore di {heading} per {label}?",
    ),
}
"""A table question in each language trecho detects; others are asked in English."""

WORD = re.compile(r"[^\W\d_]{4,}")
"""Query terms: words of four letters or more (no numbers, no short function words)."""


@dataclass(frozen=True)
class DrawSettings:
    """How questions are drawn: `size` questions in all (None: the default size when the
    lake has no question file, else none), spread over the documents, at most
    `table_share` of them table questions (the rest known-item section questions, and
    `written_share` of them written by the LLM when one is configured), from `seed`.
    Units with fewer than `min_words` query terms of their own are not drawn; a known-item
    query has `query_terms` words."""

    size: int | None = None
    seed: int = 0
    table_share: float = 0.5
    written_share: float = 0.25
    min_words: int = 12
    query_terms: int = 6
    max_label_chars: int = 80
    max_value_chars: int = 40
    writer: QuestionWriter | None = field(default=None, compare=False, repr=False)
    """The LLM that writes the `written` questions (None: none written)."""

    DEFAULT_SIZE = 80
    """Questions drawn when the lake has no question file and no size is asked."""

    def count(self, has_files: bool) -> int:
        """How many questions to draw: the size asked, else the default without question
        files and none beside them."""
        if self.size is not None:
            return max(0, self.size)
        return 0 if has_files else self.DEFAULT_SIZE

    def label(self, count: int) -> str:
        """How the report's sources name this draw: `drawn (80, seed 0)`."""
        return f"drawn ({count}, seed {self.seed})"


def _in_turn(candidates: Mapping[str, Sequence[T]], seed: int, kind: str) -> Iterator[T]:
    """Each document's candidates, shuffled, taken in turn across the documents (each
    document as many as the others, as far as its candidates go)."""
    pools = []
    for doc_id in sorted(candidates):
        pool = list(candidates[doc_id])
        random.Random(f"{seed}:{kind}:{doc_id}").shuffle(pool)
        pools.append(pool)
    while any(pools):
        for pool in pools:
            if pool:
                yield pool.pop()


def _spread(
    candidates: Mapping[str, Sequence[Question]], count: int, seed: int, kind: str
) -> list[Question]:
    """Up to `count` questions spread over the documents (`_in_turn`)."""
    return list(itertools.islice(_in_turn(candidates, seed, kind), max(0, count)))


def table_candidates(
    versions: Mapping[str, Version], settings: DrawSettings
) -> dict[str, list[Question]]:
    """Per document, a table question for each row of a table read with named columns
    whose label is text, unique in its table, with a named column holding a value (one
    column per row, drawn)."""
    out: dict[str, dict[str, Question]] = defaultdict(dict)
    for version in versions.values():
        language = detect_language(version.doc.text)
        asked, bare = TABLE_QUESTION.get(language, TABLE_QUESTION["en"])
        by_table: dict[str, list[TableRow]] = defaultdict(list)
        for row in version.rows:
            if row.header and row.cells:
                by_table[row.table_id].append(row)
        for table_id, rows in by_table.items():
            labels = Counter(r.cells[0].strip().casefold() for r in rows)
            for row in rows:
                label = " ".join(row.cells[0].split())
                if (
                    not re.search(r"[^\W\d_]", label)
                    or len(label) > settings.max_label_chars
                    or labels[label.casefold()] > 1
                ):
                    continue
                columns = [
                    (" ".join(h.split()), " ".join(c.split()))
                    for h, c in zip(row.header[1:], row.cells[1:], strict=False)
                ]
                columns = [
                    (h, c)
                    for h, c in columns
                    if h
                    and c
                    and not UNNAMED_COLUMN.match(h)
                    and len(c) <= settings.max_value_chars
                    and c.casefold() not in (h.casefold(), label.casefold())
                ]
                if not columns:
                    continue
                rng = random.Random(
                    f"{settings.seed}:{row.partition_key}:{table_id}:{row.row_index}"
                )
                heading, value = columns[rng.randrange(len(columns))]
                table = row.table_name
                text = (asked if table else bare).format(heading=heading, label=label, table=table)
                doc_id = version.info.doc_id
                key = digest(TABLE, doc_id, label, heading, value)
                out[doc_id].setdefault(
                    key,
                    Question(
                        id=f"drawn-table-{key}",
                        question=text,
                        doc_id=doc_id,
                        expected=(),
                        answer_contains=(label, heading, value),
                        tags=(DRAWN, TABLE),
                        match="text",
                    ),
                )
    return {doc: list(qs.values()) for doc, qs in out.items()}


def _terms(text: str) -> list[str]:
    return [w.casefold() for w in WORD.findall(text)]


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Unit:
    """A unit a known-item or written question may be drawn for: its document, the ids of
    the nodes holding the same text in every version of that document (the answer), its
    own text and the words its heading, path and document title already say."""

    doc_id: str
    node_ids: tuple[str, ...]
    text: str
    title: str
    said: frozenset[str]


def units_of(
    versions: Mapping[str, Version], settings: DrawSettings
) -> tuple[list[Unit], Counter[str]]:
    """The lake's units (not tables nor the document) whose own text (before any child
    unit) holds at least `min_words` query terms the context header does not already say,
    and in how many of the lake's distinct unit texts each term appears (what makes a
    word of a known-item query discriminative)."""
    same_text: dict[tuple[str, str], list[str]] = defaultdict(list)
    first: dict[tuple[str, str], tuple[Node, Version, frozenset[str]]] = {}
    seen_in: dict[str, set[str]] = defaultdict(set)  # text -> documents holding it
    df: Counter[str] = Counter()
    for version in versions.values():
        by_id = {n.node_id: n for n in version.nodes}
        doc_id = version.info.doc_id
        for node in version.nodes:
            if node.kind.startswith("table") or node.kind == "document":
                continue
            key = _key(node.text)
            if not key:
                continue
            if key not in seen_in:
                df.update(set(_terms(node.text)))
            seen_in[key].add(doc_id)
            same_text[(doc_id, key)].append(node.node_id)
            if (doc_id, key) not in first:
                said = " ".join(
                    [*path_names(node, by_id), node.label, node.title, version.info.title]
                )
                first[(doc_id, key)] = (node, version, frozenset(_terms(said)))
    units = []
    for (doc_id, key), (node, version, said) in first.items():
        if len(seen_in[key]) > 1:
            continue  # boilerplate several documents hold: no known item
        own = [t for t in _terms(node.text) if t not in said]
        if len(own) < settings.min_words:
            continue
        units.append(
            Unit(doc_id, tuple(same_text[(doc_id, key)]), node.text, version.info.title, said)
        )
    return units, df


def known_item_query(unit: Unit, df: Counter[str], terms: int, seed: int) -> str:
    """`terms` distinct words of the unit drawn without replacement, each with weight
    1 / (its document frequency in the lake, `df`) (the discriminative selection of
    Azzopardi et al.: a rare word is what a user who remembers the item types), none its
    context header says, in the order the unit has them."""
    own = [t for t in _terms(unit.text) if t not in unit.said]
    words = sorted(set(own))
    if not words:
        return ""
    weights = np.array([1.0 / max(1, df.get(w, 1)) for w in words])
    rng = np.random.default_rng(int(digest(seed, unit.node_ids), 16))
    picked = rng.choice(
        len(words), min(terms, len(words)), replace=False, p=weights / weights.sum()
    )
    chosen = {words[i] for i in picked}
    return " ".join(dict.fromkeys(t for t in own if t in chosen))


def section_candidates(
    units: Sequence[Unit], df: Counter[str], settings: DrawSettings
) -> dict[str, list[Question]]:
    """Per document, a known-item question for each unit (`known_item_query`)."""
    out: dict[str, list[Question]] = defaultdict(list)
    for unit in units:
        query = known_item_query(unit, df, settings.query_terms, settings.seed)
        if len(query.split()) < min(3, settings.query_terms):
            continue
        out[unit.doc_id].append(unit_question(SECTION, unit, query))
    return out


def unit_question(kind: str, unit: Unit, text: str) -> Question:
    """A drawn question of `kind` whose answer is `unit`, its id a digest of both."""
    key = digest(kind, unit.doc_id, unit.node_ids, text)
    return Question(
        id=f"drawn-{kind}-{key}",
        question=text,
        doc_id=unit.doc_id,
        expected=(),
        units=unit.node_ids,
        tags=(DRAWN, kind),
    )


def written_candidates(
    units: Sequence[Unit], writer: QuestionWriter, count: int, seed: int
) -> list[Question]:
    """Up to `count` questions written by the LLM for units spread over the documents."""
    per_doc: dict[str, list[Unit]] = defaultdict(list)
    for unit in units:
        per_doc[unit.doc_id].append(unit)
    out: list[Question] = []
    for unit in _in_turn(per_doc, seed, WRITTEN):
        if len(out) >= count:
            break
        if question := writer.write(unit.text, unit.title, unit.doc_id, unit.node_ids[0]):
            out.append(unit_question(WRITTEN, unit, question))
    return out


def draw_questions(
    versions: Mapping[str, Version],
    count: int,
    settings: DrawSettings = DrawSettings(),
) -> list[Question]:
    """`count` questions drawn from `versions` (see the module docstring): table
    questions up to `table_share`, written ones up to `written_share` when a `writer` is
    given, known-item section questions for the rest; table questions again for what the
    units lack."""
    if count <= 0 or not versions:
        return []
    rows = table_candidates(versions, settings)
    tables = _spread(rows, round(count * settings.table_share), settings.seed, TABLE)
    units, df = units_of(versions, settings)
    written: list[Question] = []
    if (writer := settings.writer) is not None:
        written = written_candidates(
            units, writer, round(count * settings.written_share), settings.seed
        )
    taken = {q.units for q in written}
    sections = {
        doc: [q for q in qs if q.units not in taken]
        for doc, qs in section_candidates(units, df, settings).items()
    }
    known = _spread(sections, count - len(tables) - len(written), settings.seed, SECTION)
    short = count - len(tables) - len(written) - len(known)
    if short > 0:  # too few units: more table questions, where the tables have them
        tables = _spread(rows, len(tables) + short, settings.seed, TABLE)
    return [*tables, *written, *known]


def kinds_of(questions: Iterable[Question]) -> dict[str, int]:
    """How many questions of each drawn kind (`table`, `section`, `written`)."""
    counts = Counter(t for q in questions for t in q.tags if t in KINDS and DRAWN in q.tags)
    return {k: counts[k] for k in KINDS if counts[k]}
