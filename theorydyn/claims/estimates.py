"""Memory estimates of the theorem checks that hold more than one solver's arrays: Theorem 3.1's exact
route and fitted GLMs, Theorem 3.2's construction (each a :class:`~theorydyn.infra.memory.MemoryEstimate`,
checked against ``tracemalloc`` in tests/test_resources.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.data import sample_memory
from ..infra.memory import BOOL, F64, SMALL, MemoryEstimate, Term

if TYPE_CHECKING:
    from ..core.setting import Setting

__all__ = ["theorem_3_1_memory", "theorem_3_2_memory"]


def theorem_3_2_memory(D: int, C: int, d: int | None = None, N: int = 20_000) -> MemoryEstimate:
    """:func:`theorydyn.claims.theorem32.check_theorem_3_2`: N samples (two seeds' worth at the
    hand-over between seeds) and a dozen D × D float64 matrices.

    The construction holds B, G, the eigenvectors, P, P⁻¹, W_Q, W_K and the Gram and logits
    matrices (≈ 12 live D × D float64 arrays with LAPACK work space), the boolean masks, and
    the N samples of :func:`sample_memory` plus their float64 projections (N, D) for f.
    """
    d = D if d is None else d
    data = sample_memory(D, C, d, N, 8, "N")
    return MemoryEstimate(
        "Theorem 3.2 check",
        data.terms[:-1]
        + (
            # the check loops over seeds: the previous seed's X is alive while the next one is drawn
            Term(f"the previous seed's X ({N}, {D}, {d}) float64", N * D * d * F64, {"N": N, "D": D, "d": d}),
            Term("D × D float64 matrices of the construction (12)", 12 * D * D * F64, {"D": D}),
            Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * BOOL, {"D": D}),
            Term(f"projections ⟨w*, X_j⟩ and labels ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N": N, "D": D}),
            SMALL,
        ),
    )


def theorem_3_1_memory(s: Setting, N_fit: int = 100_000, N_test: int = 100_000, N_flat: int = 2_000):
    """Peak of :func:`theorydyn.claims.theorems.check_theorem_3_1` without the scan (one seed at a time), as a
    :class:`~theorydyn.infra.memory.MemoryEstimate` (docs/theory.md §4).

    The exact route holds ≈ 5 float64 n × n grids, n = 2(L − 1)C + 1 (G, its rfft2, the power,
    the inverse and its shifted, clipped copies); the fitted GLMs hold z (N, D) int8 of the fit
    and test draws, their float64 copies, u (N, D) float64 and four (N, D) masks of the draw;
    the flattened fit holds X (N_flat, D, d) and a test X (min(N_test, 20000), D, d) float64.
    """

    n = 2 * (s.L - 1) * s.C + 1
    N_big = max(N_fit, N_test)
    flat = sample_memory(s.D, s.C, s.d, N_flat, 8, "N_flat")
    n_test_flat = min(N_test, 20_000)
    return MemoryEstimate(
        "Theorem 3.1 check",
        (
            Term(f"exact law: 5 float64 grids ({n}, {n})", 5 * n * n * 8, {"D": s.D}),
            Term(
                f"z of the fit and test draws ({N_fit}+{N_test}, {s.D}) int8 and float64 copies",
                (N_fit + N_test) * s.D * 9,
                {"D": s.D},
            ),
            Term(f"draw temporaries u, masks ({N_big}, {s.D})", N_big * s.D * (8 + 4), {"D": s.D}),
            Term(
                f"flattened X ({N_flat} + {n_test_flat}, {s.D}, {s.d}) float64",
                (N_flat + n_test_flat) * s.D * s.d * 8,
                {"D": s.D, "d": s.d},
            ),
            *flat.terms[1:],
        ),
    )
