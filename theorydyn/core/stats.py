"""Intervals over seeds: the small statistics every verdict and summary of theorydyn uses."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.stats import t as student_t


def mean_ci(values: Sequence[float] | np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
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
    return dict(
        b=float(r.slope),
        b_low=float(r.slope - half),
        b_high=float(r.slope + half),
        prefactor=float(np.exp(r.intercept)),
        n=int(ok.sum()),
    )


#: Fewest seeds for which the range-respecting intervals below are given: with two seeds the
#: Student t quantile is 12.7 (95%) and the interval says more about the quantile than the data.
MIN_SEEDS_FOR_CI = 3


def _finite_1d(values: ArrayLike, name: str) -> np.ndarray:
    x = np.asarray(values, dtype=float).ravel()
    if x.size == 0:
        raise ValueError(f"{name} needs at least one value")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} got non-finite values: {x.tolist()}")
    return x


def log_mean_ci(values: ArrayLike, level: float = 0.95, min_n: int = MIN_SEEDS_FOR_CI) -> tuple[float, float, float]:
    """Geometric mean and Student-t interval on the log scale, for a positive quantity (a phase time).

    The t-interval of the mean of log x over seeds, exponentiated: an interval for the geometric
    mean exp(E log x) (the median when x is log-normal) that stays inside (0, ∞) and is as
    asymmetric as the spread of the seeds.

    Args:
        values: (n,) one positive measurement per seed; non-finite or ≤ 0 entries are an error.
        level: confidence level.
        min_n: with fewer values the interval is (nan, nan), reported as "too few seeds".

    Returns:
        (geometric mean, low, high).
    """
    x = _finite_1d(values, "log_mean_ci")
    if np.any(x <= 0):
        raise ValueError(f"log_mean_ci needs positive values, got {x.tolist()}")
    lx = np.log(x)
    centre = float(np.exp(lx.mean()))
    if x.size < max(min_n, 2):
        return centre, math.nan, math.nan
    half = float(student_t.ppf(0.5 + level / 2, x.size - 1) * lx.std(ddof=1) / math.sqrt(x.size))
    return centre, float(np.exp(lx.mean() - half)), float(np.exp(lx.mean() + half))


def bounded_mean_ci(
    values: ArrayLike, level: float = 0.95, low: float = 0.0, high: float = 1.0, min_n: int = MIN_SEEDS_FOR_CI
) -> tuple[float, float, float]:
    """Mean and Student-t interval intersected with [low, high], for a bounded quantity (a probability,
    an error rate, a patch association).

    The mean of values in [low, high] lies in [low, high], so intersecting its interval with that
    range keeps the interval's coverage exactly (the true mean is never in the cut-off part) and
    never prints a negative error rate. A logit-scale interval was not chosen: seeds at exactly 0
    or 1 (an association of 1.0, a test error of 0) have no logit, and any clipping constant would
    then set the width.

    Args:
        values: (n,) one measurement per seed in [low, high]; non-finite or out-of-range is an error.
        level: confidence level.
        low, high: the range of the quantity.
        min_n: with fewer values the interval is (nan, nan), reported as "too few seeds".

    Returns:
        (mean, low, high).
    """
    x = _finite_1d(values, "bounded_mean_ci")
    if not low < high:
        raise ValueError(f"bounded_mean_ci needs low < high, got [{low}, {high}]")
    if np.any((x < low) | (x > high)):
        raise ValueError(f"bounded_mean_ci got values outside [{low}, {high}]: {x.tolist()}")
    m = float(x.mean())
    if x.size < max(min_n, 2):
        return m, math.nan, math.nan
    half = float(student_t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return m, max(low, m - half), min(high, m + half)


def format_ci(
    values: ArrayLike, kind: str = "positive", level: float = 0.95, min_n: int = MIN_SEEDS_FOR_CI, digits: int = 4
) -> str:
    """One cell of a summary: ``"centre [low, high]"`` by :func:`log_mean_ci` (``kind="positive"``)
    or :func:`bounded_mean_ci` on [0, 1] (``kind="probability"``); with fewer than ``min_n`` values
    ``"centre (n=2)"``: too few seeds for an interval (the summary's header says so; the seeds' values
    are in the per-point table)."""
    x = _finite_1d(values, "format_ci")
    if kind == "positive":
        c, lo, hi = log_mean_ci(x, level, min_n)
    elif kind == "probability":
        c, lo, hi = bounded_mean_ci(x, level, 0.0, 1.0, min_n)
    else:
        raise ValueError(f"kind must be 'positive' or 'probability', got {kind!r}")
    f = lambda v: f"{v:.{digits}g}"  # noqa: E731
    if math.isnan(lo):
        return f"{f(c)} (n={x.size})"  # short: a summary table fits 100 columns
    return f"{f(c)} [{f(lo)}, {f(hi)}]"
