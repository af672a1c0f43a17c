"""Size-based baselines: exact spans, nothing lost, real overlap, moving cuts, honest sizes."""

from __future__ import annotations

import pytest

from rag_assets.core.chunking import sized
from rag_assets.core.chunking.sized import (
    fixed_chars,
    fixed_tokens,
    offsets_for,
    recursive,
)
from rag_assets.core.embedding.embedder import MINILM, Embedder
from rag_assets.core.embedding.tokens import TokenCounter
from rag_assets.core.lake.schemas import Chunk, DocText

from .conftest import SAMPLE_LAKE

LGPD_PDF = SAMPLE_LAKE / "raw" / "lgpd" / "2018.pdf"  # a copy of the shared corpus law

PAGES = [
    "Política de Privacidade da Empresa Exemplo\n"
    "1. Objetivo\n"
    "Esta política descreve como a Empresa Exemplo coleta, usa, armazena e compartilha "
    "dados pessoais de clientes, fornecedores e colaboradores. Ela se aplica a todas as "
    "unidades de negócio e a todos os canais de atendimento, inclusive os digitais.\n\n"
    "2. Base legal\n"
    "O tratamento de dados pessoais somente poderá ser realizado mediante o fornecimento de "
    "consentimento pelo titular, para o cumprimento de obrigação legal ou regulatória, ou "
    "quando necessário para a execução de contrato do qual seja parte o titular.",
    "3. Consentimento\n"
    "O consentimento deverá ser fornecido por escrito ou por outro meio que demonstre a "
    "manifestação de vontade do titular. Caso seja fornecido por escrito, deverá constar de "
    "cláusula destacada das demais cláusulas contratuais. Cabe ao controlador o ônus da "
    "prova de que o consentimento foi obtido em conformidade com esta política.\n\n"
    "4. Prazo de resposta\n"
    "As solicitações do titular serão respondidas em até quinze dias, contados da data do "
    "requerimento. O prazo de reembolso, quando houver cobrança indevida, é de trinta dias.",
    "5. Direitos do titular\n"
    "O titular tem direito a obter do controlador, a qualquer momento e mediante "
    "requisição: confirmação da existência de tratamento; acesso aos dados; correção de "
    "dados incompletos, inexatos ou desatualizados; anonimização, bloqueio ou eliminação de "
    "dados desnecessários; e portabilidade dos dados a outro fornecedor de serviço.\n\n"
    "6. Vigência\n"
    "Esta política entra em vigor na data de sua publicação e será revista a cada dois anos.",
]


def _doc(pages: list[str]) -> DocText:
    starts, pos = [], 0
    for page in pages:
        starts.append(pos)
        pos += len(page) + 1
    return DocText("\n".join(pages), starts)


DOC = _doc(PAGES)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return Embedder(model=MINILM).token_counter()


@pytest.fixture(scope="module")
def lgpd() -> DocText:
    pdfplumber = pytest.importorskip("pdfplumber")
    with pdfplumber.open(LGPD_PDF) as pdf:
        return _doc([page.extract_text() or "" for page in pdf.pages])


def _run(name: str, doc: DocText, counter: TokenCounter, **kw: object) -> list[Chunk]:
    fn = {"fixed_chars": fixed_chars, "fixed_tokens": fixed_tokens, "recursive": recursive}[name]
    return fn(doc, "pol@v7", counter, **kw)


def _bare(counter: TokenCounter, text: str) -> int:
    return counter.count(text) - counter.overhead


def assert_exact_and_complete(doc: DocText, chunks: list[Chunk]) -> None:
    """Every span is exact and trimmed, ordinals run 0..n-1, and no visible char is lost."""
    assert chunks
    covered = [False] * len(doc.text)
    for i, c in enumerate(chunks):
        assert c.ordinal == i
        assert c.chunk_id == f"{c.partition_key}#{c.strategy}/{i}"
        assert c.body and c.body == c.body.strip()
        assert doc.text[c.char_start : c.char_end] == c.body
        assert (c.page_start, c.page_end) == doc.pages_of(c.char_start, c.char_end)
        assert (c.kind, c.path, c.parent_id) == ("text", "", None)
        for k in range(c.char_start, c.char_end):
            covered[k] = True
    lost = [k for k, ch in enumerate(doc.text) if not ch.isspace() and not covered[k]]
    assert not lost, f"chars not in any chunk: {doc.text[lost[0] : lost[0] + 40]!r}"
    assert len({c.chunk_id for c in chunks}) == len(chunks)


CASES = [
    ("fixed_chars", {"size": 300, "overlap": 60}),
    ("fixed_chars", {"size": 300, "overlap": 0, "start_offset": 150}),
    ("fixed_chars", {"size": 250, "overlap": 50, "start_offset": 125}),
    ("fixed_tokens", {"size": 64, "overlap": 16}),
    ("fixed_tokens", {"size": 64, "overlap": 0, "start_offset": 32}),
    ("fixed_tokens", {"size": 48, "overlap": 8, "start_offset": 12}),
    ("recursive", {"size": 64, "overlap": 16}),
    ("recursive", {"size": 24, "overlap": 8}),
    ("recursive", {"size": 300, "overlap": 60, "length": "chars"}),
    ("recursive", {"size": 80, "overlap": 20, "length": "chars"}),
]


@pytest.mark.parametrize(("name", "kw"), CASES)
def test_spans_exact_and_nothing_lost(counter, name, kw):
    chunks = _run(name, DOC, counter, **kw)
    assert len(chunks) > 2
    assert_exact_and_complete(DOC, chunks)
    assert chunks[0].strategy.startswith(name)


@pytest.mark.parametrize(("name", "kw"), CASES[:1] + CASES[3:4] + CASES[6:7] + CASES[8:9])
def test_header_goes_into_text_and_count(counter, name, kw):
    header = "[Política de Privacidade | | v7]"
    plain = _run(name, DOC, counter, **kw)
    headed = _run(name, DOC, counter, header=header, **kw)
    assert [c.body for c in headed] == [c.body for c in plain]
    for p, h in zip(plain, headed, strict=True):
        assert p.text == p.body and p.header == ""
        assert h.text == header + "\n" + h.body and h.header == header
        assert h.token_count == counter.count(h.text) > p.token_count == counter.count(p.text)
        assert h.truncated == (h.token_count > counter.max_tokens)
        assert h.content_hash != p.content_hash


def _overlap_text(a: Chunk, b: Chunk) -> str:
    return DOC.text[max(a.char_start, b.char_start) : min(a.char_end, b.char_end)].strip()


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("fixed_chars", {"size": 300, "overlap": 60}),
        ("fixed_tokens", {"size": 64, "overlap": 16}),
        ("recursive", {"size": 24, "overlap": 8}),
        ("recursive", {"size": 200, "overlap": 80, "length": "chars"}),
    ],
)
def test_overlap_repeats_text_between_neighbours(counter, name, kw):
    chunks = _run(name, DOC, counter, **kw)
    shared = [_overlap_text(a, b) for a, b in zip(chunks, chunks[1:], strict=False)]
    if name == "recursive":  # LangChain overlaps neighbours merged from the same split
        assert any(shared)
    else:  # fixed windows overlap every time
        assert shared and all(shared)
    for (a, b), s in zip(zip(chunks, chunks[1:], strict=False), shared, strict=True):
        if s:
            assert s in a.body and s in b.body
            assert b.char_start < a.char_end


def test_fixed_overlap_sizes(counter):
    chars = _run("fixed_chars", DOC, counter, size=300, overlap=60)
    for a, b in zip(chars, chars[1:], strict=False):
        assert a.char_end - b.char_start <= 60
    no_overlap = _run("fixed_chars", DOC, counter, size=300, overlap=0)
    for a, b in zip(no_overlap, no_overlap[1:], strict=False):
        assert b.char_start >= a.char_end

    offsets = counter.offsets(DOC.text)
    toks = _run("fixed_tokens", DOC, counter, size=64, overlap=16)
    for c in toks[:-1]:  # every full window holds exactly `size` tokens of the doc
        inside = [o for o in offsets if c.char_start <= o[0] and o[1] <= c.char_end]
        assert len(inside) == 64
    for a, b in zip(toks, toks[1:], strict=False):
        shared = [o for o in offsets if b.char_start <= o[0] and o[1] <= a.char_end]
        assert len(shared) == 16


@pytest.mark.parametrize(
    ("name", "size", "unit"),
    [("fixed_chars", 300, "chars"), ("fixed_tokens", 64, "tokens")],
)
def test_start_offsets_move_the_cuts(counter, name, size, unit):
    runs = {s: _run(name, DOC, counter, size=size, overlap=0, start_offset=s) for s in (0, 32)}
    starts = {s: {c.char_start for c in chunks} for s, chunks in runs.items()}
    assert starts[0] != starts[32]
    head = runs[32][0]
    assert head.char_start == runs[0][0].char_start  # the head keeps the text before the cut
    if unit == "chars":
        assert head.body == DOC.text[:32].strip()
        assert runs[32][1].char_start >= 32
    else:
        offsets = counter.offsets(DOC.text)
        assert head.char_end == offsets[31][1]
        assert runs[32][1].char_start == offsets[32][0]
    assert runs[32][0].chunk_id.endswith("-s32/0")
    assert runs[0][0].chunk_id != runs[32][0].chunk_id
    for chunks in runs.values():
        assert_exact_and_complete(DOC, chunks)


def test_offsets_for():
    assert offsets_for(512) == [0, 128, 256, 384]
    assert offsets_for(512, 4) == [0, 128, 256, 384]
    assert offsets_for(1000, 3) == [0, 333, 666]
    assert offsets_for(256, 1) == [0]
    assert offsets_for(2, 4) == [0, 1]  # no duplicate runs when n > size
    with pytest.raises(ValueError, match="size"):
        offsets_for(0)
    with pytest.raises(ValueError, match="n "):
        offsets_for(512, 0)


@pytest.mark.parametrize(("size", "overlap"), [(24, 8), (40, 0), (64, 16), (128, 32)])
def test_recursive_tokens_never_exceed_size(counter, size, overlap):
    chunks = _run("recursive", DOC, counter, size=size, overlap=overlap)
    assert max(_bare(counter, c.body) for c in chunks) <= size
    assert_exact_and_complete(DOC, chunks)


def test_recursive_mid_word_separators_still_within_size(counter):
    # Cutting inside words makes token counts non-additive; merged spans are re-measured.
    for size in (8, 16, 33):
        chunks = _run("recursive", DOC, counter, size=size, overlap=4, separators=("a", "e"))
        assert max(_bare(counter, c.body) for c in chunks) <= size
        assert_exact_and_complete(DOC, chunks)


def test_recursive_merge_falls_back_to_exact_lengths(counter):
    # Summed piece lengths that undercount (as mid-word cuts can) must not leak past `size`.
    splitter = sized._Recursive(DOC.text, counter, 16, 4, sized.DEFAULT_SEPARATORS, "tokens")
    pieces = sized._split_keep(DOC.text, 0, len(DOC.text), " ")
    spans = splitter.merge(pieces, [0] * len(pieces))
    assert len(spans) > 10
    assert max(_bare(counter, DOC.text[s:e]) for s, e in spans) <= 16


@pytest.mark.parametrize(("size", "overlap"), [(60, 10), (150, 0), (300, 60)])
def test_recursive_chars_never_exceed_size(counter, size, overlap):
    chunks = _run("recursive", DOC, counter, size=size, overlap=overlap, length="chars")
    assert max(len(c.body) for c in chunks) <= size
    assert_exact_and_complete(DOC, chunks)


def test_recursive_prefers_the_coarsest_separator(counter):
    doc = _doc(["\n\n".join(PAGES)])
    paragraphs, pos = [], 0
    for para in doc.text.split("\n\n"):
        paragraphs.append((pos, pos + len(para)))
        pos += len(para) + 2
    longest = max(_bare(counter, doc.text[s:e]) for s, e in paragraphs)
    chunks = _run("recursive", doc, counter, size=longest, overlap=0)
    # whole paragraphs only: every chunk starts and ends where a paragraph does
    assert {c.char_start for c in chunks} <= {s for s, _ in paragraphs}
    assert {c.char_end for c in chunks} <= {e for _, e in paragraphs}
    assert len(chunks) >= len(PAGES)
    assert_exact_and_complete(doc, chunks)


def test_recursive_hard_cuts_what_no_separator_breaks(counter):
    word = "dados-pessoais-sensíveis-" * 40  # no separator in it (a 100+ char word is [UNK])
    doc = _doc([f"Início. {word} fim."])
    for length, size, measure in [
        ("chars", 100, len),
        ("tokens", 20, lambda t: _bare(counter, t)),
    ]:
        chunks = _run("recursive", doc, counter, size=size, overlap=5, length=length)
        assert len(chunks) > 3
        assert max(measure(c.body) for c in chunks) <= size
        assert_exact_and_complete(doc, chunks)


def test_recursive_separator_variants_get_their_own_name(counter):
    default = _run("recursive", DOC, counter, size=64, overlap=16)
    custom = _run("recursive", DOC, counter, size=64, overlap=16, separators=("\n", " "))
    assert default[0].strategy == "recursive_tokens-64-o16"
    assert custom[0].strategy.startswith("recursive_tokens-64-o16-sep")
    chars = _run("recursive", DOC, counter, size=300, overlap=60, length="chars")
    assert chars[0].strategy == "recursive_chars-300-o60"


def test_strategy_names_encode_parameters(counter):
    assert _run("fixed_chars", DOC, counter)[0].chunk_id == "pol@v7#fixed_chars-1000-o200-s0/0"
    assert _run("fixed_tokens", DOC, counter)[0].strategy == "fixed_tokens-512-o64-s0"
    assert (
        _run("fixed_tokens", DOC, counter, size=256, overlap=32, start_offset=64)[0].strategy
        == "fixed_tokens-256-o32-s64"
    )


def test_small_doc_is_one_chunk_and_empty_doc_none(counter):
    small = _doc(["  Art. 1º Esta Lei dispõe sobre dados.  "])
    for name in ("fixed_chars", "fixed_tokens", "recursive"):
        chunks = _run(name, small, counter)
        assert [c.body for c in chunks] == ["Art. 1º Esta Lei dispõe sobre dados."]
        assert (chunks[0].char_start, chunks[0].page_start, chunks[0].page_end) == (2, 1, 1)
        assert chunks[0].truncated is False
        assert _run(name, _doc(["", "  \n "]), counter) == []


def test_pages_follow_the_span(counter):
    chunks = _run("fixed_chars", DOC, counter, size=300, overlap=60)
    assert chunks[0].page_start == 1
    assert chunks[-1].page_end == len(PAGES)
    assert any(c.page_start < c.page_end for c in chunks)  # a window across a page break


@pytest.mark.parametrize(
    ("name", "kw", "match"),
    [
        ("fixed_chars", {"size": 0}, "size must be > 0"),
        ("fixed_chars", {"size": 100, "overlap": 100}, r"overlap \(100\) must be smaller"),
        ("fixed_chars", {"size": 100, "overlap": -1}, "overlap must be >= 0"),
        ("fixed_chars", {"size": 100, "overlap": 10, "start_offset": 100}, "start_offset"),
        ("fixed_chars", {"start_offset": -5}, "start_offset"),
        ("fixed_tokens", {"size": -512}, "size must be > 0"),
        ("fixed_tokens", {"size": 64, "overlap": 64}, "overlap"),
        ("fixed_tokens", {"size": 64, "overlap": 8, "start_offset": 64}, "start_offset"),
        ("recursive", {"size": 0}, "size must be > 0"),
        ("recursive", {"size": 64, "overlap": 80}, "overlap"),
        ("recursive", {"length": "words"}, "length must be 'tokens' or 'chars'"),
        ("recursive", {"separators": ()}, "separators"),
        ("recursive", {"separators": "\n"}, "separators"),
    ],
)
def test_bad_args_raise_value_error(counter, name, kw, match):
    with pytest.raises(ValueError, match=match):
        _run(name, DOC, counter, **kw)


class _TruncatingTokenizer:
    """Stands in for a tokenizer configured to truncate: returns only the first 10 tokens."""

    def __init__(self, real: object) -> None:
        self.real = real

    def __call__(self, text: str, **kw: object) -> dict:
        enc = self.real(text, **kw)
        return {k: v[:10] for k, v in enc.items()}


def test_fixed_tokens_refuses_a_truncating_tokenizer(counter):
    bad = TokenCounter(_TruncatingTokenizer(counter.tokenizer), counter.max_tokens)
    with pytest.raises(RuntimeError, match="truncat"):
        fixed_tokens(DOC, "pol@v7", bad, size=64, overlap=0)


def test_lgpd_real_law(counter, lgpd):
    """On the real law (pdfplumber text): 512-token windows are all reported truncated by
    the 256-token model, nothing is lost, and recursive stays within size."""
    chunks = fixed_tokens(lgpd, "lgpd@2018", counter, size=512, overlap=64)
    assert counter.max_tokens == 256
    assert len(chunks) > 20
    assert all(c.truncated and c.token_count > 256 for c in chunks[:-1])
    assert chunks[-1].truncated == (chunks[-1].token_count > 256)
    assert chunks[-1].page_end == lgpd.page_at(len(lgpd.text) - 1)
    assert_exact_and_complete(lgpd, chunks)

    for off in offsets_for(512):
        shifted = fixed_tokens(lgpd, "lgpd@2018", counter, start_offset=off)
        assert_exact_and_complete(lgpd, shifted)

    rec = recursive(lgpd, "lgpd@2018", counter, size=256, overlap=32)
    assert max(_bare(counter, c.body) for c in rec) <= 256
    assert_exact_and_complete(lgpd, rec)
    chars = fixed_chars(lgpd, "lgpd@2018", counter)
    assert_exact_and_complete(lgpd, chars)
