"""chunks: the default policy's chunks of one version, with their damage measured."""

import statistics
from collections import Counter

from dagster import (
    AssetExecutionContext,
    AssetsDefinition,
    Config,
    MaterializeResult,
    MetadataValue,
    asset,
)
from pydantic import Field

from rag_assets.assets._common import GROUP, clear_failure, one_writer, reads
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.chunking import NoTextUnits, Policy, SituatorConfig
from rag_assets.core.index import chunks_folder_for
from rag_assets.core.pipeline import Cutting, chunks_code_version
from rag_assets.core.stages import CHUNKS
from rag_assets.orchestration.checks import (
    CHUNKS_FIT_MODEL,
    NO_MID_LINE_STARTS,
    NO_ORPHAN_TABLE_VALUES,
    chunk_checks,
    count_check,
)
from rag_assets.orchestration.partitions import doc_versions
from rag_assets.settings import secret
from resources import EmbedderResource, LakeResource, LanceDBResource


class ChunksConfig(Config):
    """The chunking policy's knobs (Launchpad / run config)."""

    strategy: str = Field(
        "default",
        description="default (the policy) or any strategy name trecho eval takes",
    )
    target_tokens: int = Field(200, description="Pack sibling units up to this many tokens")
    header_mode: str = Field("full", description="Context header: off | path | full")
    header_document: str = Field(
        "id", description="How the header names the document: id (doc_id) | title"
    )
    type_strategies: dict[str, str] = Field(
        default_factory=dict,
        description="Sidecar type → strategy, e.g. {contract: legal-paragraph}",
    )
    llm_url: str = Field(
        "", description="OpenAI-compatible URL for situating sentences; empty = off"
    )
    llm_model: str = Field("", description="Model name sent to that endpoint")
    llm_api_key_env: str = Field("OPENAI_API_KEY", description="Env var holding its API key")


def build_chunks(model_id: str, max_tokens: int) -> AssetsDefinition:
    """The chunks asset for a configured model (its id and token limit in the code
    version)."""
    version = chunks_code_version(model_id, max_tokens)
    return asset(
        name=CHUNKS,
        partitions_def=doc_versions,
        deps=reads(CHUNKS),
        group_name=GROUP,
        code_version=version,
        check_specs=chunk_checks,
        description="Chunks cut by the document's structure, sized by the model's tokenizer.",
    )(cut_chunks)


@one_writer
def cut_chunks(
    context: AssetExecutionContext,
    config: ChunksConfig,
    lake: LakeResource,
    embedder: EmbedderResource,
    lancedb: LanceDBResource,
) -> MaterializeResult:
    """Chunk one version with the policy (or a named strategy) into `derived/chunks/`
    (`derived/chunks-next/<model_id>/` during a backfill) by `Cutting.cut_version`; a
    version that gives no chunk fails (`NoTextUnits`)."""
    key = context.partition_key
    situator = None
    if config.llm_url:
        situator = SituatorConfig(
            enabled=True,
            url=config.llm_url,
            model=config.llm_model,
            api_key=secret(config.llm_api_key_env),
        )
    model = embedder.embedder()
    cutting = Cutting(
        lake.lake,
        model,
        # where its model's table reads them: the orchestration asks, not the stage
        chunks_folder_for(lancedb.uri_for(lake.lake), model.model_id),
        Policy(config.target_tokens, config.header_mode, config.type_strategies),
        config.strategy,
        config.header_document,
        situator,
    )
    try:
        cut = cutting.cut_version(key)
    except NoTextUnits as exc:  # a version that indexes nothing fails, saying why
        raise clear_failure(key, exc) from exc
    if cut.chose is not None:
        context.log.info(f"{key}: policy chose {cut.chose}")
    for failure in cut.failures:
        context.log.warning(f"situating sentence failed: {failure}")
    result, damage, where = cut.chunks, cut.damage, cut.first_orphan
    metadata: dict[str, object] = {} if cut.situating is None else {"situating": cut.situating}
    if where:
        context.log.error(
            f"{key}: {damage.orphans} table values sit in a chunk without their column "
            f"header (the first: {where})"
        )
    if cut.flagged:  # the reader's limits: indexed all the same, said here
        context.log.warning(
            f"{key}: {len(cut.flagged)} tables hold values without their header, their "
            f"printed header lines more than a chunk holds (the first: {cut.flagged[0]}); "
            "the version is indexed"
        )
    tokens = sorted(c.token_count for c in result) or [0]
    among = f"the {len(result)} chunks of {key}"
    return MaterializeResult(
        metadata={
            "chunks": len(result),
            "chunks_by_strategy": dict(Counter(c.strategy for c in result)),
            "chunks_by_kind": dict(Counter(c.kind for c in result)),
            "tokens_p50": tokens[len(tokens) // 2],
            "tokens_p90": tokens[int(len(tokens) * 0.9)],
            "tokens_max": tokens[-1],
            "tokens_mean": round(statistics.mean(tokens), 1),
            "model_max_tokens": cut.max_tokens,
            "orphan_table_values": damage.orphans,
            "flagged_tables": MetadataValue.json(cut.flagged),
            "mid_line_starts": damage.mid_line_starts,
            "truncated": damage.truncated,
            "off_heading_paths": damage.off_heading_paths,
            "off_heading_path_share": (
                round(damage.off_heading_paths / len(result), 4) if result else 0.0
            ),
            **metadata,
            "first_chunk": result[0].chunk_id if result else "",
            **standard_metadata(len(result), uri=str(cut.path)),
            "parquet": MetadataValue.path(str(cut.path)),
        },
        check_results=[
            count_check(CHUNKS_FIT_MODEL, damage.truncated, "truncated", among=among),
            count_check(  # blocks the chunker's faults; the reader's limits flagged
                NO_ORPHAN_TABLE_VALUES,
                damage.orphans,
                "orphans",
                where=where,
                among=among,
                extra={
                    "flagged_tables": len(cut.flagged),
                    "flagged": MetadataValue.json(cut.flagged),
                },
            ),
            count_check(
                NO_MID_LINE_STARTS, damage.mid_line_starts, "mid_line_starts", True, among=among
            ),
        ],
    )
