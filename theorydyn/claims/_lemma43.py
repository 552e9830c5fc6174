"""Lemma 4.3 across D (issue 17 item 7, issues 21 and 30): the reading of the lemma's D/polylog(d) as
D/ln(d)^2, the D grid, and the verdict on the fitted exponent of the start rate ratio dγ/|dρ| against D
(:func:`lemma43_exponent_row`, a pure function of the measured ratios).

The measurement and the rows are :func:`theorydyn.claims.dynamics.lemma43_across_D`, which re-exports
these names; docs/theory.md §3.4, §10.10.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.setting import Setting
from ..core.stats import fit_power_law_ci
from .check import Check, Form, Verdict

#: The polylog of Lemma 4.3's lower bound D/polylog(d), read as ln(d)^POLYLOG_K: the toolkit's reading
#: of "polylog" (docs/theory.md §10.10 admits polylogs up to (log D)^2), fixed before measuring.
POLYLOG_K = 2


def polylog_reading(s: Setting, k: int = POLYLOG_K) -> float:
    """D / ln(d)^k: the reading of Lemma 4.3's lower bound D/polylog(d) at ``s`` (:data:`POLYLOG_K`)."""
    return s.D / math.log(s.d) ** k


def local_exponent(D_lo: float, D_hi: float, k: int = POLYLOG_K) -> float:
    """The exponent a of the power law through D/ln(D)^k at D_lo and D_hi (d = D): what a fit of
    log ratio on log D over that range gives for a ratio exactly D/ln(d)^k,
    1 − k·ln(ln D_hi / ln D_lo) / ln(D_hi / D_lo)."""
    return 1.0 - k * math.log(math.log(D_hi) / math.log(D_lo)) / math.log(D_hi / D_lo)


def lemma43_Ds(C: int) -> tuple[int, ...]:
    """The D of the across-D row: q = C²/D from 1/2 down to 1/16 (D = 2C², 4C², 8C², 16C²; 32…256 at C = 4)."""
    return tuple(2**k * 2 * C * C for k in range(4))


def lemma43_exponent_row(per_D: dict[int, list[float]], label: str, params: dict, route: str = "") -> Check:
    """The across-D row from per-D ratios (D → one ratio per seed): the exponent b of ratio ∝ D^b
    (least squares over every (D, seed), 95% interval). The lemma's D/polylog(d), read as D/ln(d)^2
    (:data:`POLYLOG_K`), has the exponent a = :func:`local_exponent` over the D range (0.548 over
    32…256). FAIL if the ratio does not grow with D (the interval's lower end ≤ 0, some ratio ≤ 0, or
    too few points); PASS if the interval's upper end reaches a; DEVIATES otherwise (it grows, but
    slower than D/ln(d)^2)."""
    Ds = sorted(per_D)
    rows = [(D, r) for D in Ds for r in per_D[D]]
    a_k = local_exponent(Ds[0], Ds[-1])
    listing = "; ".join(f"D={D}: {np.mean(v):.4g} (ratio/D = {np.mean(v) / D:.3g})" for D, v in per_D.items())
    fit = fit_power_law_ci([d for d, _ in rows], [r for _, r in rows])
    where = (f"C = {params['C']}, " if "C" in params else "") + f"D = {', '.join(str(D) for D in Ds)}"
    quantity = f"exponent b of the start rate ratio d gamma/|d rho| ~ D^b at {label} [{where}]"
    threshold = f">= {a_k:.3g} (the exponent of D/ln(d)^2 over D = {Ds[0]}..{Ds[-1]}; 'order D': 1); FAIL if <= 0"
    if fit is None or any(r <= 0 for _, r in rows):
        return Check(
            "Lemma 4.3 (across D)",
            quantity,
            math.nan,
            threshold,
            Verdict.FAIL,
            params=params,
            route=route,
            note=f"gamma does not outrun rho at some D (ratio <= 0) or too few points: {listing}",
            form=Form.RATE,
        )
    if fit["b_low"] <= 0:
        verdict, why = Verdict.FAIL, "the ratio is not shown to grow with D (the interval reaches 0)"
    elif fit["b_high"] >= a_k:
        verdict, why = Verdict.PASS, ""
    else:
        verdict, why = Verdict.DEVIATES, "the ratio grows slower than the lemma's D/polylog(d) read as D/ln(d)^2"
    return Check(
        "Lemma 4.3 (across D)",
        quantity,
        fit["b"],
        threshold,
        verdict,
        params=params,
        route=route,
        ci_low=fit["b_low"],
        ci_high=fit["b_high"],
        note=f"ratio at gamma = rho = 0 (alpha = nu^(1/(p-1))), mean over seeds: {listing}"
        + (f". {why}" if why else ""),
        form=Form.RATE,
    )
