"""Lemma 4.1 in the ledger (docs/theory.md §4): the three-value form of Â, exactly on (P) and at finite N.

The runs (GD on (P) and at finite N, in one call: :func:`~theorydyn.experiments.lemma41.run`) are
:mod:`theorydyn.experiments.lemma41`; this module judges them (:func:`rows`):

* On the population — exact on the enumerated population (:func:`population_rows`: GD
  on (P) keeps A in the three-value form).
* At finite N the symmetry break is a diagnostic (INFO) measured against N with its exponent
  (:func:`check_lemma_4_1_scaling`, on the runs of
  :func:`theorydyn.experiments.lemma41.lemma_4_1_scaling_runs`; distance from the form:
  :func:`theorydyn.experiments.lemma41.symmetry_deviation`), at the smallest size inside Theorem 3.1's
  scope rule (:func:`theorydyn.experiments.lemma41.scaling_setting`).

Theorem 4.2 and the rows from its runs are :mod:`theorydyn.claims.theorem4`; N*(D) is
:mod:`theorydyn.claims.nstar`.

Shapes: A: (D, D), v: (d,), X: (N, D, d).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..experiments import lemma41 as runs41
from ..experiments.lemma41 import Lemma41Config, Lemma41Results, PopulationRun, population_gd, scaling_exponents
from ..infra.memory import MemoryEstimate
from .check import UNIT, Check, Verdict, departures, setting_params
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class Lemma41Sizes(ClaimSizes):
    """The sizes of Lemma 4.1's finite-N rows (:func:`config`, :func:`check_lemma_4_1_scaling`)."""

    Ns: tuple[int, ...] = grid_option((2048, 4096, 8192, 16384, 32768), "the N grid of the finite-N break")
    steps: int = option(150, "GD steps of each finite-N run", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k (run (N, k): simulate seed 1000 k + log2 N)")
    D_from: int = option(16, "the smallest D tried for the scope rule's smallest size in scope", positive=True)
    capped: bool = option(False, "start at min(D_from, the ledger's D) instead of D_from")

    def start_D(self, D: int) -> int:
        """The D the search for a size in scope starts from, for the ledger's ``D``."""
        return min(D, self.D_from) if self.capped else self.D_from


#: Lemma 4.1's finite-N sizes: quick N = 2^11 … 2^15, 150 steps, from D = 16; full N = 2^11 … 2^16,
#: 300 steps, from min(D, 32); 5 seeds.
SIZES = Sizes(
    quick=Lemma41Sizes(),
    full=Lemma41Sizes(Ns=tuple(2**k for k in range(11, 17)), steps=300, D_from=32, capped=True),
)


def check_lemma_4_1_scaling(s: Setting, runs: Any, eta: float = 10.0) -> list[Check]:
    """The finite-N symmetry break of Lemma 4.1 against N: INFO rows with 95% intervals over seeds.

    For each seed, the least-squares slope b of log(in-set std / gap) against log N (the
    deviation ∝ N^b; 0 would mean no approach to the three-value form), and the same for the
    row-level spread (:func:`theorydyn.experiments.lemma41.scaling_exponents`); plus the values at the
    largest N. ``runs``: a DataFrame from
    :func:`theorydyn.experiments.lemma41.lemma_4_1_scaling_runs` at ``s`` with step size ``eta``.
    """
    exponents = scaling_exponents(runs)
    Ns = sorted(runs["N"].unique())
    params = setting_params(
        s,
        N=f"{Ns[0]}..{Ns[-1]}",
        init="realistic",
        **departures(s, eta=eta),
    )
    out = []
    for col, what in (
        ("in_rel_std", "in-set std / gap"),
        ("row_rel_spread", "row-level spread / gap"),
        ("cross_rel_std", "cross-set std / gap"),
    ):
        slopes = exponents[col]
        means = runs.groupby("N")[col].mean()
        listing = ", ".join(f"N={n}: {m:.3f}" for n, m in means.items())
        out.append(
            Check.over_seeds(
                "Lemma 4.1 (finite N)",
                f"exponent b of {what} of A_hat ~ N^b (realistic GD)",
                slopes,
                "INFO (0: no approach to the symmetric form)",
                Verdict.INFO,
                params=params,
                note=f"mean over seeds: {listing}",
                route="slope recovery on planted power laws "
                "(tests/test_theorems.py::test_lemma_4_1_scaling_recovers_a_planted_exponent)",
            )
        )
        big = runs[runs["N"] == Ns[-1]][col].to_list()
        if col == "in_rel_std" and "association" in runs:
            am = runs.groupby("N")["association"].mean()
            small = runs[runs["N"] == Ns[0]]["association"].to_list()
            out.append(
                Check.over_seeds(
                    "Lemma 4.1 (finite N)",
                    f"patch association of A_hat at N = {Ns[0]} (Definition 2.2, fraction of rows)",
                    small,
                    "INFO (finite-N break of the symmetry can cost rows)",
                    Verdict.INFO,
                    params=dict(params, N=Ns[0]),
                    note="mean over seeds: " + ", ".join(f"N={n}: {m:.3f}" for n, m in am.items()),
                    route="brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c)",
                    bounds=UNIT,
                )
            )
        out.append(
            Check.over_seeds(
                "Lemma 4.1 (finite N)",
                f"{what} of A_hat at N = {Ns[-1]} (realistic GD)",
                big,
                "INFO (the lemma is about (P))",
                Verdict.INFO,
                params=dict(params, N=Ns[-1]),
                route="symmetry_deviation vs hand-built A (tests/test_theorems.py::"
                "test_lemma_4_1_check_sees_the_three_value_form_and_a_dominant_row)",
            )
        )
    return out


def check_lemma_4_1_population(
    s: Setting, D: int = 6, C: int = 2, q: float = 0.4, eta: float = 2.0, steps: int = 300, tol: float = 1e-9
) -> list[Check]:
    """Lemma 4.1 as stated: GD on the population risk (P) keeps A in the three-value form.

    (P) is computed exactly by enumerating every noiseless data point with its probability
    (:func:`theorydyn.core.data.enumerate_population`) at a size where that is instant (default D = 6,
    C = 2; p, β, τ taken from ``s``). From the idealized init (A = β I, v = α(0) w*), plain GD with
    the full-model gradients (:func:`theorydyn.core.model.risk_and_grad`) runs ``steps`` steps; the
    measured value is the largest spread of the in-set and of the cross-set entries relative to
    |γ − ρ| over the run. (v stays in span(w*) trivially here, the enumeration being noiseless, so
    Lemma 4.2 is not checked by this route.) The run is :func:`theorydyn.experiments.lemma41.population_gd`,
    its row :func:`population_rows` (the ledger's: the same at the default sizes, run by
    :func:`theorydyn.experiments.lemma41.run`).
    """
    return population_rows(population_gd(s, D=D, C=C, q=q, eta=eta, steps=steps), tol=tol)


def population_rows(run: PopulationRun, tol: float = 1e-9) -> list[Check]:
    """The row of Lemma 4.1 on (P) from GD by exact enumeration (``run``:
    :func:`theorydyn.experiments.lemma41.population_gd` at the setting ``run.sp``): PASS iff the largest spread
    of A's in-set and cross-set entries relative to |γ − ρ| over the run is at most ``tol``, else FAIL."""
    sp, worst_A, eta, steps = run.sp, run.worst_A, run.eta, run.steps
    D, C, q = sp.D, sp.C, sp.q
    params = dict(
        D=D, C=C, q=q, p=sp.p, eta=eta, steps=steps, expectation="exact enumeration", **departures(sp, eta=eta)
    )
    note = f"final gamma {run.gamma:.4f}, rho {run.rho:.4f}, alpha {run.alpha:.4f}"
    return [
        Check.exact(
            f"Lemma 4.1 [D = {D}, C = {C}, q = {q:g}, {steps} steps on (P) by exact enumeration; "
            "not the ledger's size]",
            "max over GD on (P) of (in-set or cross-set spread of A) / |gamma - rho|",
            worst_A,
            f"<= {tol:g}",
            worst_A <= tol,
            params=params,
            note=note,
            route="enumeration vs itertools (tests/test_data.py::test_enumerate_population_against_itertools); "
            "gradients vs central differences "
            "(tests/test_model.py::test_gradients_match_central_differences)",
        ),
    ]


def config(s: Setting, quick: bool) -> Lemma41Config:
    """What :func:`theorydyn.experiments.lemma41.run` needs for the rows at :data:`SIZES`: these sizes and the D
    the finite-N runs' size search starts from (:meth:`Lemma41Sizes.start_D` of the ledger's D: 16 quick,
    min(D, 32) full)."""
    n = SIZES.pick(quick)
    return Lemma41Config(n, n.start_D(s.D))


#: Lemma 4.1's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); the rows run nothing (:func:`check_lemma_4_1_population` alone runs GD on (P)
#: of its own, at sizes a test picks). Its rows: Lemma 4.1 on (P) by exact enumeration, and its finite-N break
#: against N at :data:`SIZES`, each random number over its 5 seeds, every row's claim text naming its size.
EXPERIMENT = runs41.run


def rows(res: Lemma41Results) -> list[Check]:
    """The rows of ``res`` (:func:`theorydyn.experiments.lemma41.run` at the ledger's setting ``res.s``):

    * Lemma 4.1 on the exactly enumerated population (:func:`population_rows`);
    * its finite-N break against N ∈ {2^11, …, 2^15} (quick; … 2^16 full) at the smallest D ≥ 16
      (quick; ≥ min(D, 32) full) inside Theorem 3.1's scope rule
      (:func:`theorydyn.experiments.lemma41.scaling_setting`, q and ν kept): D = 24 for q = 1/4,
      C = 4, where D = 16 has q(D − C) = 3 ≤ C; OUT_OF_SCOPE if none up to D (:func:`check_lemma_4_1_scaling`).
    """
    s, sl, scope, D_from, steps = res.s, res.sl, res.scope, res.D_from, res.steps
    out = population_rows(res.population)
    why = (
        (
            f"D = {sl.D}: the smallest multiple of C from {D_from} inside the scope rule (theorem_3_1_scope: "
            f"q(D-C) = {sl.q * (sl.D - sl.C):.3g} > C = {sl.C}, q <= 1/2, L >= 4)"
        )
        if scope is None
        else f"out of scope at every D from {D_from} to {s.D}: {scope}"
    )
    for c in check_lemma_4_1_scaling(sl, res.runs, eta=res.eta):
        out.append(
            replace(
                c,
                claim=f"{c.claim} [D = {sl.D}, q = {sl.q:g}, {steps} steps"
                + ("]" if sl.D == s.D else f"; not the ledger's D = {s.D}]"),
                verdict=Verdict.OUT_OF_SCOPE if scope else c.verdict,
                note="; ".join(x for x in (why, c.note) if x),
            )
        )
    return out


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config` (:func:`theorydyn.experiments.lemma41.memory`): its largest
    simulation, the finite-N run at the largest N of :data:`SIZES` at the size
    :func:`theorydyn.experiments.lemma41.scaling_setting` picks."""
    return runs41.memory(s, config(s, quick))
