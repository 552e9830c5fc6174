"""Measurements on a trained model or a recorded run, shared by the experiments.

* :func:`fresh_errors` — the errors of (Â, v̂) on fresh samples (the GD rows of Lemma 4.1 and
  Theorem 4.2 measure their error this way);
* :func:`window_summary` — Definition 2.2's association read on a window [T_a, k·T_a] of a recorded
  run (the persistence of Theorem 4.2's "for any T ≥ poly(d)/η", :mod:`theorydyn.claims.persistence`).

Shapes: A: (D, D), v: (d,); a trajectory is a DataFrame with columns ``s`` and ``association``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..core import data, model


def fresh_errors(s: Any, A: np.ndarray, v: np.ndarray, N_test: int, seed: int) -> dict[str, float]:
    """The errors of (A, v) against y and f on ``N_test`` fresh samples drawn with ``seed``
    (:func:`theorydyn.core.data.errors`; a non-finite logit counts as 0): the GD rows of Lemma 4.1 and
    Theorem 4.2 measure their error this way."""
    b = data.sample(s, N_test, seed=seed)
    with np.errstate(over="ignore", invalid="ignore"):
        F = model.forward(s, A, v, b.X)
    return data.errors(np.where(np.isfinite(F), F, 0.0), b.y, data.labelling(s, b.X))


def window_summary(traj: pd.DataFrame, T_a: float, k: float) -> dict[str, float]:
    """Per-run reading of the window [T_a, k·T_a] (time s) on a trajectory with columns s, association.

    Returns dict(first_s, last_s, peak, frac, covered): the first and last recorded s with complete
    association (nan if never), the peak association, the fraction of the window's recorded steps
    with complete association, and the fraction of the window's length the run covers (a run that
    stops early, e.g. diverged, counts its uncovered part as not holding: frac is scaled by it).
    """
    sv = traj["s"].to_numpy(float)
    a = traj["association"].to_numpy(float)
    full = a >= 1.0
    lo, hi = T_a, k * T_a
    inwin = (sv >= lo - 1e-9) & (sv <= hi + 1e-9)
    covered = 0.0 if len(sv) == 0 else float(np.clip((min(sv.max(), hi) - lo) / (hi - lo), 0.0, 1.0))
    frac = float(np.mean(full[inwin])) * covered if inwin.any() else 0.0
    return dict(
        first_s=float(sv[full][0]) if full.any() else math.nan,
        last_s=float(sv[full][-1]) if full.any() else math.nan,
        peak=float(np.nanmax(a)) if len(a) else math.nan,
        frac=frac,
        covered=covered,
    )
