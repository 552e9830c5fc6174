"""Definition 2.1 in the ledger: the labels of Assumption 1 are spatially structured, i.e. up to a
negligible error the label is a sum over sets, Pr[y f(X) > 0] = 1 − d^{−ω(1)} (docs/theory.md §10.1).

For Assumption 1 the probability is exact (:mod:`theorydyn.experiments.labels` computes it,
:func:`~theorydyn.experiments.labels.run` at :func:`config`: :data:`EXPERIMENT`; this module judges, :func:`rows`):
the signal set
contributes y·C to f, and each of the L − 1 other sets contributes Thr(t), t the sum of C i.i.d. δ_j ∈ {+1, −1, 0}
(probabilities q/2, q/2, 1 − q), Thr(t) = t if |t| > 0.9 C else 0. y·Thr(t) has the law of Thr(t)
(δ is symmetric), so

    Pr[y f > 0] = Pr[C + Σ_{k=1}^{L−1} T_k > 0],  T_k i.i.d. with the law of Thr(t),

computed by exact convolutions of integer laws (the noise 1 − Pr[y f > 0] as Pr[f = 0] + Pr[y f < 0],
a sum of small positive terms, so it stays accurate far below the float64 rounding of 1).

The definition is asymptotic: the noise must be d^{−ω(1)}, i.e. fall faster than any power of d = D
(Simplification 3.1). So the verdict is its trend across D, not its value at one D:

* along Assumption 2 (C = polylog(d), q = poly(C)/D = C²/D), on the grid C = 7…12 with
  D = C·round(2^C / C) (C ≈ log₂ D; C starts at 7, the first with q ≤ 1/2, the scope rule's q ≪ 1):
  the local exponents k_i = Δ log(noise) / Δ log D between neighbours. PASS iff the last one lies
  at least :data:`DROP` = 1 below the first and below 0 (the exponent keeps falling: no power law holds), FAIL
  otherwise (it settles: the noise is polynomial in d, d^{−Θ(1)}). Rule and grid fixed before any run; the
  rule is :func:`theorydyn.claims.forms.faster_than_every_power` (form "vanishing with d"), which Theorem 3.2's
  reading across D shares.
* INFO, the same procedure at the ledger's fixed C (D = C·2C·2^k, k = 0…5, q = C²/D): here the
  dominant event is one random set fully aligned against y, probability ≈ (L − 1)(q/2)^C ∝ D^{1−C},
  so the local exponents settle at −(C − 1) (−3 at C = 4; the noise is 0.026 at D = 32) and the same
  rule gives FAIL: the planted counter-case, outside Assumption 2 (C fixed is not polylog(d)).
* INFO: the noise at the ledger's own setting (the earlier row, judged then against 0.01).
"""

from __future__ import annotations

import numpy as np

from ..core.setting import Setting
from ..experiments import labels
from ..experiments.labels import Definition21Config, Definition21Results
from ..infra.memory import MemoryEstimate
from . import forms
from .check import Check, Form, Verdict, setting_params

#: d^{-omega(1)} read at a finite size: at most 1% of the labels disagree with f
NOISE_TOL = 0.01


#: The verdict's drop: the local exponent of the noise must fall by at least this across the grid.
DROP = forms.DROP
#: Assumption 2's grid: (C, D) with C ≈ log₂ D, C | D, q = C²/D ≤ 1/2 from C = 7 on.
POLYLOG_GRID = tuple((C, C * round(2**C / C)) for C in range(7, 13))


def fixed_c_grid(C: int) -> tuple[tuple[int, int], ...]:
    """(C, D) at fixed C: D = C · 2C · 2^k, k = 0…5 (q = C²/D = 1/2 at the first, halving)."""
    return tuple((C, C * 2 * C * 2**k) for k in range(6))


def trend_falls(local: np.ndarray, drop: float = DROP) -> bool:
    """The verdict rule (:func:`theorydyn.claims.forms.faster_than_every_power` on exact exponents): the last local
    exponent lies ``drop`` below the first, and below 0 (module docstring)."""
    first, last = float(local[0]), float(local[-1])
    return forms.faster_than_every_power((first, first), (last, last), drop=drop)[0] is Verdict.PASS


def grid_text(grid: tuple[tuple[int, int], ...]) -> str:
    """A (C, D) grid as a row names its setting: ``"C = 7..12, D = 126..4092, q = C^2/D"``."""
    Cs, Ds = sorted({C for C, _ in grid}), [D for _, D in grid]
    c = f"C = {Cs[0]}" if len(Cs) == 1 else f"C = {Cs[0]}..{Cs[-1]}"
    return f"{c}, D = {Ds[0]}..{Ds[-1]}, q = C^2/D"


def _trend_row(title: str, t: dict[str, np.ndarray], verdict_row: bool, extra: str) -> Check:
    """The row of one trend of the noise (:func:`theorydyn.experiments.labels.trend` on a grid)."""
    loc = t["local"]
    ok = trend_falls(loc)
    pts = ", ".join(f"(C={int(c)}, D={int(d)}): {x:.3g}" for c, d, x in zip(t["C"], t["D"], t["noise"], strict=True))
    return Check(
        title,
        "local exponent of the label noise 1 - Pr[y f > 0] in D, last pair of the grid (q = C^2/D)",
        float(loc[-1]),
        f"last <= first - {DROP:g} and < 0 (d^-omega(1): the exponent keeps falling)" if verdict_row else "INFO",
        (Verdict.PASS if ok else Verdict.FAIL) if verdict_row else Verdict.INFO,
        params=dict(C=" ".join(str(int(c)) for c in t["C"]), D=" ".join(str(int(d)) for d in t["D"]), q="C^2/D"),
        note=f"noise {pts}; local exponents {np.round(loc, 3).tolist()} (first {loc[0]:.3f}, last {loc[-1]:.3f}: "
        + ("falling" if ok else "settled, polynomial")
        + f"). {extra} The interval is the range of the local exponents (exact: no sampling).",
        ci_low=float(loc.min()),
        ci_high=float(loc.max()),
        route="exact convolutions, checked by enumeration (tests/test_theorems.py); the trend rule "
        "flipped by a fixed C (tests/test_verdicts_b_definition21.py)",
        form=Form.VANISHING,
    )


def config(s: Setting, quick: bool) -> Definition21Config:
    """What :func:`theorydyn.experiments.labels.run` needs for the rows: the grids :data:`POLYLOG_GRID` and
    :func:`fixed_c_grid` at the ledger's C (exact: no sizes, ``quick`` changes nothing)."""
    return Definition21Config(polylog=POLYLOG_GRID, fixed=fixed_c_grid(s.C))


#: Definition 2.1's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); this module runs nothing. Exact convolutions of integer laws.
EXPERIMENT = labels.run


def rows(res: Definition21Results) -> list[Check]:
    """The Definition 2.1 rows (module docstring) from the exact laws of ``res``
    (:func:`theorydyn.experiments.labels.run` at the ledger's setting ``res.s``): the trend along Assumption 2
    on ``res.config.polylog`` (the verdict), the trend at the ledger's fixed C on ``res.config.fixed`` and the noise
    at ``res.s`` from its label agreement (INFO)."""
    s, p = res.s, res.agreement
    here = p["zero"] + p["disagree"]
    return [
        _trend_row(
            f"Definition 2.1 (along Assumption 2, C ~ log2 D) [{grid_text(res.config.polylog)}]",
            res.polylog,
            True,
            "C = polylog(d) as Assumption 2 asks.",
        ),
        _trend_row(
            f"Definition 2.1 (fixed C = {s.C}, outside Assumption 2) [{grid_text(res.config.fixed)}]",
            res.fixed,
            False,
            f"At fixed C the exponent settles at -(C - 1) = {1 - s.C} (one random set aligned against y): "
            "polynomial, the planted counter-case of the row above.",
        ),
        Check.exact(
            "Definition 2.1",
            "1 - Pr[y f(X) > 0], exact (Assumption 1's labels against f), at the ledger's setting",
            here,
            f"INFO (was <= {NOISE_TOL}; the verdict is the trend across D)",
            Verdict.INFO,
            params=setting_params(s, L=s.L),
            note=f"Pr[f = 0] = {p['zero']:.3g}, Pr[y f < 0] = {p['disagree']:.3g}",
            route="exhaustive enumeration of Assumption 1 and Monte Carlo on data.sample "
            "(tests/test_theorems.py::test_definition_2_1_label_agreement_exact_vs_enumeration)",
            form=Form.VANISHING,
        ),
    ]


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config` (:func:`theorydyn.experiments.labels.memory`) at the largest D
    of its grids."""
    c = config(s, quick)
    n = max([s.C * s.L, *(D for _, D in c.polylog), *(D for _, D in c.fixed)])
    return labels.memory(n, s.D)
