"""chunks: the default policy's chunks of one version, with their damage measured."""

import dataclasses
import statistics
from collections import Counter

from dagster import AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset
from pydantic import Field

from rag_assets.assets.linearized_tables import linearized_tables
from rag_assets.checks import (
    CHUNKS_FIT_MODEL,
    NO_MID_LINE_STARTS,
    NO_ORPHAN_TABLE_VALUES,
    chunk_checks,
    count_check,
)
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.corpus import load_version
from rag_assets.core.lake import write_stage
from rag_assets.core.metrics import chunk_damage
from rag_assets.core.schemas import CHUNKS
from rag_assets.partitions import doc_versions
from resources import EmbedderResource, LakeResource


class ChunksConfig(Config):
    """The default chunking policy's knobs (Launchpad / run config)."""

    target_tokens: int = Field(200, description="Pack sibling units up to this many tokens")
    repack: bool = Field(True, description="Pack consecutive units of one section/article")
    header_mode: str = Field("full", description="Context header: off | path | full")
    header_document: str = Field(
        "id", description="How the header names the document: id (doc_id) | title"
    )


@asset(
    partitions_def=doc_versions,
    deps=[linearized_tables],
    group_name="chunks",
    code_version="1",
    check_specs=chunk_checks,
    description="Chunks cut by the document's structure, sized by the model's tokenizer.",
)
def chunks(
    context: AssetExecutionContext,
    config: ChunksConfig,
    lake: LakeResource,
    embedder: EmbedderResource,
) -> MaterializeResult:
    """Chunk one version with the default policy into `derived/chunks/`."""
    key = context.partition_key
    version = load_version(lake.lake, key)
    if config.header_document not in ("id", "title"):
        raise ValueError(f"header_document {config.header_document!r} must be 'id' or 'title'")
    info = version.info
    if config.header_document == "title":
        info = dataclasses.replace(info, header_name=info.title)
    counter = embedder.embedder().token_counter()
    result = structural_chunks(
        version.doc,
        version.nodes,
        version.rows,
        info,
        counter,
        target_tokens=config.target_tokens,
        repack=config.repack,
        header_mode=config.header_mode,
        strategy="default",
    )
    path = write_stage(lake.lake, "chunks", key, [c.as_row() for c in result], CHUNKS)
    damage = chunk_damage(result, version.rows, {key: version.doc.text})
    tokens = [c.token_count for c in result] or [0]
    return MaterializeResult(
        metadata={
            "chunks": len(result),
            "chunks_by_kind": dict(Counter(c.kind for c in result)),
            "tokens_mean": round(statistics.mean(tokens), 1),
            "tokens_max": max(tokens),
            "model_max_tokens": counter.max_tokens,
            "orphan_table_values": damage.orphans,
            "mid_line_starts": damage.mid_line_starts,
            "truncated": damage.truncated,
            "example": MetadataValue.md(f"```\n{result[0].text}\n```" if result else ""),
            "parquet": MetadataValue.path(str(path)),
        },
        check_results=[
            count_check(CHUNKS_FIT_MODEL, damage.truncated, "truncated"),
            count_check(NO_ORPHAN_TABLE_VALUES, damage.orphans, "orphans"),
            count_check(NO_MID_LINE_STARTS, damage.mid_line_starts, "mid_line_starts", True),
        ],
    )
