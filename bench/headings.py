"""Headings, source by source: trecho's section tree and chunk paths measured against a
known section tree (synthetic reports), a PDF's own outline (public PDFs) or, where no
truth exists, a truth-free judge of chunk paths (real PDFs, laws). Through trecho's core
API (`read_pdf` and the default policy's chunker), no Dagster.

Sources (`--source`, default all):

- `synth`: report-like PDFs with a known tree, drawn by `synth/headings.py` (seeds
  `--seeds`: `tune` = 0-399, `report` = 5000-5299, `A-B`; cached in `--dir`,
  default /tmp/trecho-headings). Tune on `tune`; `report` seeds are never tuned on: they
  are the figures a change is judged by.
- `real`: the PDFs of ../shared/corpora/real-pdfs (no truth tree: the truth-free judge).
- `laws`: ../shared/corpora/leis/*.pdf (the truth-free judge).
- `public`: PDFs with their own outline as truth (`heading_public.py`, when present).

Figures (per source; `--save` writes them per file too):

- heading precision: detected heading nodes (part, chapter, section) matching a true
  heading / detected; false headings counted by distractor kind (`toc`, `running`, ...)
  and `other`. Matching: NFKC, case folded, whitespace collapsed, trailing punctuation
  and dot leaders cut; equal, or one equals the other's title without its number, or
  difflib ratio >= 0.9; one to one, on the same page.
- heading recall: true headings matched / true headings; recall by heading style.
- parent accuracy: of matched true headings, the share whose nearest detected heading
  ancestor is the match of the true parent (none for a top-level heading).
- bad paths: chunks whose path has a segment that is no true heading, no true table
  caption and no table label of the document's language (`Table 3`, `Tabela 2`); target
  at most 2%.
- suspicious paths (truth-free judge): a segment that is the literal `text`, starts
  lower-case, ends with `,` `;` a hyphen or a function word, holds dot leaders and a page
  number, a run of 20+ letters without a space (25+ in German, where compounds run
  long; 40+ in Chinese, Japanese or Korean script), or `Tabela N` in a document not in
  Portuguese.
- captions: tables with a true caption whose table node is named by it; `Tabela N`
  names in documents not in Portuguese (target 0).
- outline found: outline entries whose title matches a detected heading, with the
  outline on and (where `read_pdf` takes `structure=`) with `use_outline=False`.

    python bench/headings.py [--source synth,real,public,laws] [--seeds tune|report|A-B]
        [--quick] [--dir DIR] [--save run.json] [--compare base.json [new.json]]

`--compare A B` prints two saved runs side by side (`--compare A` against this run): KEEP
when no source's figure is worse by more than one document's worth and at least one is
better, else DROP.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import inspect
import json
import logging
import re
import subprocess
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import REPO, SHARED_PDFS, machine
from synth import headings as synth
from synth.heading_words import LANGS, TABLE_WORDS

LAWS = REPO.parent / "shared" / "corpora" / "leis"
SOURCES = ("synth", "real", "public", "laws")
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


# ---- sources ----------------------------------------------------------------------------


@dataclass
class Case:
    """One file of a source: its PDF, language (None: guessed from its text), true
    headings, tables and distractors where known."""

    name: str
    pdf: Path
    lang: str | None = None
    headings: list[Item] | None = None
    tables: list[dict[str, Any]] | None = None
    distractors: list[dict[str, Any]] = field(default_factory=list)
    has_outline: bool | None = None
    slack: int | None = 0


def synth_cases(args: argparse.Namespace) -> list[Case]:
    """The synthetic reports of the seed range (written first where missing)."""
    seeds = list(synth.parse_seeds(args.seeds))
    if args.quick:
        seeds = seeds[::10]
    start = time.perf_counter()
    new = synth.generate(args.dir, seeds, progress=True)
    if new:
        spent = time.perf_counter() - start
        print(f"synth: wrote {new} seeds in {spent:.1f} s", file=sys.stderr)
    out = []
    for seed in seeds:
        pdf, record = synth.read(args.dir, seed)
        out.append(
            Case(
                f"synth-{seed}",
                pdf,
                record["language"],
                truth_items(record),
                record["tables"],
                record["distractors"],
                record["has_outline"],
            )
        )
    return out


def folder_cases(folder: Path, quick: bool) -> list[Case]:
    """Every PDF of a folder, no truth."""
    files = sorted(folder.glob("*.pdf"))
    if quick:
        files = files[:6]
    return [Case(f.stem, f) for f in files]


def public_cases(quick: bool) -> list[Case] | str:
    """`heading_public.cases()`: each PDF with its outline as truth."""
    try:
        import heading_public
    except ImportError as e:
        return f"heading_public.py not importable ({e})"
    if not hasattr(heading_public, "cases"):
        return "heading_public.py has no cases() yet"
    try:
        found = heading_public.cases()
    except Exception as e:  # the other helper's module, mid-writing
        return f"heading_public.cases() failed: {type(e).__name__}: {e}"
    out = []
    for name, pdf, entries in found[:5] if quick else found:
        out.append(Case(name, Path(pdf), None, outline_items(entries), None, [], True, 1))
    return out


def load_cases(key: str, args: argparse.Namespace) -> list[Case] | str:
    """A source's cases, or why it is not available."""
    if key == "synth":
        return synth_cases(args)
    if key == "real":
        if not SHARED_PDFS.exists():
            return f"{SHARED_PDFS} not found"
        return folder_cases(SHARED_PDFS, args.quick)
    if key == "laws":
        return folder_cases(LAWS, args.quick) if LAWS.exists() else f"{LAWS} not found"
    if key == "public":
        return public_cases(args.quick)
    return f"unknown source {key!r}"


def measure(case: Case, trecho: Trecho) -> Doc:
    """All figures of one file."""
    doc = Doc(case.name)
    start = time.perf_counter()
    source, chunks, text = trecho.read(case.pdf)
    lang = case.lang or guess_language(text)
    doc.counts["docs"] += 1
    if case.headings is not None:
        score_headings(doc, source, case.headings, case.distractors, case.slack)
    else:
        doc.counts["headings_seen"] += len(heading_nodes(source))
    captions = [t["caption"] for t in case.tables or [] if t["caption"]]
    score_paths(doc, chunks, lang, case.headings, captions)
    score_tables(doc, source, lang, case.tables)
    score_outline(doc, case.pdf, source)
    if trecho.can_switch and doc.counts["outline"]:
        rules, _, _ = trecho.read(case.pdf, outline=False)
        score_outline(doc, case.pdf, rules, "_rules")
        if case.headings is not None:
            score_headings(doc, rules, case.headings, case.distractors, case.slack, "_rules")
    doc.seconds = time.perf_counter() - start
    return doc


# ---- reporting --------------------------------------------------------------------------


def figures(counts: Counter | dict[str, int]) -> dict[str, float | None]:
    """The figures of summed counts (None where the denominator is empty)."""
    out: dict[str, float | None] = {}
    for name, (num, den, _) in FIGURES.items():
        if den is None:
            out[name] = float(counts.get(num, 0))
        else:
            d = counts.get(den, 0)
            out[name] = counts.get(num, 0) / d if d else None
    return out


def summarize(key: str, title: str, docs: list[Doc], failed: list[tuple[str, str]]) -> dict:
    """A source's record: summed counts, figures, false headings by kind, recall by
    style, and each file's own figures."""
    counts: Counter = Counter()
    kinds: Counter = Counter()
    st_true: Counter = Counter()
    st_found: Counter = Counter()
    for d in docs:
        counts.update(d.counts)
        kinds.update(d.false_by_kind)
        st_true.update(d.style_true)
        st_found.update(d.style_found)
    counts["failed"] = len(failed)
    return {
        "title": title,
        "docs": len(docs),
        "counts": dict(counts),
        "figures": figures(counts),
        "false_by_kind": dict(kinds.most_common()),
        "recall_by_style": {
            tag: {"true": st_true[tag], "found": st_found[tag]} for tag in sorted(st_true)
        },
        "failed": [{"name": n, "error": e} for n, e in failed],
        "seconds": round(sum(d.seconds for d in docs), 1),
        "files": [d.record() for d in docs],
    }


def fmt(x: float | None, count: bool = False) -> str:
    """A figure for a table cell."""
    if x is None:
        return "–"
    return f"{x:.0f}" if count else f"{x:.3f}"


def report(key: str, rec: dict[str, Any]) -> None:
    """Print a source's figures."""
    f, c = rec["figures"], rec["counts"]
    print(
        f"\n== {key}: {rec['title']} — {rec['docs']} files, {c.get('failed', 0)} failed, "
        f"{rec['seconds']:.0f} s"
    )
    print("| figure | value | of |")
    print("|---|---|---|")
    for name, (num, den, higher) in FIGURES.items():
        if f[name] is None and den is not None:
            continue
        if den is None and not c.get(num) and name != "tabela_elsewhere":
            continue
        of = f"{c.get(num, 0)} / {c.get(den, 0)}" if den else ""
        arrow = "↑" if higher else "↓"
        target = " (target ≤ 0.02)" if name == "bad_paths" else ""
        target = " (target 0)" if name == "tabela_elsewhere" else target
        print(f"| {name.replace('_', ' ')} {arrow}{target} | {fmt(f[name], den is None)} | {of} |")
    if c.get("chunks") and "judges_agree" in c:
        print(
            f"truth-free judge vs truth judge: agree on {c['judges_agree'] / c['chunks']:.3f} "
            f"of chunks; flags {c.get('bad_also_suspicious', 0)} of "
            f"{c.get('bad_chunks', 0)} bad chunks"
        )
    if rec["false_by_kind"]:
        kinds = ", ".join(f"{k} {n}" for k, n in rec["false_by_kind"].items())
        print(f"false headings by kind: {kinds}")
    styles = rec["recall_by_style"]
    if len(styles) > 1:
        parts = [
            f"{t} {s['found'] / s['true']:.2f} ({s['true']})"
            for t, s in styles.items()
            if s["true"]
        ]
        print("recall by heading style: " + ", ".join(parts))
    if c.get("headings_seen"):
        print(
            f"detected headings (no truth to judge them by): {c['headings_seen']} in "
            f"{rec['docs']} files"
        )
    for item in rec["failed"]:
        print(f"failed: {item['name']}: {item['error']}")


def worst(rec: dict[str, Any], n: int) -> None:
    """The files with the most bad or suspicious segments."""
    files = sorted(
        rec["files"], key=lambda d: -len(d.get("bad_segments", d.get("suspicious_segments", [])))
    )
    for d in files[:n]:
        segs = d.get("bad_segments") or d.get("suspicious_segments") or []
        if segs:
            print(f"  {d['name']}: {'; '.join(segs[:4])}")


def run_record(sources: dict[str, Any], args: argparse.Namespace, rules: bool) -> dict:
    """The whole run as saved by `--save`."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", "rag_assets"],
            cwd=REPO,
            capture_output=True,
            text=True,
        ).stdout.splitlines()
    except OSError:
        commit, changed = "?", []
    import rag_assets

    package = Path(rag_assets.__file__).resolve().parent
    here = package.is_relative_to(REPO)
    return {
        "when": dt.datetime.now().isoformat(timespec="seconds"),
        "commit": commit,
        "rag_assets": str(package),  # the trecho measured (a snapshot elsewhere: PYTHONPATH)
        # rag_assets files not at `commit` (None: a trecho outside this checkout)
        "uncommitted": [line[3:] for line in changed] if here else None,
        "seeds": args.seeds,
        "quick": args.quick,
        "generator": synth.VERSION,
        "rules_only_measured": rules,
        "machine": machine(),
        "sources": sources,
    }


def compare(base: dict[str, Any], new: dict[str, Any]) -> bool:
    """Two runs side by side, source by source, and the keep rule: KEEP when no source's
    figure is worse by more than one document's worth and at least one is better."""
    common = [k for k in new["sources"] if k in base["sources"]]
    print(
        f"\n== compare: base {base.get('commit', '?')} ({base.get('when', '?')}, seeds "
        f"{base.get('seeds')}) -> new {new.get('commit', '?')} ({new.get('when', '?')}, "
        f"seeds {new.get('seeds')})"
    )
    only = sorted(set(base["sources"]) ^ set(new["sources"]))
    if only:
        print(f"left out (in one run only): {', '.join(only)}")
    worse: list[str] = []
    better: list[str] = []
    print("| source | figure | base | new | change | one document |")
    print("|---|---|---|---|---|---|")
    for key in common:
        a, b = base["sources"][key], new["sources"][key]
        if a.get("docs") != b.get("docs"):
            print(f"warning: {key} scored {a.get('docs')} files in the base, {b.get('docs')} new")
        docs = max(1, a.get("docs", 1))
        for name, (num, den, higher) in FIGURES.items():
            x, y = a["figures"].get(name), b["figures"].get(name)
            if x is None or y is None:
                continue
            if den is None:
                step = max(1.0, a["counts"].get(num, 0) / docs)
            else:
                step = 1.0 / docs
            move = (y - x) if higher else (x - y)
            mark = ""
            if move < -step:
                worse.append(f"{key} {name}")
                mark = " **worse**"
            elif move > 1e-12:
                better.append(f"{key} {name}")
            count = den is None
            print(
                f"| {key} | {name.replace('_', ' ')} | {fmt(x, count)} | {fmt(y, count)} | "
                f"{y - x:+.3f}{mark} | {step:.3f} |"
            )
    kept = not worse and bool(better)
    print(
        "keep rule: no source's figure worse by more than one document's worth "
        "(1/files of a share, a file's mean of a count) and at least one better"
    )
    if worse:
        print(f"worse: {', '.join(worse)}")
    print(f"better: {', '.join(better) if better else 'none'}")
    print(f"verdict: {'KEEP' if kept else 'DROP'}")
    return kept


def main(argv: list[str] | None = None) -> int:
    """Measure, print, save, compare."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--source", default=",".join(SOURCES), help="synth,real,public,laws")
    parser.add_argument(
        "--seeds",
        default="tune",
        help="synth seeds: tune (0-399, for tuning), report (5000-5299, never tuned on), "
        "A-B or A,B,C",
    )
    parser.add_argument("--dir", type=Path, default=synth.DEFAULT_DIR, help="synth cache")
    parser.add_argument("--quick", action="store_true", help="every 10th seed, a few files")
    parser.add_argument("--save", help="write every figure (per source and file) as JSON")
    parser.add_argument("--compare", nargs="+", metavar="RUN", help="base [new] saved runs")
    parser.add_argument("--worst", type=int, default=5, help="files with most bad segments")
    args = parser.parse_args(argv)
    if args.compare and len(args.compare) > 2:
        parser.error("--compare takes one saved run (against this run) or two")
    if args.compare and len(args.compare) == 2:
        runs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.compare]
        return 0 if compare(*runs) else 1
    logging.disable(logging.WARNING)
    print(machine(), file=sys.stderr)
    trecho = Trecho()
    if not trecho.can_switch:
        print("read_pdf takes no structure= yet: rules-only figures left out", file=sys.stderr)
    sources: dict[str, Any] = {}
    for key in [k.strip() for k in args.source.split(",") if k.strip()]:
        cases = load_cases(key, args)
        if isinstance(cases, str) or not cases:
            print(f"skip {key}: {cases or 'no files'}", file=sys.stderr)
            continue
        docs: list[Doc] = []
        failed: list[tuple[str, str]] = []
        for k, case in enumerate(cases):
            try:
                docs.append(measure(case, trecho))
            except Exception as e:  # one file's failure is counted, the run goes on
                failed.append((case.name, f"{type(e).__name__}: {str(e)[:160]}"))
            if (k + 1) % 25 == 0 or k + 1 == len(cases):
                print(f"  {key}: {k + 1}/{len(cases)}", file=sys.stderr, flush=True)
        title = {
            "synth": f"synthetic reports (seeds {args.seeds}{', quick' if args.quick else ''}, "
            f"v{synth.VERSION}, {synth.folder(args.dir)})",
            "real": str(SHARED_PDFS),
            "laws": str(LAWS),
            "public": "public PDFs, their outline as truth (heading_public.py)",
        }[key]
        sources[key] = summarize(key, title, docs, failed)
        report(key, sources[key])
        worst(sources[key], args.worst)
    record = run_record(sources, args, trecho.can_switch)
    if args.save:
        Path(args.save).write_text(json.dumps(record, indent=1, ensure_ascii=False), "utf-8")
        print(f"saved: {args.save}")
    if args.compare:
        base = json.loads(Path(args.compare[0]).read_text(encoding="utf-8"))
        compare(base, record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
