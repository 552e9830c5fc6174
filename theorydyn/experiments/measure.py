"""Measurements on a trained model or a recorded run, shared by the experiments.

* :func:`fresh_errors` — the errors of (Â, v̂) on fresh samples (the GD rows of Lemma 4.1 and
  Theorem 4.2 measure their error this way; :func:`fresh_errors_of`: several models on one draw);
* :func:`window_summary` — Definition 2.2's association read on a window [T_a, k·T_a] of a recorded
  run (the persistence of Theorem 4.2's "for any T ≥ poly(d)/η", :mod:`theorydyn.claims.persistence`);
  :func:`window_ks` — the windows a run of a given length can read.

Shapes: A: (D, D), v: (d,); a trajectory is a DataFrame with columns ``s`` and ``association``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core import data, model

#: The readings of "any T ≥ poly(d)/η" are windows [T_a, k·T_a], the k's a size of the claim that reads them
#: (:data:`theorydyn.claims.theorem4.SIZES`: k = 1.5 and 3, N*(D)'s windows; a k > 3 only where the run fits).
#: Full mode keeps the k = 10 window only if its run needs at most this many GD steps (a D = 64,
#: N = 16384 step takes about 0.15 s on 2 cores: 6000 steps ≈ 15 min a seed), else k ≤ 3.
MAX_STEPS_LONG = 6000


def fresh_errors(s: Any, A: np.ndarray, v: np.ndarray, N_test: int, seed: int) -> dict[str, float]:
    """The errors of (A, v) against y and f on ``N_test`` fresh samples drawn with ``seed``
    (:func:`fresh_errors_of` of the one model): the GD rows of Lemma 4.1 and Theorem 4.2 measure their
    error this way."""
    return fresh_errors_of(s, [(A, v)], N_test, seed)[0]


def fresh_errors_of(
    s: Any, models: list[tuple[np.ndarray, np.ndarray]], N_test: int, seed: int
) -> list[dict[str, float]]:
    """The errors of each (A, v) of ``models`` against y and f on the same ``N_test`` fresh samples, drawn
    once with ``seed`` (:func:`theorydyn.core.data.errors`; a non-finite logit counts as 0): a run and its
    control are measured on one draw."""
    b = data.sample(s, N_test, seed=seed)
    f = data.labelling(s, b.X)
    out = []
    for A, v in models:
        with np.errstate(over="ignore", invalid="ignore"):
            F = model.forward(s, A, v, b.X)
        out.append(data.errors(np.where(np.isfinite(F), F, 0.0), b.y, f))
    return out


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


def window_ks(T_a: float | None, eta: float, ks: Sequence[float], preset: int) -> tuple[float, ...]:
    """The k's read at this setting: those of ``ks`` whose run ⌈k·T_a/η⌉ (at least ``preset`` steps)
    does not exceed :data:`MAX_STEPS_LONG` (never dropping k ≤ 3); () when T_a is unknown."""
    if T_a is None or not math.isfinite(T_a):
        return ()
    return tuple(k for k in ks if k <= 3 or max(preset, math.ceil(k * T_a / eta)) <= MAX_STEPS_LONG)
