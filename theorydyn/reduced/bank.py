"""The samples of the reduced expectation: a Monte Carlo or exact *bank* of count types (docs/theory.md §3).

The reduced risk ℓ_red(α, γ, ρ) is an expectation over the count vectors of the L − 1 random sets;
a :class:`Bank` holds its samples, stored by count type (y = +1, signal set included):

* Monte Carlo (``"mc"``): N count vectors drawn directly (O(L) per sample, never D-length
  vectors) by inverting 32-bit uniforms through the type law (:func:`mc_set_counts`,
  :func:`mc_type_counts`), identical samples merged;
* exact (``"exact"``): the L − 1 random sets are i.i.d. over K = (C+1)(C+2)/2 count types, so
  the expectation is a finite sum over the C(L−1+K−1, K−1) multisets of types, weighted by
  multinomial probabilities (:func:`n_exact_terms`; refused beyond ``max_terms``).

:func:`make_bank` builds either; :mod:`theorydyn.reduced.risk` evaluates ℓ_red on one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.data import threshold
from ..core.setting import Setting
from . import _kernels as rk
from . import memory

__all__ = [
    "MAX_TERMS",
    "Bank",
    "make_bank",
    "mc_set_counts",
    "mc_type_counts",
    "bank_from_set_counts",
    "bank_from_type_counts",
    "n_exact_terms",
]

#: Default cap on the number of multisets of count types for ``method="exact"`` (≈ 1 s per evaluation).
MAX_TERMS = 2_000_000


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
