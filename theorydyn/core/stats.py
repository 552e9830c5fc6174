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


def trend_slope_ci(
    x: Sequence[float],
    values: Sequence[Sequence[float]],
    *,
    log_y: bool = True,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict:
    """The slope b of y ≈ a + b·log x (or log y ≈ a + b·log x with ``log_y``) across sizes x, with an
    interval that carries both sources of scatter: the seeds within a size and the sizes around the fit.

    The point estimate is the least-squares slope of the per-size means (of log y with ``log_y``: the
    geometric mean over seeds) on log x. Two intervals, the wider end of each side winning:

    * **seeds**: a bootstrap over seeds within each size (each size resampled on its own, the fit redone on
      the resampled means), its ``level`` percentiles;
    * **sizes**: the Student-t interval of the regression of the per-size means on log x, whose variance is
      the residual scatter of the sizes around the line (n_sizes − 2 degrees of freedom); with two sizes
      it has no degree of freedom and is (−∞, ∞): two sizes cannot separate a trend from the scatter.

    Args:
        x: (n_sizes,) positive sizes (D), distinct.
        values: n_sizes sequences, the seeds' values at each size (their count may differ by size);
            positive when ``log_y``.
        log_y: fit log y (an exponent, y ∝ x^b) rather than y (a change per e-fold of x).
        level: the interval's level; n_boot, seed: the bootstrap's resamples and its generator's seed.

    Returns:
        dict(b, b_low, b_high, seeds=(lo, hi), sizes=(lo, hi), n_sizes, means): ``means`` the per-size
        centres the line was fitted to.

    Example:
        >>> r = trend_slope_ci([32, 64, 128], [[1.0, 1.1], [2.0, 2.1], [4.0, 4.3]])
        >>> round(r["b"], 2), r["b_low"] < r["b"] < r["b_high"]
        (0.99, True)
    """
    xs = np.asarray(x, float)
    if xs.ndim != 1 or len(xs) != len(values) or len(xs) < 2:
        raise ValueError(f"trend_slope_ci needs >= 2 sizes and one list of values per size, got {len(xs)} sizes")
    if not np.all(np.isfinite(xs) & (xs > 0)) or len(np.unique(xs)) != len(xs):
        raise ValueError(f"sizes must be distinct, finite and > 0, got {xs.tolist()}")
    vals = [_finite_1d(v, "trend_slope_ci") for v in values]
    if log_y:
        if any(np.any(v <= 0) for v in vals):
            raise ValueError("log_y needs positive values")
        vals = [np.log(v) for v in vals]
    lx = np.log(xs)

    def slope(means: np.ndarray) -> float:
        return float(np.polyfit(lx, means, 1)[0])

    means = np.array([v.mean() for v in vals])
    b = slope(means)
    rng = np.random.default_rng(seed)
    boots = np.array(
        [slope(np.array([v[rng.integers(0, v.size, v.size)].mean() for v in vals])) for _ in range(n_boot)]
    )
    a = (1 - level) / 2
    s_lo, s_hi = float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a))
    n = len(xs)
    if n > 2:
        r = stats.linregress(lx, means)
        half = float(student_t.ppf(0.5 + level / 2, n - 2) * r.stderr)
        z_lo, z_hi = b - half, b + half
    else:
        z_lo, z_hi = -math.inf, math.inf
    return dict(
        b=b,
        b_low=min(s_lo, z_lo),
        b_high=max(s_hi, z_hi),
        seeds=(s_lo, s_hi),
        sizes=(z_lo, z_hi),
        n_sizes=n,
        means=np.exp(means) if log_y else means,
    )


def bracket_power_law(x: Sequence[float], low: Sequence[float], high: Sequence[float]) -> dict:
    """Interval regression of a power law y = c·x^b on brackets: which exponents b admit a line
    log y = a + b·log x that passes through every bracket [low_i, high_i] (an end may be 0 or ∞: a
    one-sided bracket, e.g. a value censored above a grid is [N_max, ∞)).

    The feasible (a, b) form a convex polygon; its extent in b is two linear programs
    (:func:`scipy.optimize.linprog`). When no line passes through every bracket, the brackets of each pair
    of consecutive sizes still bound that pair's local exponent, b_i ∈ [(log low_{i+1} − log high_i)/Δ_i,
    (log high_{i+1} − log low_i)/Δ_i] with Δ_i = log x_{i+1} − log x_i; the trend is *accelerating* when
    some later pair's least exponent exceeds an earlier pair's largest (the local exponent grows, beyond
    what the brackets allow: faster than every power law over these sizes) and *decelerating* in the
    mirror case.

    Args:
        x: (n,) distinct positive sizes, increasing.
        low, high: (n,) the brackets, 0 ≤ low ≤ high ≤ ∞ (0 and ∞: no bound on that side).

    Returns:
        dict(feasible, b_min, b_max, shape, local): ``b_min``/``b_max`` the range of feasible exponents (nan
        when infeasible; ±inf when a side is unbounded), ``shape`` one of "power law", "accelerating",
        "decelerating", "irregular", and ``local`` the (lo, hi) local-exponent ranges of consecutive pairs.

    Example:
        >>> r = bracket_power_law([32, 48, 64], [2048, 4096, 8192], [4096, 8192, 16384])
        >>> r["feasible"], r["shape"]
        (True, 'power law')
        >>> bracket_power_law([32, 48, 64], [2048, 4096, 8192 * 16], [4096, 8192, 16384 * 16])["shape"]
        'accelerating'
    """
    from scipy.optimize import linprog

    xs = np.asarray(x, float)
    lo, hi = np.asarray(low, float), np.asarray(high, float)
    if not (xs.ndim == 1 and len(xs) == len(lo) == len(hi) and len(xs) >= 2):
        raise ValueError("bracket_power_law needs >= 2 sizes with one bracket each")
    if not np.all(np.diff(xs) > 0) or xs[0] <= 0:
        raise ValueError(f"sizes must be positive and increasing, got {xs.tolist()}")
    if np.any(np.isnan(lo) | np.isnan(hi)) or np.any(lo < 0) or np.any(lo > hi):
        raise ValueError(f"brackets need 0 <= low <= high, got {list(zip(lo.tolist(), hi.tolist(), strict=True))}")
    lx = np.log(xs)
    with np.errstate(divide="ignore"):
        llo, lhi = np.log(lo), np.log(hi)
    # constraints on (a, b): a + b lx_i >= llo_i  and  a + b lx_i <= lhi_i (finite ends only)
    A_ub, b_ub = [], []
    for i in range(len(xs)):
        if np.isfinite(llo[i]):
            A_ub.append([-1.0, -lx[i]])
            b_ub.append(-llo[i])
        if np.isfinite(lhi[i]):
            A_ub.append([1.0, lx[i]])
            b_ub.append(lhi[i])
    bounds = [(None, None), (None, None)]
    ext = []
    feasible = True
    for sign in (1.0, -1.0):
        if not A_ub:
            ext.append(-sign * math.inf)
            continue
        r = linprog([0.0, sign], A_ub=np.array(A_ub), b_ub=np.array(b_ub), bounds=bounds, method="highs")
        if r.status == 2:  # infeasible
            feasible = False
            break
        ext.append(-sign * math.inf if r.status == 3 else sign * float(r.fun))
    local = []
    for i in range(len(xs) - 1):
        d = lx[i + 1] - lx[i]
        local.append(((llo[i + 1] - lhi[i]) / d, (lhi[i + 1] - llo[i]) / d))
    if feasible:
        return dict(feasible=True, b_min=ext[0], b_max=ext[1], shape="power law", local=local)
    acc = any(local[j][0] > local[i][1] for i in range(len(local)) for j in range(i + 1, len(local)))
    dec = any(local[j][1] < local[i][0] for i in range(len(local)) for j in range(i + 1, len(local)))
    shape = "accelerating" if acc and not dec else "decelerating" if dec and not acc else "irregular"
    return dict(feasible=False, b_min=math.nan, b_max=math.nan, shape=shape, local=local)
