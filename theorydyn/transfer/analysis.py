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

    Columns: D, method, target, N_target (point; NaN unless kind == "value"), lo, hi (the interval
    the censoring allows), kind, ci_low, ci_high, N_min, N_max, seeds, max_acc (best seed-mean)."""
    rng = np.random.default_rng(seed)
    tmap = dict(zip(levels["D"], levels[column], strict=False))
    rows = []
    for (D, method), g in raw.groupby(["D", "method"], sort=True):
        N, M = _curve_matrix(g)
        M = M[~np.isnan(M).any(axis=1)]
        target = tmap[D]
        lo, hi, kind = crossing(N, M.mean(axis=0), target)
        idx = _boot(len(M), B, rng)
        reps = np.array([crossing(N, M[i].mean(axis=0), target)[:2] for i in idx])
        if _reps is not None:
            _reps[(D, method)] = reps
        rows.append(
            dict(
                D=D,
                method=method,
                target=target,
                N_target=lo if kind == "value" else np.nan,
                lo=lo,
                hi=hi,
                kind=kind,
                ci_low=float(np.quantile(reps[:, 0], 0.025, method="lower")),
                ci_high=float(np.quantile(reps[:, 1], 0.975, method="higher")),
                N_min=N[0],
                N_max=N[-1],
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


def growth_fits(tgt: pd.DataFrame, reps: dict | None = None, reference: str = "pretrained") -> pd.DataFrame:
    """Fits of log Ñ_target against log D and against log log D per method (D's with a result).

    slope_low/slope_high: the slopes allowed by the censoring at the point estimate (equal when no
    D is censored); ci_low/ci_high: 95% bootstrap interval over seeds (from ``reps``, the replicate
    intervals of :func:`target_table`), the censoring bounds applied per replicate. ``censored``
    counts the censored D's. rms: residual of the point fit (uncensored only).

    The separation from ``reference`` (Theorem 5.2 against 5.1), on the D's both ran:
    diff_low/diff_high, the range of slope(method) − slope(reference) the censoring allows at the
    point estimates, and diff_ci_low/diff_ci_high, its 95% bootstrap interval (replicate b of each
    method's independent bootstrap paired by index; the lower end takes the method's smallest and
    the reference's largest slope the censoring allows, the upper end the reverse). NaN for the
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
            ci = (np.nan, np.nan)
            if reps is not None and all((d, method) in reps for d in g["D"]):
                R = [np.log(reps[(d, method)]) for d in g["D"]]  # each (B, 2)
                B = min(len(r) for r in R)
                sb = np.array(
                    [slope_bounds(x, np.array([r[b, 0] for r in R]), np.array([r[b, 1] for r in R])) for b in range(B)]
                )
                ci = (
                    float(np.quantile(sb[:, 0], 0.025, method="lower")),
                    float(np.quantile(sb[:, 1], 0.975, method="higher")),
                )
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
                    censored=int((g["kind"] != "value").sum()),
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

    def bounds(g):
        g = g.set_index("D").loc[Ds]
        return slope_bounds(x, np.log(g["lo"].to_numpy(float)), np.log(g["hi"].to_numpy(float)))

    (a0, a1), (b0, b1) = bounds(a), bounds(b)
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
    return float(low), float(high), ci[0], ci[1]


#: The methods judged also at the theorems' own targets (o(1) error): the pre-trained Â (Theorem 5.1)
#: and the learners without patch-association knowledge that can reach it (Theorem 5.2): model (T)
#: trained from scratch and the kernel learner.
THEOREM_LEVEL = ("pretrained", "pretrained-sim", "scratch", "kernel")
#: The levels beside "common": name → the column of ``levels`` holding its target per D. "theorem":
#: a*(D) − ε; "epsilon": test error ≤ ε, accuracy 1 − ε (``TransferOptions.err_eps``).
EXTRA_LEVELS = (("theorem", "target_theorem"), ("epsilon", "target_eps"))


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
    and 5.2 speak of, which the other baselines cannot reach at any Ñ. The figure shows the common
    level."""
    summary = summarize(raw)
    reps: dict = {}
    tgt = target_table(raw, levels, B=B, _reps=reps).assign(level="common")
    slopes = growth_fits(tgt, reps).assign(level="common")
    pre = raw[raw["method"].isin(THEOREM_LEVEL)]
    for level, column in EXTRA_LEVELS:
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
