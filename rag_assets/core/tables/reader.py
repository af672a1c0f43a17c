"""The one entry `extract` reads a page's tables through: rules and alignment, then the
boxes a layout model proposes where those found none, or, on a page read by OCR, the
model's boxes read by alignment from the OCR words."""

from __future__ import annotations

from typing import Any, Protocol

from rag_assets.core.page import centred_in
from rag_assets.core.tables.aligned import aligned_tables
from rag_assets.core.tables.finish import finish
from rag_assets.core.tables.model import Box, PageTable, Word
from rag_assets.core.tables.page import aligned_pass, ruled_pass
from rag_assets.core.tables.settings import DEFAULT, TableSettings
from rag_assets.core.tables.words import page_words


class Proposer(Protocol):
    """Where a layout model sees tables on a document's pages (`core.layout.PageProposer`)."""

    def proposals(self, number: int, page: Any, words: list[Word], tables: list[Box]) -> list[Box]:
        """Boxes on page `number` where the model sees a table none of `tables` covers."""
        ...

    def regions(self, number: int) -> list[Box]:
        """Every box where the model sees a table on page `number`."""
        ...


class TableReader:
    """A document's table reader: `settings` for every stage, and the layout model's
    `proposer` (None: rules and alignment alone, and no tables on pages read by OCR)."""

    def __init__(self, settings: TableSettings = DEFAULT, proposer: Proposer | None = None):
        self.settings = settings
        self.proposer = proposer

    def read_page(
        self,
        page: Any,
        number: int,
        turned: bool = False,
        ocr_words: list[Word] | None = None,
    ) -> list[PageTable]:
        """The tables of pdfplumber's `page` (page `number`, 1-based), indexed in order.

        Ruled tables are read once; the aligned pass runs again with the model's boxes
        where it sees a table that rules and alignment did not find (only on pages with
        something tabular left outside the tables found, and not on a page trecho
        `turned` upright, whose boxes would not match the model's). A page read by OCR
        (`ocr_words`, in PDF points) has its tables read by alignment from the words
        inside each box the model sees; without a model, none.
        """
        if ocr_words is not None:
            return self._scanned(number, ocr_words)
        settings = self.settings
        words = page_words(page, settings)
        done = ruled_pass(page, settings, words)
        tables = aligned_pass(done, settings)
        if self.proposer is None or turned:
            return tables
        extra = self.proposer.proposals(number, page, words, [t.bbox for t in tables])
        return aligned_pass(done, settings, extra) if extra else tables

    def _scanned(self, number: int, words: list[Word]) -> list[PageTable]:
        """A scan's tables: the words inside each box the model sees, read by alignment as
        a proposed table's are; a grid without a header printed over it is no table."""
        if self.proposer is None:
            return []
        tables: list[PageTable] = []
        for box in self.proposer.regions(number):
            inside = [w for w in words if centred_in(box, w)]
            for grid in aligned_tables(inside, [], [], self.settings, proposed=True):
                table = finish(grid, inside, self.settings)
                if table.headed():
                    tables.append(table)
        for i, table in enumerate(tables):
            table.index = i
        return tables
