"""Every tolerance of table reading, named, in one place (`TableSettings`).

Units: `pt` is a PDF point (1/72 inch); `em` a share of the type's height (a word's
height on the page, near enough its size); `share` a fraction of what the name says.
The defaults are what the readers were tuned with (`bench/tables.py`); a stage takes the
settings as an argument, so a tuning run can try others without touching the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from rag_assets.core.page import UPRIGHT_TILT


@dataclass(frozen=True)
class TableSettings:
    """The tolerances of every table stage (see the module docstring for units)."""

    # --- positions and words (every stage)
    slack: float = 1.0
    """pt: a word or line this far outside a box still counts as inside it."""
    word_x_tolerance: float = 1.5
    """pt: characters at most this far apart are one word (pdfplumber's x_tolerance)."""
    word_y_tolerance_em: float = 0.4
    """em of the page's median type size, at most pdfplumber's 3 pt: characters whose tops
    differ more are on two lines (wrapped headings centred vertically in small type put
    their lines half a line apart from their neighbours')."""
    same_edge: float = 1.5
    """pt: cell edges (or baselines) this close are one position."""
    same_line_em: float = 0.4
    """em: words whose middles are within this of a line's are on that line."""
    column_gap_em: float = 0.8
    """em: words at least this far apart are in different columns (segments)."""
    min_column_gap: float = 4.0
    """pt: a column gap is at least this wide, whatever the type size."""
    tight_gap_em: float = 0.45
    """em: two numbers (or words across a column edge) this far apart are two columns."""
    mono_space: float = 1.5
    """characters: in monospaced type, words (not two numbers) closer than this many
    characters' widths (a space is one) are not cut apart as tight columns."""
    mono_widths: float = 1.03
    """ratio: words whose widths per character agree within this are set in a monospaced
    type."""

    # --- regions
    white_level: float = 0.99
    """colour level: a fill this light or lighter in every component (grey, RGB; CMYK
    this close to no ink) is white."""
    background_share: float = 0.5
    """share of the page: a white rectangle smaller than this is a cell's background,
    and a white rectangle drawn inside it draws nothing (its edges are no rules)."""
    proposal_covered: float = 0.5
    """share: a proposed box this much inside ruled regions is theirs, not read again."""
    proposed_head_inside: float = 0.9
    """share of a ruled table's area: inside a proposed box this much, at its top ..."""
    proposed_head_top: float = 0.1
    """share of the box's height: ... starting no lower than this under the box's top ...
    """
    proposed_head_share: float = 0.5
    """share of the box's area: ... and filling less than this of it, a ruled table is the
    header of the body the box holds below it (the rules missed the body)."""
    proposed_head_gap: float = 6.0
    """pt: a short ruled table across a proposed box whose bottom is this close to the
    box's top (the model boxed the body alone) heads it too."""
    header_box_max_rows: int = 8
    """rows: a ruled box of labels only, no more rows than this, may head an aligned body."""
    header_box_labels: float = 0.9
    """share of cells: ... when at least this share of its cells are labels, periods or
    units (a unit such as `(1,000)` reads as a number)."""
    header_box_width: float = 0.8
    """share: ... when it is at least this share of the body's width across it."""
    header_box_top: float = 2.0
    """pt: ... and starts no more than this below the body's top."""

    # --- pages set in text columns
    text_column_lines: int = 5
    """lines: a gutter between text columns has at least this many lines of prose on
    one side (and is open down at least this many lines)."""
    text_column_other_lines: int = 2
    """lines: ... and at least this many on the other (a table's stub of long labels has
    none beside it: its figures are no sentences)."""
    text_column_words: int = 5
    """words: a line of prose in a text column has at least this many."""
    text_column_fill: float = 0.6
    """share of the column's width: ... and fills at least this much of it."""
    text_column_ratio: float = 1.6
    """the wider of the two sides of a gutter is at most this many times the narrower."""
    text_column_figures: int = 3
    """words: a line of prose has at most one figure in this many words."""

    # --- reading order on a page set in text columns (`extract`), and tables beside
    # each other
    reading_gap: float = 6.0
    """pt: a gap between two characters of a line at least this wide may be a gutter ..."""
    reading_gap_em: float = 0.9
    """em: ... and at least this wide."""
    reading_column_lines: int = 3
    """lines: a gutter between text columns is open on at least this many lines ..."""
    reading_column_crossing: float = 0.25
    """share of lines: ... and crossed by ink on at most this share of them."""
    reading_column_chars: int = 15
    """characters: a text column's pieces average at least this many (shorter ones are a
    table's cells or line numbers, read row by row)."""
    reading_column_ratio: float = 1.6
    """the widest text column spans at most this many times the narrowest."""
    reading_gutter_join: float = 12.0
    """pt: open runs this close are one gutter (a centred running head or a wide heading
    crossing part of it splits it into slivers)."""
    side_by_side_overlap: float = 0.5
    """share of the shorter table's height: tables overlapping this much across are side
    by side (a printed line through both is cut between them)."""
    side_by_side_edge: float = 0.5
    """pt: a line of tables side by side is cut this far outside their outer edges."""

    # --- the ruled reader and its repairs
    same_line_twice: float = 0.5
    """share: two ruled rows overlapping by this share of a row's height may be one
    printed line read twice (a shading grid over the rule grid)."""
    heading_rows: int = 3
    """rows: the first rows searched for a column's own heading when collapsing columns."""
    min_word_height: float = 1.0
    """pt: a word no taller than this is a line above or below clipped to a cell's edge."""
    side_column_gap_em: float = 0.6
    """em: words beside a ruled box this close are one column."""
    beside_rows: float = 0.5
    """share: words beside a ruled box make a column when they sit beside this share of
    its rows (and at least two)."""
    upright_tilt: float = UPRIGHT_TILT
    """share: a character whose slant (matrix b/a) is within this is upright."""
    upward_column_share: float = 0.5
    """share of a glyph's width: upward characters this close across are one line."""
    upward_space_share: float = 0.25
    """share of a glyph's size: a gap wider between upward characters is a space."""

    # --- the aligned reader
    min_data_lines: int = 3
    """lines: a table body has at least this many lines of values, unless a header of
    `short_header_lines` heads it (`short_columns` and more)."""
    short_header_lines: int = 2
    """lines: a body of fewer than `min_data_lines` lines of values (one total row under
    group rows) is a table under this many header lines of labels or more (one under a
    "continued" note), ..."""
    short_columns: int = 3
    """columns: ... across this many columns or more, its lowest header line heading
    at least half of them."""
    data_values: float = 0.5
    """share of a line's segments after the first: a line of a table body has at least
    this many values (and one)."""
    max_header_lines: int = 7
    """lines: label lines over the columns at most (the columns' numbers not counted)."""
    max_group_lines: int = 4
    """lines: label lines in a row inside a table body at most (nested group rows
    without values, a label wrapped onto the next line)."""
    max_stub_lines: int = 8
    """lines: as `max_group_lines`, where every label line ends before the values of the
    row above (labels wrapped in a narrow stub run to more lines)."""
    group_space: float = 2.0
    """line pitches: above a group row without values the gap may be this many times
    `line_pitch` (space set above each group)."""
    line_pitch: float = 2.2
    """em: lines of one table are at most this many line heights apart (twice that
    above a rule crossed in the header)."""
    min_line_gap: float = 12.0
    """pt: ... and may always be this far apart (tiny type in a wide table keeps its
    cells' padding)."""
    column_overrun: float = 0.1
    """share of lines: ink in a column gap on no more than this many lines (long row
    labels running over) leaves the gap open."""
    header_line_width: float = 0.6
    """share of the table's width: a header line's widest segment is at most this (a
    wider one is a sentence or a caption)."""
    header_label_share: float = 0.5
    """share of a line's headings (its segments, `1 to 4 employees` one): a header line
    holds at least this many labels."""
    column_values: float = 0.8
    """share: a column is one of values when this share of its filled cells are values."""
    rule_join: float = 1.0
    """pt: rule pieces at this height and touching within this are one rule."""
    rule_thickness: float = 3.0
    """pt: a filled rectangle no taller than this is a rule; a taller one is a band of
    shading (a zebra stripe, a shaded row), whose edges are no rules."""
    proposed_cell_words: int = 3
    """words: in a box the layout model proposed, a line of segments this long (median)
    or shorter is a row (a table of words: names, places, states)."""
    wrapped_cell_words: int = 4
    """words: in a box the layout model proposed, a line between two rows holding fewer
    cells than the row above, none longer than this, is cells wrapped at once (a name
    and an address each on two lines), a line inside the table; prose runs longer."""
    title_segments: float = 0.5
    """share of the rows' segments (median): a proposed box's first line with fewer is a
    title over the columns, not a row."""
    rule_crossed_space: float = 2.0
    """`line_pitch`-es: a header line above a rule crossed in the header may be this far
    above the line under it."""
    prose_data_lines: float = 0.5
    """share of lines: a proposed run with at least this share of lines of values is never
    prose set in columns."""
    prose_fill: float = 0.85
    """share of a column's width: a proposed box whose segments of several words are
    longer than `proposed_cell_words` and fill this much of their column (median) is
    prose set in columns, not a table."""

    # --- the heading tree
    full_rule: float = 0.85
    """share of the table's width: a rule at least this long is the table's, not a
    heading's underline."""
    centred: float = 0.25
    """share of a column pitch: a heading's middle within this of a run's is centred
    over it."""
    min_centred: float = 3.0
    """pt: ... and never less than this."""
    tight: float = 0.1
    """share of a column pitch: a heading centred within this on a column's heading is
    that heading's first line."""
    min_tight: float = 2.0
    """pt: ... and never less than this."""
    flush: float = 1.5
    """pt: a heading's left edge this close to another's is flush left with it."""
    centred_on: float = 2.0
    """pt: a heading centred within this on the spanner under it begins that spanner."""
    underline_reach: float = 2.0
    """pt: a rule reaching this close to a heading's middle (or a column's) is under it."""

    # --- the header block
    max_header_rows: int = 4
    """rows: a lone heading over the value columns, then up to three rows of headings."""
    min_numbered_columns: int = 3
    """numbers: a row numbering the columns (`1 | 2 | 3`) counts at least this many."""
    header_cell_max_chars: int = 120
    """characters: a longer cell is data, not a column's name."""
    title_min_columns: int = 3
    """columns: a first row with one filled cell is a title only in a table this wide."""
    named_columns: float = 0.5
    """share of columns: stacked header rows must name at least this many (and two)."""

    # --- the stub tree
    min_stub_rows: int = 3
    """rows: indentation, or labels beside a ruled box, are read only for at least this
    many labelled rows."""
    max_indent_levels: int = 5
    """levels: more distinct left edges than this are no indent steps."""
    indent_step_em: tuple[float, float] = (0.6, 4.0)
    """em: an indent step is at least the first and at most the second."""
    indent_tolerance_em: float = 0.25
    """em: left edges within this (and at least `min_indent_tolerance`) are one level."""
    min_indent_tolerance: float = 1.0
    """pt: ... never less than this."""
    outer_label_gap_em: float = 3.0
    """em: group labels beside a ruled box stand at most this far left of it."""
    outer_label_max_chars: int = 40
    """characters: a group label beside a ruled box is at most this long."""
    wrapped_label_gap: float = 0.65
    """share of the body's median gap between rows: two labelled rows (one without a
    value) set closer than this are one label wrapped over two lines. A browser's table
    of little cell padding sets a wrapped label's lines a little over half as far apart
    as its rows (`Middle` / `Atlantic` in a stub printed apart); a group row stands about
    a whole row gap above the row under it."""
    outer_label_rows: float = 0.5
    """share of rows: group labels beside a ruled box stand beside fewer than this share
    of its rows (a column beside most rows is the table's own)."""

    # --- tables continued across pages
    continued_columns: float = 0.015
    """share of the page width: column edges of a continued table agree within this."""
    min_continued_columns: float = 3.0
    """pt: ... and never less than this."""
    continued_note_chars: int = 60
    """characters: a "continued" note between a table's pieces (`(continua)`) is at most
    this long."""


DEFAULT = TableSettings()
