"""Assumption 1's labels against the sum over sets f, exactly (docs/theory.md §10.1): the law of y·f.

The signal set contributes y·C to f, and each of the L − 1 other sets contributes Thr(t), t the sum of C
i.i.d. δ_j ∈ {+1, −1, 0} (probabilities q/2, q/2, 1 − q), Thr(t) = t if |t| > 0.9 C else 0. y·Thr(t) has the
law of Thr(t) (δ is symmetric), so

    Pr[y f > 0] = Pr[C + Σ_{k=1}^{L−1} T_k > 0],  T_k i.i.d. with the law of Thr(t),

computed by exact convolutions of integer laws (the noise 1 − Pr[y f > 0] as Pr[f = 0] + Pr[y f < 0], a sum of
small positive terms, so it stays accurate far below the float64 rounding of 1). Pr[f = 0] is the floor of every
classifier's Pr[f F <= 0]: :mod:`theorydyn.claims.definition21` judges the noise, and the floor enters the
readings of :mod:`theorydyn.claims.dynamics` and :mod:`theorydyn.claims.theorem32`.

* :func:`label_agreement`, :func:`noise` — the law at one setting; :func:`trend` — the noise on a (C, D) grid
  and its local exponents in D;
* :func:`run` — what the ledger's Definition 2.1 rows read, in one call (:class:`Definition21Config` →
  :class:`Definition21Results`): the agreement at the ledger's setting and the trends on the config's two grids;
  :func:`memory` its peak.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.setting import Setting
from ..infra.memory import MemoryEstimate, Term


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


def noise(s: Setting) -> float:
    """1 − Pr[y f > 0] = Pr[f = 0] + Pr[y f < 0], exact (:func:`label_agreement`)."""
    p = label_agreement(s)
    return p["zero"] + p["disagree"]


def trend(grid: tuple[tuple[int, int], ...]) -> dict[str, np.ndarray]:
    """The noise on a (C, D) grid at q = C²/D and its local exponents Δ log noise / Δ log D."""
    Ds = np.array([D for _, D in grid], float)
    n = np.array([noise(Setting(D=D, C=C, q=C * C / D)) for C, D in grid])
    return dict(D=Ds, C=np.array([C for C, _ in grid]), noise=n, local=np.diff(np.log(n)) / np.diff(np.log(Ds)))


#: A grid of settings (C, D), each at q = C²/D (:func:`trend`).
Grid = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Definition21Config:
    """What :func:`run` needs for the ledger's Definition 2.1 rows: the two (C, D) grids its trends are read on,
    each at q = C²/D, ``polylog`` along Assumption 2 (C ≈ log₂ D, the verdict's) and ``fixed`` at the ledger's
    fixed C (the counter-case's). Exact: no size, no seed."""

    polylog: Grid
    fixed: Grid


@dataclass(frozen=True)
class Definition21Results:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        config: the :class:`Definition21Config` it ran at (its two grids).
        agreement: :func:`label_agreement` at ``s``: exact Pr[y f > 0], Pr[f = 0], Pr[y f < 0]
            (keys ``agree``, ``zero``, ``disagree``).
        polylog: :func:`trend` on ``config.polylog`` (arrays D, C, noise: (n,); local: (n − 1,) the local
            exponents Δ log noise / Δ log D).
        fixed: the same on ``config.fixed``.
    """

    s: Setting
    config: Definition21Config
    agreement: dict[str, float]
    polylog: dict[str, np.ndarray]
    fixed: dict[str, np.ndarray]


def run(s: Setting, config: Definition21Config, progress: Callable[[str], None] | None = None) -> Definition21Results:
    """Definition 2.1's exact label laws (:class:`Definition21Results`): one progress message, then
    :func:`label_agreement` at the ledger's setting ``s`` and :func:`trend` on ``config.polylog`` and on
    ``config.fixed``, in that order (exact convolutions: no sampling)."""
    if progress:
        progress("Definition 2.1 (exact label agreement across D)")
    p = label_agreement(s)
    polylog, fixed = trend(config.polylog), trend(config.fixed)
    return Definition21Results(s, config, p, polylog, fixed)


def memory(n: int, D: int) -> MemoryEstimate:
    """Peak of the label laws up to patch count ``n`` (the largest D or C·L computed; ``D`` the ledger's, named
    in the term): two short float64 vectors of length 2n."""
    return MemoryEstimate("Definition 2.1", (Term("label laws", 16 * 2 * n + 1024, {"D": D}),))
