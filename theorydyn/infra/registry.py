"""One registration mechanism for theorydyn's plug-ins: a frozen record per plug-in, declared by one decorator.

Commands, claims, benchmarks and the figures' topics are each a module imported on use (some need an
optional extra, torch; and ``--help`` must import nothing heavy). Each is declared by decorating a
*loader*, a function that imports its module with a static relative import and returns it::

    claim = Registry(Claim)

    @claim("dynamics", "the idealized dynamics: …", cold=(4.0, 4.0), groups=("reduced",))
    def _dynamics() -> ModuleType:
        from . import dynamics

        return dynamics

Declaring runs nothing of the module; :meth:`Entry.load` calls the loader. The import is a real
``import`` statement, so ruff, mypy, ``lint-imports`` and a rename see it, and the module's import
path, where a caller needs it as text (a worker process, a store's key), is read from that statement
(:func:`imported_module`), never written as a string. The records of one kind sit in one
:class:`Registry`, in the order they are declared (listed and run); every other view (the name →
module map, the group table, the listing printed by ``--help``, the docs' lists and the tests'
expectations) is derived from it.
"""

from __future__ import annotations

import dis
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.util import resolve_name
from types import ModuleType
from typing import Any, Generic, TypeVar

#: a function that imports one module with a static relative import and returns it
Loader = Callable[[], ModuleType]


def imported_module(loader: Loader) -> str:
    """The absolute name of the module that ``loader`` imports with ``from PACKAGE import MODULE``
    (``PACKAGE`` relative to the loader's package, or absolute), read from its bytecode.

    Raises:
        TypeError: ``loader`` has no ``from … import …`` statement.
    """
    code = list(dis.get_instructions(loader))
    for i, ins in enumerate(code):
        if ins.opname == "IMPORT_NAME" and i >= 2 and code[i + 1].opname == "IMPORT_FROM":
            level = int(code[i - 2].argval)  # the LOAD_CONSTs before IMPORT_NAME: level, then the names
            base = resolve_name("." * level + ins.argval, loader.__globals__["__package__"]) if level else ins.argval
            return f"{base}.{code[i + 1].argval}"
    raise TypeError(f"{loader.__qualname__} must import its module as `from PACKAGE import MODULE`")


@dataclass(frozen=True)
class Entry:
    """One registered plug-in.

    Attributes:
        name: its name on the command line (``verify --only NAME``, ``theorydyn NAME``,
            ``bench NAME``) and in the tables.
        summary: one line saying what it does (the listings and the docs are made from it).
        loader: imports the module that implements it and returns it (:meth:`load`).
    """

    name: str
    summary: str
    loader: Loader = field(repr=False, compare=False)

    @property
    def module(self) -> str:
        """The import path of its module, read from the loader's import statement (nothing is imported)."""
        return imported_module(self.loader)

    def load(self) -> ModuleType:
        """The module, imported now (an ImportError of a missing extra goes to the caller)."""
        return self.loader()


E = TypeVar("E", bound=Entry)


class Registry(Generic[E]):
    """The records of one kind (``kind``, :class:`Entry` or a subclass with more fields), in the order
    they are declared; calling it with a record's fields but the loader gives the decorator that declares
    one (module docstring)."""

    def __init__(self, kind: type[E]) -> None:
        self.kind = kind
        self._entries: dict[str, E] = {}

    def __call__(self, name: str, summary: str, **fields: Any) -> Callable[[Loader], Loader]:
        """The decorator declaring the record ``kind(name, summary, loader, **fields)`` of the loader it
        decorates (returned unchanged).

        Raises:
            ValueError: a second record of one name.
        """

        def declare(loader: Loader) -> Loader:
            if name in self._entries:
                raise ValueError(f"{name!r} is registered twice")
            self._entries[name] = self.kind(name, summary, loader, **fields)
            return loader

        return declare

    def __iter__(self) -> Iterator[E]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> E:
        return self._entries[name]

    def entries(self) -> tuple[E, ...]:
        """The records, in declaration order."""
        return tuple(self._entries.values())

    def names(self) -> tuple[str, ...]:
        """The records' names, in declaration order."""
        return tuple(self._entries)


def listing(entries: Iterable[Entry], indent: str = "  ") -> str:
    """One line per record, ``NAME  summary``, names padded to one width (``theorydyn --help``)."""
    entries = list(entries)
    width = max((len(e.name) for e in entries), default=0)
    return "\n".join(f"{indent}{e.name:{width}s}  {e.summary}" for e in entries)
