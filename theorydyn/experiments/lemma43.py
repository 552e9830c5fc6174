"""Lemma 4.3's rate ratio at the idealized start (docs/theory.md §3.4): how much faster γ grows than ρ moves.

At α = ν^{1/(p−1)}, γ = ρ = 0 the reduced gradient (:func:`theorydyn.reduced.population_risk`) gives the per-entry
rate of γ, −∂ℓ/∂γ / (D(C−1)), and of ρ, ∂ℓ/∂ρ / (D(D−C)); their ratio is what the lemma bounds below by
D/polylog(d). :func:`lemma43_rate_ratio` measures it at one setting, :func:`ratios_across_D` on a D grid (one
Monte Carlo bank per seed), :func:`start_ratios` on that grid in the ledger's two readings of q;
:mod:`theorydyn.claims.dynamics` judges them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..core.config import Seeds
from ..core.setting import Setting
from ..reduced import population_risk


def lemma43_rate_ratio(s: Setting, n_samples: int = 100_000, seed: int = 0, method: str = "mc") -> float:
    """Lemma 4.3's ratio at the idealized start (α = ν^{1/(p−1)}, γ = ρ = 0): the per-entry rate of γ over
    the per-entry |rate| of ρ, (−∂ℓ/∂γ / (D(C−1))) / |∂ℓ/∂ρ / (D(D−C))| (docs/theory.md §3.4), from the
    reduced gradient (:func:`theorydyn.reduced.population_risk`, Monte Carlo or exact)."""
    a0 = s.nu ** (1.0 / (s.p - 1))
    g = population_risk(s, a0, 0.0, 0.0, method=method, n_samples=n_samples, seed=seed).grad
    return float(-g[1] * (s.D - s.C) / ((s.C - 1) * abs(g[2])))


def ratios_across_D(
    s: Setting, Ds: Sequence[int], q_of: Callable[[int], float], n_samples: int, seeds: Seeds
) -> dict[int, list[float]]:
    """The start ratio (:func:`lemma43_rate_ratio`) at ``s`` moved to each D of ``Ds`` with q = ``q_of(D)`` (d, σ²,
    ν following D unless set explicitly), one Monte Carlo bank of ``n_samples`` per seed k of ``seeds``:
    D → one ratio per seed."""
    return {D: [lemma43_rate_ratio(s.at(D=D, q=q_of(D)), n_samples, seed=k) for k in seeds] for D in Ds}


def start_ratios(
    s: Setting, Ds: Sequence[int], n_samples: int, seeds: Seeds
) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
    """Lemma 4.3's start ratio across ``Ds`` (:func:`ratios_across_D`, one Monte Carlo bank of ``n_samples`` per seed
    of ``seeds``) in the ledger's two readings, in this order: q = C²/D (Assumption 2's q = poly(C)/D), then the
    fixed q of ``s`` at every D. Each: D → one ratio per seed."""
    return (
        ratios_across_D(s, Ds, lambda D: s.C**2 / D, n_samples, seeds),
        ratios_across_D(s, Ds, lambda D: s.q, n_samples, seeds),
    )
