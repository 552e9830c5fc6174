"""Measurements of the simulator's Â and v̂ (docs/theory.md §4): the per-record statistics of a trajectory
(:func:`attention_stats`), the rows' in-set means (:func:`row_in_means`) and how far Â is from Lemma 4.1's
three-value form (:func:`symmetry_breaking`). Re-exported by :mod:`theorydyn.simulate.run`."""

from __future__ import annotations

import numpy as np

from ..core.model import association, association_margin, attention
from ..core.setting import Setting


def row_in_means(s: Setting, A: np.ndarray) -> np.ndarray:
    """(D,) the mean of row i's in-set off-diagonal entries, mean_{j ∈ S(i), j ≠ i} A_ij."""
    A = np.asarray(A, dtype=float)
    return np.where(s.in_set_mask, A, 0.0).sum(axis=1) / (s.C - 1)


def attention_stats(s: Setting, A: np.ndarray, v: np.ndarray) -> dict[str, float]:
    """The per-record measurements of Â and v̂ (see the module docstring).  A: (D, D), v: (d,)."""
    A = np.asarray(A, dtype=float)
    v = np.asarray(v, dtype=float)
    w = s.w_star
    a_in, a_cross = A[s.in_set_mask], A[s.cross_set_mask]
    vw = float(v @ w)
    vn = float(np.linalg.norm(v))
    in_rows = np.where(s.in_set_mask, A, np.nan)
    spread = np.nanmax(in_rows, axis=1) - np.nanmin(in_rows, axis=1)
    rim = row_in_means(s, A)
    S = attention(s, A)
    return {
        "alpha": vw,
        "cos_v": vw / vn if vn > 0 else 0.0,
        "v_norm": vn,
        "gamma": float(a_in.mean()),
        "in_std": float(a_in.std()),
        "rho": float(a_cross.mean()),
        "cross_std": float(a_cross.std()),
        "in_mass": float(np.where(s.same_set, S, 0.0).sum(axis=1).mean()),
        "cross_absmax": float(np.abs(a_cross).max()),
        "row_spread_max": float(spread.max()),
        "row_in_max": float(rim.max()),
        "row_in_median": float(np.median(rim)),
        "association": association(s, A),
        # the order parameter behind it (> 0 iff complete): how far from association, at any N
        "margin_min": float(np.min(association_margin(s, A))),
    }


def symmetry_breaking(s: Setting, A: np.ndarray) -> dict[str, float]:
    """How far Â is from Lemma 4.1's three-value form, row by row inside each set.

    For each set S_ℓ take the C row means m_i = mean_{j∈S_ℓ, j≠i} Â_ij (i ∈ S_ℓ). Returns
        ratio_max_to_median_row: max_i m_i / median_i m_i over all D rows;
        set_top_over_rest_median: median over sets of  max_{i∈S_ℓ} m_i / median of the other C−1;
        frac_sets_top_gt_2x_rest: fraction of sets whose top row exceeds twice every other row;
        top_row_share: mean over sets of max_i m_i / Σ_i m_i (1/C under the symmetric form).
    Ratios are NaN where the denominator is not positive.
    """
    m = row_in_means(s, A)[s.sets]  # (L, C)
    med = float(np.median(m))
    top = m.max(axis=1)
    rest = np.sort(m, axis=1)[:, :-1]
    rest_med = np.median(rest, axis=1)
    with np.errstate(all="ignore"):
        ratios = np.where(rest_med > 0, top / rest_med, np.nan)
        share = np.where(m.sum(axis=1) > 0, top / m.sum(axis=1), np.nan)
    return {
        "ratio_max_to_median_row": float(m.max() / med) if med > 0 else float("nan"),
        "set_top_over_rest_median": float(np.nanmedian(ratios)) if np.isfinite(ratios).any() else float("nan"),
        "frac_sets_top_gt_2x_rest": float(np.mean((top > 2 * rest.max(axis=1)) & (rest.max(axis=1) > 0))),
        "top_row_share": float(np.nanmean(share)) if np.isfinite(share).any() else float("nan"),
    }
