"""The root of trecho's user errors: what a user can fix (an input file, a setting, an
argument), as opposed to a bug.

Every error trecho raises on purpose for a user derives from `UserError`; its message names
the file or the setting and the problem, so the CLI prints it as one line, the HTTP API as
a 4xx and a stage asset as that version's failure. Anything else that escapes (a
`ValueError` from a bug included) stays a traceback: it is not the user's to fix.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; the message says which input or setting, and why."""


class ConfigError(UserError, ValueError):
    """A setting, option or argument with a value trecho does not accept."""
