"""Parametrization 3.1 in the ledger: the scales of the attention at initialisation (docs/theory.md §1.2.2).

The paper (after Parametrization 3.1): with A = P Pᵀ (Simplification 3.1) and the positional
encodings drawn i.i.d. p_i ~ N(0, σ_A I_D / D) (P: (D, D), row i is p_i), with high probability

    A(0)_ii = ‖p_i‖² = Θ(σ_A),        A(0)_ij = ⟨p_i, p_j⟩ = Θ(σ_A / √D)   (i ≠ j),

"since D ≫ 1, it is then reasonable to set A(0)_ij = 0" — the idealized start γ = ρ = 0 of the
reduced dynamics. Exactly, A_ii / σ_A ~ χ²_D / D (mean 1, standard deviation √(2/D)) and
E[A_ij²] = σ_A² / D, so the root mean square of the off-diagonal entries is σ_A / √D.

Which rows are verdicts. No ledger run of model (T) draws A(0) = P Pᵀ: the idealized runs start at
γ = ρ = 0 and the realistic ones (Parametrization 3.1's case 2, :func:`theorydyn.simulate.run.init_params`)
at Â_ij ~ N(0, ω²), Â_ii = β, ω = 10⁻³. The Gaussian identities of P Pᵀ are the paper's argument for
the idealized start, not a property of any run, so their rows are INFO (their numbers kept); the
verdict is the one statement the runs rely on: that their own start is as close to γ = ρ = 0 as the
paper's P Pᵀ argument allows, i.e. its off-diagonal entries are at most the scale σ_A/√D that the paper
calls negligible ("reasonable to set A(0)_ij = 0").

Rows (seeds independent draws at each D of the grid; σ_A = β, the diagonal the runs freeze):

0. the verdict: RMS_{i≠j} Â(0)_ij / β of the runs' realistic start at the ledger's D, over
   the draws (:data:`SIZES`' seeds) of :func:`theorydyn.simulate.run.init_params` with the runs' ω
   (:data:`RUN_OMEGA`): PASS when the upper 95% bound is ≤ 1/√D, FAIL otherwise (a start at ω = 1,
   the planted counter-case, fails);
1. INFO: the exponent b of RMS_{i≠j} A(0)_ij ∝ D^b over the grid for A(0) = P Pᵀ, fitted per seed,
   with whether the 95% interval of the mean contains −1/2 (the claim's Θ(σ_A/√D)) — an identity
   of Gaussian P (E[A_ij²] = σ_A²/D), which no run uses;
2. INFO: the fraction of diagonal entries with A(0)_ii / σ_A in [1/2, 2] at the ledger's D, over all
   seeds, against 0.99; the exact per-entry probability, Pr[D/2 ≤ χ²_D ≤ 2D], is in the note:
   0.947 at D = 16, 0.9997 at D = 64;
3. INFO: how far from 0 the off-diagonal start is at the ledger's D — max_{i≠j} |A_ij| / min_i A_ii
   (it grows like √(2 log D² / D), so at D = 64 the largest off-diagonal entry is about half the
   diagonal), and the fraction of rows i whose Top-C of A(0)_i· is the set of i (chance level);
4. INFO: the runs' own scales (η, β, τ, ω) against Parametrization 3.1's (:func:`.check.departures`).

The draws are :func:`theorydyn.experiments.parametrization31.run` (:data:`EXPERIMENT`, at :func:`config`); this
module judges them (:func:`rows`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..core.config import Seeds
from ..core.setting import Setting
from ..core.stats import mean_ci
from ..experiments import parametrization31 as p31_exp
from ..experiments.parametrization31 import Parametrization31Config, Parametrization31Results
from ..infra.memory import MemoryEstimate
from .check import Check, Form, Verdict, departures
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class Parametrization31Sizes(ClaimSizes):
    """The sizes of the Parametrization 3.1 rows (:func:`rows` of :data:`EXPERIMENT`)."""

    grid: tuple[int, ...] = grid_option((16, 32, 64, 128, 256, 512, 1024), "the D grid of the exponent row")
    seeds: Seeds = seeds_option(5, "the draws k of A(0) (generators [k, 31], [k, 3101], [k, 3102])")


#: D grid of the exponent row: quick 5 sizes over a factor 16, full 7 over 64, fixed before running; 5 draws.
SIZES = Sizes(quick=Parametrization31Sizes(grid=(16, 32, 64, 128, 256)), full=Parametrization31Sizes())
#: ω of the ledger's realistic runs (the simulator's default, ``simulate(omega=1e-3)``).
RUN_OMEGA = 1e-3
#: Θ(σ_A) for the diagonal, read with explicit constants fixed before running.
DIAG_LOW, DIAG_HIGH, DIAG_LEVEL = 0.5, 2.0, 0.99


def start_row(s: Setting, omega: float = RUN_OMEGA, seeds: Seeds = SIZES.quick.seeds) -> Check:
    """Row 0 (module docstring): RMS_{i≠j} Â(0)_ij / β of the runs' realistic start
    (:func:`theorydyn.simulate.run.init_params` at ``omega``) over the draws ``seeds`` at ``s``,
    PASS iff its upper 95% bound is ≤ 1/√D (the off-diagonal scale the paper sets to 0): :func:`start_check`
    of :func:`theorydyn.experiments.parametrization31.start_ratios`."""
    return start_check(s, omega, p31_exp.start_ratios(s, omega, seeds))


def start_check(s: Setting, omega: float, ratios: list[float]) -> Check:
    """Row 0 of :func:`start_row` from ``ratios``, RMS_{i≠j} Â(0)_ij / β of the runs' realistic start at ``omega``,
    one per draw."""
    bound = 1.0 / np.sqrt(s.D)
    c = Check.over_seeds(
        "Parametrization 3.1",
        "RMS_{i!=j} A_hat(0)_ij / beta of the runs' realistic start (init_params)",
        ratios,
        f"upper 95% bound <= 1/sqrt(D) = {bound:.4g} (the paper's negligible sigma_A/sqrt(D))",
        True,
        params=dict(D=s.D, omega=omega, beta=s.beta),
        route="init_params draws N(0, omega^2); the rule is flipped by omega = 1 "
        "(tests/test_verdicts_b_parametrization31.py)",
    )
    hi = c.measured if np.isnan(c.ci_high) else c.ci_high
    ok = bool(hi <= bound)
    return replace(
        c,
        verdict=Verdict.PASS if ok else Verdict.FAIL,
        note=f"omega / beta = {omega / s.beta:.3g}: the runs start "
        + ("closer to gamma = rho = 0 than P P^T would" if ok else "farther from gamma = rho = 0 than P P^T would"),
    )


def config(s: Setting, quick: bool, *, omega: float = RUN_OMEGA) -> Parametrization31Config:
    """What :func:`theorydyn.experiments.parametrization31.run` needs for the rows at :data:`SIZES`: their grid and
    draws, ``omega`` the runs' ω (row 0; 1 is the planted counter-case) and the diagonal's band
    [:data:`DIAG_LOW`, :data:`DIAG_HIGH`]."""
    return Parametrization31Config(SIZES.pick(quick), omega, DIAG_LOW, DIAG_HIGH)


#: Parametrization 3.1's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); this module runs nothing. Its draws: the runs' start and A(0) = P Pᵀ over the
#: grid and at the ledger's D, at :data:`SIZES`' 5 seeds.
EXPERIMENT = p31_exp.run


def rows(res: Parametrization31Results) -> list[Check]:
    """The Parametrization 3.1 rows (module docstring) at ``res.s`` from
    :func:`theorydyn.experiments.parametrization31.run`: row 0 at ``res.config.omega`` (:func:`start_check`), then
    the Gaussian identities of P Pᵀ and the runs' scales (INFO)."""
    s, n, sigma_A = res.s, res.config.sizes, res.sigma_A
    grid, seeds = n.grid, n.seeds
    out = [start_check(s, res.config.omega, res.start)]
    b = res.exponent
    m, lo, hi = mean_ci(b)
    base = dict(sigma_A=sigma_A, seeds=len(seeds))
    out.append(
        Check(
            "Parametrization 3.1",
            "exponent b of RMS_{i!=j} A(0)_ij ~ D^b, A(0) = P P^T, p_i ~ N(0, sigma_A I/D) "
            f"[D = {', '.join(map(str, grid))}]",
            m,
            "INFO (Gaussian identity; no run draws P P^T): 95% CI contains -1/2",
            Verdict.INFO,
            params=dict(D=" ".join(map(str, grid)), **base),
            note=f"95% CI {'contains' if lo <= -0.5 <= hi else 'excludes'} -1/2; the paper's argument for the "
            "idealized start gamma = rho = 0, not a property of any ledger run",
            ci_low=lo,
            ci_high=hi,
            route="exact: E[A_ij^2] = sigma_A^2 / D (tests/test_parametrization31.py)",
            form=Form.IDENTITY,
        )
    )
    inside, ratio, top, exact = res.inside, res.ratio, res.top, res.exact
    frac = float(np.mean(inside))
    here = dict(D=s.D, C=s.C, **base)
    out.append(
        Check(
            "Parametrization 3.1",
            f"fraction of A(0)_ii / sigma_A in [{res.config.low:g}, {res.config.high:g}] over {len(seeds)} x D entries",
            frac,
            f"INFO (Gaussian identity; no run draws P P^T): >= {DIAG_LEVEL:g}",
            Verdict.INFO,
            params=here,
            note=f"{'>=' if frac >= DIAG_LEVEL else '<'} {DIAG_LEVEL:g}; exact Pr[D/2 <= chi2_D <= 2D] = {exact:.6g}",
            route="exact: A_ii / sigma_A ~ chi2_D / D (tests/test_parametrization31.py)",
        )
    )
    out.append(
        Check.over_seeds(
            "Parametrization 3.1",
            "max_{i!=j} |A(0)_ij| / min_i A(0)_ii ('reasonable to set A(0)_ij = 0')",
            ratio,
            "diagnostic",
            Verdict.INFO,
            params=here,
            note=f"RMS off-diagonal / sigma_A = 1/sqrt(D) = {1 / np.sqrt(s.D):.3g}; Top-C of A(0) rows equal "
            f"to their set in a fraction {np.mean(top):.3f} of rows (chance level): at this D the start "
            "P P^T is not the idealized gamma = rho = 0 entry by entry",
        )
    )
    out.append(
        Check(
            "Parametrization 3.1",
            "the runs' scales against the paper's",
            float("nan"),
            "eta <= 1/poly(d), sigma_A = polyloglog(d), omega = 1/poly(d)",
            Verdict.INFO,
            params=dict(D=s.D, **departures(s, eta=10.0)),
            note="the simulator's eta = 10 and beta = 1 are argued in docs/theory.md §1.2.1; omega = 1e-3 "
            "(the simulator's default) is 1/poly(d) for d <= 1000",
        )
    )
    return out


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config` (:func:`theorydyn.experiments.parametrization31.memory`) at the
    largest D of :data:`SIZES`' grid."""
    return p31_exp.memory(max(max(SIZES.pick(quick).grid), s.D))
