"""Legal chunkers: one chunk per article, per numbered paragraph group, or per point.

Laws are read by their own numbering, and measurements on the laws (docs/design.md)
favour small units under their article's first line (one chunk per §/inciso group: hit@3
0.43 at ~260 tokens sent, against 0.22 for whole articles, a third of which the model
truncated). These strategies let the eval compare the three granularities on the same tree:

- `legal-article`: one chunk per article (caput, every §, inciso and alínea);
- `legal-paragraph`: the caput with its incisos, then each `§`/`Parágrafo único` with its
  incisos and alíneas;
- `legal-point`: the finest units: the caput alone, each inciso (with its alíneas when the
  whole fits the model, else each alínea alone), each § alone (its incisos separately).

Every chunk that does not start at its article repeats the article's lead (its first
sentence, `lead_of`), and, below a § or an inciso, that unit's own first words too, so that
`a) segurança pública;` still says what it is a case of. Its header path ends with the
unit's label (`... > Art. 5º > X`); pieces of a unit cut for size keep the unit's path.

Token truth: no chunk exceeds what the model reads. A unit too long is cut at its inner
units first (incisos, §), then sentences, printed lines, words (`units.fit_to_budget`), and the
pieces are packed back greedily up to the model's maximum, each repeating the header and
the leads; so `legal-article` is never truncated, it is split (`~1`, `~2`, ...).

Text outside articles (the preamble, section text of non-legal documents) and table rows
are chunked by `structural_chunks`, so a document chunked with a legal strategy loses no
text; bare headings live on in the header paths, as in the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from rag_assets.core.chunking.base import (
    PATH_SEP,
    ChunkBuilder,
    Chunker,
    DocInfo,
    Source,
    chunk_text,
    make_header,
)
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.chunking.units import Unit, fit_to_budget, lead_of
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.errors import ConfigError
from rag_assets.core.lake import Chunk, DocText, Node
from rag_assets.core.structure import path_names, path_of

LegalUnit = Literal["article", "paragraph", "point"]
LEGAL_UNITS: tuple[LegalUnit, ...] = ("article", "paragraph", "point")
TABLE_KINDS = ("table", "table_row")
LEAD_KINDS = ("article", "paragraph", "item")  # units whose first words later pieces repeat
INNER_LEAD_TOKENS = 32  # a § or inciso lead is shorter than the article's (48)


@dataclass
class _Atom:
    """The own text of one node of an article (up to its first child), with its span."""

    node: Node
    start: int
    end: int


@dataclass
class _Article:
    """An article with the atoms that tile its span, in reading order."""

    node: Node
    atoms: list[_Atom] = field(default_factory=list)


class _Writer:
    """Renders units of one document into chunks (header, leads, the document's own text)."""

    def __init__(
        self,
        source: Source,
        counter: TokenCounter,
        by_id: dict[str, Node],
        header_mode: str,
        strategy: str,
    ) -> None:
        self.doc: DocText = source.doc
        self.info: DocInfo = source.info
        self.counter = counter
        self.by_id = by_id
        self.header_mode = header_mode
        self._leads: dict[str, str] = {}
        self.build = ChunkBuilder.of(source.info, source.doc, counter, strategy)

    def lead(self, node: Node) -> str:
        """What a piece that does not start at `node` repeats of it (cached)."""
        if node.node_id not in self._leads:
            if not node.text.strip():
                value = node.label
            elif node.kind == "article":
                value = lead_of(node.text, self.counter)
            else:
                value = lead_of(node.text, self.counter, INNER_LEAD_TOKENS)
            self._leads[node.node_id] = value
        return self._leads[node.node_id]

    def chain(self, node: Node) -> list[Node]:
        """The legal units from the article down to `node` whose leads may be repeated."""
        nodes = path_of(node, self.by_id)
        first = next((i for i, n in enumerate(nodes) if n.kind == "article"), 0)
        return [n for n in nodes[first:] if n.kind in LEAD_KINDS]

    def path(self, node: Node) -> str:
        """The section path of a unit, its own label last (text nodes add nothing)."""
        return PATH_SEP.join(path_names(node, self.by_id))

    def render(self, node: Node, start: int, end: int) -> tuple[str, str, str]:
        """(header, body, text) of a chunk holding `doc.text[start:end]` of unit `node`."""
        leads = [self.lead(a) for a in self.chain(node) if start > a.char_start]
        header = make_header(self.info, self.path(node), self.header_mode)
        body = "\n".join([*[x for x in leads if x], self.doc.text[start:end]])
        return header, body, chunk_text(header, body)

    def tokens(self, node: Node, start: int, end: int) -> int:
        """Tokens the model reads for the chunk `render` would make."""
        return self.counter.count(self.render(node, start, end)[2])

    def fits(self, node: Node, start: int, end: int) -> bool:
        """Whether that chunk fits the model whole."""
        return self.tokens(node, start, end) <= self.counter.max_tokens

    def chunk(self, node: Node, article: Node, start: int, end: int, chunk_id: str) -> Chunk:
        """One chunk of unit `node` (of `article`) spanning `doc.text[start:end]`."""
        header, body, _ = self.render(node, start, end)
        return self.build.chunk(
            chunk_id,
            start,
            end,
            header,
            body,
            kind=node.kind,
            parent_id=article.node_id,
            path=self.path(node),
        )

    def emit(self, node: Node, article: Node, atoms: Sequence[_Atom]) -> list[Chunk]:
        """The chunks of one unit: one when it fits, else packed pieces `~1`, `~2`, ..."""
        seg = _segment(node)
        start, end = atoms[0].start, atoms[-1].end
        if self.fits(node, start, end):
            return [self.chunk(node, article, start, end, f"{self.info.partition_key}#{seg}")]
        spans = self._pack(node, self._pieces(node, seg, atoms))
        return [
            self.chunk(node, article, s, e, f"{self.info.partition_key}#{seg}~{i}")
            for i, (s, e) in enumerate(spans, start=1)
        ]

    def _pieces(self, node: Node, seg: str, atoms: Sequence[_Atom]) -> list[Unit]:
        """A unit's atoms cut (sentences, lines, words) to fit under its header and leads."""
        widest = self.render(node, atoms[-1].end, atoms[-1].end)[2]  # every lead repeated
        room = max(8, self.counter.max_tokens - self.counter.count(widest))
        pieces: list[Unit] = []
        for atom in atoms:
            text = self.doc.text[atom.start : atom.end]
            pieces.extend(fit_to_budget(Unit(seg, text, atom.start, atom.end), room, self.counter))
        return pieces

    def _pack(self, node: Node, pieces: list[Unit]) -> list[tuple[int, int]]:
        """Greedy runs of adjacent pieces whose rendered chunk fits the model (measured)."""
        spans: list[tuple[int, int]] = []
        queue = list(pieces)
        i = 0
        while i < len(queue):
            first = queue[i]
            excess = self.tokens(node, first.start, first.end) - self.counter.max_tokens
            if excess > 0:  # the estimate was short by a few tokens: cut this piece finer
                own = self.counter.count(first.text) - self.counter.overhead
                finer = fit_to_budget(first, max(4, own - excess - 2), self.counter)
                if len(finer) > 1:
                    queue[i : i + 1] = finer
                    continue
            j = i + 1
            while j < len(queue) and self.fits(node, first.start, queue[j].end):
                j += 1
            spans.append((first.start, queue[j - 1].end))
            i = j
        return spans


def _segment(node: Node) -> str:
    """The structural part of a node id (`art-5/inc-x`)."""
    return node.node_id.split("#", 1)[1] if "#" in node.node_id else "doc"


def _articles(doc: DocText, nodes: Sequence[Node], by_id: dict[str, Node]) -> list[_Article]:
    """Every article with the atoms tiling its span (tables inside it left out)."""
    owner: dict[str, str | None] = {}

    def article_of(node: Node) -> str | None:
        if node.node_id not in owner:
            if node.kind == "article":
                owner[node.node_id] = node.node_id
            elif node.parent_id and node.parent_id in by_id:
                owner[node.node_id] = article_of(by_id[node.parent_id])
            else:
                owner[node.node_id] = None
        return owner[node.node_id]

    members: dict[str, list[Node]] = {}
    for node in nodes:
        key = article_of(node)
        if key is not None:
            members.setdefault(key, []).append(node)
    articles: list[_Article] = []
    for key, group in members.items():
        article = by_id[key]
        group.sort(key=lambda n: n.char_start)
        item = _Article(article)
        for k, node in enumerate(group):
            end = group[k + 1].char_start if k + 1 < len(group) else article.char_end
            if node.kind in TABLE_KINDS:
                continue  # table rows are chunked by structural_chunks
            start, end = _trim(doc.text, node.char_start, min(end, article.char_end))
            if end > start:
                item.atoms.append(_Atom(node, start, end))
        if item.atoms:
            articles.append(item)
    return articles


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """A span without its leading and trailing whitespace."""
    piece = text[start:end]
    stripped = piece.strip()
    if not stripped:
        return start, start
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def _within(atom: _Atom, node: Node) -> bool:
    return node.char_start <= atom.start and atom.end <= node.char_end


def _units(article: _Article, unit: LegalUnit, writer: _Writer) -> list[tuple[Node, list[_Atom]]]:
    """The article's atoms grouped into the units of the chosen granularity."""
    atoms = article.atoms
    if unit == "article":
        return [(article.node, atoms)]
    groups: list[tuple[Node, list[_Atom]]] = []
    if unit == "paragraph":
        for atom in atoms:
            if atom.node.kind == "paragraph" or not groups:
                groups.append((atom.node if atom.node.kind == "paragraph" else article.node, []))
            groups[-1][1].append(atom)
        return groups
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        if atom.node.kind == "item":
            inner = [a for a in atoms[i:] if _within(a, atom.node)]
            if len(inner) > 1 and writer.fits(atom.node, inner[0].start, inner[-1].end):
                groups.append((atom.node, inner))
                i += len(inner)
                continue
        groups.append((atom.node, [atom]))
        i += 1
    return groups


@dataclass(frozen=True)
class LegalChunker(Chunker):
    """Strategy `legal-article`, `legal-paragraph` or `legal-point`: one chunk per unit."""

    unit: LegalUnit = "point"
    header_mode: str = "full"

    def __post_init__(self) -> None:
        if self.unit not in LEGAL_UNITS:
            raise ConfigError(f"legal unit {self.unit!r} must be one of {LEGAL_UNITS}")

    @property
    def name(self) -> str:
        """`legal-<unit>`."""
        return f"legal-{self.unit}"

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """One chunk per legal unit (split to fit), each with its article's lead.

        `chunk_id` is `<partition_key>#<node path>` of the unit (`lgpd@2018#art-5/inc-x`);
        `parent_id` is the article's node id; spans point at the unit in `source.doc.text` and
        the body holds the document's own text for that span, after the repeated leads.
        """
        unit, header_mode, name = self.unit, self.header_mode, self.name
        make_header(source.info, "", header_mode)  # rejects an unknown mode up front
        by_id = {n.node_id: n for n in source.nodes}
        writer = _Writer(source, counter, by_id, header_mode, name)
        articles = _articles(source.doc, source.nodes, by_id)
        chunks: list[Chunk] = []
        for article in articles:
            for node, atoms in _units(article, unit, writer):
                chunks.extend(writer.emit(node, article.node, atoms))
        # everything else (preamble, sections, tables) as the default chunks it: the articles'
        # own texts are blanked so that the default makes no article chunks of its own
        inside = {a.node.node_id for a in articles}
        inside |= {atom.node.node_id for a in articles for atom in a.atoms}
        rest = [replace(n, text="") if n.node_id in inside else n for n in source.nodes]
        others = structural_chunks(
            replace(source, nodes=rest),
            counter,
            header_mode=header_mode,
            strategy=name,
        )
        chunks.extend(c for c in others if c.kind != "article")
        chunks.sort(key=lambda c: (c.char_start, c.char_end))
        seen: set[str] = set()
        for ordinal, chunk in enumerate(chunks):
            chunk.ordinal = ordinal
            base, n = chunk.chunk_id, 1
            while chunk.chunk_id in seen:
                n += 1
                chunk.chunk_id = f"{base}~dup{n}"
            seen.add(chunk.chunk_id)
        return chunks
