"""Plumbing: nothing here knows the paper.

* :mod:`.store` — the keyed result store (SQLite, one transaction a write); :mod:`.store_merge` — union of stores;
* :mod:`.atomic` — atomic files; :mod:`.provenance` — what produced a file;
* :mod:`.memory` — estimates of peak memory and the guard that refuses a run before any work;
* :mod:`.paths` — the run directory; :mod:`.limits` — the sizes a command accepts;
* :mod:`.blas` — BLAS threads; :mod:`._progress` — one progress bar; :mod:`.terminal` — tables on a terminal;
* :mod:`._lazy` — lazy re-exports of the package ``__init__`` files.

Imports nothing of theorydyn.
"""

from __future__ import annotations

from ._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__, {"ResultStore": ".store", "MemoryEstimate": ".memory", "run_dir": ".paths"}
)

__all__ = ["MemoryEstimate", "ResultStore", "run_dir"]
