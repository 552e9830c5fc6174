"""Plumbing: nothing here knows the paper.

* :mod:`.store` — the keyed result store (SQLite, one transaction a write); :mod:`.store_merge` — union of stores;
* :mod:`.atomic` — atomic files; :mod:`.provenance` — what produced a file;
* :mod:`.memory` — estimates of peak memory and the guard that refuses a run before any work;
* :mod:`.paths` — the run directory; :mod:`.limits` — the sizes a command accepts;
* :mod:`.blas` — BLAS threads; :mod:`._progress` — one progress bar; :mod:`.terminal` — tables on a terminal;
* :mod:`._lazy` — lazy re-exports of the package ``__init__`` files.

Imports nothing of theorydyn.
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each submodule loads on first use
    from .memory import MemoryEstimate
    from .paths import run_dir
    from .store import ResultStore

__all__ = ["MemoryEstimate", "ResultStore", "run_dir"]
__getattr__, __dir__ = lazy_exports(__name__)
