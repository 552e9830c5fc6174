"""Pictures of the transfer experiment; they draw into given axes (no pyplot state, no backend choice)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import matplotlib.ticker as mticker
import numpy as np
import pandas as pd

from ..core.plotting import CENSORED_MARKER, GREY, PALETTE, STYLE, censored_handle, legend_outside, save, styled
from .task import METHODS


# ---- pictures (draw into given axes; the caller picks the backend) -----------------------------------
def describe_slope(r) -> str:
    """'0.12 [−0.05, 0.30]', '≥ 0.8 [CI ≥ 0.5]' … from a :func:`growth_fits` row."""
    lo, hi = r["slope_low"], r["slope_high"]
    if lo == hi:
        est = f"{lo:.3g}"
    elif np.isinf(hi) and np.isfinite(lo):
        est = f"≥ {lo:.3g}"
    elif np.isinf(lo) and np.isfinite(hi):
        est = f"≤ {hi:.3g}"
    elif np.isfinite(lo) and np.isfinite(hi):
        est = f"in [{lo:.3g}, {hi:.3g}]"
    else:
        return "not estimable (censored at every D)"
    ci_low, ci_high = r["ci_low"], r["ci_high"]
    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):  # too few D for the interval over sizes
        s_low, s_high = r.get("seeds_ci_low", np.nan), r.get("seeds_ci_high", np.nan)
        if np.isfinite(s_low) and np.isfinite(s_high):
            return f"{est}, 95% CI over seeds [{s_low:.3g}, {s_high:.3g}] (over sizes unbounded: {int(r['n_D'])} D)"
    return f"{est}, 95% CI [{ci_low:.3g}, {ci_high:.3g}]"


#: one palette colour per method (kernel: experiment.GENERIC), the same in every transfer figure
_COLORS = {m: PALETTE[i % len(PALETTE)] for i, m in enumerate((*METHODS, "kernel"))}


def save_figure(draw: Callable, path: Path, panels: int = 1, format: str | None = None) -> Path:
    """Draw into a fresh styled Figure (no pyplot state, no backend choice) and write ``path``, its
    suffix replaced by ``format``'s when given (:func:`theorydyn.core.plotting.save`); returns the path."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(4.2 * panels + 2.0 if panels > 1 else 9.0, 3.9 if panels > 1 else 6.4))
        axes = fig.subplots(1, panels, squeeze=False, sharey=True)[0]
    styled(draw)(list(axes))
    return save(fig, path, format)


@styled
def plot_curves(summary: pd.DataFrame, levels: pd.DataFrame, axes: Sequence) -> None:
    """Accuracy against f (seed mean with its 95% t-interval) against Ñ (log axis), one panel per
    D (``axes``), one line per method; dotted: the common target, dash-dotted: a*(D) − ε (the theorem
    level, when the levels table has it), dashed: a*(D)."""
    Ds = sorted(summary["D"].unique())
    lv = levels.set_index("D")
    for ax, D in zip(axes, Ds, strict=False):
        for method, g in summary[summary["D"] == D].groupby("method", sort=False):
            g = g.sort_values("N_tilde")
            c = _COLORS.get(method)
            ax.plot(g["N_tilde"], g["acc_f_mean"], marker="o", ms=3, color=c, label=method)
            ax.fill_between(g["N_tilde"], g["acc_f_ci_low"], g["acc_f_ci_high"], color=c, alpha=0.2, lw=0)
        if D in lv.index:
            ax.axhline(lv.loc[D, "target"], color="k", lw=0.8, ls=":", label="common target")
            if "target_theorem" in lv.columns:
                ax.axhline(lv.loc[D, "target_theorem"], color="k", lw=0.8, ls="-.", label="a*(D) − ε (Theorem 5.1)")
            ax.axhline(lv.loc[D, "a_star"], color=GREY, lw=0.8, ls="--", label="a*(D), the best accuracy")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("downstream samples Ñ (log scale)")
        ax.set_title(f"D = {D}" + (f", q = {lv.loc[D, 'q']:.3g}" if D in lv.index else ""))
        ax.set_ylim(0.45, 1.01)
    axes[0].set_ylabel("test accuracy against f (mean, 95% CI band)")
    handles: dict = {}
    for ax in axes:  # methods run only at some D (scratch, pretrained-sim) still get a legend entry
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=False):
            handles.setdefault(lab, h)
    legend_outside(axes[-1], list(handles.values()), list(handles.keys()))


@styled
def plot_samples_to_target(
    tgt: pd.DataFrame, ax, slopes: pd.DataFrame | None = None, ylabel: str = "Ñ_target (accuracy ≥ the target)"
) -> None:
    """Ñ_target against D, log-log. Filled circles with 95% bootstrap bars: a crossing. A downward
    arrow from Ñ_min: reached at the smallest Ñ (Ñ_target ≤ Ñ_min); from 2: reached by the floor Ñ = 2 (kind
    "floor", the bracket [1, 2]).

    A method that never reaches the target within its Ñ grid (Ñ_target > Ñ_max) is not drawn at
    Ñ_max: the caps Ñ_max differ by D and method (the compute budget cuts the grid shorter at large
    D), so arrows from Ñ_max would draw a trend that is only the grid's. Such a point is a ▲ in a
    separate "not reached" band above the values, with its cap written under it ("> 64").
    Methods are shifted slightly along D so that equal values stay visible. The legend gives the
    log-log slope of each method (from :func:`growth_fits`)."""
    groups = list(tgt.groupby("method", sort=True))
    values = tgt[tgt["kind"] != "lower"]
    vmax = (
        np.nanmax(np.where(np.isfinite(values["ci_high"]), values["ci_high"], values["lo"]).astype(float))
        if len(values)
        else 1.0
    )
    band = 2.0 ** (np.ceil(np.log2(max(vmax, 1.0))) + 2.5)  # above every drawn value
    any_censored = False
    for i, (method, g) in enumerate(groups):
        g = g.sort_values("D")
        base, theorem_level = method.split(" @")[0], " @" in method  # a level of a method: its colour, dashed
        c = _COLORS.get(base, PALETTE[i % len(PALETTE)])
        x = g["D"].to_numpy(float) * 2.0 ** (0.08 * (i - (len(groups) - 1) / 2))
        val = (g["kind"] == "value").to_numpy()
        label = method
        if slopes is not None and len(slopes):  # one D: no slope to give
            r = slopes[(slopes["method"] == method) & (slopes["x"] == "log D")]
            if len(r):
                label += f" (slope {describe_slope(r.iloc[0])})"
        y = g["lo"].to_numpy(float)
        lo_err = np.clip(y - g["ci_low"].to_numpy(float), 0, None)
        hi = g["ci_high"].to_numpy(float)
        hi_err = np.where(np.isfinite(hi), np.clip(hi - y, 0, None), 0.0)
        if val.any():
            ax.errorbar(
                x[val],
                y[val],
                yerr=[lo_err[val], hi_err[val]],
                fmt="s--" if theorem_level else "o-",
                ms=4,
                color=c,
                capsize=2,
                label=label,
            )
            label = None
        down = g["kind"].isin(["upper", "floor"]).to_numpy()  # reached by Ñ_min, or by the floor Ñ = 2
        for xi, b in zip(x[down], g["hi"].to_numpy(float)[down], strict=False):
            ax.annotate("", xy=(xi, b / 2.0**1.2), xytext=(xi, b), arrowprops=dict(arrowstyle="->", color=c, lw=1.4))
        if down.any():
            ax.scatter(x[down], g["hi"].to_numpy(float)[down], marker="_", s=80, color=c, label=label)
            label = None
        up = (g["kind"] == "lower").to_numpy()
        if up.any():
            any_censored = True
            ax.scatter(
                x[up], np.full(up.sum(), band), marker=CENSORED_MARKER, s=42, facecolors="none", edgecolors=c,
                linewidths=1.2, label=label, zorder=3,
            )  # fmt: skip
            for xi, cap in zip(x[up], g["lo"].to_numpy(float)[up], strict=False):
                ax.text(xi, band / 1.35, f">{cap:g}", color=c, fontsize=6, ha="center", va="top", rotation=90)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("D (number of patches; q(D − C) fixed)")
    ax.set_ylabel(ylabel)
    if any_censored:
        # the band is no value of Ñ_target: its tick says so, and the value ticks stop below its line
        ks = np.arange(-1, int(np.floor(np.log2(band / 2.6))) + 1)
        ax.set_yticks([*(2.0**ks), band], [*(f"$2^{{{k}}}$" for k in ks), "not\nreached"])
        ax.yaxis.set_minor_locator(mticker.NullLocator())
        ax.axhline(band / 2.6, color=GREY, lw=0.8, ls="--")
    from matplotlib.lines import Line2D

    keys = [
        Line2D([], [], color=GREY, marker="o", ls="-", label="crossing, 95% bootstrap CI"),
        Line2D([], [], color=GREY, marker="_", ls="", ms=9, label="↓ reached at the smallest Ñ, or by the floor Ñ = 2"),
    ]
    if any_censored:
        keys.append(censored_handle("not reached within the Ñ grid: Ñ_target > the cap written under it"))
    ax.set_title("samples to the target against D")
    ax.grid(alpha=0.3, which="both")
    ax.set_ylim(0.35, band * 2.5 if any_censored else max(4.0, vmax) * 4)
    handles, labels = ax.get_legend_handles_labels()
    legend_outside(ax, handles + keys, labels + [k.get_label() for k in keys])
