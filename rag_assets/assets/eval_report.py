"""eval_report: every strategy side by side on the lake's question files."""

from dagster import AssetExecutionContext, Config, MaterializeResult, MetadataValue, asset
from pydantic import Field

from rag_assets.assets.embeddings import embeddings
from rag_assets.core.evaluation import STANDARD
from rag_assets.core.report import markdown_table, write_report
from rag_assets.core.service import question_files, run_eval
from resources import EmbedderResource, LakeResource, LanceDBResource


class EvalConfig(Config):
    """Eval knobs (Launchpad / run config)."""

    mode: str = Field("hybrid", description="Retrieval: hybrid | vector | fts")
    offsets: int = Field(4, description="Start offsets per size-based strategy")
    strategies: list[str] = Field(
        default_factory=lambda: list(STANDARD),
        description="Strategies compared with the default (names as `trecho eval` takes)",
    )


@asset(
    deps=[embeddings],
    group_name="eval",
    description="Hit@k, MRR, tokens sent and chunk damage per strategy, on eval/*.jsonl.",
)
def eval_report(
    context: AssetExecutionContext,
    config: EvalConfig,
    lake: LakeResource,
    embedder: EmbedderResource,
    lancedb: LanceDBResource,
) -> MaterializeResult:
    """Run the eval over every indexed live version and write `reports/<timestamp>/`."""
    from rag_assets.core.evaluation import strategy_families

    model = embedder.embedder()
    index = lancedb.index(lake.lake, model)
    files = question_files(lake.lake)
    result = run_eval(
        lake.lake,
        model,
        index,
        files,
        strategy_families(config.strategies, config.offsets, model),
        mode=config.mode,  # type: ignore[arg-type]
        progress=lambda name: context.log.info(f"evaluating {name}"),
    )
    folder = write_report(result, lake.lake.reports_dir, [f.name for f in files])
    default = result.strategies["default"]
    return MaterializeResult(
        metadata={
            "report": MetadataValue.path(str(folder / "report.md")),
            "metrics_table": MetadataValue.md(markdown_table(result)),
            "questions": result.questions,
            **{f"default {m}": float(v) for m, v in default.items() if m != "questions"},
        }
    )
