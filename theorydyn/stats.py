"""Intervals over seeds: the small statistics every verdict and summary of theorydyn uses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from scipy import stats
from scipy.stats import t as student_t


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """Mean and two-sided Student-t confidence interval of the mean over independent seeds.

    Args:
        values: (n,) one measurement per seed; non-finite entries are an error, not dropped.
        level: confidence level.

    Returns:
        (mean, low, high). With one value the interval is (nan, nan): a single seed carries no
        uncertainty estimate, and the ledger shows that rather than a zero-width interval.
    """
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("mean_ci needs at least one value")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"mean_ci got non-finite values: {x.tolist()}")
    m = float(x.mean())
    if x.size == 1:
        return m, math.nan, math.nan
    half = float(student_t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, m - half, m + half


def fit_power_law_ci(x: Iterable[float], y: Iterable[float], level: float = 0.95) -> dict | None:
    """Least squares of log y = a + b log x over all points (e.g. every seed), with the Student-t
    interval of the slope. Returns dict(b, b_low, b_high, prefactor, n) or None with < 3 points."""
    x, y = np.asarray(list(x), float), np.asarray(list(y), float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if ok.sum() < 3 or len(np.unique(x[ok])) < 2:
        return None
    r = stats.linregress(np.log(x[ok]), np.log(y[ok]))
    half = stats.t.ppf(0.5 + level / 2, ok.sum() - 2) * r.stderr
    return dict(b=float(r.slope), b_low=float(r.slope - half), b_high=float(r.slope + half),
                prefactor=float(np.exp(r.intercept)), n=int(ok.sum()))
