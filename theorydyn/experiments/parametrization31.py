"""The draws of A(0) behind Parametrization 3.1's rows (docs/theory.md §1.2.2): the paper's A(0) = P Pᵀ with
Gaussian positional encodings, and the runs' own realistic start (:func:`theorydyn.simulate.run.init_params`).

* :func:`initial_attention`, :func:`scales` — one draw of P Pᵀ and its summary;
* :func:`exponent_per_seed` — the slope of the off-diagonal RMS against D, per seed;
* :func:`draws` — the diagonal, the largest off-diagonal entry and the Top-C association of P Pᵀ at one D;
* :func:`diagonal_probability` — the exact law of a diagonal entry (χ²_D / D);
* :func:`start_ratios` — the off-diagonal RMS of the runs' start over β, per draw;
* :func:`run` — everything the ledger's Parametrization 3.1 rows read, in one call (:class:`Parametrization31Config`
  → :class:`Parametrization31Results`).

:mod:`theorydyn.claims.parametrization31` judges them. Shapes: P, A: (D, D).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import chi2

from ..core.config import Seeds
from ..core.model import association
from ..core.setting import Setting
from ..infra.memory import MemoryEstimate, Term
from ..simulate.run import init_params


def initial_attention(D: int, sigma_A: float, rng: np.random.Generator) -> np.ndarray:
    """A(0) = P Pᵀ with the rows p_i ~ N(0, σ_A I_D / D) i.i.d.  Returns A: (D, D), symmetric."""
    P = rng.standard_normal((D, D)) * np.sqrt(sigma_A / D)
    return P @ P.T


def scales(A: np.ndarray, s: Setting | None = None) -> dict[str, float]:
    """Summary of one A(0): (D, D) — RMS and max |·| of the off-diagonal, min/max of the diagonal,
    and, given the Setting ``s`` (its sets), the fraction of rows with patch association
    (Definition 2.2, :func:`theorydyn.core.model.association`)."""
    D = A.shape[0]
    off = A[~np.eye(D, dtype=bool)]
    diag = np.diag(A)
    out = dict(
        rms_off=float(np.sqrt(np.mean(off**2))),
        max_off=float(np.max(np.abs(off))),
        diag_min=float(diag.min()),
        diag_max=float(diag.max()),
    )
    if s is not None:
        out["top_c_fraction"] = association(s, A)
    return out


def exponent_per_seed(grid: tuple[int, ...], sigma_A: float, seeds: Seeds, seed0: int = 0) -> np.ndarray:
    """Per seed k of ``seeds``, the least-squares slope of log RMS_{i≠j} A(0)_ij against log D over ``grid``."""
    out = []
    for k in seeds:
        rng = np.random.default_rng([seed0 + k, 31])
        rms = [scales(initial_attention(D, sigma_A, rng))["rms_off"] for D in grid]
        out.append(np.polyfit(np.log(grid), np.log(rms), 1)[0])
    return np.asarray(out)


def start_ratios(s: Setting, omega: float, seeds: Seeds) -> list[float]:
    """RMS_{i≠j} Â(0)_ij / β of the runs' realistic start (:func:`theorydyn.simulate.run.init_params` at ``omega``),
    one per draw k of ``seeds`` (generator ``[k, 3102]``)."""
    ratios = []
    for k in seeds:
        A, _ = init_params(s, omega, np.random.default_rng([k, 3102]))
        off = A[~np.eye(s.D, dtype=bool)]
        ratios.append(float(np.sqrt(np.mean(off**2))) / float(s.beta))
    return ratios


def draws(
    s: Setting, sigma_A: float, seeds: Seeds, low: float, high: float
) -> tuple[list[float], list[float], list[float]]:
    """Per draw k of A(0) = P Pᵀ at ``s`` (k of ``seeds``, generator ``[k, 3101]``): the fraction
    of A_ii / σ_A in [``low``, ``high``], max_{i≠j} |A_ij| / min_i A_ii, and the
    fraction of rows whose Top-C is their set (:func:`scales`)."""
    inside, ratio, top = [], [], []
    for k in seeds:
        A = initial_attention(s.D, sigma_A, np.random.default_rng([k, 3101]))
        sc = scales(A, s)
        r = np.diag(A) / sigma_A
        inside.append(float(np.mean((r >= low) & (r <= high))))
        ratio.append(sc["max_off"] / sc["diag_min"])
        top.append(sc["top_c_fraction"])
    return inside, ratio, top


def diagonal_probability(D: int, low: float, high: float) -> float:
    """Pr[low <= A_ii / σ_A <= high] for one diagonal entry of P Pᵀ, exactly: A_ii / σ_A ~ χ²_D / D."""
    return float(chi2.cdf(high * D, D) - chi2.cdf(low * D, D))


@dataclass(frozen=True)
class Parametrization31Config:
    """What :func:`run` needs for the ledger's Parametrization 3.1 rows.

    Attributes:
        sizes: a validated sizes config of the claims (:mod:`theorydyn.claims.sizes`): ``grid``, the D grid of the
            exponent of the off-diagonal RMS, and ``seeds``, the draws k.
        omega: ω of the runs' realistic start (:func:`start_ratios`).
        low, high: the band [low, high] of A(0)_ii / σ_A counted by :func:`draws`.
    """

    sizes: Any
    omega: float
    low: float
    high: float


@dataclass(frozen=True)
class Parametrization31Results:
    """The outcome of :func:`run` at the ledger's setting ``s``, σ_A = β (the diagonal the runs freeze).

    Attributes:
        config: the :class:`Parametrization31Config` it ran at (its grid, seeds, ω and band name the rows' sizes).
        sigma_A: σ_A = ``s.beta``.
        start: RMS_{i≠j} Â(0)_ij / β of the runs' realistic start per draw (:func:`start_ratios` at ``config.omega``).
        exponent: per draw, the slope of log RMS_{i≠j} A(0)_ij against log D over the grid, A(0) = P Pᵀ
            (:func:`exponent_per_seed`), shape (seeds,).
        inside, ratio, top: per draw of P Pᵀ at ``s.D`` (:func:`draws`): the fraction of A_ii / σ_A in the band,
            max_{i≠j} |A_ij| / min_i A_ii and the fraction of rows whose Top-C is their set.
        exact: Pr[low <= χ²_D / D <= high] at ``s.D`` (:func:`diagonal_probability`).
    """

    s: Setting
    config: Parametrization31Config
    sigma_A: float
    start: list[float]
    exponent: np.ndarray
    inside: list[float]
    ratio: list[float]
    top: list[float]
    exact: float


def run(
    s: Setting, config: Parametrization31Config, progress: Callable[[str], None] | None = None
) -> Parametrization31Results:
    """Everything the ledger's Parametrization 3.1 rows read at ``s`` (:class:`Parametrization31Results`), σ_A = β:
    the runs' realistic start over the draws (:func:`start_ratios`, generators ``[k, 3102]``), the exponent of
    A(0) = P Pᵀ's off-diagonal RMS over the grid (:func:`exponent_per_seed`, ``[k, 31]``), the draws of P Pᵀ at
    ``s.D`` (:func:`draws`, ``[k, 3101]``) and the exact law of its diagonal (:func:`diagonal_probability`)."""
    n = config.sizes
    grid, seeds = n.grid, n.seeds
    sigma_A = float(s.beta)
    if progress:
        progress(f"Parametrization 3.1 (A(0) = P Pᵀ at D = {', '.join(map(str, grid))}, {len(seeds)} seeds)")
    start = start_ratios(s, config.omega, seeds)
    b = exponent_per_seed(grid, sigma_A, seeds)
    inside, ratio, top = draws(s, sigma_A, seeds, config.low, config.high)
    exact = diagonal_probability(s.D, config.low, config.high)
    return Parametrization31Results(s, config, sigma_A, start, b, inside, ratio, top, exact)


def memory(D: int) -> MemoryEstimate:
    """Peak of the draws up to size ``D``: P, A and a copy (float64)."""
    return MemoryEstimate("Parametrization 3.1", (Term("P, A(0)", 3 * 8 * D * D, {"D": D}),))
