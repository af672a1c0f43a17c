"""One version cut into chunks and written where its model's table reads them:
`Cutting.cut_version`.

What the `chunks` stage does, free of Dagster: the version's stages read in one call
(`corpus.load_version`), cut by the default policy (or a named strategy) to the model's
tokenizer, optionally situated by an LLM, written to the folder its caller names
(`derived/chunks/`; during a model backfill `derived/chunks-next/<model_id>/`, beside
the chunks the active table still serves: `index.chunks_folder_for`, asked by the
orchestration, never by this stage), and measured for damage. A version that gives no chunk
fails (`NoTextUnits`, saying why).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from rag_assets.core import stages
from rag_assets.core.chunking import (
    NoTextUnits,
    Policy,
    PolicyChunker,
    SituatorConfig,
    build_chunker,
    headings_only,
    no_units_reason,
)
from rag_assets.core.corpus import load_version
from rag_assets.core.embedding import Embedder
from rag_assets.core.errors import ConfigError
from rag_assets.core.eval import ChunkDamage, chunk_damage, orphans
from rag_assets.core.lake import CHUNKS as CHUNK_SCHEMA
from rag_assets.core.lake import Chunk, Lake, LakePath, write_stage

HEADER_DOCUMENT = ("id", "title")
"""How a context header names the document: its id, or its title."""


@dataclass
class Cut:
    """What `cut_version` did to one version: its `chunks`, the file written (`path`),
    the strategy the policy `chose` (None: a strategy was named), their `damage` and
    where the first orphan table value sits (`first_orphan`, empty when none), the tables
    flagged for values the reader left without their header (`flagged`: where each
    table's first such value sits; indexed all the same), and the situating step's
    `situating` counts and first `failures`."""

    chunks: list[Chunk]
    path: LakePath
    damage: ChunkDamage
    max_tokens: int
    chose: str | None = None
    first_orphan: str = ""
    flagged: list[str] = field(default_factory=list)
    situating: dict[str, Any] | None = None
    failures: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Cutting:
    """How versions are cut: into the `lake`, for the `model` (its tokenizer and
    limit), into the `folder` under `derived/` the caller names (`stages.chunks_folder`),
    by `policy` or a named `strategy` (`default`: the policy), the header naming the
    document by its id or title (`header_document`), with the optional LLM `situator`
    (off when None or not enabled)."""

    lake: Lake
    model: Embedder
    folder: str
    policy: Policy = field(default_factory=Policy)
    strategy: str = "default"
    header_document: str = "id"
    situator: SituatorConfig | None = None

    def __post_init__(self) -> None:
        if self.header_document not in HEADER_DOCUMENT:
            raise ConfigError(f"header_document {self.header_document!r} must be 'id' or 'title'")

    def cut_version(self, key: str) -> Cut:
        """Cut, write and measure one version (see the module doc)."""
        lake, model, policy = self.lake, self.model, self.policy
        version = load_version(lake, key)
        if self.header_document == "title":
            version.info = dataclasses.replace(version.info, header_name=version.info.title)
        counter = model.token_counter()  # tokenizer cache: no torch import, no weights loaded
        chose = None
        if self.strategy == "default":
            chunker = PolicyChunker(policy, model)
            chose = policy.choose(version)
        else:
            chunker = build_chunker(self.strategy, model, policy.target_tokens, policy.header_mode)
        chunks = chunker(version, counter)
        if not chunks or headings_only(version):  # nothing but headings to index: it
            raise NoTextUnits(f"no text units found: {no_units_reason(version)}")  # fails
        situating, failures = None, []
        config = self.situator or SituatorConfig()  # off unless enabled
        situator = config.build(counter, lake.local_cache_dir / "contextual")
        if situator is not None:
            info, text = version.info, version.doc.text
            situated = situator.situate(version.sha256, chunks, info.title, text)
            chunks, situating, failures = situated.chunks, situated.counts, situated.failures
        # a backfill's chunks go beside the active model's, which its table still serves
        folder = self.folder
        path = write_stage(lake, folder, key, [c.as_row() for c in chunks], CHUNK_SCHEMA)
        if folder == stages.FOLDERS[stages.CHUNKS]:  # none of a backfill left stale beside it
            stale = lake.stage_path(stages.chunks_folder(model.model_id), key)
            if stale.exists():
                stale.unlink()
        found = orphans(chunks, version.rows)  # once: counted by the damage, listed below
        damage = chunk_damage(
            chunks, version.rows, {key: version.doc.text}, {key: version.nodes}, found
        )
        faults = [orphan for orphan in found if not orphan.reader]
        flagged: dict[str, str] = {}  # each flagged table's first value, in order
        for orphan in found:
            if orphan.reader:
                flagged.setdefault(orphan.table_id, orphan.locate())
        return Cut(
            chunks,
            path,
            damage,
            counter.max_tokens,
            chose=chose,
            first_orphan=faults[0].locate() if faults else "",
            flagged=list(flagged.values()),
            situating=situating,
            failures=list(failures[:5]),
        )
