"""One thin asset module per stage: read inputs, call the core, write, attach metadata.

`PARTITIONED` is `core.stages.PIPELINE` as assets (tests/test_stages.py holds them equal).
"""

from rag_assets.assets.chunks import chunks
from rag_assets.assets.embeddings import embeddings
from rag_assets.assets.eval_report import eval_report
from rag_assets.assets.linearized_tables import linearized_tables
from rag_assets.assets.page_text import page_text
from rag_assets.assets.raw_pdf import raw_pdf
from rag_assets.assets.structure_tree import structure_tree

PARTITIONED = [raw_pdf, page_text, structure_tree, linearized_tables, chunks, embeddings]
ALL_ASSETS = [*PARTITIONED, eval_report]

__all__ = [
    "ALL_ASSETS",
    "PARTITIONED",
    "chunks",
    "embeddings",
    "eval_report",
    "linearized_tables",
    "page_text",
    "raw_pdf",
    "structure_tree",
]
