"""One registration mechanism for theorydyn's plug-ins: a frozen record per plug-in, in one table.

Claims, benchmarks and commands are each a module imported on use (some need an optional extra,
torch; and ``--help`` must import nothing heavy), so each is registered by an :class:`Entry`
record: its name, the import path of the module that implements it and one line saying what it
does; a kind that needs more (a claim's cold seconds and groups) subclasses it. The records of one
kind sit in one tuple, in the order they are listed and run; every other view (the name → module
map, the group table, the listing printed by ``--help``, the docs' lists) is derived from that
tuple by :func:`table` and :func:`listing`. Figures, which are computed in-process and need their
functions, register the same kind of frozen record through a decorator
(:func:`theorydyn.figures.register`).

Adding a claim, a benchmark or a command is one module and one record.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import TypeVar


@dataclass(frozen=True)
class Entry:
    """One registered plug-in.

    Attributes:
        name: its name on the command line (``verify --only NAME``, ``theorydyn NAME``,
            ``bench NAME``) and in the tables.
        module: the import path of the module that implements it, imported on use (:meth:`load`).
        summary: one line saying what it does (the listings and the docs are made from it).
    """

    name: str
    module: str
    summary: str

    def load(self) -> ModuleType:
        """The module, imported now (an ImportError of a missing extra goes to the caller)."""
        return importlib.import_module(self.module)


E = TypeVar("E", bound=Entry)


def table(entries: Iterable[E]) -> dict[str, E]:
    """``{name: record}`` in the order given.

    Raises:
        ValueError: two records of one name.
    """
    out: dict[str, E] = {}
    for e in entries:
        if e.name in out:
            raise ValueError(f"{e.name!r} is registered twice ({out[e.name].module} and {e.module})")
        out[e.name] = e
    return out


def listing(entries: Iterable[Entry], indent: str = "  ") -> str:
    """One line per record, ``NAME  summary``, names padded to one width (``theorydyn --help``)."""
    entries = list(entries)
    width = max((len(e.name) for e in entries), default=0)
    return "\n".join(f"{indent}{e.name:{width}s}  {e.summary}" for e in entries)
