"""Table-row chunkers: only the linearized table rows, each under its table's caption.

A value like `92` is only an answer with its column (`Limite`) and its row (`Ruído`):
each chunk is the table's caption line and one row read as `Header: value; ...`
(`table_rows`), or consecutive rows of one table packed up to the model's maximum, every
row still carrying its header pairs (`table_rows-packed`). A row is never cut from its
header: the row, not the character, is the smallest unit (a single row longer than the
model reads is cut at its `; ` pairs, each piece under the caption, as the default does).

Document text outside tables is NOT covered by these strategies: they are meant to be
combined with a text strategy by the chunking policy (e.g. legal units plus table rows),
not used alone. `parent_id` is the table node's id.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rag_assets.core.chunking.base import Chunker, Source
from rag_assets.core.chunking.structural import structural_chunks
from rag_assets.core.embedding import TokenCounter
from rag_assets.core.lake import Chunk

TABLE_KINDS = ("table", "table_row")


@dataclass(frozen=True)
class TableRowsChunker(Chunker):
    """Strategy `table_rows` (one row a chunk) or `table_rows-packed`."""

    pack: bool = False
    header_mode: str = "full"

    @property
    def name(self) -> str:
        """`table_rows` or `table_rows-packed`."""
        return "table_rows-packed" if self.pack else "table_rows"

    def __call__(self, source: Source, counter: TokenCounter) -> list[Chunk]:
        """The table rows' chunks only (text outside tables is not covered).

        Built by `structural_chunks` over the table rows alone (every other node's text is
        blanked, so paths still name the sections a table sits in); a table without caption
        is named by its label (`Tabela 2`) so that every chunk has a caption line.
        """
        pack, header_mode, name = self.pack, self.header_mode, self.name
        if not source.rows:
            return []
        nodes = []
        for node in source.nodes:
            if node.kind == "table":
                nodes.append(replace(node, title=node.title or node.label))
            elif node.kind == "table_row":
                nodes.append(node)
            else:
                nodes.append(replace(node, text=""))
        chunks = structural_chunks(
            replace(source, nodes=nodes),
            counter,
            target_tokens=counter.max_tokens,
            repack=pack,
            header_mode=header_mode,
            strategy=name,
            pack_table_rows=pack,
        )
        return [c for c in chunks if c.kind == "table"]
