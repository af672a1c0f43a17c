"""Units, the smallest pieces a structural cut may produce (a clause, a sentence run, a
printed line, a table row), and how a unit too long for a token budget is cut: a table
row at its `; ` pairs (each part led by the row's label), any other unit by sentences,
then printed lines, then words. Every unit keeps its exact span in the document text.

The structure-aware chunkers (`structural`, `legal`, `semantic`) pack these units."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag_assets.core.embedding import TokenCounter

# a sentence ends at . ! ? ; : after a word (not after a bare section number like "1.")
# and before a capital letter (so "Art. 5º" or "n. 3" do not end a sentence)
SENTENCE_END = re.compile(r"(?<=[^\d\s][.!?;:])\s+(?=[A-ZÁÉÍÓÚÂÊÔÃÕÇ(\"“])(?!Art\b)")


@dataclass
class Unit:
    """The smallest piece a cut may produce: a clause, a sentence run, a table row."""

    seg: str
    text: str
    start: int
    end: int
    label: str = ""
    tokens: int = 0


def sentence_units(seg: str, text: str, start: int) -> list[Unit]:
    """Split a text into sentence units with exact spans (offsets from `start`)."""
    units: list[Unit] = []
    pos = 0
    for match in SENTENCE_END.finditer(text):
        piece = text[pos : match.start()]
        if piece.strip():
            units.append(Unit(f"{seg}~{len(units)}", piece, start + pos, start + match.start()))
        pos = match.end()
    tail = text[pos:]
    if tail.strip():
        units.append(
            Unit(f"{seg}~{len(units)}", tail.rstrip(), start + pos, start + len(text.rstrip()))
        )
    if units:
        units[0].seg = seg
    return units


def line_units(seg: str, text: str, start: int) -> list[Unit]:
    """One unit a printed line (the lines of a table read as text), exact spans."""
    units: list[Unit] = []
    pos = 0
    for line in text.split("\n"):
        if line.strip():
            units.append(
                Unit(
                    f"{seg}~{len(units)}" if units else seg,
                    line,
                    start + pos,
                    start + pos + len(line),
                )
            )
        pos += len(line) + 1
    return units


def split_row(unit: Unit, budget: int, counter: TokenCounter) -> list[Unit]:
    """A linearized table row too long for the budget, cut at its `; ` pairs: every part
    repeats the row's first pair (its label), so no value leaves its row or its header; a
    single pair too long is cut between the words of its value, every piece led by the
    label and the pair's header."""
    if counter.count(unit.text) - counter.overhead <= budget:
        return [unit]
    label, *pairs = unit.text.split("; ")
    parts: list[Unit] = []
    current: list[str] = []
    for pair in pairs:
        candidate = "; ".join([label, *current, pair])
        if current and counter.count(candidate) - counter.overhead > budget:
            parts.append(_row_part(unit, label, current, len(parts)))
            current = []
        current.append(pair)
    if current or not parts:
        parts.append(_row_part(unit, label, current, len(parts)))
    out: list[Unit] = []
    for part, pair in zip(parts, _single_pairs(parts, label), strict=True):
        if counter.count(part.text) - counter.overhead <= budget:
            out.append(part)
            continue
        # a single pair still too long: its value cut by words, each piece led by the
        # row's label and the pair's header, so that no piece holds a value alone
        pieces = _split_pair(part, label, pair, budget, counter) if pair else None
        out.extend(pieces or _split_words(part, budget, counter))
    return out


def _single_pairs(parts: list[Unit], label: str) -> list[str]:
    """The one pair each row part holds after the row's label ("" when it holds more)."""
    out = []
    for part in parts:
        rest = part.text[len(label) + 2 :] if part.text.startswith(f"{label}; ") else ""
        out.append(rest if rest and "; " not in rest else "")
    return out


def _split_pair(
    part: Unit, label: str, pair: str, budget: int, counter: TokenCounter
) -> list[Unit] | None:
    """A row part of one pair too long for the budget, its value cut by words into pieces
    that each read `label; Header: words...` (None when even that lead does not fit, or
    one word is too long)."""
    header, sep, value = pair.partition(": ")
    lead = f"{label}; {header}:" if sep else f"{label};"
    words = (value if sep else pair).split()
    groups: list[list[str]] = []
    current: list[str] = []
    for word in words:
        candidate = f"{lead} {' '.join([*current, word])}"
        if counter.count(candidate) - counter.overhead > budget:
            if not current:
                return None
            groups.append(current)
            current = []
        current.append(word)
    if current:
        groups.append(current)
    return [
        Unit(f"{part.seg}w{k}", f"{lead} {' '.join(g)}", part.start, part.end, part.label)
        for k, g in enumerate(groups)
    ]


def _row_part(unit: Unit, label: str, pairs: list[str], n: int) -> Unit:
    return Unit(f"{unit.seg}~p{n}", "; ".join([label, *pairs]), unit.start, unit.end, unit.label)


def lead_of(text: str, counter: TokenCounter, max_tokens: int = 48) -> str:
    """The part of a unit's text every later piece repeats: as many of its first sentences
    as fit in `max_tokens`, else its first words (marked with an ellipsis)."""
    text = " ".join(text.split())
    lead = ""
    for sentence in SENTENCE_END.split(text):
        candidate = f"{lead} {sentence}".strip()
        if counter.count(candidate) - counter.overhead > max_tokens:
            break
        lead = candidate
    if len(lead) >= 20 or lead == text:
        return lead
    words = text.split()
    while words and counter.count(" ".join(words)) - counter.overhead > max_tokens - 1:
        words = words[: max(1, int(len(words) * 0.8))] if len(words) > 1 else []
    return " ".join(words) + " …"


def _split_words(unit: Unit, budget: int, counter: TokenCounter) -> list[Unit]:
    """Split a unit too long for the budget at word boundaries (last resort)."""
    parts: list[Unit] = []
    words = list(re.finditer(r"\S+", unit.text))
    i = 0
    while i < len(words):
        j = i + 1
        while (
            j < len(words) and counter.count(unit.text[words[i].start() : words[j].end()]) <= budget
        ):
            j += 1
        piece_start, piece_end = words[i].start(), words[j - 1].end()
        parts.append(
            Unit(
                f"{unit.seg}~w{len(parts)}",
                unit.text[piece_start:piece_end],
                unit.start + piece_start,
                unit.start + piece_end,
                unit.label,
            )
        )
        i = j
    return parts


def _split_lines(unit: Unit, budget: int, counter: TokenCounter) -> list[Unit]:
    """Pack a unit's printed lines into pieces within the budget (each starts a line)."""
    pieces: list[Unit] = []
    pos = 0
    spans: list[tuple[int, int]] = []
    for line in unit.text.split("\n"):
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current and counter.count(unit.text[current[0] : end]) - counter.overhead <= budget:
            current = (current[0], end)
            continue
        if current:
            pieces.append(_piece(unit, current, f"l{len(pieces)}"))
        current = (start, end)
    if current:
        pieces.append(_piece(unit, current, f"l{len(pieces)}"))
    return pieces


def _piece(unit: Unit, span: tuple[int, int], tag: str) -> Unit:
    return Unit(
        f"{unit.seg}~{tag}",
        unit.text[span[0] : span[1]],
        unit.start + span[0],
        unit.start + span[1],
        unit.label,
    )


def fit_to_budget(unit: Unit, budget: int, counter: TokenCounter) -> list[Unit]:
    """A unit as pieces that each fit the budget: sentences, then printed lines, then words."""
    if counter.count(unit.text) - counter.overhead <= budget:
        return [unit]
    out: list[Unit] = []
    sentences = sentence_units(unit.seg, unit.text, unit.start)
    for sentence in sentences if len(sentences) > 1 else [unit]:
        sentence.label = unit.label
        if counter.count(sentence.text) - counter.overhead <= budget:
            out.append(sentence)
            continue
        for piece in _split_lines(sentence, budget, counter):
            if counter.count(piece.text) - counter.overhead <= budget:
                out.append(piece)
            else:
                out.extend(_split_words(piece, budget, counter))
    return out
