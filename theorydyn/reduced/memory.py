"""The memory of the reduced solver (:func:`theorydyn.reduced.make_bank`, :func:`~theorydyn.reduced.integrate`),
estimated from the count-type law of its kernels (docs/theory.md §3).

A set of size C is summarised by its count type (n⁺, n⁻, n⁰), one of K = (C+1)(C+2)/2, drawn
from Multinomial(C; q/2, q/2, 1 − q) (:func:`theorydyn.reduced._kernels.type_probabilities`, the
one definition of that law). The exact expectation sums over the M = C(L − 1 + K' − 1, K' − 1)
multisets of the K' types of nonzero probability (fewer than K when q ∈ {0, 1}).
"""

from __future__ import annotations

import math

import numpy as np

from ..infra.memory import F64, I16, I64, SMALL, MemoryEstimate, Term
from ._kernels import count_types, type_probabilities

__all__ = ["n_count_types", "n_exact_terms", "reduced_memory"]


def n_count_types(C: int, q: float) -> int:
    """K': the count types (n⁺, n⁻, n⁰) of a set of size C with nonzero probability under q (as computed in float)."""
    return int(np.count_nonzero(type_probabilities(C, q) > 0))


def n_exact_terms(D: int, C: int, q: float) -> int:
    """M: the multisets of count types of the L − 1 random sets, C(L − 1 + K' − 1, K' − 1),
    K' = :func:`n_count_types` (the terms of ``make_bank(s, "exact")``)."""
    k = n_count_types(C, q)
    return math.comb(D // C - 1 + k - 1, k - 1)


def reduced_memory(D: int, C: int, q: float, n_samples: int = 4000, expectation: str = "mc") -> MemoryEstimate:
    """Peak of building the bank of :func:`theorydyn.reduced.make_bank` (the integration itself is small).

    Monte Carlo: the (n_samples, K) int16 histograms of set types drawn in Numba, their int64 copy
    and sort keys when identical samples are merged (the peak), and the bank's arrays. Exact: M multisets, each row
    K int16 counts (two copies), the compressed rows (≤ min(K, L) nonzeros, two int64 each) and
    six float64/int64 vectors.
    """
    L, K = D // C, (C + 1) * (C + 2) // 2
    if expectation == "exact":
        M = n_exact_terms(D, C, q)
        nnz = M * min(K, L)
        return MemoryEstimate(
            "reduced exact expectation",
            (
                Term(f"{M:,} multisets × {K} count types, int16, 2 copies", 2 * M * K * I16, {"D": D, "C": C}),
                Term(
                    "compressed rows (int64 type and count per nonzero, ≤ min(K, L) nonzeros)",
                    2 * I64 * nnz,
                    {"D": D, "C": C},
                ),
                Term("weights, T, f, index vectors", 6 * F64 * M, {"D": D, "C": C}),
                SMALL,
            ),
        )
    N = int(n_samples)
    # expected number of distinct set types per sample: the signal set's, plus each type that
    # appears among the L − 1 random sets, whose types are i.i.d. by the count-type law; summed
    # with n⁺ then n⁻ ascending, the order this estimate has always used (the same float)
    plus, minus, _ = count_types(C)
    probs = type_probabilities(C, q)[np.lexsort((minus, plus))].tolist()
    nz = 1.0 + sum(1.0 - (1.0 - pk) ** (L - 1) for pk in probs)
    return MemoryEstimate(
        "reduced Monte Carlo bank",
        (
            # the peak is the merge of identical samples; the draw before it (N(L−1) 32-bit uniforms
            # and the int16 histograms) is smaller
            Term(f"type histograms ({N}, K={K}) int16", N * K * I16, {"n_samples": N}),
            Term(
                f"merge: the histograms as int64 ({N}, {K}) and their sort keys",
                N * K * I64 + 4 * N * I64,
                {"n_samples": N},
            ),
            Term(
                f"bank arrays of the merged rows (≤ {N}): ≈ {nz:.1f} nonzero types per row and per-row vectors",
                int(2 * N * nz * I64) + 5 * N * F64,
                {"n_samples": N},
            ),
            SMALL,
        ),
    )
