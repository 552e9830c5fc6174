"""Lazy re-exports for a package's ``__init__`` (PEP 562), so that importing a package is cheap.

``python -m theorydyn.scan --help`` imports the package ``theorydyn.scan`` before its ``__main__``;
an ``__init__`` that imported its submodules eagerly pulled Numba, SciPy, pandas and Matplotlib into
every ``--help`` (4.5–12.5 s, issue 29). A package lists its public names and the submodule that
defines each (:func:`by_module` writes the table as the imports are written: each module once, with its
names); the submodule is imported on the first access of one of its names, and the name is
then a plain attribute of the package. Type checkers read the same names from an
``if TYPE_CHECKING:`` block of real imports beside the table.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package``: ``exports`` maps each public name to the
    module that defines it (relative to ``package``, e.g. ``".run"``, or absolute). An unknown name
    raises AttributeError, as a plain module would."""

    def __getattr__(name: str) -> Any:
        where = exports.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # later accesses are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__


def by_module(modules: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The table of :func:`lazy_exports` (public name → module) from each module and the names it
    defines, as the ``if TYPE_CHECKING:`` imports beside it list them.

    >>> by_module({".run": ("run_scan", "ScanOutcome"), ".grid": ("Point",)})
    {'run_scan': '.run', 'ScanOutcome': '.run', 'Point': '.grid'}
    """
    return {name: module for module, names in modules.items() for name in names}
