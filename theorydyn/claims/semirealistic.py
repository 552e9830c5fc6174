"""The semi-realistic closeness in the ledger (docs/theory.md §4): finite-N GD against population GD.

By Lemmas 4.1–4.2 population GD from the idealized init stays in the three-value form and is exactly
the reduced recursion in (α, γ, ρ) (docs/theory.md §3); the proof of Theorem 4.2 rests on GD on N
samples staying close to it, the gap shrinking with N. The runs are
:func:`theorydyn.experiments.semirealistic.closeness_runs` (the comparison itself,
:func:`~theorydyn.experiments.semirealistic.compare_with_reduced`, also draws
``figures/semirealistic.svg``); this module judges
the exponent of their decay in N (:func:`closeness_rows`, :func:`check_closeness`), made relative and
fitted by the experiment (:func:`~theorydyn.experiments.semirealistic.closeness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..experiments.semirealistic import Closeness, closeness, gap_exponents
from .check import Check, Verdict, setting_params
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class ClosenessSizes(ClaimSizes):
    """The sizes of the closeness rows (:func:`check_closeness`)."""

    Ns: tuple[int, ...] = grid_option(tuple(2**k for k in range(11, 17)), "the N grid of finite-N GD")
    steps: int = option(300, "GD steps of each run", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k (simulator seed 1000 k + 77)")
    eta: float = option(10.0, "GD step size of both processes", low=0.0, low_open=True)


#: Sizes of the closeness rows, fixed before any run: the Lemma 4.1 finite-N rows' N grid, steps and
#: η (:mod:`theorydyn.claims.lemma41`), at the same D (the smallest in Theorem 3.1's scope from 16).
#: Quick mode stops at N = 2^14 with 3 seeds (cost: 5 seeds up to 2^15 take about 75 s on 2 busy cores).
#: Part of Theorem 4.2's sizes (:data:`theorydyn.claims.theorem4.SIZES`).
CLOSENESS = Sizes(
    quick=ClosenessSizes(Ns=tuple(2**k for k in range(11, 15)), steps=150, seeds=(0, 1, 2)),
    full=ClosenessSizes(),
)


def closeness_rows(table: pd.DataFrame, params: dict, where: str) -> list[Check]:
    """:func:`fitted_rows` of a :func:`~theorydyn.experiments.semirealistic.relative_gaps` table, its
    exponents fitted by :func:`~theorydyn.experiments.semirealistic.gap_exponents`."""
    return fitted_rows(table, gap_exponents(table), params, where)


def fitted_rows(table: pd.DataFrame, fits: dict[str, dict | None], params: dict, where: str) -> list[Check]:
    """Rows of the semi-realistic closeness from a :func:`~theorydyn.experiments.semirealistic.relative_gaps`
    table (columns N, seed, gap_rel, rel_alpha, rel_gamma, rel_rho) and the exponents of its gaps
    (``fits``: :func:`~theorydyn.experiments.semirealistic.gap_exponents`):

    * verdict: the exponent b of gap_rel ∝ N^b, least squares over every (N, seed) with its 95%
      interval (:func:`theorydyn.core.stats.fit_power_law_ci`). The proof of Theorem 4.2 says the finite-N
      process stays close to the population one, the gap shrinking with N: PASS iff the interval
      lies below 0, FAIL otherwise (a gap not shown to shrink);
    * INFO: the exponents of the α, γ and ρ parts, and gap_rel at the largest N.
    """
    Ns = sorted(table["N"].unique())
    means = table.groupby("N")["gap_rel"].mean()
    listing = ", ".join(f"N={n}: {m:.3g}" for n, m in means.items())
    route = (
        "reduced GD recursion = population GD of the full model (tests/test_reduced_dynamics.py::"
        "test_gd_recursion_equals_full_model_population_gd); verdict on planted gaps "
        "(tests/test_verdicts_a.py::test_closeness_verdict_flips_on_a_gap_that_does_not_shrink)"
    )
    out = []
    for col, what, judged in (
        ("gap_rel", "max over alpha, gamma, rho of the relative gap", True),
        ("rel_alpha", "|alpha_N - alpha_inf| / max|alpha_inf|", False),
        ("rel_gamma", "|gamma_N - gamma_inf| / max|gamma_inf - rho_inf|", False),
        ("rel_rho", "|rho_N - rho_inf| / max|gamma_inf - rho_inf|", False),
    ):
        fit = fits[col]
        q = f"exponent b of max_s {what} ~ N^b (finite-N GD vs population GD at the same s)"
        if fit is None:
            out.append(
                Check(
                    f"Lemma 4.2 / Theorem 4.2 proof (semi-realistic closeness) {where}",
                    q,
                    math.nan,
                    "< 0 (95% interval)" if judged else "INFO",
                    Verdict.FAIL if judged else Verdict.INFO,
                    params=params,
                    note=f"too few finite gaps to fit: {listing}",
                    route=route,
                )
            )
            continue
        v = (Verdict.PASS if fit["b_high"] < 0 else Verdict.FAIL) if judged else Verdict.INFO
        out.append(
            Check(
                f"Lemma 4.2 / Theorem 4.2 proof (semi-realistic closeness) {where}",
                q,
                fit["b"],
                "95% interval < 0 (the gap shrinks with N)" if judged else "INFO (sampling error alone: -1/2)",
                v,
                params=dict(params, points=fit["n"]),
                ci_low=fit["b_low"],
                ci_high=fit["b_high"],
                note=f"mean relative gap over seeds: {listing}" if judged else "",
                route=route,
            )
        )
    big = table[table["N"] == Ns[-1]]["gap_rel"].to_list()
    out.append(
        Check.over_seeds(
            f"Lemma 4.2 / Theorem 4.2 proof (semi-realistic closeness) {where}",
            f"max over alpha, gamma, rho of the relative gap at N = {Ns[-1]}",
            big,
            "INFO",
            Verdict.INFO,
            params=dict(params, N=Ns[-1]),
            route=route,
            bounds=(0.0, math.inf),
        )
    )
    return out


def check_closeness(s: Setting, n: ClosenessSizes, progress=None, ledger_D: int | None = None) -> list[Check]:
    """The semi-realistic closeness rows (:func:`closeness_rows`) at ``s``: GD on N samples (float32
    storage) from the idealized init (Â = β I, v̂ = α(0) w*: the finite-N process alone, without the
    ω of the realistic init, whose offset does not shrink with N) against the population GD of the
    same η, i.e. the reduced recursion with the exact expectation (docs/theory.md §3), at every
    recorded s = η·t ≤ η·steps (:func:`theorydyn.experiments.semirealistic.closeness_runs`); N,
    steps, seeds and η from ``n`` (:data:`CLOSENESS`: η = 10)."""
    return closeness_check_rows(
        closeness(s, Ns=n.Ns, steps=n.steps, seeds=n.seeds, eta=n.eta, progress=progress), ledger_D
    )


def closeness_check_rows(c: Closeness, ledger_D: int | None = None) -> list[Check]:
    """:func:`check_closeness`'s rows from its runs ``c``
    (:func:`theorydyn.experiments.semirealistic.closeness`); ``ledger_D``: the ledger's D, named in the
    claim text when the runs are at another."""
    s, Ns, steps, seeds = c.s, c.Ns, c.steps, len(c.seeds)
    other = f"; not the ledger's D = {ledger_D}" if ledger_D is not None and ledger_D != s.D else ""
    where = f"[D = {s.D}, q = {s.q:g}, {steps} steps, N = {Ns[0]}..{Ns[-1]}, {seeds} seeds{other}]"
    params = setting_params(
        s,
        eta=c.eta,
        steps=steps,
        N=f"{Ns[0]}..{Ns[-1]}",
        seeds=seeds,
        init="idealized (A = beta I, v = alpha0 w*)",
        reference="population GD (reduced recursion, exact expectation)",
    )
    return fitted_rows(c.table, c.fits, params, where)
