"""How the structure tree decides what a heading is: every tolerance of the heading decider
in one object, with its unit, so that a bench can tune them and a test can name them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StructureSettings:
    """The tolerances of the structure tree: the document's own outline, and the evidence a
    line needs to be a heading where the outline is silent (`headings.py`)."""

    use_outline: bool = True
    """Open sections at the PDF's own outline (bookmarks) or tagged headings when it has one."""
    outline_match: float = 0.85
    """Least similarity (difflib ratio, folded text) of a printed line to an outline title."""
    outline_slack: float = 24.0
    """Points above an outline entry's destination a matching line may start."""

    max_chars: int = 160
    """A heading is at most this many characters."""
    max_words: int = 24
    """... and this many words."""
    larger_by: float = 1.5
    """Points over the body text's size that make a line's type larger (alone: evidence)."""
    gap_factor: float = 1.6
    """A line is set apart when the space above it is this many times the body's usual
    space between lines (or it opens a page, a column, or follows a table)."""
    short_line: float = 0.8
    """A line ending before this share of the page's text width is short (not prose)."""
    centred_by: float = 0.04
    """A short line whose middle is this share of the text width from the page's middle
    is centred."""
    smaller_by: float = 1.5
    """A line this many points under the body's size is never a heading (notes, labels)."""
    spread_width: float = 1.1
    """A line wider than this many times its size per printed character is words spread
    along a figure's axis or a form, never a heading (running text: about 0.5)."""
    bump_by: float = 0.9
    """Points over the body's size that make a line's type a little larger: evidence only
    with more (set apart and short, or numbered and set apart)."""
    one_word_larger_by: float = 3.0
    """A one-word line in type this many points over the body's is a heading by its size
    alone; under it, it must be set apart, short, and bold, in capitals or a little
    larger (`bump_by`)."""
    sentence_words: int = 8
    """An unnumbered line ending with a full stop and this many words is a sentence."""
    run_in_words: int = 10
    """A run-in heading (bold words opening a paragraph, then a full stop) is this many
    words at most."""
    run_together_caps: int = 24
    """Capitals run together this long without a space are letters of rotated side text
    read across, never a heading."""
    run_together_words: int = 30
    """A word this long is words a text layer ran together (no language's word is)."""
    figure_share: float = 0.5
    """A line whose characters are more than this share digits is a figure's axis or a
    table's row, never a heading."""

    toc_lines: int = 3
    """A page holding at least this many table-of-contents entries..."""
    toc_share: float = 0.4
    """... making at least this share of its lines is a table-of-contents page."""

    caption_lines: int = 2
    """A caption printed above a table may wrap over this many lines."""


DEFAULT_STRUCTURE = StructureSettings()
