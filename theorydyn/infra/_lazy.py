"""Lazy re-exports for a package's ``__init__`` (PEP 562), so that importing a package is cheap.

``python -m theorydyn.scan --help`` imports the package ``theorydyn.scan`` before its ``__main__``;
an ``__init__`` that imported its submodules eagerly pulled Numba, SciPy, pandas and Matplotlib into
every ``--help`` (4.5–12.5 s, issue 29). A package writes each public name once, in an
``if TYPE_CHECKING:`` block of real imports (what type checkers, ruff and a reader see), and ends with
``__getattr__, __dir__ = lazy_exports(__name__)``: on the first access of a name not yet loaded, the
block is read from the package's source (:func:`declared_exports`), the submodule that defines the
name is imported, and the name is then a plain attribute of the package; ``__all__`` is the block's
names. Such an ``__init__`` starts with ``# ruff: noqa: F401`` (its imports are its exports, used by
no code of its own). The older form, an explicit table beside the block (:func:`by_module`), still works.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str] | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package``: ``exports`` maps each public name to the
    module that defines it (relative to ``package``, e.g. ``".run"``, or absolute); None (the default):
    the names the package's ``if TYPE_CHECKING:`` imports declare (:func:`declared_exports`, read on
    first use). An unknown name raises AttributeError, as a plain module would."""

    def table() -> Mapping[str, str]:
        return declared_exports(package) if exports is None else exports

    def __getattr__(name: str) -> Any:
        if name == "__all__" and exports is None:
            value: Any = sorted(table())
        else:
            where = table().get(name)
            if where is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            value = getattr(importlib.import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # later accesses are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table()))

    return __getattr__, __dir__


@cache
def declared_exports(package: str) -> dict[str, str]:
    """Public name → the module that defines it (relative, ``".run"``), as the ``from .MODULE import
    NAME, …`` statements of the top-level ``if TYPE_CHECKING:`` block of ``package``'s source declare.

    Raises:
        ImportError: the package's source cannot be read, or a name of the block is imported under an alias.
    """
    import ast  # only here: a package's first lazy access, never its import

    spec = sys.modules[package].__spec__
    get_source = getattr(spec.loader, "get_source", None) if spec is not None else None  # an InspectLoader's
    source = get_source(package) if get_source is not None else None
    if source is None:
        raise ImportError(f"{package}: no source to read its lazy exports from")
    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    for alias in stmt.names:
                        if alias.asname not in (None, alias.name):
                            raise ImportError(f"{package}: {alias.name} as {alias.asname}: an export keeps its name")
                        out[alias.name] = "." * stmt.level + (stmt.module or "")
    return out


def by_module(modules: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The table of :func:`lazy_exports` (public name → module) from each module and the names it
    defines, as the ``if TYPE_CHECKING:`` imports beside it list them.

    >>> by_module({".run": ("run_scan", "ScanOutcome"), ".grid": ("Point",)})
    {'run_scan': '.run', 'ScanOutcome': '.run', 'Point': '.grid'}
    """
    return {name: module for module, names in modules.items() for name in names}
