"""Lazy re-exports for a package's ``__init__`` (PEP 562), so that importing a package is cheap.

``python -m theorydyn.scan --help`` imports the package ``theorydyn.scan`` before its ``__main__``;
an ``__init__`` that imported its submodules eagerly pulled Numba, SciPy, pandas and Matplotlib into
every ``--help`` (4.5–12.5 s, issue 29). A package names each export in an ``if TYPE_CHECKING:`` block
of real imports (what type checkers and a reader see) and in ``__all__`` (what ``import *``, ruff and the
API reference read: mkdocstrings documents a package's imported names only through a literal
``__all__``), and ends with ``__getattr__, __dir__ = lazy_exports(__name__)``. There is no table of its
own: on the first access of a name not yet loaded, the block is read from the package's source
(:func:`declared_exports`) and checked against ``__all__``, the submodule that defines the name is
imported, and the name is then a plain attribute of the package.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import cache
from typing import Any


def lazy_exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package``: its exports are the names its
    ``if TYPE_CHECKING:`` imports declare, each loaded from the module that block names for it
    (:func:`checked_exports`, read on first use). An unknown name raises AttributeError, as a plain
    module would."""

    def __getattr__(name: str) -> Any:
        where = checked_exports(package).get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where, package), name)
        setattr(sys.modules[package], name, value)  # later accesses are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(checked_exports(package)))

    return __getattr__, __dir__


@cache
def checked_exports(package: str) -> dict[str, str]:
    """:func:`declared_exports` of ``package``, once its ``__all__`` (when it has one) is known to name
    exactly the block's names and the names the package defines itself.

    Raises:
        ImportError: ``__all__`` and the ``if TYPE_CHECKING:`` block disagree.
    """
    declared = declared_exports(package)
    module = sys.modules[package]
    listed = set(vars(module).get("__all__", declared))
    own = {n for n in listed - set(declared) if n in vars(module)}  # defined eagerly (``__version__``)
    if listed - own != set(declared):
        raise ImportError(
            f"{package}: __all__ and its TYPE_CHECKING imports disagree on {sorted((listed - own) ^ set(declared))}"
        )
    return declared


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
