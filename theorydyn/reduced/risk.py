"""The reduced population risk ℓ_red(α, γ, ρ), its gradient and errors on a bank (docs/theory.md §3).

* :func:`population_risk` — an :class:`Estimate` at one point, on a :class:`~theorydyn.reduced.bank.Bank`
  (exact or Monte Carlo, with standard errors), or by streaming Monte Carlo samples without storing them;
* :func:`forward_counts` — F at the symmetric point from explicit feature values.

Both go through one Numba kernel (:mod:`theorydyn.reduced._kernels`) that tabulates a set's
contribution per (type, T) and makes each sample a few table lookups.

Errors (same convention as :func:`theorydyn.core.data.errors`): err_y = Pr[y F ≤ 0];
err_f = Pr[f F ≤ 0 | f ≠ 0], with f = Σ_m Thr(s_m), Thr(z) = z if |z| > 0.9 C else 0; the mass
amb_f = Pr[f = 0] (a random set mirroring the signal set) is excluded and reported. A sample whose
F is zero by symmetry (e.g. T = 0 at γ = ρ = 0) counts as F = 0 (an error), not as the sign of
its rounding residue.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.data import threshold
from ..core.model import softmax_values
from ..core.setting import Setting
from . import _kernels as rk
from .bank import MAX_TERMS, Bank, make_bank

__all__ = ["Estimate", "population_risk", "forward_counts"]


@dataclass(frozen=True)
class Estimate:
    """The reduced population risk at one point (α, γ, ρ) (docs/theory.md §3).

    Attributes:
        risk: ℓ_red(α, γ, ρ) = E ℓ(y F(X)).
        grad: (3,) (∂ℓ_red/∂α, ∂ℓ_red/∂γ, ∂ℓ_red/∂ρ) of the reduced function itself (not per entry).
        risk_stderr, grad_stderr: Monte Carlo standard errors (0 when exact).
        err_y: Pr[y F ≤ 0]; err_f: Pr[f F ≤ 0 | f ≠ 0]; amb_f: Pr[f = 0].
        Lambda, Gamma, Xi: the softmax values (diagonal, in-set, cross-set).
        method: ``"exact"`` or ``"mc"``; n_terms: rows of the bank (multisets or distinct samples).
    """

    risk: float
    grad: np.ndarray
    risk_stderr: float
    grad_stderr: np.ndarray
    err_y: float
    err_f: float
    amb_f: float
    Lambda: float
    Gamma: float
    Xi: float
    method: str
    n_terms: int


def kernel_setting(s: Setting) -> tuple[float, float, int, float, int, int]:
    """The Setting's scalars in the order of the kernels' arguments: (β, τ, p, ν, C, D)."""
    return float(s.beta), float(s.tau), int(s.p), float(s.nu), int(s.C), int(s.D)


class _Evaluator:
    """Evaluates ℓ_red and its gradient on a fixed bank, reusing the table buffer."""

    def __init__(self, s: Setting, bank: Bank):
        self.s, self.bank = s, bank
        self.tab = np.empty((len(bank.plus), len(bank.Tvals), 4))
        self.out = np.empty(rk.N_OUT)
        # the kernels' two tuple arguments (:func:`theorydyn.reduced._kernels.evaluate`)
        self.setting = kernel_setting(s)
        self.arrays = (
            bank.plus,
            bank.minus,
            bank.zero,
            bank.Tvals,
            bank.row_ptr,
            bank.nz_type,
            bank.nz_count,
            bank.tidx,
            bank.fval,
            bank.weights,
        )

    def raw(self, alpha: float, gamma: float, rho: float) -> np.ndarray:
        rk.evaluate(float(alpha), float(gamma), float(rho), self.setting, self.arrays, self.tab, self.out)
        return self.out

    def finite(self) -> bool:
        o = self.out
        return bool(o[10] == 0.0 and np.all(np.isfinite(o[:5])))

    def estimate(self, alpha: float, gamma: float, rho: float) -> Estimate:
        b = self.bank
        o = self.raw(alpha, gamma, rho).copy()
        return _estimate_from(self.s, o, gamma, rho, b.kind, b.n_samples, b.amb_f, len(b))


def _estimate_from(
    s: Setting, o: np.ndarray, gamma: float, rho: float, kind: str, n_samples: int, amb_f: float, n_terms: int
) -> Estimate:
    """An :class:`Estimate` from the accumulated sums ``o`` (see :func:`theorydyn.reduced._kernels.accumulate`)."""
    if o[10] > 0:  # F overflowed for some sample
        o[:8] = np.nan
    if kind == "mc":
        N = n_samples
        var = np.maximum(o[[1, 5, 6, 7]] - o[[0, 2, 3, 4]] ** 2, 0.0) * N / (N - 1)
        se = np.sqrt(var / N)
    else:
        se = np.zeros(4)
    lam, gam, xi = softmax_values(s, gamma, rho)
    mass = 1.0 - amb_f
    return Estimate(
        risk=float(o[0]),
        grad=o[2:5].copy(),
        risk_stderr=float(se[0]),
        grad_stderr=se[1:].copy(),
        err_y=float(o[8]),
        err_f=float(o[9] / mass) if mass > 0 else float("nan"),
        amb_f=float(amb_f),
        Lambda=lam,
        Gamma=gam,
        Xi=xi,
        method=kind,
        n_terms=int(n_terms),
    )


#: Samples per chunk of the streaming Monte Carlo evaluation (even: chunks start on a whole raw word;
#: small: a chunk's raw words, ≤ 8 · 1024 · (L−1) / 2 bytes, are reused heap memory, not fresh pages).
_MC_CHUNK = 1024


def _type_table(
    s: Setting,
    alpha: float,
    gamma: float,
    rho: float,
    plus: np.ndarray,
    minus: np.ndarray,
    zero: np.ndarray,
    T: np.ndarray,
) -> np.ndarray:
    """The kernel's per-(count type, T) table (K, len(T), 4) at (α, γ, ρ): one place for its long
    argument list, shared by the Monte Carlo estimate and :func:`forward_counts`."""
    tab = np.empty((len(plus), len(T), 4))
    rk.build_table(
        float(alpha),
        float(gamma),
        float(rho),
        *kernel_setting(s),
        plus,
        minus,
        zero,
        T,
        tab,
    )
    return tab


def _mc_estimate(s: Setting, alpha: float, gamma: float, rho: float, n_samples: int, seed: int) -> Estimate:
    """ℓ_red by Monte Carlo without storing the samples: the samples of ``make_bank(s, "mc",
    n_samples, seed)``, drawn chunk by chunk and evaluated as they are drawn on a table over every
    T ∈ [−D, D] (:func:`theorydyn.reduced._kernels.mc_accumulate`); risk and gradient sums equal
    those of the unmerged bank bit for bit. Memory O(chunk + K·D), not O(N·L)."""
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2 (a standard error needs two samples), got {n_samples}")
    n = int(n_samples)
    order, cut, start = rk.type_sampler(s.C, s.q)
    plus, minus, zero = rk.count_types(s.C)
    sm = plus - minus
    Tmax = s.L * s.C
    tab = _type_table(s, alpha, gamma, rho, plus, minus, zero, np.arange(-Tmax, Tmax + 1, dtype=np.float64))
    out = np.zeros(rk.N_OUT + 1)
    hist = np.empty(len(plus), dtype=np.int64)
    bitgen = np.random.default_rng(seed).bit_generator
    M = s.L - 1
    thr = threshold(s, sm)
    for a in range(0, n, _MC_CHUNK):
        m = min(_MC_CHUNK, n - a)
        raw = bitgen.random_raw(-(-m * M // 2))
        rk.mc_accumulate(raw, m, M, order, cut, start, tab, Tmax, sm, thr, 1.0 / n, hist, out)
    tau = s.tau
    out[3] /= tau
    out[4] /= tau
    out[6] /= tau * tau
    out[7] /= tau * tau
    return _estimate_from(s, out[: rk.N_OUT], gamma, rho, "mc", n, float(out[rk.N_OUT]), n)


def population_risk(
    s: Setting,
    alpha: float,
    gamma: float,
    rho: float,
    method: str = "exact",
    n_samples: int = 100_000,
    seed: int = 0,
    max_terms: int = MAX_TERMS,
    bank: Bank | None = None,
) -> Estimate:
    """ℓ_red(α, γ, ρ) and its gradient, exactly or by Monte Carlo (docs/theory.md §3).

    Args:
        method: ``"exact"`` (finite sum over multisets of count types; ValueError beyond
            ``max_terms``) or ``"mc"`` (``n_samples`` count vectors drawn with ``seed``).
        bank: reuse a bank from :func:`make_bank` (then ``method``, ``n_samples``, ``seed`` are ignored).
    """
    if method not in ("exact", "mc"):
        raise ValueError(f"method must be 'exact' or 'mc', got {method!r}")
    for name, v in (("alpha", alpha), ("gamma", gamma), ("rho", rho)):
        if not np.isfinite(v):
            raise ValueError(f"{name} must be finite, got {v}")
    if bank is None:
        if method == "mc":  # one evaluation: stream the samples through the kernel, never store them
            return _mc_estimate(s, alpha, gamma, rho, n_samples, seed)
        bank = make_bank(s, method, n_samples=n_samples, seed=seed, max_terms=max_terms)
    return _Evaluator(s, bank).estimate(alpha, gamma, rho)


def forward_counts(s: Setting, alpha: float, gamma: float, rho: float, z: np.ndarray) -> np.ndarray:
    """F at the symmetric point from the feature values z: (N, D) in {−1, 0, +1} → (N,), O(L) per sample
    through the (type, T) tables of the Numba kernel (any labels: no y = +1 convention needed)."""
    z = np.asarray(z)
    zs = z[:, s.sets]  # (N, L, C)
    nc = np.stack([(zs == 1).sum(2), (zs == -1).sum(2), (zs == 0).sum(2)], axis=-1)
    plus, minus, zero = rk.count_types(s.C)
    index = np.full((s.C + 1, s.C + 1), -1, dtype=np.int64)
    index[plus, minus] = np.arange(len(plus))
    types = index[nc[..., 0], nc[..., 1]]
    K = len(plus)
    counts = np.zeros((len(z), K), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(len(z)), s.L), types.ravel()), 1)
    T = counts @ (plus - minus)
    Tvals, tidx = np.unique(T, return_inverse=True)
    tab = _type_table(s, alpha, gamma, rho, plus, minus, zero, Tvals.astype(np.float64))
    return np.einsum("nk,nk->n", counts, tab[:, tidx.ravel(), 0].T)
