"""BLAS at one thread for a block of code: ``with single_threaded_blas(): ...``.

Two callers need it. The simulator's kernel (:mod:`theorydyn.simulate._kernel`) runs one thread per
``prange`` block, and its gemv over a sub-block (sub·D·d ≈ 2.5·10⁵ multiply-adds) is past the size at
which OpenBLAS starts threads of its own: the cores would be oversubscribed, and ∇_v's summation
order would depend on BLAS's thread count. The cross-validated logistic regression
(:func:`theorydyn.core.logreg.fit_logreg_cv`) makes dozens of tiny fits, on which BLAS threads would spin
(2.4 s a CV against 0.02 s single-threaded on a loaded 2-core machine).

The process's BLAS libraries are inspected once (building a ``ThreadpoolController`` costs ~1 ms;
limiting through it ~10 µs per call). SciPy's BLAS, the one Numba's ``np.dot`` calls, is imported
first so that it is among them whatever was imported before.
"""

from __future__ import annotations

import functools
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    import scipy.linalg.cython_blas  # noqa: F401  (Numba's BLAS: loaded before the libraries are listed)

    return ThreadpoolController().select(user_api="blas")


def blas_libraries() -> list[str]:
    """Each BLAS library of the process as ``"<api> <version> <kernel>"``, e.g. ``"openblas 0.3.30
    SkylakeX"``: the kernel OpenBLAS picked for this CPU at load time, which fixes its summation order
    (threadpoolctl's ``architecture``; numpy's and SciPy's each bring their own build)."""
    return [
        " ".join(str(info.get(k) or "?") for k in ("internal_api", "version", "architecture"))
        for info in _controller().info()
    ]


def single_threaded_blas() -> Any:
    """A context manager holding every BLAS library of the process at one thread, restored on exit."""
    return _controller().limit(limits=1)
