"""How trecho's headings, section paths and table names are scored against the truth
of a document: matching detected headings to true ones (`Item`, `assign`, `quality`),
the figures of one document (`Doc`, `score_headings`, `score_paths`, `score_tables`,
`score_outline`), and what makes a path segment suspicious. Shared by bench/headings.py
and its tests (tests/test_bench_headings.py)."""

from __future__ import annotations

import difflib
import inspect
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.heading_words import LANGS, TABLE_WORDS

HEADING_KINDS = ("part", "chapter", "section")
TABLE_KINDS = ("table", "table_text")
RATIO = 0.9
SHARE_TARGET = 0.02

# figure -> (numerator, denominator or None for a count, higher is better)
FIGURES: dict[str, tuple[str, str | None, bool]] = {
    "heading_precision": ("det_matched", "detected", True),
    "heading_recall": ("true_matched", "true", True),
    "parent_accuracy": ("parent_ok", "true_matched", True),
    "bad_paths": ("bad_chunks", "chunks_judged", False),
    "suspicious_paths": ("suspicious_chunks", "chunks", False),
    "captions_named": ("named", "captioned", True),
    "tabela_elsewhere": ("tabela_elsewhere", None, False),
    "outline_found": ("outline_found", "outline", True),
    "outline_found_rules": ("outline_found_rules", "outline_rules", True),
    "precision_rules": ("det_matched_rules", "detected_rules", True),
    "recall_rules": ("true_matched_rules", "true_rules", True),
    "failed": ("failed", None, False),
}


# ---- matching ---------------------------------------------------------------------------

_NUMBER = re.compile(
    r"^(?:\d+(?:[.\-]\d+)*\.?|[IVXLCDM]+\.|[A-Z]\.(?:\d+(?:\.\d+)*\.?)?|[A-Z](?:\.\d+)+\.?)\s+"
)
_TRAILING = " \t.:;,·…-–—"
_CJK = "[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # Han, kana, Hangul: no spaces


def norm(text: str) -> str:
    """NFKC, case folded, whitespace collapsed, trailing punctuation and dot leaders cut."""
    text = unicodedata.normalize("NFKC", text or "")
    text = re.sub(r"\s+", " ", text).strip().casefold()
    # spaces beside Chinese, Japanese or Korean characters are the extractor's, not the text's
    text = re.sub(r"(?<=" + _CJK + r") | (?=" + _CJK + r")", "", text)
    return text.rstrip(_TRAILING)


def strip_number(text: str) -> str:
    """A heading's text without its leading number (`2.1`, `2.1.`, `II.`, `A.`, `A.1`)."""
    text = unicodedata.normalize("NFKC", text or "").strip()
    return _NUMBER.sub("", text, count=1)


@dataclass
class Item:
    """A heading (or table name, or outline entry) to match: printed text, text without
    its number, page (None: any)."""

    text: str
    title: str = ""
    page: int | None = None
    parent: int | None = None
    tags: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.title:
            self.title = strip_number(self.text)


def quality(a: Item, b: Item) -> int:
    """How well two headings match: 3 equal, 2 one is the other's title without its
    number, 1 difflib ratio >= 0.9, 0 no match."""
    at, bt = norm(a.text), norm(b.text)
    if not at or not bt:
        return 0
    if at == bt:
        return 3
    if at == norm(b.title) or norm(a.title) == bt:
        return 2
    if difflib.SequenceMatcher(None, at, bt, autojunk=False).ratio() >= RATIO:
        return 1
    return 0


def assign(detected: list[Item], truth: list[Item], slack: int | None = 0) -> dict[int, int]:
    """One-to-one matches, detected index -> truth index: best quality first, then the
    nearest page. `slack`: how many pages apart a pair may be (None: any)."""
    pairs = []
    for i, d in enumerate(detected):
        for j, t in enumerate(truth):
            gap = 0
            if d.page is not None and t.page is not None:
                gap = abs(d.page - t.page)
                if slack is not None and gap > slack:
                    continue
            q = quality(d, t)
            if q:
                pairs.append((-q, gap, i, j))
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, _, i, j in sorted(pairs):
        if i not in out and j not in used:
            out[i] = j
            used.add(j)
    return out


def matches_any(text: str, truth: Iterable[Item]) -> bool:
    """Whether a text matches one of the items, pages aside."""
    item = Item(text)
    return any(quality(item, t) for t in truth)


def caption_item(caption: str) -> Item:
    """A table caption as an item: its title is the caption without its label (`Table 3.`,
    `Tabela 2 –`, `Tableau 1 :`)."""
    text = unicodedata.normalize("NFKC", caption).strip()
    title = re.sub(r"^[^\W\d_]+\s+[A-Z]?[-.]?\d+(?:[.\-]\d+)?\s*[.:–—-]?\s+", "", text)
    return Item(text, title)


def table_label(text: str, lang: str) -> bool:
    """`Table 3`, `Tabela A-1`: a bare table label in the words of the language."""
    words = TABLE_WORDS.get(lang, ())
    if not words:
        return False
    names = "|".join(map(re.escape, words))
    pattern = r"^(?:" + names + r")\s+[A-Z]?[-.]?\d+(?:[.\-]\d+)?[a-z]?$"
    return re.match(pattern, unicodedata.normalize("NFKC", text).strip()) is not None


def is_tabela(text: str) -> bool:
    """A table named `Tabela N` (the Portuguese label)."""
    return re.match(r"^Tabela\s+[A-Z]?[-.]?\d+", text.strip()) is not None


# ---- the truth-free judge ---------------------------------------------------------------

FUNCTION_WORDS = {code: lang.function_words for code, lang in LANGS.items()}
ALL_FUNCTION_WORDS = frozenset().union(*FUNCTION_WORDS.values())


def suspicious(segment: str, lang: str) -> str:
    """Why a path segment does not look like a heading ('' when it does)."""
    s = unicodedata.normalize("NFKC", segment).strip()
    s = re.sub(r"(\d)\s?[oºª°](?!\w)", r"\1", s)  # `§ 3 o`: an ordinal's raised o
    if not s:
        return "empty"
    if s.casefold() == "text":
        return "literal text"
    body = strip_number(s)
    # the first letter not glued to a digit (`§ 1º`: the ordinal's `o` is no word), and
    # an item label `a)` / `b.` (a law's alínea, a lettered item) is no lower-case prose
    first = re.search(r"(?<![\d\w])[^\W\d_]", re.sub(r"^[a-z][.)]\s+", "", body))
    if first and first.group().islower() and not re.match(r"^[a-z]\)", body):
        return "starts lower-case"
    if s[-1] in ",;-–—":
        return "ends with , ; or a hyphen"
    last = s.split()[-1].strip(".,:;()")
    fw = FUNCTION_WORDS.get(lang, ALL_FUNCTION_WORDS)
    if re.fullmatch(r"[^\W\d_]+", last) and last.casefold() in fw and len(s.split()) > 1:
        return "ends with a function word"
    if re.search(r"(?:\.\s*){4,}\d+", s):
        return "dot leaders and a page number"
    run = 25 if lang == "de" else 20
    if re.search(r"(?:(?!" + _CJK + r")[^\W\d_]){" + str(run) + ",}", s):
        return f"{run}+ letters without a space"
    if re.search(_CJK + "{40,}", s):  # scripts written without spaces: a longer run
        return "40+ CJK characters in a row"
    if lang != "pt" and is_tabela(s):
        return "Tabela N outside Portuguese"
    return ""


def guess_language(text: str) -> str:
    """The language whose function words are most frequent in `text`."""
    words = Counter(w.casefold() for w in re.findall(r"[^\W\d_]+", text[:200000]))
    score = {code: sum(words[w] for w in fw) for code, fw in FUNCTION_WORDS.items()}
    return max(score, key=lambda k: score[k]) if any(score.values()) else "en"


# ---- reading a document through trecho --------------------------------------------------


class Trecho:
    """trecho's reader and chunker, built once."""

    def __init__(self) -> None:
        from rag_assets.core.chunking import Policy, PolicyChunker
        from rag_assets.core.corpus import read_pdf
        from rag_assets.core.embedding.embedder import Embedder

        embedder = Embedder()
        self.counter = embedder.token_counter()
        self.chunker = PolicyChunker(Policy(), embedder)
        self.read_pdf = read_pdf
        self.can_switch = "structure" in inspect.signature(read_pdf).parameters

    def read(self, pdf: Path, outline: bool = True) -> tuple[Any, list[Any], str]:
        """The source (nodes), chunks and text of a PDF; `outline=False`: rules only."""
        kwargs: dict[str, Any] = {}
        if not outline:
            from rag_assets.core.structure.settings import StructureSettings

            kwargs["structure"] = StructureSettings(use_outline=False)
        source, _ = self.read_pdf(pdf, "doc@v1", **kwargs)
        chunks = self.chunker(source, self.counter)
        return source, chunks, source.doc.text


def heading_nodes(source: Any) -> list[Any]:
    """The heading nodes of a source's tree, in order."""
    return [n for n in source.nodes if n.kind in HEADING_KINDS]


def node_text(node: Any) -> str:
    """A heading node's printed text: label and title."""
    return " ".join(p for p in (node.label, node.title) if p)


def detected_items(source: Any) -> tuple[list[Item], list[Any]]:
    """The detected headings as items (page: the node's first page) and their nodes."""
    nodes = heading_nodes(source)
    items = [Item(node_text(n), n.title or node_text(n), n.page_start) for n in nodes]
    return items, nodes


def heading_parents(source: Any, nodes: list[Any]) -> list[int | None]:
    """For each heading node, the index (in `nodes`) of its nearest heading ancestor."""
    by_id = {n.node_id: n for n in source.nodes}
    index = {n.node_id: k for k, n in enumerate(nodes)}
    out: list[int | None] = []
    for n in nodes:
        parent = by_id.get(n.parent_id) if n.parent_id else None
        while parent is not None and parent.node_id not in index:
            parent = by_id.get(parent.parent_id) if parent.parent_id else None
        out.append(index[parent.node_id] if parent is not None else None)
    return out


def outline_titles(pdf: Path) -> list[dict[str, Any]]:
    """The PDF's outline entries (title, level), empty when it has none."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFNoOutlines

    out: list[dict[str, Any]] = []
    try:
        with pdfplumber.open(pdf) as doc:
            for level, title, *_ in doc.doc.get_outlines():
                if isinstance(title, bytes):
                    title = title.decode("utf-8", "replace")
                out.append({"title": str(title), "level": level})
    except PDFNoOutlines:
        pass
    except Exception:  # a broken outline counts as none
        pass
    return out


# ---- scoring one document ---------------------------------------------------------------


@dataclass
class Doc:
    """One document's counts (summed per source) and what went wrong in it."""

    name: str
    counts: Counter = field(default_factory=Counter)
    false_by_kind: Counter = field(default_factory=Counter)
    style_true: Counter = field(default_factory=Counter)
    style_found: Counter = field(default_factory=Counter)
    missed: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)
    bad_segments: list[str] = field(default_factory=list)
    suspicious_segments: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""

    def record(self) -> dict[str, Any]:
        """The document's figures for `--save`."""
        out: dict[str, Any] = {"name": self.name, "counts": dict(self.counts)}
        if self.false_by_kind:
            out["false_by_kind"] = dict(self.false_by_kind)
        for key in ("missed", "false", "bad_segments", "suspicious_segments"):
            if getattr(self, key):
                out[key] = getattr(self, key)[:20]
        out["seconds"] = round(self.seconds, 2)
        if self.error:
            out["error"] = self.error
        return out


def score_headings(
    doc: Doc,
    source: Any,
    truth: list[Item],
    distractors: list[dict[str, Any]],
    slack: int | None,
    suffix: str = "",
) -> None:
    """Precision, recall and parent accuracy of a source's headings against `truth`."""
    items, nodes = detected_items(source)
    pairs = assign(items, truth, slack)
    doc.counts["detected" + suffix] += len(items)
    doc.counts["det_matched" + suffix] += len(pairs)
    doc.counts["true" + suffix] += len(truth)
    doc.counts["true_matched" + suffix] += len(pairs)
    if suffix:
        return
    parents = heading_parents(source, nodes)
    back = {j: i for i, j in pairs.items()}
    for i, j in pairs.items():
        up = parents[i]
        want = truth[j].parent
        if (up is None and want is None) or (
            want is not None and back.get(want) == up and up is not None
        ):
            doc.counts["parent_ok"] += 1
    for j, t in enumerate(truth):
        for tag in t.tags or ("all",):
            doc.style_true[tag] += 1
            if j in back:
                doc.style_found[tag] += 1
        if j not in back:
            doc.missed.append(f"p{t.page}: {t.text}")
    for i, d in enumerate(items):
        if i in pairs:
            continue
        kind = false_kind(d, distractors)
        doc.false_by_kind[kind] += 1
        doc.false.append(f"p{d.page} [{kind}]: {d.text}")


def false_kind(d: Item, distractors: list[dict[str, Any]]) -> str:
    """The distractor kind a false heading comes from (`other` when none)."""
    text = norm(re.sub(r"(?:\.\s*){3,}", " ", d.text))
    best, kind = 0.0, "other"
    for same_page in (True, False):
        for x in distractors:
            if same_page != (x.get("page") == d.page):
                continue
            other = norm(re.sub(r"(?:\.\s*){3,}", " ", x["text"]))
            if not other or not text:
                continue
            if other == text:
                return x["kind"]
            score = difflib.SequenceMatcher(None, text, other, autojunk=False).ratio()
            if len(text) >= 4 and len(other) >= 4 and (text in other or other in text):
                score = max(score, 0.85)
            if score > best and score >= 0.8:
                best, kind = score, x["kind"]
        if kind != "other":
            return kind
    return kind


def score_paths(
    doc: Doc, chunks: list[Any], lang: str, truth: list[Item] | None, captions: list[str]
) -> None:
    """The chunk-path judges: against the truth (when given) and truth-free."""
    doc.counts["chunks"] += len(chunks)
    cache: dict[str, tuple[bool, str]] = {}
    both = Counter()
    for chunk in chunks:
        segments = [s for s in (chunk.path or "").split(" > ") if s.strip()]
        bad = suspect = False
        for seg in segments:
            if seg not in cache:
                ok = True
                if truth is not None:
                    ok = (
                        matches_any(seg, truth)
                        or any(quality(Item(seg, seg), caption_item(c)) for c in captions)
                        or table_label(seg, lang)
                    )
                cache[seg] = (ok, suspicious(seg, lang))
            ok, why = cache[seg]
            if not ok:
                bad = True
                if seg not in doc.bad_segments:
                    doc.bad_segments.append(seg)
            if why:
                suspect = True
                label = f"{seg} ({why})"
                if label not in doc.suspicious_segments:
                    doc.suspicious_segments.append(label)
        doc.counts["suspicious_chunks"] += suspect
        both[(bad, suspect)] += 1
    if truth is not None:
        doc.counts["chunks_judged"] += len(chunks)
        doc.counts["bad_chunks"] += sum(n for (bad, _), n in both.items() if bad)
        doc.counts["judges_agree"] += both[(True, True)] + both[(False, False)]
        doc.counts["bad_also_suspicious"] += both[(True, True)]


def score_tables(doc: Doc, source: Any, lang: str, tables: list[dict[str, Any]] | None) -> None:
    """Captions naming their tables, `Tabela N` outside Portuguese."""
    nodes = [n for n in source.nodes if n.kind in TABLE_KINDS]
    names = [(n.title or n.label or "", n.page_start) for n in nodes]
    doc.counts["table_nodes"] += len(nodes)
    if lang != "pt":
        doc.counts["tabela_elsewhere"] += sum(1 for name, _ in names if is_tabela(name))
    if tables is None:
        return
    used: set[int] = set()
    for t in tables:
        if not t["caption"]:
            continue
        doc.counts["captioned"] += 1
        want = caption_item(t["caption"])
        for k, (name, page) in enumerate(names):
            if k in used or page != t["page"]:
                continue
            if quality(Item(name, name), want):
                used.add(k)
                doc.counts["named"] += 1
                break


def score_outline(doc: Doc, pdf: Path, source: Any, suffix: str = "") -> None:
    """Outline entries found as detected headings (any page)."""
    entries = outline_titles(pdf)
    if not entries:
        return
    items, _ = detected_items(source)
    truth = [Item(e["title"]) for e in entries]
    found = assign(items, truth, None)
    doc.counts["outline" + suffix] += len(entries)
    doc.counts["outline_found" + suffix] += len(found)


def truth_items(record: dict[str, Any]) -> list[Item]:
    """A synthetic document's true headings."""
    return [
        Item(h["text"], h["title"], h["page"], h["parent"], tuple(h["style"]) or ("plain",))
        for h in record["headings"]
    ]


def outline_items(entries: list[dict[str, Any]]) -> list[Item]:
    """Outline entries as a truth tree: the parent is the last entry one level up."""
    out: list[Item] = []
    last: dict[int, int] = {}
    levels = [int(e.get("level", 1)) for e in entries]
    for k, (e, level) in enumerate(zip(entries, levels, strict=True)):
        parent = max((i for lv, i in last.items() if lv < level), default=None)
        out.append(Item(str(e["title"]), page=e.get("page"), parent=parent))
        last[level] = k
        for lv in [lv for lv in last if lv > level]:
            del last[lv]
    return out
