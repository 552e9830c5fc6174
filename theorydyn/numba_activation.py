"""The activation of Assumption 2 for Numba kernels: the one compiled definition both solvers call.

    σ(x) = x^p + ν x,   σ'(x) = p x^{p−1} + ν        (p odd ≥ 3, ν > 0; docs/theory.md §1)

:func:`theorydyn.model.sigma` / :func:`theorydyn.model.sigma_grad` are the array definition (NumPy
and torch); this is the scalar one the Numba kernels (:mod:`theorydyn.reduced._kernels`,
:mod:`theorydyn.simulate._kernel`) call, tested equal to it and to exact rational arithmetic
(tests/test_model.py).

Why a module of its own: :mod:`theorydyn.model` stays importable without loading Numba.

Numba's on-disk cache (``cache=True``) keys a kernel on its own source file only: after editing
this file, clear the kernels' caches (``find theorydyn -name '*.nb[ic]' -delete``) or they keep
the inlined old definition.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def sigma_and_grad(x, p, nu):
    """(σ(x), σ'(x)) = (x^{p−1}·x + ν x, p x^{p−1} + ν) for a scalar x, from one power x^{p−1}.

    The power is a product of p − 1 factors taken left to right, the rounding the kernels have
    always had at p = 3 (x·x·x). Not ``x ** (p − 1)``: measured, the simulator's float64 kernel
    then compiled to different roundings depending on whether the reduced kernel had been
    compiled first in the process. ``inline="always"`` inlines the Numba IR into the caller, so
    it compiles with the caller's flags (the simulator's fastmath reassociation, the reduced
    kernel's strict IEEE), an unused σ or σ' is dropped as dead code, and a caller that passes a
    literal p (the simulator's p = 3 loops) gets the power unrolled, as if written by hand.
    """
    xp1 = 1.0
    for _ in range(p - 1):
        xp1 *= x
    return xp1 * x + nu * x, p * xp1 + nu
