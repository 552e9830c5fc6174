"""Analysis of the transfer rows: seed means with t-intervals, the crossing Ñ_target with bootstrap
intervals and censoring, and growth fits of log Ñ_target against log D and log log D."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from ..infra.atomic import write_text
from ..infra.provenance import attach_to_frame
from .plot import plot_curves, plot_samples_to_target, save_figure


def write_table(df: pd.DataFrame, path: str | Path) -> Path:
    """``df`` with its provenance columns (:mod:`theorydyn.infra.provenance`), written atomically as CSV."""
    write_text(path, attach_to_frame(df).to_csv(index=False))
    return Path(path)


# ---- analysis: crossings, bounds, slopes ---------------------------------------------------------------
def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std, count and 95% t-interval over seeds of acc_f and acc_y per (D, method, Ñ)."""
    g = df.groupby(["D", "method", "N_tilde"], sort=True)
    out = g[["acc_f", "acc_y"]].agg(["mean", "std", "count"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out = out.reset_index()
    for c in ("acc_f", "acc_y"):
        n = out[f"{c}_count"].to_numpy(float)
        half = np.where(
            n > 1, student_t.ppf(0.975, np.maximum(n - 1, 1)) * out[f"{c}_std"].fillna(0) / np.sqrt(n), np.nan
        )
        out[f"{c}_ci_low"], out[f"{c}_ci_high"] = out[f"{c}_mean"] - half, out[f"{c}_mean"] + half
    return out


def crossing(N: np.ndarray, acc: np.ndarray, target: float) -> tuple[float, float, str]:
    """Where the curve acc(Ñ) first reaches ``target``, as an interval (lo, hi) of Ñ and a kind:

    * ``"value"``: crossed between two grid points, interpolated linearly in log Ñ (lo = hi), or
      reached at Ñ = 1 (no fewer samples exist);
    * ``"upper"``: reached already at the smallest Ñ > 1: the need is in [1, Ñ_min];
    * ``"lower"``: never reached: the need exceeds the largest Ñ tried, (Ñ_max, ∞).
    N: increasing grid, acc: same length."""
    N, acc = np.asarray(N, float), np.asarray(acc, float)
    if len(N) == 0 or len(N) != len(acc) or np.any(np.diff(N) <= 0) or N[0] < 1:
        raise ValueError("N must be a non-empty increasing grid of values >= 1 matching acc")
    hit = np.flatnonzero(acc >= target)
    if len(hit) == 0:
        return float(N[-1]), math.inf, "lower"
    k = hit[0]
    if k == 0:
        return (1.0, 1.0, "value") if N[0] == 1 else (1.0, float(N[0]), "upper")
    x0, x1 = np.log(N[k - 1]), np.log(N[k])
    v = float(np.exp(x0 + (target - acc[k - 1]) / (acc[k] - acc[k - 1]) * (x1 - x0)))
    return v, v, "value"


def _curve_matrix(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(N grid, acc matrix (n_seeds, n_N)) of one (D, method), seeds present at every Ñ only."""
    piv = g.pivot_table(index="seed", columns="N_tilde", values="acc_f").sort_index(axis=1)
    return piv.columns.to_numpy(float), piv.to_numpy(float)


def _boot(n_seeds: int, B: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, n_seeds, size=(B, n_seeds))


def floor_of(N: np.ndarray) -> float | None:
    """The procedure's floor on the grid ``N``: its second point (2 on every grid of the experiment) when
    the grid starts at Ñ = 1, else None. A crossing at or below it says "one or two samples": the grid
    has no point between 1 and 2, so where in [1, 2] the seed-mean curve crosses measures how often a
    single sample misleads (a seed at Ñ = 1 with accuracy near 0), not how the need grows with D.

    Example:
        >>> floor_of(np.array([1, 2, 3, 4, 6])), floor_of(np.array([4, 8]))
        (2.0, None)
    """
    N = np.asarray(N, float)
    return float(N[1]) if len(N) > 1 and N[0] == 1 else None


def target_table(
    raw: pd.DataFrame,
    levels: pd.DataFrame,
    B: int = 2000,
    seed: int = 0,
    _reps: dict | None = None,
    column: str = "target",
) -> pd.DataFrame:
    """Ñ_target per (D, method) from the seed-mean curve (:func:`crossing`), with a 95% bootstrap
    interval over seeds (percentile; a replicate that is censored widens the interval to its
    bound, so an interval end can be 1 or ∞). ``levels[column]`` gives the target per D.

    A crossing at or below the grid's floor (:func:`floor_of`: reached by Ñ = 2) is the bracket
    [1, floor], kind ``"floor"`` (its interpolated value kept in ``N_target``), and so is every bootstrap
    replicate that crosses there: a slope through it is bounded by the bracket (:func:`slope_bounds`),
    never read off the interpolation.

    Columns: D, method, target, N_target (point; the interpolated crossing for kinds "value" and
    "floor", else NaN), lo, hi (the interval the censoring allows), kind ("value", "floor", "upper",
    "lower"), ci_low, ci_high, N_min, N_max, floor (the grid's floor, NaN when it does not start at 1),
    seeds, max_acc (best seed-mean)."""
    rng = np.random.default_rng(seed)
    tmap = dict(zip(levels["D"], levels[column], strict=False))
    rows = []
    for (D, method), g in raw.groupby(["D", "method"], sort=True):
        N, M = _curve_matrix(g)
        M = M[~np.isnan(M).any(axis=1)]
        target = tmap[D]
        floor = floor_of(N)
        lo, hi, kind = crossing(N, M.mean(axis=0), target)
        point = lo if kind == "value" else np.nan
        if floor is not None and math.isfinite(hi) and hi <= floor:
            lo, hi, kind = 1.0, floor, "floor"
        idx = _boot(len(M), B, rng)
        reps = np.array([crossing(N, M[i].mean(axis=0), target)[:2] for i in idx])
        if floor is not None:
            fl = np.isfinite(reps[:, 1]) & (reps[:, 1] <= floor)
            reps[fl] = (1.0, floor)
        if _reps is not None:
            _reps[(D, method)] = reps
        rows.append(
            dict(
                D=D,
                method=method,
                target=target,
                N_target=point,
                lo=lo,
                hi=hi,
                kind=kind,
                ci_low=float(np.quantile(reps[:, 0], 0.025, method="lower")),
                ci_high=float(np.quantile(reps[:, 1], 0.975, method="higher")),
                N_min=N[0],
                N_max=N[-1],
                floor=np.nan if floor is None else floor,
                seeds=len(M),
                max_acc=float(M.mean(axis=0).max()),
            )
        )
    return pd.DataFrame(rows)


def slope_bounds(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """The range of least-squares slopes of y on x over all y with lo ≤ y ≤ hi (in log space; ±inf
    allowed). The slope Σ w_i y_i, w_i = (x_i − x̄)/Σ(x − x̄)², is linear in y, so its extremes sit
    at the corners: min takes lo where w > 0 and hi where w < 0, max the reverse."""
    x, lo, hi = (np.asarray(a, float) for a in (x, lo, hi))
    w = (x - x.mean()) / np.sum((x - x.mean()) ** 2)

    def dot(wv, yv):
        with np.errstate(invalid="ignore"):
            terms = np.where(wv == 0, 0.0, wv * yv)
        return (
            float(np.sum(terms))
            if np.all(np.isfinite(terms))
            else (
                -math.inf
                if np.any(terms == -math.inf) and not np.any(terms == math.inf)
                else math.inf
                if np.any(terms == math.inf) and not np.any(terms == -math.inf)
                else math.nan
            )
        )

    smin = dot(w, np.where(w > 0, lo, hi))
    smax = dot(w, np.where(w > 0, hi, lo))
    return smin, smax


def box_regression_interval(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The "sizes" reading of a slope over a censoring box: the Student-t interval of the least-squares slope
    of y on x, whose variance is the residual scatter of the sizes around the line (the ``sizes`` interval of
    :func:`theorydyn.core.stats.trend_slope_ci`, n − 2 degrees of freedom, the two tested equal), stretched
    over every y with lo ≤ y ≤ hi.

    With b(y) the slope and h(y) = t·sqrt(RSS(y) / ((n − 2) Σ(x − x̄)²)) its half-width, b is linear in y and
    sqrt(RSS(y)) = ‖(I − H) y‖ is a norm of a linear map of y, hence convex: b − h is concave and b + h convex,
    so min (b − h) and max (b + h) over the box sit at its vertices, which are enumerated (2^m for m sizes with
    lo < hi: a bracket, a floor, a censored need). An unbounded side (a need censored above the cap, y ≤ ∞)
    enters at its finite end: the open side of the slope is already carried by the box's own extremes
    (:func:`slope_bounds`: ∞ there), and a need pushed without end would only make the line meaningless.
    A size unbounded on both sides, or two sizes (no degree of freedom), gives (−∞, ∞).

    Args:
        x: (n,) the regressor (log D or log log D), distinct; lo, hi: (n,) the box on y (log Ñ), ±inf allowed.

    Returns:
        (low, high) of the interval.

    Example:
        >>> lo = np.log([2.0, 3.0, 4.0, 5.0]); x = np.log([32.0, 64, 128, 256])
        >>> a, b = box_regression_interval(x, lo, lo)  # no censoring: the regression interval itself
        >>> bool(a < np.polyfit(x, lo, 1)[0] < b)
        True
    """
    x, lo, hi = (np.asarray(a, float) for a in (x, lo, hi))
    if len(x) < 3 or np.any(~np.isfinite(lo) & ~np.isfinite(hi)):
        return -math.inf, math.inf
    lo2, hi2 = np.where(np.isfinite(lo), lo, hi), np.where(np.isfinite(hi), hi, lo)
    free = np.flatnonzero(hi2 > lo2)
    n = len(x)
    xc = x - x.mean()
    sxx = float(xc @ xc)
    t = float(student_t.ppf(0.5 + level / 2, n - 2))
    lows, highs = [], []
    for bits in range(1 << len(free)):
        y = lo2.copy()
        for j, i in enumerate(free):
            if bits >> j & 1:
                y[i] = hi2[i]
        b = float(xc @ y) / sxx
        resid = y - y.mean() - b * xc
        half = t * math.sqrt(float(resid @ resid) / ((n - 2) * sxx))
        lows.append(b - half)
        highs.append(b + half)
    return float(min(lows)), float(max(highs))


def _widest(seeds: tuple[float, float], sizes: tuple[float, float]) -> tuple[float, float]:
    """The wider end of each side of two intervals (a NaN end, a reading not made, is ignored)."""
    return float(np.fmin(seeds[0], sizes[0])), float(np.fmax(seeds[1], sizes[1]))


def growth_fits(tgt: pd.DataFrame, reps: dict | None = None, reference: str = "pretrained") -> pd.DataFrame:
    """Fits of log Ñ_target against log D and against log log D per method (D's with a result).

    slope_low/slope_high: the slopes allowed by the censoring at the point estimate (equal when no
    D is censored or at the floor). The 95% interval carries both sources of scatter, the wider end of each
    side winning (the two-level reading of :func:`theorydyn.core.stats.trend_slope_ci`):

    * seeds_ci_low/seeds_ci_high: the bootstrap over seeds (from ``reps``, the replicate intervals of
      :func:`target_table`, each size resampled on its own), the censoring bounds applied per replicate
      (:func:`slope_bounds`) and the 2.5% of the lower ends / 97.5% of the upper ends taken;
    * sizes_ci_low/sizes_ci_high: the regression interval of the sizes around the fit, stretched over the
      censoring box (:func:`box_regression_interval`);
    * ci_low/ci_high: the wider of the two. A censored need stays a bound: an open side of the box makes that
      side of the slope infinite in the box extremes and in every replicate, whatever the regression says.

    ``censored`` counts the D's whose need is a bracket (kinds "floor", "upper", "lower"), ``at_floor`` those
    at the grid's floor. rms: residual of the point fit (no bracket only).

    The separation from ``reference`` (Theorem 5.2 against 5.1), on the D's both ran:
    diff_low/diff_high, the range of slope(method) − slope(reference) the censoring allows at the
    point estimates, and diff_ci_low/diff_ci_high, its 95% interval, the wider of the seeds' (replicate b of
    each method's independent bootstrap paired by index; the lower end takes the method's smallest and
    the reference's largest slope the censoring allows, the upper end the reverse) and the sizes' (the
    regression interval of log(Ñ_method / Ñ_reference) over the box of the ratio). NaN for the
    reference itself and where fewer than two D's are shared."""
    rows = []
    for method, g in tgt.groupby("method", sort=True):
        g = g.sort_values("D")
        if g["D"].nunique() < 2:
            continue
        D = g["D"].to_numpy(float)
        lo, hi = np.log(g["lo"].to_numpy(float)), np.log(g["hi"].to_numpy(float))
        for xname, x in (("log D", np.log(D)), ("log log D", np.log(np.log(D)))):
            smin, smax = slope_bounds(x, lo, hi)
            seeds = (np.nan, np.nan)
            if reps is not None and all((d, method) in reps for d in g["D"]):
                R = [np.log(reps[(d, method)]) for d in g["D"]]  # each (B, 2)
                B = min(len(r) for r in R)
                sb = np.array(
                    [slope_bounds(x, np.array([r[b, 0] for r in R]), np.array([r[b, 1] for r in R])) for b in range(B)]
                )
                seeds = (
                    float(np.quantile(sb[:, 0], 0.025, method="lower")),
                    float(np.quantile(sb[:, 1], 0.975, method="higher")),
                )
            sizes = box_regression_interval(x, lo, hi)
            ci = _widest(seeds, sizes)
            rms = np.nan
            if np.all(lo == hi):
                c = np.polyfit(x, lo, 1)
                rms = float(np.sqrt(np.mean((np.polyval(c, x) - lo) ** 2)))
            rows.append(
                dict(
                    method=method,
                    x=xname,
                    slope_low=smin,
                    slope_high=smax,
                    ci_low=ci[0],
                    ci_high=ci[1],
                    seeds_ci_low=seeds[0],
                    seeds_ci_high=seeds[1],
                    sizes_ci_low=sizes[0],
                    sizes_ci_high=sizes[1],
                    censored=int((g["kind"] != "value").sum()),
                    at_floor=int((g["kind"] == "floor").sum()),
                    n_D=len(g),
                    D_min=int(D.min()),
                    D_max=int(D.max()),
                    rms=rms,
                )
            )
    out = pd.DataFrame(rows)
    for col in ("diff_low", "diff_high", "diff_ci_low", "diff_ci_high"):
        out[col] = np.nan
    for i, r in out.iterrows():
        if r["method"] == reference:
            continue
        d = _slope_difference(tgt, reps, str(r["method"]), reference, str(r["x"]))
        if d is not None:
            out.loc[i, ["diff_low", "diff_high", "diff_ci_low", "diff_ci_high"]] = d
    return out


def _slope_difference(
    tgt: pd.DataFrame, reps: dict | None, method: str, reference: str, xname: str
) -> tuple[float, float, float, float] | None:
    """(low, high, ci_low, ci_high) of slope(method) − slope(reference) on the D's both ran
    (:func:`growth_fits`), or None when they share fewer than two D's."""
    a, b = tgt[tgt["method"] == method], tgt[tgt["method"] == reference]
    Ds = sorted(set(a["D"]) & set(b["D"]))
    if len(Ds) < 2:
        return None
    D = np.asarray(Ds, float)
    x = np.log(D) if xname == "log D" else np.log(np.log(D))

    def box(g):
        g = g.set_index("D").loc[Ds]
        return np.log(g["lo"].to_numpy(float)), np.log(g["hi"].to_numpy(float))

    (alo, ahi), (blo, bhi) = box(a), box(b)
    (a0, a1), (b0, b1) = slope_bounds(x, alo, ahi), slope_bounds(x, blo, bhi)
    with np.errstate(invalid="ignore"):
        low, high = a0 - b1, a1 - b0
    low, high = (-math.inf if np.isnan(low) else low), (math.inf if np.isnan(high) else high)
    ci = (math.nan, math.nan)
    if reps is not None and all((d, m) in reps for d in Ds for m in (method, reference)):
        Bn = min(len(reps[(d, m)]) for d in Ds for m in (method, reference))

        def rep_bounds(m):
            R = [np.log(reps[(d, m)][:Bn]) for d in Ds]
            lo = np.array([r[:, 0] for r in R])  # (n_D, Bn)
            hi = np.array([r[:, 1] for r in R])
            return np.array([slope_bounds(x, lo[:, k], hi[:, k]) for k in range(Bn)])

        ra, rb = rep_bounds(method), rep_bounds(reference)
        with np.errstate(invalid="ignore"):
            # ∞ − ∞ (both censored the same way) allows any difference
            dl = np.nan_to_num(ra[:, 0] - rb[:, 1], nan=-math.inf, posinf=math.inf, neginf=-math.inf)
            dh = np.nan_to_num(ra[:, 1] - rb[:, 0], nan=math.inf, posinf=math.inf, neginf=-math.inf)
        ci = (float(np.quantile(dl, 0.025, method="lower")), float(np.quantile(dh, 0.975, method="higher")))
    with np.errstate(invalid="ignore"):  # the box of log(Ñ_method / Ñ_reference): ∞ − ∞ is unbounded
        dlo = np.nan_to_num(alo - bhi, nan=-math.inf, posinf=math.inf, neginf=-math.inf)
        dhi = np.nan_to_num(ahi - blo, nan=math.inf, posinf=math.inf, neginf=-math.inf)
    ci = _widest(ci, box_regression_interval(x, dlo, dhi))
    return float(low), float(high), ci[0], ci[1]


#: The methods judged also at the theorems' own targets (o(1) error): the pre-trained Â (Theorem 5.1)
#: and the learners without patch-association knowledge that can reach it (Theorem 5.2): model (T)
#: trained from scratch and the kernel learner.
THEOREM_LEVEL = ("pretrained", "pretrained-sim", "scratch", "kernel")
#: The pre-trained attentions, judged also at the vanishing level (Theorem 5.1's verdict).
PRETRAINED = ("pretrained", "pretrained-sim")
#: The levels beside "common": (name, the column of ``levels`` holding its target per D, the methods measured
#: there). "theorem": a*(D) − ε; "epsilon": test error ≤ ε, accuracy 1 − ε (``TransferConfig.err_eps``);
#: "vanishing": a*(D) − 1/D (:func:`theorydyn.transfer.experiment.vanishing_eps`), Theorem 5.1's o(1) error
#: read as 1/D, for the pre-trained attentions only.
EXTRA_LEVELS = (
    ("theorem", "target_theorem", THEOREM_LEVEL),
    ("epsilon", "target_eps", THEOREM_LEVEL),
    ("vanishing", "target_vanish", PRETRAINED),
)


def stop_target(method: str, level_row: dict) -> float:
    """The highest target ``method`` is judged at, from one row of the levels table (``levels`` at one D): the
    grid of Ñ goes on until the seed mean reaches it (:func:`theorydyn.transfer.experiment.run`).

    Example:
        >>> stop_target("pretrained", dict(target=0.75, target_theorem=0.95, target_eps=0.95, target_vanish=0.98))
        0.98
        >>> stop_target("logreg", dict(target=0.75, target_theorem=0.95))
        0.75
    """
    ts = [level_row["target"]] + [
        level_row[col] for _, col, methods in EXTRA_LEVELS if method in methods and col in level_row
    ]
    return float(max(ts))


def report(
    raw: pd.DataFrame, levels: pd.DataFrame, out: str | Path | None = None, B: int = 2000, plot_format: str = "png"
):
    """Summary, Ñ_target table and growth fits from the per-seed table; with ``out`` writes
    ``transfer_raw.csv``, ``transfer_summary.csv``, ``transfer_target.csv``, ``transfer_slopes.csv``,
    ``transfer_curves.png``, ``transfer_target.png`` (in ``plot_format``: png, pdf or svg).

    Two target levels (column ``level`` of the Ñ_target and slope tables): ``"common"``, every method
    at ``levels["target"]`` (the one target of the comparison, docs/theory.md §5), and, where
    ``levels`` has ``target_theorem`` (a*(D) − ε), ``"theorem"``, and where it has ``target_eps``
    (1 − ε), ``"epsilon"``, both for :data:`THEOREM_LEVEL` only: the near-zero error Theorems 5.1
    and 5.2 speak of, which the other baselines cannot reach at any Ñ; where it has ``target_vanish``
    (a*(D) − 1/D), ``"vanishing"``, for :data:`PRETRAINED` only (Theorem 5.1's verdict). The figure shows
    the common level."""
    summary = summarize(raw)
    reps: dict = {}
    tgt = target_table(raw, levels, B=B, _reps=reps).assign(level="common")
    slopes = growth_fits(tgt, reps).assign(level="common")
    for level, column, methods in EXTRA_LEVELS:
        pre = raw[raw["method"].isin(methods)]
        if column not in levels or not len(pre):
            continue
        reps_t: dict = {}
        tgt_t = target_table(pre, levels, B=B, _reps=reps_t, column=column).assign(level=level)
        tgt = pd.concat([tgt, tgt_t], ignore_index=True)
        slopes = pd.concat([slopes, growth_fits(tgt_t, reps_t).assign(level=level)], ignore_index=True)
    common_t, common_s = tgt[tgt["level"] == "common"], slopes[slopes["level"] == "common"] if len(slopes) else slopes
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, df in (("raw", raw), ("summary", summary), ("target", tgt), ("slopes", slopes)):
            write_table(df, out / f"transfer_{name}.csv")
        save_figure(
            lambda ax: plot_curves(summary, levels, ax),
            out / "transfer_curves.png",
            panels=summary["D"].nunique(),
            format=plot_format,
        )
        save_figure(
            lambda ax: plot_samples_to_target(common_t, ax[0], common_s),
            out / "transfer_target.png",
            panels=1,
            format=plot_format,
        )
    return summary, tgt, slopes


def console_tables(levels: pd.DataFrame, tgt: pd.DataFrame, slopes: pd.DataFrame) -> str:
    """The run's tables as text: the per-D targets (``transfer_levels.csv``), the Ñ_target table (a value
    with its interval, or the bound of a censored one) and the growth fits against D."""
    from .plot import describe_slope

    lines = []
    with pd.option_context("display.width", 200, "display.max_rows", 400):
        lines.append(levels.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
        show = tgt.assign(
            N_target=[
                f"{r.lo:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]"
                if r.kind == "value"
                else (f"> {r.lo:g}" if r.kind == "lower" else f"<= {r.hi:g}")
                for r in tgt.itertuples()
            ]
        )
        lines.append(
            show[["D", "method", "level", "target", "N_target", "kind", "N_max", "max_acc"]].to_string(index=False)
        )
        if len(slopes):
            lines.append(
                slopes.assign(slope=[describe_slope(r) for _, r in slopes.iterrows()])[
                    ["method", "level", "x", "slope", "censored", "n_D", "rms"]
                ].to_string(index=False)
            )
        else:  # one D (--Ds 16): the table had no columns and printing it raised a KeyError traceback
            lines.append("no slope against D: it needs two or more values of --Ds")
    return "\n".join(lines)
