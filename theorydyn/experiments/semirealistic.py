"""The semi-realistic comparison (docs/theory.md §4): finite-sample GD against the reduced dynamics.

By Lemmas 4.1–4.2 population GD from the idealized init (Parametrization 3.1: Â off-diagonal
0, v = α(0) w*) stays in the three-value form and is *exactly* the reduced recursion in
(α, γ, ρ) (docs/theory.md §3). GD on N samples replaces the population by an empirical mean, so its
(⟨v̂,w*⟩, in-set mean of Â, cross-set mean of Â, error) must approach the reduced trajectory
at the same time s = η·t as N grows (sampling error O(N^{-1/2})).

:func:`compare_with_reduced` runs the simulator for each N (and seed), runs
:func:`theorydyn.reduced.integrate` once, interpolates the reduced trajectory at the
simulator's s, and reports the largest gap over s for each quantity, per N. :func:`closeness_runs`
runs it over seeds; :func:`closeness` makes the gaps relative (:func:`relative_gaps`) and fits their
exponents in N (:func:`gap_exponents`) for the ledger's closeness rows (:mod:`theorydyn.claims.semirealistic`
judges).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .. import reduced
from ..core.config import Seeds
from ..core.setting import Setting
from ..core.stats import fit_power_law_ci
from ..simulate import simulate
from ..simulate.config import SIM_DEFAULTS

#: The compared columns: the two solvers share the trajectory schema, so no renaming.
QUANTITIES = ("alpha", "gamma", "rho", "err_f")
#: The relative gaps of :func:`relative_gaps` whose exponent in N :func:`gap_exponents` fits: their maximum
#: (the judged one), then the α, γ and ρ parts.
RELATIVE_GAPS = ("gap_rel", "rel_alpha", "rel_gamma", "rel_rho")


def reduced_trajectory(
    s: Setting,
    eta: float,
    steps: int,
    method: str = "gd",
    expectation: str = "auto",
    n_samples: int = 20000,
    seed: int = 0,
    n_points: int = 400,
) -> pd.DataFrame:
    """:func:`theorydyn.reduced.integrate` from the idealized init up to s = η·steps.

    ``method="gd"``: the same discrete recursion as the simulator (then the gap is the finite-N
    error alone); ``"flow"``: gradient flow (adds the O(η) discretisation gap).
    ``expectation="auto"``: the exact finite sum when it is small enough, else Monte Carlo.
    """
    kw: dict[str, Any] = dict(s_max=eta * steps, n_points=n_points)
    if method == "gd":
        kw.update(eta=eta, steps=steps)
    if expectation == "auto":
        try:
            return reduced.integrate(s, method=method, expectation="exact", **kw).trajectory
        except ValueError:
            expectation = "mc"
    return reduced.integrate(s, method=method, expectation=expectation, n_samples=n_samples, seed=seed, **kw).trajectory


def gaps(sim: pd.DataFrame, red: pd.DataFrame) -> dict[str, float]:
    """max over the simulator's s (within the reduced range) of |simulator − reduced| per quantity,
    the reduced trajectory linearly interpolated in s."""
    s_sim = sim["s"].to_numpy(float)
    s_red = red["s"].to_numpy(float)
    keep = s_sim <= s_red.max() + 1e-12
    out = {}
    for col in QUANTITIES:
        a = sim[col].to_numpy(float)[keep]
        b = np.interp(s_sim[keep], s_red, red[col].to_numpy(float))
        d = np.abs(a - b)
        out[f"gap_{col}"] = float(np.nanmax(d)) if np.isfinite(d).any() else float("nan")
    return out


def compare_with_reduced(
    s: Setting,
    Ns: Sequence[int] = (1024, 4096, 16384, 65536),
    eta: float = 1.0,
    steps: int = 200,
    seeds: Seeds = (0,),
    init: str = "idealized",
    omega: float = SIM_DEFAULTS.omega,
    dtype: str = "float64",
    record_every: int | None = None,
    n_test: int = 8192,
    reduced_method: str = "gd",
    expectation: str = "auto",
    n_samples: int = 20000,
    reduced_traj: pd.DataFrame | None = None,
    progress: bool = False,
):
    """Simulator against the reduced dynamics for N in ``Ns``: the gap must shrink as N grows.

    Args:
        s: the setting.
        Ns: training-set sizes.
        eta, steps: GD step size and steps (s = η·step up to η·steps).
        seeds: data/initialisation seeds of the simulator (one row per N and seed).
        init: ``"idealized"`` (A0 = symmetric_attention(s, 0, 0), v0 = α(0) w*: like for like with
            the reduced model) or ``"realistic"`` (docs/theory.md §4's random init with scale ω).
        reduced_method: ``"gd"`` (same recursion) or ``"flow"``; ``reduced_traj``: a precomputed
            reduced trajectory (columns s, alpha, gamma, rho, err_f) to use instead.
        expectation, n_samples: how the reduced model takes the population expectation.

    Returns:
        (table, curves): table with columns N, seed, gap_alpha, gap_gamma, gap_rho, gap_err_f,
        seconds; curves = {"reduced": DataFrame, "N=…": simulator trajectory of the first seed}.
    """
    if init not in ("idealized", "realistic"):
        raise ValueError(f"init must be 'idealized' or 'realistic', got {init!r}")
    red = (
        reduced_traj
        if reduced_traj is not None
        else reduced_trajectory(s, eta, steps, reduced_method, expectation, n_samples)
    )
    record_every = record_every or max(1, steps // 50)
    kw: dict[str, Any] = dict(
        eta=eta, steps=steps, omega=omega, record_every=record_every, dtype=dtype, n_test=n_test, progress=progress
    )
    if init == "idealized":  # Â = A(0, 0) = β I, v̂ = α(0) w*: the simulator's three-value start (Lemma 4.1's form)
        kw.update(init=(s.alpha0, 0.0, 0.0))
    rows, curves = [], {"reduced": red}
    for N in Ns:
        for k, seed in enumerate(seeds):
            res = simulate(s, N=int(N), seed=int(seed), **kw)
            g = gaps(res.trajectory, red)
            rows.append(dict(N=int(N), seed=int(seed), **g, seconds=res.seconds, status=str(res.status)))
            if k == 0:
                curves[f"N={N}"] = res.trajectory.copy()
    return pd.DataFrame(rows), curves


@dataclass(frozen=True)
class ClosenessRuns:
    """The runs of :func:`closeness_runs`: ``table`` has one row per (N, seed) with columns N, seed
    (the seeds k), gap_alpha, gap_gamma, gap_rho, gap_err_f (max over s of |simulator − reduced|),
    seconds, status; ``reduced`` is the reduced trajectory they were compared with (columns s, alpha,
    gamma, rho, err_f)."""

    table: pd.DataFrame
    reduced: pd.DataFrame


def closeness_runs(
    s: Setting,
    *,
    Ns: Sequence[int],
    steps: int,
    seeds: Seeds,
    eta: float = SIM_DEFAULTS.eta,
    progress: Callable[[str], None] | None = None,
) -> ClosenessRuns:
    """GD on N samples (float32 storage) from the idealized init (Â = β I, v̂ = α(0) w*) against the
    population GD of the same η (the reduced recursion with the exact expectation where it fits,
    :func:`reduced_trajectory`), for every N of ``Ns`` and seed k of ``seeds`` (simulator seed
    1000 k + 77, 512 test samples, about 30 records of the ``steps`` steps)."""
    if progress:
        progress(f"semi-realistic closeness: reduced GD at D={s.D}")
    red = reduced_trajectory(s, eta, steps, "gd", "auto")
    table = []
    for i, k in enumerate(seeds):
        if progress:
            progress(f"semi-realistic closeness: D={s.D}, N={Ns[0]}..{Ns[-1]}, seed {i + 1}/{len(seeds)}")
        t, _ = compare_with_reduced(
            s,
            Ns=Ns,
            eta=eta,
            steps=steps,
            seeds=(1000 * k + 77,),
            dtype="float32",
            record_every=max(1, steps // 30),
            n_test=512,
            reduced_traj=red,
        )
        table.append(t.assign(seed=k))
    return ClosenessRuns(pd.concat(table, ignore_index=True), red)


def relative_gaps(table: pd.DataFrame, red: pd.DataFrame) -> pd.DataFrame:
    """``table`` (:func:`compare_with_reduced`'s gaps, one row per N and seed) with the gaps made relative:
    gap_alpha / max_s |α_∞(s)|, gap_gamma and gap_rho / max_s |γ_∞(s) − ρ_∞(s)| (the scale that decides
    association), and their maximum ``gap_rel`` (α_∞, γ_∞, ρ_∞ the reduced trajectory ``red``)."""
    a_scale = float(np.max(np.abs(red["alpha"].to_numpy(float))))
    g_scale = float(np.max(np.abs((red["gamma"] - red["rho"]).to_numpy(float))))
    out = table.copy()
    out["rel_alpha"] = out["gap_alpha"] / a_scale
    out["rel_gamma"] = out["gap_gamma"] / g_scale
    out["rel_rho"] = out["gap_rho"] / g_scale
    out["gap_rel"] = out[["rel_alpha", "rel_gamma", "rel_rho"]].max(axis=1)
    return out


def gap_exponents(table: pd.DataFrame) -> dict[str, dict | None]:
    """Per column of :data:`RELATIVE_GAPS` in a :func:`relative_gaps` table: the exponent b of gap ∝ N^b,
    least squares over every (N, seed) with its 95% interval (:func:`theorydyn.core.stats.fit_power_law_ci`;
    None with too few finite gaps)."""
    return {col: fit_power_law_ci(table["N"], table[col]) for col in RELATIVE_GAPS}


@dataclass(frozen=True)
class Closeness:
    """The closeness of finite-N GD to population GD at setting ``s`` (:func:`closeness`): the runs' sizes
    (``Ns``, ``steps``, ``seeds``, ``eta``), the :func:`relative_gaps` table (one row per N and seed) and
    the exponents of its gaps in N (:func:`gap_exponents`)."""

    s: Setting
    Ns: tuple[int, ...]
    steps: int
    seeds: Seeds
    eta: float
    table: pd.DataFrame
    fits: dict[str, dict | None]


def closeness(
    s: Setting,
    *,
    Ns: Sequence[int],
    steps: int,
    seeds: Seeds,
    eta: float = SIM_DEFAULTS.eta,
    progress: Callable[[str], None] | None = None,
) -> Closeness:
    """:func:`closeness_runs` at ``s`` with its gaps made relative (:func:`relative_gaps`) and their
    exponents in N fitted (:func:`gap_exponents`)."""
    runs = closeness_runs(s, Ns=Ns, steps=steps, seeds=seeds, eta=eta, progress=progress)
    table = relative_gaps(runs.table, runs.reduced)
    return Closeness(s, tuple(Ns), steps, seeds, eta, table, gap_exponents(table))
