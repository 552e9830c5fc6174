"""The idealized dynamics in (α, γ, ρ): the reduced risk, its gradient, GD and gradient flow (docs/theory.md §3).

By Lemmas 4.1 and 4.2, population GD from the idealized initialisation (Parametrization 3.1)
keeps A_ii = β, A_ij = γ (same set), A_ij = ρ (different sets) and v = α w*. The population
risk there, ℓ_red(α, γ, ρ), is an expectation over the count vectors of the L − 1 random sets
(docs/theory.md §3); this module evaluates it

* by Monte Carlo (``method="mc"``): a fixed, seeded *bank* of count vectors drawn directly
  (O(L) per sample, never D-length vectors), with the standard error of the estimate;
* exactly (``method="exact"``): the L − 1 random sets are i.i.d. over K = (C+1)(C+2)/2 count
  types, so the expectation is a finite sum over the C(L−1+K−1, K−1) multisets of types,
  weighted by multinomial probabilities (refused beyond ``max_terms``).

Both share one Numba kernel (:mod:`theorydyn.reduced._kernels`) that tabulates a set's
contribution per (type, T) and makes each sample a few table lookups.

Dynamics (docs/theory.md §3), with the per-entry updates of the full model:

    GD   (``method="gd"``):   α ← α − η ∂ℓ/∂α,  γ ← γ − η ∂ℓ/∂γ / (D(C−1)),  ρ ← ρ − η ∂ℓ/∂ρ / (D(D−C));
    flow (``method="flow"``): the same right-hand side in time s = η·t, integrated by a stiff
                              scipy solver (LSODA by default) on a fixed bank (common random numbers).

Errors (same convention as :func:`theorydyn.data.errors`): err_y = Pr[y F ≤ 0];
err_f = Pr[f F ≤ 0 | f ≠ 0], with f = Σ_m Thr(s_m), Thr(z) = z if |z| > 0.9 C else 0; the mass
amb_f = Pr[f = 0] (a random set mirroring the signal set) is excluded and reported. A sample whose
F is zero by symmetry (e.g. T = 0 at γ = ρ = 0) counts as F = 0 (an error), not as the sign of
its rounding residue.

Phases (Section 4.1): see :func:`theorydyn.phases.detect_phases`. Measured limit of
Lemma 4.3: γ ≥ ρ holds from the idealized init for q ≤ C²/(2D) in every case tried, but fails at
small D with large q (e.g. D=16, C=4, q=1; D=24, C=4, q=2/3), where γ decreases.

CLI: ``python -m theorydyn.reduced --help``.
"""

from __future__ import annotations

import bisect
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import integrate as si
from scipy.optimize import brentq

from .._progress import progress_bar
from ..data import threshold
from ..model import softmax_values
from ..phases import ERR_TOL, Phases, detect_phases
from ..result import Result, Status
from ..setting import Setting
from . import _kernels as rk
from . import memory

__all__ = [
    "Bank",
    "Estimate",
    "default_horizon",
    "make_bank",
    "mc_set_counts",
    "bank_from_set_counts",
    "n_exact_terms",
    "population_risk",
    "integrate",
    "forward_counts",
    "COLUMNS",
    "SOLVERS",
]

#: Columns of a trajectory returned by :func:`integrate`: the common schema of
#: :data:`theorydyn.result.CORE_COLUMNS`, then the softmax values of the three-value form.
COLUMNS = [
    "s",
    "step",
    "alpha",
    "gamma",
    "rho",
    "in_mass",
    "association",
    "risk",
    "err_y",
    "err_f",
    "amb_f",
    "Lambda",
    "Gamma",
    "Xi",
]

#: Default cap on the number of multisets of count types for ``method="exact"`` (≈ 1 s per evaluation).
MAX_TERMS = 2_000_000

SOLVERS = ("LSODA", "BDF", "Radau", "RK45")


def default_horizon(D: int) -> float:
    """The default horizon s_max (in s = η·t) of a reduced flow: 2·10⁴·max(1, D/64)^1.5.

    A chosen horizon, not a derived one: long enough to pass Event III for C = 4 (the transfer
    experiment's pre-training and the ledger's flows of the idealized dynamics both use it).
    """
    return 2.0e4 * max(1.0, D / 64) ** 1.5


# ---- the bank of samples ----------------------------------------------------------------------


@dataclass(frozen=True)
class Bank:
    """Samples of the reduced expectation, stored by count type (y = +1; signal set included).

    Attributes:
        kind: ``"mc"`` or ``"exact"``.
        counts: (M, K) int16 — per sample, how many sets have each count type
            (types from :func:`theorydyn.reduced._kernels.count_types`; type 0 = (C, 0, 0)).
        tidx: (M,) index of each sample's T = Σ_m s_m into ``Tvals``.
        Tvals: (n_T,) float64, the distinct values of T.
        fval: (M,) float64, the labelling function f = Σ_m Thr(s_m).
        weights: (M,) float64 summing to 1 (probabilities, or multiplicities / N after merging
            identical Monte Carlo samples).
        n_samples: N, the number of Monte Carlo draws (0 for exact).
        amb_f: Pr[f = 0] under the bank's weights (the ambiguous points, excluded from err_f).
        row_ptr, nz_type, nz_count: ``counts`` in compressed rows (what the kernel reads).
        plus, minus, zero: (K,) the count types.
    """

    kind: str
    counts: np.ndarray
    tidx: np.ndarray
    Tvals: np.ndarray
    fval: np.ndarray
    weights: np.ndarray
    n_samples: int
    amb_f: float
    row_ptr: np.ndarray = field(repr=False)
    nz_type: np.ndarray = field(repr=False)
    nz_count: np.ndarray = field(repr=False)
    plus: np.ndarray = field(repr=False)
    minus: np.ndarray = field(repr=False)
    zero: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.weights)


def _draw_types(s: Setting, n_samples: int, seed: int, keep_types: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The set types of N Monte Carlo samples: (N, L−1) int16 types of the random sets and the
    (N, K) int16 histogram of types per sample (signal set included).

    One 32-bit uniform per random set, from the raw output of ``np.random.default_rng(seed)``,
    inverted through the type law Multinomial(C; q/2, q/2, 1−q) in Numba
    (:func:`theorydyn.reduced._kernels.draw_type_counts`): the law of drawing (n⁺, n⁻, n⁰) directly
    (to 2⁻³² per type probability), at a fraction of the cost.
    """
    if n_samples < 2:
        raise ValueError(f"n_samples must be >= 2 (a standard error needs two samples), got {n_samples}")
    order, cut, start = rk.type_sampler(s.C, s.q)
    n = int(n_samples)
    raw = np.random.default_rng(seed).bit_generator.random_raw(-(-n * (s.L - 1) // 2))
    types = np.empty((n, s.L - 1) if keep_types else (0, 0), dtype=np.int16)
    counts = np.empty((n, len(order)), dtype=np.int16)
    rk.draw_type_counts(raw, s.L - 1, order, cut, start, types, counts)
    return types, counts


def mc_set_counts(s: Setting, n_samples: int, seed: int = 0) -> np.ndarray:
    """Draw the count vectors of N samples directly (docs/theory.md §3): (N, L, 3) int64, columns (n⁺, n⁻, n⁰).

    Set 0 is the signal set, (C, 0, 0) (y = +1); sets 1..L−1 are i.i.d. Multinomial(C; q/2, q/2, 1−q).
    These are the samples of ``make_bank(s, "mc", n_samples, seed)`` set by set (same seed, same samples).
    """
    types, _ = _draw_types(s, n_samples, seed)
    plus, minus, zero = rk.count_types(s.C)
    out = np.empty((types.shape[0], s.L, 3), dtype=np.int64)
    out[:, 0] = (s.C, 0, 0)
    out[:, 1:, 0] = plus[types]
    out[:, 1:, 1] = minus[types]
    out[:, 1:, 2] = zero[types]
    return out


def mc_type_counts(s: Setting, n_samples: int, seed: int = 0) -> np.ndarray:
    """The (N, K) int16 histograms of set types of N Monte Carlo samples (signal set included):
    what a Monte Carlo bank stores; the samples of :func:`mc_set_counts` with the same seed."""
    return _draw_types(s, n_samples, seed, keep_types=False)[1]


def _finish_bank(s: Setting, kind: str, counts: np.ndarray, weights: np.ndarray, n_samples: int) -> Bank:
    plus, minus, zero = rk.count_types(s.C)
    sm = plus - minus
    counts = np.ascontiguousarray(counts, dtype=np.int16)
    tidx, Tvals, f, row_ptr, nz_type, nz_count = rk.bank_arrays(counts, sm, threshold(s, sm), s.L * s.C)
    weights = np.ascontiguousarray(weights, dtype=np.float64)
    return Bank(
        kind=kind,
        counts=counts,
        tidx=tidx,
        Tvals=Tvals,
        fval=f,
        weights=weights,
        n_samples=int(n_samples),
        amb_f=float(weights[f == 0].sum()),
        row_ptr=row_ptr,
        nz_type=nz_type,
        nz_count=nz_count,
        plus=plus,
        minus=minus,
        zero=zero,
    )


def bank_from_type_counts(s: Setting, counts: np.ndarray, merge: bool = True) -> Bank:
    """A Monte Carlo bank from (N, K) histograms of set types (signal set included), e.g. from
    :func:`mc_type_counts`.

    ``merge=True`` merges identical samples (same histogram of types) into one row with weight
    multiplicity / N: the same estimate, fewer rows.
    """
    counts = np.asarray(counts)
    N, K = counts.shape
    L = s.L
    if merge:
        if (L + 1) ** K < 2**63:  # a histogram is a K-digit number in base L + 1: sort keys, not rows
            key = counts.astype(np.int64) @ ((L + 1) ** np.arange(K, dtype=np.int64))
            _, first, mult = np.unique(key, return_index=True, return_counts=True)
            counts = counts[first]
        else:
            counts, mult = np.unique(counts, axis=0, return_counts=True)
        weights = mult / N
    else:
        weights = np.full(N, 1.0 / N)
    return _finish_bank(s, "mc", counts, weights, N)


def bank_from_set_counts(s: Setting, set_counts: np.ndarray, merge: bool = True) -> Bank:
    """A Monte Carlo bank from explicit count vectors ``set_counts`` (N, L, 3) (signal set included).

    ``merge=True`` merges identical samples (same histogram of types) into one row with weight
    multiplicity / N: the same estimate, fewer rows.
    """
    set_counts = np.asarray(set_counts)
    N, L, _ = set_counts.shape
    plus, minus, _ = rk.count_types(s.C)
    index = np.full((s.C + 1, s.C + 1), -1, dtype=np.int64)
    index[plus, minus] = np.arange(len(plus))
    types = index[set_counts[:, :, 0], set_counts[:, :, 1]]  # (N, L)
    K = len(plus)
    counts = np.bincount((np.arange(N)[:, None] * K + types).ravel(), minlength=N * K).reshape(N, K)
    return bank_from_type_counts(s, counts, merge=merge)


def n_exact_terms(s: Setting) -> int:
    """Number of multisets of count types of the L − 1 random sets (types of zero probability dropped):
    :func:`theorydyn.reduced.memory.n_exact_terms` at the setting's D, C, q."""
    return memory.n_exact_terms(s.D, s.C, s.q)


def make_bank(
    s: Setting,
    expectation: str = "mc",
    n_samples: int = 4000,
    seed: int = 0,
    max_terms: int = MAX_TERMS,
    merge: bool = True,
) -> Bank:
    """The samples of the reduced expectation: Monte Carlo (``"mc"``) or exhaustive (``"exact"``).

    Raises:
        ValueError: ``expectation="exact"`` with more than ``max_terms`` multisets of count types.
    """
    if expectation == "mc":
        return bank_from_type_counts(s, mc_type_counts(s, n_samples, seed), merge=merge)
    if expectation != "exact":
        raise ValueError(f"expectation must be 'mc' or 'exact', got {expectation!r}")
    prob = rk.type_probabilities(s.C, s.q)
    pos = np.flatnonzero(prob > 0)
    M = n_exact_terms(s)
    if M > max_terms:
        raise ValueError(
            f"exact expectation needs {M:,} multisets of count types (L-1={s.L - 1} sets over {len(pos)} types "
            f"at D={s.D}, C={s.C}), above the limit max_terms={max_terms:,}; use Monte Carlo (method/expectation "
            f"'mc') or raise max_terms"
        )
    sub = np.zeros((M, len(pos)), dtype=np.int16)
    logw = np.empty(M)
    m = rk.enumerate_multisets(s.L - 1, np.log(prob[pos]), sub, logw)
    assert m == M
    K = len(prob)
    counts = np.zeros((M, K), dtype=np.int16)
    counts[:, pos] = sub
    counts[:, 0] += 1  # the signal set, type (C, 0, 0)
    w = np.exp(logw)
    return _finish_bank(s, "exact", counts, w / w.sum(), 0)


# ---- evaluation -------------------------------------------------------------------------------


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


class _Evaluator:
    """Evaluates ℓ_red and its gradient on a fixed bank, reusing the table buffer."""

    def __init__(self, s: Setting, bank: Bank):
        self.s, self.bank = s, bank
        self.tab = np.empty((len(bank.plus), len(bank.Tvals), 4))
        self.out = np.empty(rk.N_OUT)
        self.args = (
            float(s.beta),
            float(s.tau),
            int(s.p),
            float(s.nu),
            int(s.C),
            int(s.D),
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
        rk.evaluate(float(alpha), float(gamma), float(rho), *self.args, self.tab, self.out)
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
    tab = np.empty((len(plus), 2 * Tmax + 1, 4))
    rk.build_table(
        float(alpha),
        float(gamma),
        float(rho),
        float(s.beta),
        float(s.tau),
        int(s.p),
        float(s.nu),
        int(s.C),
        int(s.D),
        plus,
        minus,
        zero,
        np.arange(-Tmax, Tmax + 1, dtype=np.float64),
        tab,
    )
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
    tab = np.empty((K, len(Tvals), 4))
    rk.build_table(
        float(alpha),
        float(gamma),
        float(rho),
        float(s.beta),
        float(s.tau),
        int(s.p),
        float(s.nu),
        int(s.C),
        int(s.D),
        plus,
        minus,
        zero,
        Tvals.astype(np.float64),
        tab,
    )
    return np.einsum("nk,nk->n", counts, tab[:, tidx.ravel(), 0].T)


# ---- dynamics ---------------------------------------------------------------------------------


class _Diverged(Exception):
    pass


def _check_positive(name, v, integer=False):
    if integer and (not isinstance(v, (int, np.integer)) or isinstance(v, bool)):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be > 0 and finite, got {v}")


def _row(ev: _Evaluator, s_val: float, step: float, th) -> dict | None:
    """One trajectory row at θ = (α, γ, ρ), or None where the risk is not finite."""
    e = ev.estimate(*th)
    if not (np.isfinite(e.risk) and np.all(np.isfinite(e.grad))):
        return None
    s = ev.s
    # Definition 2.2 at the three-value form: row i's C largest entries are its set iff min(β, γ) > ρ
    assoc = 1.0 if min(s.beta, float(th[1])) > float(th[2]) else 0.0
    return dict(
        s=s_val,
        step=step,
        alpha=float(th[0]),
        gamma=float(th[1]),
        rho=float(th[2]),
        in_mass=e.Lambda + (s.C - 1) * e.Gamma,
        association=assoc,
        risk=e.risk,
        err_y=e.err_y,
        err_f=e.err_f,
        amb_f=e.amb_f,
        Lambda=e.Lambda,
        Gamma=e.Gamma,
        Xi=e.Xi,
    )


def integrate(
    s: Setting,
    method: str = "flow",
    *,
    eta: float = 1.0,
    steps: int | None = None,
    s_max: float | None = None,
    n_samples: int = 4000,
    seed: int = 0,
    expectation: str = "mc",
    n_points: int = 200,
    s_min: float | None = None,
    solver: str = "LSODA",
    rtol: float = 1e-7,
    atol: float = 1e-10,
    init: tuple[float, float, float] | None = None,
    max_terms: int = MAX_TERMS,
    err_tol: float = ERR_TOL,
    progress: bool = False,
    bank: Bank | None = None,
    s_grid=None,
) -> Result:
    """Population GD (``method="gd"``) or gradient flow (``method="flow"``) of ℓ_red from the idealized init.

    Args:
        s: the setting. Start (Parametrization 3.1): α = ν^{1/(p−1)}, γ = ρ = 0, unless ``init``.
        method: ``"gd"``: the paper's recursion with per-entry updates, ``steps`` steps of size
            ``eta`` (s = η·step; ``steps`` defaults to ⌈s_max/η⌉). ``"flow"``: dθ/ds = −(∂ℓ/∂α,
            ∂ℓ/∂γ/(D(C−1)), ∂ℓ/∂ρ/(D(D−C))) up to ``s_max`` (default 1e5, or η·steps) with the scipy
            solver ``solver`` (LSODA, BDF, Radau; RK45 for non-stiff checks), tolerances rtol/atol.
        expectation: ``"mc"`` (a fixed bank of ``n_samples`` count vectors drawn with ``seed``:
            common random numbers, so the right-hand side is a smooth deterministic function) or
            ``"exact"`` (small L only).
        n_points: rows of the trajectory: s = 0 and ``n_points − 1`` log-spaced values from ``s_min``
            (default min(η, s_max/100) for gd, min(0.01, s_max/100) for flow) to the end; for gd the
            grid is rounded to whole steps.
        err_tol: tolerance of T2 in the phase summary.
        s_grid: explicit increasing times s ≥ 0 to record instead of the log grid (gd rounds them
            to whole steps; the end of the run is max(s_grid) unless s_max/steps say otherwise).
        bank: reuse a bank from :func:`make_bank` (then expectation/n_samples/seed are not used).
        progress: a progress bar on stderr.

    Returns:
        :class:`~theorydyn.result.Result` with ``solver="reduced"``: the trajectory has the
        columns :data:`COLUMNS`; ``phases`` from :func:`theorydyn.phases.detect_phases`, whose
        crossing times the flow refines through its dense output (independent of the output
        grid); ``status`` DIVERGED / FAILED with the rows before kept.

    Raises:
        ValueError: naming a bad option.
    """
    if method not in ("flow", "gd"):
        raise ValueError(f"method must be 'flow' or 'gd', got {method!r}")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    _check_positive("eta", eta)
    if steps is not None:
        _check_positive("steps", steps, integer=True)
    if s_max is not None:
        _check_positive("s_max", s_max)
    _check_positive("n_points", n_points, integer=True)
    if n_points < 2:
        raise ValueError(f"n_points must be >= 2, got {n_points}")
    if not (0.0 < err_tol < 1.0):
        raise ValueError(f"err_tol must be in (0, 1), got {err_tol}")
    if s_grid is not None:
        s_grid = np.unique(np.asarray(s_grid, dtype=np.float64))
        if len(s_grid) == 0 or not np.all(np.isfinite(s_grid)) or s_grid[0] < 0:
            raise ValueError("s_grid must be a non-empty array of finite times >= 0")
        if s_max is None and steps is None:
            s_max = float(s_grid[-1])
    if method == "gd":
        if steps is None:
            steps = int(math.ceil((s_max if s_max is not None else 1e5) / eta))
        s_end = eta * steps
    else:
        s_end = s_max if s_max is not None else (eta * steps if steps is not None else 1e5)
    t_start = time.perf_counter()
    if bank is None:
        bank = make_bank(s, expectation, n_samples=n_samples, seed=seed, max_terms=max_terms)
    ev = _Evaluator(s, bank)
    th0 = np.array(init if init is not None else (s.alpha0, 0.0, 0.0), dtype=np.float64)
    options = dict(
        method=method,
        eta=eta,
        steps=steps,
        s_max=s_end,
        n_samples=n_samples if bank.kind == "mc" else None,
        seed=seed if bank.kind == "mc" else None,
        expectation=bank.kind,
        n_points=n_points,
        solver=solver if method == "flow" else None,
        rtol=rtol if method == "flow" else None,
        atol=atol if method == "flow" else None,
        init=[float(x) for x in th0],
        err_tol=err_tol,
    )
    bar = progress_bar(progress, total=s_end, desc=f"reduced {method}", unit="s")
    refine = None
    # overflow of e^{...} in far-off regions is detected and reported as divergence, not printed
    with bar, np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if method == "gd":
            rows, run = _run_gd(s, ev, th0, eta, steps, n_points, s_min, bar, s_grid)
        else:
            rows, run, dense = _run_flow(s, ev, th0, s_end, eta, n_points, s_min, solver, rtol, atol, bar, s_grid)
            refine = _flow_refiner(s, ev, dense)
        traj = pd.DataFrame(rows, columns=COLUMNS)
        phases = detect_phases(traj, err_tol=err_tol, refine=refine) if len(traj) else Phases(err_tol=err_tol)
    status, message, stopped = run
    return Result("reduced", s, traj, phases, status, message, stopped, options, time.perf_counter() - t_start)


def _log_grid(lo: float, hi: float, n: int) -> np.ndarray:
    return np.concatenate([[0.0], np.geomspace(lo, hi, n - 1)]) if n > 1 else np.array([0.0])


_OK = (Status.OK, "", None)


def _diverged(where: str, step: float | None):
    return Status.DIVERGED, f"diverged (non-finite risk) at {where}", step


def _run_gd(s, ev, th, eta, steps, n_points, s_min, bar, s_grid=None):
    if s_grid is None:
        lo = max(1.0, (s_min if s_min is not None else min(eta, eta * steps / 100)) / eta)
        grid = np.unique(np.rint(_log_grid(min(lo, steps), steps, n_points)).astype(np.int64))
    else:
        grid = np.unique(np.rint(s_grid / eta).astype(np.int64))
        grid = grid[grid <= steps]
    rows, cur = [], 0
    th = th.copy()
    args = ev.args
    for target in grid:
        n = int(target - cur)
        if n > 0:
            done = rk.gd_run(th, float(eta), float(s.n_in), float(s.n_cross), n, *args, ev.tab, ev.out)
            cur += done
            if done < n:
                return rows, _diverged(f"step {cur} (s={cur * eta:.6g})", cur)
        row = _row(ev, cur * eta, float(cur), th)
        if row is None:
            return rows, _diverged(f"step {cur} (s={cur * eta:.6g})", cur)
        rows.append(row)
        bar.update(cur * eta - bar.n)
    return rows, _OK


class _Dense:
    """The flow's state θ(s) between records: the solver's dense output, step by step."""

    def __init__(self):
        self.t_hi: list[float] = []
        self.pieces: list = []

    def add(self, t_hi: float, piece) -> None:
        self.t_hi.append(t_hi)
        self.pieces.append(piece)

    def __call__(self, t: float) -> np.ndarray:
        k = min(bisect.bisect_left(self.t_hi, t), len(self.pieces) - 1)
        return self.pieces[k](t)


def _flow_refiner(s: Setting, ev: _Evaluator, dense: _Dense):
    """``refine(column, s_lo, s_hi, level, rising)`` for :func:`detect_phases`: the crossing from the
    dense output — Brent's method for the smooth columns, bisection for the errors (a finite bank
    makes them step functions of s, whose first jump below the level is found to 1e-9 relative)."""

    def value(name: str, t: float) -> float:
        th = dense(t)
        if name in ("alpha", "gamma", "rho"):
            return float(th["alpha gamma rho".split().index(name)])
        row = _row(ev, t, t, th)
        return float("nan") if row is None else float(row[name])

    def refine(name: str, lo: float, hi: float, level: float, rising: bool) -> float:
        if not dense.pieces:
            return hi
        sign = 1.0 if rising else -1.0
        g = lambda t: sign * (value(name, t) - level)  # noqa: E731 — crossing where g turns positive
        glo, ghi = g(lo), g(hi)
        if not (glo <= 0 < ghi):
            return hi
        if name in ("err_y", "err_f", "association"):
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if g(mid) > 0:
                    hi = mid
                else:
                    lo = mid
                if hi - lo <= 1e-9 * hi:
                    break
            return hi
        return float(brentq(g, lo, hi, xtol=1e-12, rtol=1e-10))

    return refine


def _run_flow(s, ev, th0, s_end, eta, n_points, s_min, solver, rtol, atol, bar, s_grid=None):
    scale = np.array([1.0, 1.0 / s.n_in, 1.0 / s.n_cross])
    dense = _Dense()

    def rhs(t, th):
        o = ev.raw(th[0], th[1], th[2])
        if not ev.finite():
            raise _Diverged(t)
        return -o[2:5] * scale

    if s_grid is None:
        lo = s_min if s_min is not None else min(0.01, s_end / 100)
        grid = _log_grid(min(lo, s_end), s_end, n_points)
    else:
        grid = s_grid[s_grid <= s_end]
    rows = []
    gi = 0
    while gi < len(grid) and grid[gi] == 0.0:
        row = _row(ev, 0.0, 0.0, th0)
        if row is None:
            return rows, _diverged("s=0", 0.0), dense
        rows.append(row)
        gi += 1
    try:
        ode = getattr(si, solver)(rhs, 0.0, th0.copy(), s_end, rtol=rtol, atol=atol)
        while gi < len(grid):
            ode.step()
            if ode.status == "failed":
                return (
                    rows,
                    (Status.FAILED, f"solver {solver} failed at s={ode.t:.6g}: {ode.message}", ode.t / eta),
                    dense,
                )
            dense.add(ode.t, ode.dense_output())
            while gi < len(grid) and grid[gi] <= ode.t:
                row = _row(ev, float(grid[gi]), float(grid[gi] / eta), dense(grid[gi]))
                if row is None:
                    return rows, _diverged(f"s={grid[gi]:.6g}", grid[gi] / eta), dense
                rows.append(row)
                gi += 1
            bar.update(min(ode.t, s_end) - bar.n)
            if ode.status == "finished":
                break
    except _Diverged as e:
        return rows, _diverged(f"s={e.args[0]:.6g}", e.args[0] / eta), dense
    return rows, _OK, dense
