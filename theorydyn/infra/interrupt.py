"""A Ctrl-C that the library has answered: what was saved, said once.

A long run catches ``KeyboardInterrupt`` where it knows what it has saved (a scan: the points stored
and the points not computed, which add up to its size), stops its workers, and raises
:class:`Interrupted` with that account. The command runner (:func:`theorydyn.cli.runner.run_command`)
prints one line from it and exits 130; a plain ``KeyboardInterrupt`` gets the command's own line
(:attr:`theorydyn.cli.runner.Command.on_interrupt`). ``reported``: the library has printed the line
already, through its ``report`` callback, at the moment of the Ctrl-C (before stopping its
workers), so that the user sees an answer at once; the runner then prints nothing more.

>>> e = Interrupted("8 point(s): 3 saved, 5 not computed")
>>> isinstance(e, KeyboardInterrupt), e.detail, e.reported
(True, '8 point(s): 3 saved, 5 not computed', False)
"""

from __future__ import annotations


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C with the account of what was saved (``detail``); ``reported``: already printed."""

    def __init__(self, detail: str, reported: bool = False):
        super().__init__(detail)
        self.detail = detail
        self.reported = reported


__all__ = ["Interrupted"]
