"""Definition 2.1 in the ledger: the labels of Assumption 1 are spatially structured, i.e. up to a
negligible error the label is a sum over sets, Pr[y f(X) > 0] = 1 − d^{−ω(1)} (docs/theory.md §10.1).

For Assumption 1 the probability is exact (:func:`label_agreement`): the signal set contributes
y·C to f, and each of the L − 1 other sets contributes Thr(t), t the sum of C i.i.d. δ_j ∈ {+1, −1, 0}
(probabilities q/2, q/2, 1 − q), Thr(t) = t if |t| > 0.9 C else 0. y·Thr(t) has the law of Thr(t)
(δ is symmetric), so

    Pr[y f > 0] = Pr[C + Σ_{k=1}^{L−1} T_k > 0],  T_k i.i.d. with the law of Thr(t),

computed by exact convolutions of integer laws. The row is PASS when 1 − Pr[y f > 0] ≤ 0.01 (the
ledger's reading of d^{−ω(1)} at a finite size, as for Theorem 3.2's error), FAIL otherwise: at
such a setting the labels are not spatially structured in the paper's sense (for instance D = 32,
C = 4, q = C²/D = 1/2, where two or more random sets fully aligned against y flip the label).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..resources import MemoryEstimate, Term
from ..setting import Setting
from .check import Check

#: d^{-omega(1)} read at a finite size: at most 1% of the labels disagree with f
NOISE_TOL = 0.01


def label_agreement(s: Setting) -> dict[str, float]:
    """Exact Pr[y f > 0], Pr[f = 0] and Pr[y f < 0] under Assumption 1 (module docstring)."""
    C, L, q = s.C, s.L, s.q
    delta = np.array([q / 2, 1 - q, q / 2])  # values -1, 0, +1
    t = np.array([1.0])
    for _ in range(C):
        t = np.convolve(t, delta)  # law of the set sum on -C..C
    vals = np.arange(-C, C + 1)
    keep = np.abs(vals) > 0.9 * C
    T = np.where(keep, t, 0.0)
    T[C] += t[~keep].sum()  # Thr(t) = 0 below the threshold
    total = np.array([1.0])
    for _ in range(L - 1):
        total = np.convolve(total, T)  # law of the sum of the L - 1 thresholds on -C(L-1)..C(L-1)
    m = C + np.arange(-C * (L - 1), C * (L - 1) + 1)  # y f = C + sum
    return {
        "agree": float(total[m > 0].sum()),
        "zero": float(total[m == 0].sum()),
        "disagree": float(total[m < 0].sum()),
    }


def checks(s: Setting, *, quick: bool = True, progress: Callable[[str], None] | None = None) -> list[Check]:
    """The Definition 2.1 row at ``s`` (exact; ``quick`` changes nothing)."""
    if progress:
        progress("Definition 2.1 (exact label agreement)")
    p = label_agreement(s)
    noise = 1.0 - p["agree"]
    return [
        Check.exact(
            "Definition 2.1",
            "1 - Pr[y f(X) > 0], exact (Assumption 1's labels against f)",
            noise,
            f"<= {NOISE_TOL} (1 - d^-omega(1))",
            noise <= NOISE_TOL,
            params=dict(D=s.D, C=s.C, q=round(s.q, 6), L=s.L),
            note=f"Pr[f = 0] = {p['zero']:.3g}, Pr[y f < 0] = {p['disagree']:.3g}",
            route="exhaustive enumeration of Assumption 1 and Monte Carlo on data.sample "
            "(tests/test_theorems.py::test_definition_2_1_label_agreement_exact_vs_enumeration)",
        )
    ]


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :func:`checks`: two short vectors of length 2 C L."""
    return MemoryEstimate("Definition 2.1", (Term("label laws", 16 * 2 * s.C * s.L + 1024, {"D": s.D}),))
