"""The runs of Lemma 4.1 (docs/theory.md §4): GD on the exact population (P), and realistic GD at finite N.

* :func:`population_gd` — plain GD on the population risk (P), computed exactly by enumerating every
  noiseless data point with its probability (:func:`theorydyn.core.data.enumerate_population`), from the
  idealized initialisation; returns :class:`PopulationRun` (how far A strays from the three-value form).
* :func:`lemma_4_1_scaling_runs` — realistic GD (:func:`theorydyn.simulate.simulate`) at every N of a
  grid and every seed, each run measured by :func:`symmetry_deviation` (the distance of Â from the
  three-value form), association (Definition 2.2) and its error on fresh samples, and the exponents in N
  of the distance per seed (:func:`scaling_exponents`).
* :func:`run` — both, as the ledger's Lemma 4.1 rows read them (:class:`Lemma41Config` →
  :class:`Lemma41Results`): GD on (P), then the finite-N runs at the smallest size inside Theorem 3.1's
  scope rule (:func:`theorydyn.core.glm.smallest_in_scope`, :func:`scaling_setting`); :func:`memory` its peak.

:mod:`theorydyn.claims.lemma41` turns the results into rows (its ``rows``; ``verify`` runs :func:`run`).

Shapes: A: (D, D), v: (d,), X: (N, D, d).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core import data, model
from ..core.config import Seeds
from ..core.glm import smallest_in_scope
from ..core.model import association
from ..core.setting import Setting
from ..infra.memory import MemoryEstimate
from ..simulate import simulate
from ..simulate.config import SIM_DEFAULTS
from ..simulate.memory import simulate_memory
from .measure import fresh_errors


def symmetry_deviation(s: Setting, A: np.ndarray) -> dict[str, float]:
    """Distance of Â from the three-value form of Lemma 4.1 (A_ii = β, γ in-set, ρ across sets).

    gap = mean in-set − mean cross-set entry; ``in_rel_std`` / ``cross_rel_std`` = std of the in-set /
    cross-set entries over |gap|. Row level (the finite-sample break of the symmetry): r_i = mean of
    row i's in-set entries; ``row_rel_spread`` = max over sets of (max_i r_i − min_i r_i) / |gap|;
    ``top_row_ratio`` = median over sets of (max_i r_i − ρ̄) / (median of the set's other rows − ρ̄),
    ρ̄ the cross-set mean (≈ 1 under Lemma 4.1, ≫ 1 when one query row per set dominates).
    """
    A = np.asarray(A, dtype=np.float64)
    inv, crv = A[s.in_set_mask], A[s.cross_set_mask]
    gap = float(inv.mean() - crv.mean())
    r = np.where(s.in_set_mask, A, 0.0).sum(axis=1) / (s.C - 1)
    rows = r[s.sets]  # (L, C)
    srt = np.sort(rows, axis=1)
    spread = srt[:, -1] - srt[:, 0]
    others = np.median(srt[:, :-1], axis=1) - crv.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (srt[:, -1] - crv.mean()) / others
    g = abs(gap) if gap != 0 else np.nan
    return {
        "gap": gap,
        "in_mean": float(inv.mean()),
        "cross_mean": float(crv.mean()),
        "in_rel_std": float(inv.std() / g),
        "cross_rel_std": float(crv.std() / g),
        "cross_absmax": float(np.abs(crv).max()),
        "row_rel_spread": float(spread.max() / g),
        "top_row_ratio": float(np.median(ratio)),
    }


#: The distances of Â from the three-value form (:func:`symmetry_deviation`'s fields) whose exponent in N
#: :func:`scaling_exponents` reads: in-set std, row-level spread and cross-set std, each over the gap.
SCALING_COLUMNS = ("in_rel_std", "row_rel_spread", "cross_rel_std")


def scaling_exponents(runs: pd.DataFrame) -> dict[str, list[float]]:
    """Per column of :data:`SCALING_COLUMNS` of :func:`lemma_4_1_scaling_runs`' table and per seed (in seed
    order), the least-squares slope b of log(column) against log N: the distance ∝ N^b."""
    return {
        col: [float(np.polyfit(np.log(g["N"]), np.log(g[col]), 1)[0]) for _, g in runs.groupby("seed")]
        for col in SCALING_COLUMNS
    }


def lemma_4_1_scaling_runs(
    s: Setting,
    Ns: tuple[int, ...] = (2048, 4096, 8192, 16384, 32768),
    seeds: Seeds = (0, 1, 2, 3, 4),
    steps: int = 150,
    eta: float = SIM_DEFAULTS.eta,
    omega: float = SIM_DEFAULTS.omega,
    seed: int = 0,
    dtype: str = "float32",
    progress=None,
):
    """Realistic GD at every N of ``Ns`` and every seed k of ``seeds``; each (N, k) draws its own data.

    Returns a DataFrame with columns N, seed, the :func:`symmetry_deviation` fields, association
    (Definition 2.2), err_f (fresh samples), and the runs' status. Nothing is cached or shared:
    run (N, k) uses ``simulate(seed = seed + 1000 k + log2 N)``.
    """
    rows = []
    for i, k in enumerate(seeds):
        for N in Ns:
            sd = int(seed + 1000 * k + int(round(np.log2(N))))
            if progress:
                progress(f"Lemma 4.1 scaling: D={s.D}, N={N}, seed {i + 1}/{len(seeds)}")
            res = simulate(
                s, N=int(N), eta=eta, steps=steps, omega=omega, seed=sd, record_every=steps, dtype=dtype, n_test=2048
            )
            e = fresh_errors(s, res.A, res.v, 4096, sd + 7919)
            rows.append(
                dict(
                    N=int(N),
                    seed=k,
                    **symmetry_deviation(s, res.A),
                    association=association(s, res.A),
                    err_f=e["err_f"],
                    status=str(getattr(res, "status", "ok")),
                )
            )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class PopulationRun:
    """GD on (P) by exact enumeration (:func:`population_gd`) at the setting ``sp``.

    Attributes:
        worst_A: max over the run of max(spread of the in-set entries, spread of the cross-set entries
            of A) / |γ − ρ| (spread: max − min; steps with γ = ρ skipped); 0 in the three-value form.
        gamma, rho: the mean in-set and cross-set entries of A at the end; alpha = ⟨v, w*⟩ at the end.
    """

    sp: Setting
    eta: float
    steps: int
    worst_A: float
    gamma: float
    rho: float
    alpha: float


def population_gd(
    s: Setting, D: int = 6, C: int = 2, q: float = 0.4, eta: float = 2.0, steps: int = 300
) -> PopulationRun:
    """Plain GD on the population risk (P) with the full-model gradients
    (:func:`theorydyn.core.model.risk_and_grad`, weighted by the enumerated probabilities), ``steps`` steps
    of size ``eta`` from the idealized initialisation A = β I, v = α(0) w*, at ``Setting(D, C, q)``
    with p, β, τ taken from ``s`` (a size where the enumeration is instant)."""
    sp = Setting(D=D, C=C, q=q, p=s.p, beta=s.beta, tau=s.tau)
    z, y, w = data.enumerate_population(sp)
    X = data.embed(sp, z)
    A = model.symmetric_attention(sp, 0.0, 0.0)
    v = sp.alpha0 * sp.w_star
    worst_A = 0.0
    for _ in range(steps):
        _, gA, gv = model.risk_and_grad(sp, A, v, X, y, weights=w)
        A, v = A - eta * gA, v - eta * gv
        inv, crv = A[sp.in_set_mask], A[sp.cross_set_mask]
        gap = abs(inv.mean() - crv.mean())
        if gap > 0:
            worst_A = max(worst_A, float(max(np.ptp(inv), np.ptp(crv)) / gap))
    inv, crv = A[sp.in_set_mask], A[sp.cross_set_mask]
    return PopulationRun(sp, eta, steps, worst_A, float(inv.mean()), float(crv.mean()), float(v @ sp.w_star))


@dataclass(frozen=True)
class Lemma41Config:
    """What :func:`run` needs for the ledger's Lemma 4.1 rows.

    Attributes:
        sizes: the finite-N runs' sizes (a validated sizes config of the claim, :mod:`theorydyn.claims.sizes`):
            the grid ``Ns``, GD ``steps`` of each run, the ``seeds`` k.
        D_from: the D the search for a size inside Theorem 3.1's scope rule starts from
            (:func:`scaling_setting`; from 16 quick, from min(D, 32) full).

    GD on (P) runs at :func:`population_gd`'s own size (D = 6, C = 2, q = 0.4, η = 2, 300 steps), where the
    enumeration is instant.
    """

    sizes: Any
    D_from: int


@dataclass(frozen=True)
class Lemma41Results:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        population: GD on (P) by exact enumeration (:func:`population_gd`).
        sl, scope, D_from: where the finite-N runs are (:func:`scaling_setting`): the setting, the scope rule's
            reason when no D from ``D_from`` up to the ledger's is inside it (None inside), and that starting D.
        steps, eta: GD steps and step size of each finite-N run.
        runs: the finite-N runs at ``sl`` (:func:`lemma_4_1_scaling_runs`' table: one row per (N, seed)).
    """

    s: Setting
    population: PopulationRun
    sl: Setting
    scope: str | None
    D_from: int
    steps: int
    eta: float
    runs: pd.DataFrame


def scaling_setting(s: Setting, config: Lemma41Config) -> tuple[Setting, str | None]:
    """Where :func:`run` measures the finite-N break at the ledger's setting ``s``: the smallest multiple of C
    from ``config.D_from`` up to s.D inside Theorem 3.1's scope rule, q and ν kept
    (:func:`theorydyn.core.glm.smallest_in_scope`: D = 24 for q = 1/4, C = 4 from 16, where D = 16 has
    q(D − C) = 3 ≤ C), and None; when none is inside, the setting at ``config.D_from`` and the rule's reason."""
    return smallest_in_scope(s, config.D_from, s.D)


def run(s: Setting, config: Lemma41Config, progress: Callable[[str], None] | None = None) -> Lemma41Results:
    """Everything the ledger's Lemma 4.1 rows read at the ledger's setting ``s`` (:class:`Lemma41Results`):
    GD on the exactly enumerated population (P) (:func:`population_gd` at its own size, D = 6: how far A (D, D)
    strays from the three-value form), then realistic GD at every N of ``config.sizes.Ns`` and every seed
    (:func:`lemma_4_1_scaling_runs`, ``config.sizes.steps`` steps of η = 10, X: (N, D, d)) at the setting
    :func:`scaling_setting` picks."""
    say = progress or (lambda msg: None)
    say("Lemma 4.1 (population, exact enumeration)")
    population = population_gd(s)
    n = config.sizes
    sl, scope = scaling_setting(s, config)
    eta = SIM_DEFAULTS.eta
    runs = lemma_4_1_scaling_runs(sl, Ns=n.Ns, seeds=n.seeds, steps=n.steps, eta=eta, progress=say)
    return Lemma41Results(s, population, sl, scope, config.D_from, n.steps, eta, runs)


def memory(s: Setting, config: Lemma41Config) -> MemoryEstimate:
    """Peak of :func:`run`: its largest simulation (:func:`theorydyn.simulate.memory.simulate_memory`, 2048 test
    samples), the finite-N run at the largest N of ``config.sizes`` at the setting :func:`scaling_setting`
    picks; the enumerated population of :func:`population_gd` at D = 6 is negligible."""
    sl, _ = scaling_setting(s, config)
    return simulate_memory(sl.D, sl.C, sl.d, N=max(config.sizes.Ns), n_test=2048)
