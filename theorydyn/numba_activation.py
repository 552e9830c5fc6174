"""The activation of Assumption 2 for Numba kernels: the one compiled definition both solvers call.

    σ(x) = x^p + ν x,   σ'(x) = p x^{p−1} + ν        (p odd ≥ 3, ν > 0; docs/theory.md §1)

:func:`theorydyn.model.activation` / :func:`theorydyn.model.activation_grad` are the NumPy (and
torch) definition; this is the scalar one the Numba kernels (:mod:`theorydyn.reduced._kernels`,
:mod:`theorydyn.simulate._kernel`) call, tested equal to them (tests/test_model.py).

Why a module of its own: :mod:`theorydyn.model` stays importable without loading Numba.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def sigma_and_grad(x, p, nu):
    """(σ(x), σ'(x)) = (x^{p−1}·x + ν x, p x^{p−1} + ν) for a scalar x, from one power x^{p−1}.

    ``x ** (p − 1)`` with an integer p is Numba's exact repeated squaring (no ``pow`` call).
    ``inline="always"`` inlines the Numba IR into the caller, so it compiles with the caller's
    flags (the simulator's fastmath reassociation, the reduced kernel's strict IEEE) and an
    unused σ or σ' is dropped as dead code; a caller that passes a literal p (the simulator's
    p = 3 loops) gets the power unrolled, as if written by hand.
    """
    xp1 = 1.0
    for _ in range(p - 1):
        xp1 *= x
    return xp1 * x + nu * x, p * xp1 + nu
