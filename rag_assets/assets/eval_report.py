"""eval_report: every strategy side by side on the lake's question files."""

from dagster import AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset
from pydantic import Field

from rag_assets.assets._common import GROUP
from rag_assets.assets.conventions import standard_metadata
from rag_assets.core.errors import ConfigError
from rag_assets.core.eval import (
    ALL,
    STANDARD,
    DrawSettings,
    EvalOptions,
    hit3_regression,
    indexed_versions,
    markdown_table,
    previous_report,
    question_files,
    question_writer,
    report_sources,
    resolve_strategies,
    run_eval,
    strategy_families,
    tag_table,
    write_report,
)
from rag_assets.core.index import active_embedder
from rag_assets.core.stages import EMBEDDINGS
from rag_assets.core.structure import unstructured_tables
from rag_assets.orchestration.checks import eval_check_results, eval_checks
from rag_assets.settings import secret
from resources import EmbedderResource, LakeResource, LanceDBResource


class EvalConfig(Config):
    """Eval knobs (Launchpad / run config)."""

    mode: str = Field("hybrid", description="Retrieval: hybrid | vector | fts")
    offsets: int = Field(4, description="Start offsets per size-based strategy")
    strategies: list[str] = Field(
        default_factory=lambda: ["standard"],
        description="Strategies compared with the default (names as `trecho eval` takes); "
        f"'standard' = {', '.join(STANDARD)}; 'all' = {', '.join(ALL)}",
    )
    hit3_tolerance: float = Field(
        0.05,
        description="Warn when the default policy's hit@3 falls more than this below the "
        "previous report over the same question files and mode",
    )
    draw: int | None = Field(
        None,
        description="Questions drawn from the lake itself (table, section and, with llm_url, "
        "written questions); None: 80 when the lake has no eval/*.jsonl, else none",
    )
    draw_seed: int = Field(0, description="Seed of the draw (the same seed draws the same)")
    llm_url: str = Field(
        "",
        description="OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1) that writes "
        "a question for some drawn units; empty: no written questions",
    )
    llm_model: str = Field("", description="Model name sent to that endpoint")
    llm_api_key_env: str = Field("OPENAI_API_KEY", description="Env var holding its API key")


@asset(
    deps=[EMBEDDINGS],
    group_name=GROUP,
    check_specs=eval_checks,
    description="Hit@k, MRR, tokens sent and chunk damage per strategy, on eval/*.jsonl "
    "or, without one, on questions drawn from the lake.",
)
def eval_report(
    context: AssetExecutionContext,
    config: EvalConfig,
    lake: LakeResource,
    embedder: EmbedderResource,
    lancedb: LanceDBResource,
) -> MaterializeResult:
    """Run the eval over every indexed live version and write `reports/<timestamp>/`."""
    # the model search uses: during a model backfill, the complete old table, not the new one
    model = active_embedder(lancedb.uri_for(lake.lake), embedder.embedder())
    index = lancedb.index(lake.lake, model)
    files = question_files(lake.lake)
    try:
        families = strategy_families(resolve_strategies(config.strategies), config.offsets, model)
    except ValueError as exc:
        raise ConfigError(f"eval_report config: {exc}") from exc
    options = EvalOptions(
        strategies=families,
        mode=config.mode,  # type: ignore[arg-type]
        progress=lambda name: context.log.info(f"evaluating {name}"),
    )
    if config.draw is not None and config.draw < 0:
        raise ConfigError(f"eval_report config: draw must be 0 or more, got {config.draw}")
    writer = question_writer(
        lake.lake,
        model.token_counter(),
        config.llm_url,
        config.llm_model,
        secret(config.llm_api_key_env),
    )
    result = run_eval(
        lake.lake,
        model,
        index,
        files,
        options,
        history=lake.keep_history,
        draw=DrawSettings(size=config.draw, seed=config.draw_seed, writer=writer),
    )
    for failure in writer.failures[:5] if writer else ():
        context.log.warning(f"no question written: {failure}")
    if result.questions and config.mode != "fts":  # the queries ran: what `trecho status` says
        model.record_runtime(lake.lake.runtime_dir, "queries")
    sources = report_sources(files, result)
    folder = write_report(result, lake.lake.reports_dir, sources)
    previous = previous_report(lake.lake.reports_dir, folder, sources, result.mode)
    regression = hit3_regression(result, previous, config.hit3_tolerance)
    default = result.strategies["default"]
    as_text = {
        key: [t["table"] for t in unstructured_tables(version.nodes)]
        for key, version in indexed_versions(lake.lake, index, lake.keep_history).items()
    }
    return MaterializeResult(
        metadata={
            "report": MetadataValue.path(str(folder / "report.html")),
            **standard_metadata(result.questions, uri=str(folder / "report.html")),
            "report_md": MetadataValue.path(str(folder / "report.md")),
            "metrics_table": MetadataValue.md(markdown_table(result)),
            "hit@3_by_tag": MetadataValue.md(tag_table(result)),
            "questions": result.questions,
            "questions_drawn": MetadataValue.json(result.kinds),
            "sources": ", ".join(sources) or "none",
            "not_measured": MetadataValue.json(result.not_measured),
            "strategies": len(result.strategies),
            "tables_as_text": sum(len(v) for v in as_text.values()),
            "reused": result.reused or "no: evaluated now",
            "tables_as_text_by_version": MetadataValue.json(
                {k: v for k, v in as_text.items() if v}
            ),
            **{
                f"default {m}": float(v)
                if v is not None
                else MetadataValue.text("– (no questions)")
                for m, v in default.items()
                if m != "questions"
            },
        },
        check_results=eval_check_results(default, regression),
    )
