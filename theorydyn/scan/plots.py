"""Pictures of a scan: phase times against a scanned axis, T1/T2 scaling in D, trajectories.

Phase times are those of Section 4.1 (docs/theory.md §3, :mod:`theorydyn.core.phases`): T0 (end of
Event I), T1 (γ(T1) > max_t |ρ(t)|), T1_mass (in-set attention mass reaches ½) and T2 (error
against f < 2%). The scaling fit is least squares of log T = a + b log D over every seed's point,
with a 95% Student-t interval on the slope b (the exponent in T ∝ D^b); where one power law does
not hold, the local slopes between neighbouring D say so.

Intervals over seeds respect each quantity's range (:mod:`theorydyn.core.stats`): phase times get the
Student-t interval of their logarithms (centre: the geometric mean), fractions (association,
errors) the t-interval cut to [0, 1]; with fewer than three seeds no interval is drawn, only the
seeds. A scan with the simulator draws it against the scanned axis beside its N = ∞ reference,
the reduced flow (:func:`plot_simulator`).

T1 is defined by a level that depends on the horizon (max over the whole run of |ρ(t)|, which
keeps drifting), so T1 and any exponent fitted to it depend on ``s_max``; T1_mass, T0 and T2 are
first crossings of fixed levels and do not.

Each function draws into a given ``ax`` (a new figure when None) and returns the Figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from ..core.plotting import axes_or_new
from ..core.stats import MIN_SEEDS_FOR_CI, bounded_mean_ci, fit_power_law_ci, log_mean_ci

PHASES = ("T0", "T1", "T1_mass", "T2")
_STYLE = {
    "T0": ("tab:blue", "o"),
    "T1": ("tab:orange", "s"),
    "T1_mass": ("tab:olive", "^"),
    "T2": ("tab:red", "D"),
    "T_assoc": ("tab:purple", "v"),
    "final_association": ("tab:green", "o"),
    "assoc_peak": ("tab:cyan", "P"),
    "final_err_f": ("tab:red", "s"),
    "final_err_y": ("tab:gray", "^"),
}
#: Phase times whose definition depends on the horizon s_max (module docstring).
HORIZON_DEPENDENT = ("T1",)
#: Options that only the simulator reads: along them the reduced (N = ∞) numbers do not change.
SIM_ONLY_OPTIONS = ("N", "sim_steps", "omega", "record_every", "dtype")
#: The simulator's summary quantities (columns ``sim_<name>``) and their kind of interval.
SIM_QUANTITIES = (
    ("T0", "positive"),
    ("T1", "positive"),
    ("T1_mass", "positive"),
    ("T2", "positive"),
    ("T_assoc", "positive"),
    ("assoc_peak", "probability"),
    ("final_association", "probability"),
    ("final_err_f", "probability"),
    ("final_err_y", "probability"),
)
#: Simulator quantities without an N = ∞ reference: the reduced flow's association is all-or-nothing
#: (every row of its three-value form is alike, and at the idealised start every row ties), so its
#: T_assoc and peak say nothing about the simulator's.
NO_REFERENCE = ("T_assoc", "assoc_peak")
_AXIS_LABEL = {"N": "N (training samples)", "sim_steps": "simulator GD steps", "q": "q", "D": "D", "tau": "τ"}


def interval(values: Sequence[float], kind: str) -> dict[str, float | int]:
    """Centre, low, high, n and reached (finite values) of one group of seeds. ``kind``: "positive"
    (:func:`~theorydyn.core.stats.log_mean_ci`), "probability" (:func:`~theorydyn.core.stats.bounded_mean_ci`);
    low/high are NaN below three seeds or when some seed did not reach the quantity."""
    x = np.asarray(values, float)
    ok = np.isfinite(x)
    out: dict[str, float | int] = dict(centre=np.nan, low=np.nan, high=np.nan, n=int(x.size), reached=int(ok.sum()))
    if not ok.all() or not x.size:
        return out
    fn = log_mean_ci if kind == "positive" else bounded_mean_ci
    if kind == "positive" and (x <= 0).any():
        return out
    out["centre"], out["low"], out["high"] = fn(x)
    return out


def group_intervals(df: pd.DataFrame, axis: str, column: str, kind: str) -> pd.DataFrame:
    """:func:`interval` of ``column`` per value of ``axis`` (index: the axis values)."""
    rows = {k: interval(pd.to_numeric(g[column], errors="coerce"), kind) for k, g in df.groupby(axis)}
    return pd.DataFrame.from_dict(rows, orient="index").sort_index()


def reduced_rows(df: pd.DataFrame) -> pd.DataFrame:
    """One row per reduced run: a scan over N (or another simulator-only option) repeats the same
    reduced flow at every value; those repeats are dropped."""
    keys = [
        c
        for c in df.columns
        if c in ("D", "C", "q", "tau", "d", "p", "sigma2", "nu", "beta", "s_max", "n_samples", "method", "seed")
    ]
    return df.drop_duplicates(subset=keys) if keys else df


def setting_text(df: pd.DataFrame, skip: Iterable[str] = (), simulate: bool | None = None) -> str:
    """The fixed setting of a scan's rows, e.g. "D=32 C=4 q=0.5 τ=1 · flow to s=5e4 · GD η=10, 1200 steps":
    every parameter with one value over the rows (scanned ones are left out)."""
    skip = set(skip)
    one = lambda c: c in df.columns and c not in skip and df[c].nunique(dropna=False) == 1  # noqa: E731
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    parts = [f"{name}={fmt(df[c].iloc[0])}" for c, name in (("D", "D"), ("C", "C"), ("q", "q"), ("tau", "τ")) if one(c)]
    if one("s_max"):
        parts.append(f"· reduced to s={df['s_max'].iloc[0]:.3g}")
    sim = (
        bool(df["simulate"].fillna(False).astype(bool).any())
        if simulate is None and "simulate" in df.columns
        else bool(simulate)
    )
    if sim:
        gd = [
            f"η={fmt(df['eta'].iloc[0])}" if one("eta") else "",
            f"{int(df['sim_steps'].iloc[0])} steps" if one("sim_steps") else "",
            f"N={int(df['N'].iloc[0])}" if one("N") else "",
        ]
        parts.append("· GD " + ", ".join(p for p in gd if p))
    if "seed" in df.columns:
        parts.append(f"· {df['seed'].nunique()} seed(s)")
    return " ".join(parts)


def _axis_scale(ax, df: pd.DataFrame, axis: str) -> None:
    """A log x axis for the size-like axes, ticked at the scanned values (no crowded minor labels)."""
    x = pd.to_numeric(df[axis], errors="coerce")
    if axis in ("D", "N", "tau", "eta", "n_samples", "sim_steps") and (x > 0).all():
        ax.set_xscale("log")
        vals = np.unique(x.to_numpy(float))
        if len(vals) <= 12:
            ax.set_xticks(vals, [f"{v:g}" for v in vals])
            ax.xaxis.set_minor_formatter(NullFormatter())


def _draw_intervals(
    ax, df: pd.DataFrame, axis: str, column: str, kind: str, label: str, color, marker, ls: str = "-"
) -> None:
    """Seeds as dots; centre as a line; the interval as error bars (none below three seeds: then the
    axes get one note saying so, :func:`_note_few_seeds`)."""
    ax.scatter(df[axis], df[column], color=color, marker=marker, alpha=0.35, s=14)
    g = group_intervals(df, axis, column, kind)
    g = g[np.isfinite(g["centre"])]
    if not len(g):
        return
    have = np.isfinite(g["low"]).to_numpy()
    yerr = np.vstack([g["centre"] - g["low"], g["high"] - g["centre"]]).astype(float)
    yerr[:, ~have] = 0.0
    if not have.all() and (g["n"] < MIN_SEEDS_FOR_CI).any():
        ax._theorydyn_few_seeds = True  # noqa: SLF001 — read by _note_few_seeds
    ax.errorbar(
        g.index.to_numpy(float),
        g["centre"].to_numpy(float),
        yerr=yerr,
        color=color,
        marker=marker,
        ls=ls,
        capsize=3,
        label=label,
    )


def _note_few_seeds(ax) -> None:
    if getattr(ax, "_theorydyn_few_seeds", False):
        ax.text(
            0.99,
            0.01,
            f"no interval where < {MIN_SEEDS_FOR_CI} seeds (seeds as dots)",
            transform=ax.transAxes,
            fontsize=6,
            ha="right",
            va="bottom",
            color="0.3",
        )


def _draw_reference(ax, df: pd.DataFrame, axis: str, column: str, kind: str, label: str, color) -> None:
    """The reduced (N = ∞) value of ``column``: along a simulator-only axis one horizontal line with
    its interval as a band; along any other axis a dashed curve with error bars."""
    red = reduced_rows(df)
    if column not in red.columns or red[column].isna().all():
        return
    if axis in SIM_ONLY_OPTIONS:
        iv = interval(pd.to_numeric(red[column], errors="coerce"), kind)
        if not np.isfinite(iv["centre"]):
            return
        ax.axhline(iv["centre"], color=color, ls="--", lw=1, label=f"{label}, N = ∞ (reduced)")
        if np.isfinite(iv["low"]):
            ax.axhspan(iv["low"], iv["high"], color=color, alpha=0.12, lw=0)
    else:
        _draw_intervals(ax, red, axis, column, kind, f"{label}, N = ∞ (reduced)", color, "x", ls="--")


def local_slopes(x: Iterable[float], y: Iterable[float]) -> list[tuple[float, float, float]]:
    """(x_i, x_{i+1}, d log y / d log x) between neighbouring x of the means of y."""
    m = pd.Series(np.asarray(list(y), float)).groupby(np.asarray(list(x), float)).mean().dropna()
    xs, ys = m.index.to_numpy(float), m.to_numpy(float)
    return [
        (xs[i], xs[i + 1], float(np.log(ys[i + 1] / ys[i]) / np.log(xs[i + 1] / xs[i])))
        for i in range(len(xs) - 1)
        if ys[i] > 0 and ys[i + 1] > 0
    ]


#: what the marks of :func:`plot_phase_times` are, as its legend's title
INTERVAL_LEGEND = "dots: seeds · line: geometric mean\nbars: 95% t-interval of the logs over seeds"


def plot_phase_times(df: pd.DataFrame, axis: str, ax=None, title: str = ""):
    """T0, T1, T1_mass, T2 of the reduced flow against ``axis``: each seed as a dot, the geometric
    mean over seeds as a line with its 95% log-scale interval (from three seeds on)."""
    fig, ax = axes_or_new(ax, figsize=(6, 4))
    for ph in PHASES:
        if ph not in df.columns or df[ph].isna().all():
            continue
        color, marker = _STYLE[ph]
        label = ph + (" (depends on s_max)" if ph in HORIZON_DEPENDENT else "")
        _draw_intervals(ax, df, axis, ph, "positive", label, color, marker)
    _note_few_seeds(ax)
    ax.set_yscale("log")
    _axis_scale(ax, df, axis)
    ax.set_xlabel(axis)
    ax.set_ylabel("phase time s = η·t")
    ax.set_title(title or f"phase times against {axis} (Section 4.1)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, title=INTERVAL_LEGEND, title_fontsize=6)
    return fig


def plot_simulator(df: pd.DataFrame, axis: str, axes=None, title: str = ""):
    """The finite-sample simulator against ``axis`` (e.g. N) beside its N = ∞ reference, the reduced flow.

    Left: the simulator's phase times (solid, with 95% log-scale intervals over seeds) and the reduced
    ones (dashed: a line and band along a simulator-only axis such as N). Right: the final patch
    association (Definition 2.2) and test errors against f and y (intervals cut to [0, 1]), with the
    reduced flow's final values. Phases the simulator does not reach within η·steps are not drawn.
    """
    fig, axes = axes_or_new(axes, 1, 2, figsize=(11, 4.2))
    ax_t, ax_q = axes[0], axes[1]
    for name, kind in SIM_QUANTITIES:
        col = f"sim_{name}"
        if col not in df.columns or df[col].isna().all():
            continue
        color, marker = _STYLE[name]
        ax = ax_t if kind == "positive" else ax_q
        label = name + (" (depends on horizon)" if name in HORIZON_DEPENDENT else "")
        _draw_intervals(ax, df, axis, col, kind, f"{label}, simulator", color, marker)
        if name not in NO_REFERENCE:
            _draw_reference(ax, df, axis, name, kind, name, color)
    missed = []
    for name, kind in SIM_QUANTITIES:
        col = f"sim_{name}"
        if kind == "positive" and col in df.columns:
            got = df.groupby(axis)[col].apply(lambda v: f"{int(v.notna().sum())}/{len(v)}")
            short = [f"{k:g}: {v}" for k, v in got.items() if not v.startswith(v.split("/")[1] + "/")]
            if short:
                missed.append(f"{name} ({', '.join(short)})")
    if missed:
        ax_t.text(
            0.01,
            0.01,
            "not reached by every seed (seeds reached):\n" + "\n".join(missed),
            transform=ax_t.transAxes,
            fontsize=6,
            va="bottom",
            ha="left",
            color="0.3",
        )
    for ax in (ax_t, ax_q):
        _note_few_seeds(ax)
        _axis_scale(ax, df, axis)
        ax.set_xlabel(_AXIS_LABEL.get(axis, axis))
        ax.grid(True, which="both", alpha=0.3)
        if ax.has_data():
            ax.legend(fontsize=6)
    ax_t.set_yscale("log")
    ax_t.set_ylabel("phase time s = η·t")
    ax_t.set_title("phase times: simulator (solid) vs N = ∞ (dashed)", fontsize=9)
    ax_q.set_ylim(-0.02, 1.02)
    ax_q.set_ylabel("fraction")
    ax_q.set_title("final association and test errors", fontsize=9)
    fig.suptitle(title or f"simulator against {axis}, N = ∞ reference (Theorem 4.2)", fontsize=10)
    return fig


def plot_scaling(df: pd.DataFrame, axis: str = "D", ax=None, title: str = "") -> tuple[object, dict]:
    """log-log T0, T1, T1_mass, T2 against D with the fitted power laws (exponent and its 95% interval
    over all seeds' points in the legend; T1's depends on the horizon) and the local slopes between
    neighbouring D written at the segment midpoints.

    Returns (Figure, {phase: fit dict of :func:`fit_power_law_ci` or None})."""
    fig, ax = axes_or_new(ax, figsize=(6, 4.2))
    exps: dict[str, dict | None] = {}
    for k, ph in enumerate(("T0", "T1", "T1_mass", "T2")):
        if ph not in df.columns or df[ph].isna().all():
            exps[ph] = None
            continue
        color, marker = _STYLE[ph]
        m = df.groupby(axis)[ph].mean()
        fit = fit_power_law_ci(df[axis], df[ph])
        exps[ph] = fit
        label = ph if fit is None else f"{ph} ∝ {axis}^{fit['b']:.2f} [{fit['b_low']:.2f}, {fit['b_high']:.2f}]"
        if ph in HORIZON_DEPENDENT:
            label += " (depends on s_max)"
        _draw_intervals(ax, df, axis, ph, "positive", label, color, marker, ls="none")
        if fit is not None:
            xs = np.geomspace(m.index.min(), m.index.max(), 50)
            ax.plot(xs, fit["prefactor"] * xs ** fit["b"], color=color, ls="--", lw=1)
        for x0, x1, sl in local_slopes(df[axis], df[ph]):
            xm = np.sqrt(x0 * x1)
            ax.annotate(
                f"{sl:.2f}",
                (xm, np.interp(np.log(xm), np.log(m.index.to_numpy(float)), m.to_numpy(float))),
                color=color,
                fontsize=7,
                # above the line for T0 and T1_mass, below it for T1 and T2: neighbouring lines' labels apart
                xytext=(0, 5 if k % 2 == 0 else -11),
                textcoords="offset points",
                ha="center",
            )
    _note_few_seeds(ax)
    ax.set_xscale("log")
    _axis_scale(ax, df, axis)
    ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("phase time s = η·t")
    ax.set_title(title or f"phase scaling with {axis}: fitted exponent [95% CI]; local slopes at midpoints")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig, exps


def plot_trajectories(trajs: dict[str, pd.DataFrame], axes=None, title: str = "", groups: dict[str, str] | None = None):
    """α, γ, ρ, risk and error against f (log s) of every trajectory, overlaid.

    ``groups`` maps a trajectory's label to its group (e.g. ``"q=0.25"``): one colour and one
    legend entry per group, so seeds of the same setting share a colour.
    """
    cols = [("alpha", "α"), ("gamma", "γ"), ("rho", "ρ"), ("risk", "risk"), ("err_f", "error vs f")]
    # constrained layout: the figure title gets its own row above the panels' titles
    fig, axes = axes_or_new(axes, 1, len(cols), figsize=(3.2 * len(cols), 3.4), layout="constrained")
    cmap = plt.get_cmap("viridis")
    groups = groups or {label: label for label in trajs}
    order = list(dict.fromkeys(groups[label] for label in trajs))
    n = max(len(order), 1)
    labelled: set[str] = set()
    for label, tr in trajs.items():
        g = groups[label]
        color = cmap(order.index(g) / max(n - 1, 1))
        s = tr["s"].to_numpy(float)
        keep = s > 0
        for ax, (c, _name) in zip(axes, cols, strict=True):
            if c in tr.columns:
                first = ax is axes[0] and g not in labelled
                ax.plot(
                    s[keep], tr[c].to_numpy(float)[keep], color=color, lw=1.1, alpha=0.85, label=g if first else None
                )
        labelled.add(g)
    for ax, (c, name) in zip(axes, cols, strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("s = η·t")
        ax.set_ylabel(name + (" (log scale)" if c in ("risk", "err_f") else ""))
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        if c in ("risk", "err_f"):
            ax.set_yscale("log")
    if n <= 12:
        axes[0].legend(fontsize=6)
    fig.suptitle(title or "trajectories of the reduced dynamics (Lemmas 4.1–4.3)")
    return fig
