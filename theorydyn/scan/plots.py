"""Pictures of a scan: phase times against a scanned axis, T1/T2 scaling in D, trajectories.

Phase times are those of Section 4.1 (docs/theory.md §3, :mod:`theorydyn.core.phases`): T0 (end of
Event I), T1 (γ(T1) > max_t |ρ(t)|), T1_mass (in-set attention mass reaches ½) and T2 (error
against f < 2%). The scaling fit is least squares of log T = a + b log D over every seed's point,
with a 95% Student-t interval on the slope b (the exponent in T ∝ D^b); where one power law does
not hold, the local slopes between neighbouring D say so.

Intervals over seeds respect each quantity's range (:mod:`theorydyn.core.stats`): phase times get the
Student-t interval of their logarithms (centre: the geometric mean), fractions (association,
errors) the t-interval cut to [0, 1]; with fewer than three seeds no interval is drawn, only the
seeds. A phase time a seed did not reach within its run's horizon is drawn as an open triangle at
that horizon (:func:`censored_rows`), with its own legend entry, never left out of the picture. A
scan with the simulator draws it against the scanned axis beside its N = ∞ reference, the reduced
flow (:func:`plot_simulator`).

T1 is defined by a level that depends on the horizon (max over the whole run of |ρ(t)|, which
keeps drifting), so T1 and any exponent fitted to it depend on ``s_max``; T1_mass, T0 and T2 are
first crossings of fixed levels and do not.

Each function draws into a given ``ax`` (a new figure when None) and returns the Figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from ..core.plotting import (
    COLORS,
    GREY,
    LABELS,
    MARKERS,
    axes_or_new,
    censored_handle,
    legend_outside,
    mark_censored,
    styled,
)
from ..core.stats import MIN_SEEDS_FOR_CI, bounded_mean_ci, fit_power_law_ci, log_mean_ci
from ..simulate.config import SimConfig
from .schema import OPTIONS

PHASES = ("T0", "T1", "T1_mass", "T2")
#: Phase times whose definition depends on the horizon s_max (module docstring).
HORIZON_DEPENDENT = ("T1",)
#: Options that only the simulator reads (its configuration's scanned fields): along them the reduced
#: (N = ∞) numbers do not change.
SIM_ONLY_OPTIONS = tuple(o.name for o in OPTIONS if o.config is SimConfig)
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
#: Axis labels with their units (times are in s = η·t, docs/theory.md §3.8).
AXIS_LABELS = {
    "N": "N (training samples)",
    "sim_steps": "simulator GD steps",
    "q": "q (probability of a ±w* patch)",
    "D": "D (patches)",
    "C": "C (patches per set)",
    "tau": "τ (softmax temperature)",
    "eta": "η (GD step)",
    "s_max": "horizon s_max (s = η·t)",
    "n_samples": "Monte Carlo samples",
    "omega": "ω (initial scale)",
}
#: The y label of every phase-time axis.
TIME_LABEL = "phase time s = η·t (log scale)"
#: Where a solver's phase time is censored: the column of its horizon and of its status.
_HORIZON = {"": ("s_max", "status"), "sim_": ("sim_s_reached", "sim_status")}


def axis_label(axis: str) -> str:
    """The label of a scanned axis, with its unit where it has one (:data:`AXIS_LABELS`)."""
    return AXIS_LABELS.get(axis, axis)


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


def censored_rows(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """The rows whose phase time ``column`` (``T2``, ``sim_T2`` …) was not reached within their run's
    horizon: empty, from a run that ended normally (status ``ok``; a diverged run is not censored, it
    stopped). Its columns are ``df``'s and ``horizon``: the reduced flow's ``s_max``, the simulator's
    ``sim_s_reached`` (η·steps).

    >>> df = pd.DataFrame(dict(q=[0.1, 0.2], T2=[5.0, None], s_max=[1e3, 1e3], status=["ok", "ok"]))
    >>> censored_rows(df, "T2")[["q", "horizon"]].to_dict("records")
    [{'q': 0.2, 'horizon': 1000.0}]
    """
    prefix = "sim_" if column.startswith("sim_") else ""
    hcol, scol = _HORIZON[prefix]
    if column not in df.columns or hcol not in df.columns:
        return df.iloc[:0].assign(horizon=pd.Series(dtype=float))
    value = pd.to_numeric(df[column], errors="coerce")
    ok = df[scol].astype(str).eq("ok") if scol in df.columns else pd.Series(True, index=df.index)
    horizon = pd.to_numeric(df[hcol], errors="coerce")
    keep = value.isna() & ok & np.isfinite(horizon)
    return df[keep].assign(horizon=horizon[keep])


def _draw_intervals(
    ax, df: pd.DataFrame, axis: str, column: str, kind: str, label: str | None, color, marker, ls="-", shift=0.0
) -> bool:
    """Seeds as faint dots; the centre over seeds as a line with its 95% interval as error bars (none
    below three seeds); a phase time some seed did not reach within its horizon as an open triangle at
    that horizon (:func:`~theorydyn.core.plotting.mark_censored`, shifted ``shift`` points), the centre
    left out there (it would be the mean of the seeds that reached it). Returns whether a value was
    censored."""
    ax.scatter(df[axis], df[column], color=color, marker=marker, alpha=0.3, s=12, lw=0)
    cens = censored_rows(df, column) if kind == "positive" else df.iloc[:0]
    if len(cens):
        mark_censored(ax, cens[axis].to_numpy(float), cens["horizon"].to_numpy(float), color, shift=shift)
    g = group_intervals(df, axis, column, kind)
    g = g[np.isfinite(g["centre"])]
    if not len(g):
        return bool(len(cens))
    have = np.isfinite(g["low"]).to_numpy()
    yerr = np.vstack([g["centre"] - g["low"], g["high"] - g["centre"]]).astype(float)
    yerr[:, ~have] = 0.0
    ax.errorbar(
        g.index.to_numpy(float), g["centre"].to_numpy(float), yerr=yerr, color=color, marker=marker, ls=ls, label=label
    )
    return bool(len(cens))


def _draw_reference(ax, df: pd.DataFrame, axis: str, column: str, kind: str, label: str | None, color) -> bool:
    """The reduced (N = ∞) value of ``column``: along a simulator-only axis one horizontal line with
    its interval as a band; along any other axis a dashed curve with error bars. Returns whether a
    value was censored."""
    red = reduced_rows(df)
    if column not in red.columns or red[column].isna().all():
        return False
    if axis in SIM_ONLY_OPTIONS:
        iv = interval(pd.to_numeric(red[column], errors="coerce"), kind)
        if not np.isfinite(iv["centre"]):
            return False
        ax.axhline(iv["centre"], color=color, ls="--", lw=1, label=None if label is None else f"{label}, N = ∞")
        if np.isfinite(iv["low"]):
            ax.axhspan(iv["low"], iv["high"], color=color, alpha=0.12, lw=0)
        return False
    label = None if label is None else f"{label}, N = ∞"
    return _draw_intervals(ax, red, axis, column, kind, label, color, "x", ls="--", shift=4)


def local_slopes(x: Iterable[float], y: Iterable[float]) -> list[tuple[float, float, float]]:
    """(x_i, x_{i+1}, d log y / d log x) between neighbouring x of the means of y."""
    m = pd.Series(np.asarray(list(y), float)).groupby(np.asarray(list(x), float)).mean().dropna()
    xs, ys = m.index.to_numpy(float), m.to_numpy(float)
    return [
        (xs[i], xs[i + 1], float(np.log(ys[i + 1] / ys[i]) / np.log(xs[i + 1] / xs[i])))
        for i in range(len(xs) - 1)
        if ys[i] > 0 and ys[i + 1] > 0
    ]


#: what the marks of the phase-time plots are, as their legend's title
INTERVAL_LEGEND = (
    f"faint dots: seeds · line: geometric mean\nbars: 95% t-interval of the logs (≥ {MIN_SEEDS_FOR_CI} seeds)"
)
#: the same for fractions (association, errors): arithmetic mean, interval cut to [0, 1]
FRACTION_LEGEND = f"faint dots: seeds · line: mean\nbars: 95% t-interval cut to [0, 1] (≥ {MIN_SEEDS_FOR_CI} seeds)"


def _legend(ax, censored: bool, title: str, where: str = "right", horizon: str = "the horizon s_max") -> None:
    handles, labels = ax.get_legend_handles_labels()
    if censored:
        h = censored_handle(f"not reached by {horizon} (drawn at it)")
        handles, labels = [*handles, h], [*labels, h.get_label()]
    legend_outside(ax, handles, labels, where=where, title=title)


@styled
def plot_phase_times(df: pd.DataFrame, axis: str, ax=None, title: str | None = None, legend: bool = True):
    """T0, T1, T1_mass, T2 of the reduced flow against ``axis``: each seed as a faint dot, the geometric
    mean over seeds as a line with its 95% log-scale interval (from three seeds on), and a seed that did
    not reach a phase within its horizon ``s_max`` as an open triangle at the horizon. The legend, beside
    the axes, names the phases in the paper's words (:data:`theorydyn.core.plotting.LABELS`)."""
    fig, ax = axes_or_new(ax, figsize=(8.2, 3.8))
    censored = False
    for k, ph in enumerate(PHASES):
        if ph not in df.columns:
            continue
        label = LABELS[ph]
        censored |= _draw_intervals(ax, df, axis, ph, "positive", label, COLORS[ph], MARKERS[ph], shift=5.0 * k - 7.5)
    ax.set_yscale("log")
    _axis_scale(ax, df, axis)
    ax.set_xlabel(axis_label(axis))
    ax.set_ylabel(TIME_LABEL)
    ax.set_title(f"reduced flow (N = ∞): phase times against {axis} (Section 4.1)" if title is None else title)
    ax.grid(True, which="both", alpha=0.25)
    if legend:
        _legend(ax, censored, INTERVAL_LEGEND)
    return fig


def _key_handles(names: Iterable[str]) -> list:
    """Legend entries of quantities by colour and marker alone (the line style says the solver)."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color=COLORS[n], marker=MARKERS[n], ls="-", label=LABELS[n]) for n in names]


def _solver_handles(reference: bool) -> list:
    """Legend entries of the two solvers: the simulator solid, its N = ∞ reference dashed with ×."""
    from matplotlib.lines import Line2D

    out = [Line2D([], [], color=GREY, ls="-", label="simulator, finite N (solid)")]
    if reference:
        out.append(Line2D([], [], color=GREY, ls="--", marker="x", label="N = ∞, the reduced flow (dashed, ×)"))
    return out


@styled
def plot_simulator(df: pd.DataFrame, axis: str, axes=None, title: str | None = None, legend: bool = True):
    """The finite-sample simulator against ``axis`` (e.g. N) beside its N = ∞ reference, the reduced flow.

    Left: the simulator's phase times (solid, with 95% log-scale intervals over seeds) and the reduced
    ones (dashed: a line and band along a simulator-only axis such as N); a phase a seed did not reach
    within its horizon (η·steps for the simulator, s_max for the flow) is an open triangle at it. Right:
    the final patch association (Definition 2.2) and test errors against f and y (intervals cut to
    [0, 1]), with the reduced flow's final values. Diverged runs are left out (the summary lists them).
    One legend beside each panel: colour and marker name the quantity, the line style the solver.
    """
    fig, axes = axes_or_new(axes, 1, 2, figsize=(13, 4.0))
    ax_t, ax_q = axes[0], axes[1]
    censored = False
    drawn: dict[str, list[str]] = {"positive": [], "probability": []}
    done = df[~df["sim_status"].astype(str).eq("diverged")] if "sim_status" in df.columns else df
    for k, (name, kind) in enumerate(SIM_QUANTITIES):
        col = f"sim_{name}"
        if col not in df.columns or df[col].isna().all() and not len(censored_rows(done, col)):
            continue
        ax = ax_t if kind == "positive" else ax_q
        drawn[kind].append(name)
        shift = 5.0 * (k % 5) - 10.0
        censored |= _draw_intervals(ax, done, axis, col, kind, None, COLORS[name], MARKERS[name], shift=shift)
        if name not in NO_REFERENCE:
            censored |= _draw_reference(ax, df, axis, name, kind, None, COLORS[name])
    for ax in (ax_t, ax_q):
        _axis_scale(ax, df, axis)
        ax.set_xlabel(axis_label(axis))
        ax.grid(True, which="both", alpha=0.25)
    ax_t.set_yscale("log")
    ax_t.set_ylabel(TIME_LABEL)
    ax_t.set_title("phase times: simulator (solid) and N = ∞ (dashed)")
    ax_q.set_ylim(-0.02, 1.02)
    ax_q.set_ylabel("fraction of rows / of test samples")
    ax_q.set_title("final patch association and test errors")
    if legend:
        ref = any(n not in NO_REFERENCE for n in drawn["positive"])
        handles = _key_handles(drawn["positive"]) + _solver_handles(ref)
        if censored:
            handles.append(censored_handle("not reached within the horizon\n(η·steps; s_max for N = ∞), drawn at it"))
        legend_outside(ax_t, handles, title=INTERVAL_LEGEND)
        ref = any(n not in NO_REFERENCE for n in drawn["probability"])
        legend_outside(ax_q, _key_handles(drawn["probability"]) + _solver_handles(ref), title=FRACTION_LEGEND)
    if title is None:
        title = f"simulator against {axis} beside its N = ∞ reference (Theorem 4.2)"
    if title:
        fig.suptitle(title)
    return fig


@styled
def plot_scaling(df: pd.DataFrame, axis: str = "D", ax=None, title: str | None = None) -> tuple[object, dict]:
    """log-log T0, T1, T1_mass, T2 against D with the fitted power laws (dashed). The legend, beside the
    axes, gives each exponent with its 95% interval over all seeds' points and the local slopes between
    neighbouring D (where they differ, one power law does not describe the points); T1's exponent
    depends on the horizon (its level max_t|ρ(t)| does). A seed that did not reach a phase within its
    horizon is an open triangle at it, left out of the fit.

    Returns (Figure, {phase: fit dict of :func:`fit_power_law_ci` or None})."""
    fig, ax = axes_or_new(ax, figsize=(8.4, 4.0))
    exps: dict[str, dict | None] = {}
    censored = False
    for k, ph in enumerate(PHASES):
        if ph not in df.columns or df[ph].isna().all() and not len(censored_rows(df, ph)):
            exps[ph] = None
            continue
        color = COLORS[ph]
        fit = fit_power_law_ci(df[axis], df[ph])
        exps[ph] = fit
        label = LABELS[ph]
        if fit is not None:
            label += f"\n   ∝ ${axis}^{{{fit['b']:.2f}}}$, 95% CI [{fit['b_low']:.2f}, {fit['b_high']:.2f}]"
        slopes = local_slopes(df[axis], df[ph])
        if len(slopes) > 1:
            label += "; local slopes " + ", ".join(f"{sl:.2f}" for *_, sl in slopes)
        censored |= _draw_intervals(
            ax, df, axis, ph, "positive", label, color, MARKERS[ph], ls="none", shift=5.0 * k - 7.5
        )
        if fit is not None:
            m = df.groupby(axis)[ph].mean()
            xs = np.geomspace(m.index.min(), m.index.max(), 50)
            ax.plot(xs, fit["prefactor"] * xs ** fit["b"], color=color, ls="--", lw=1)
    ax.set_xscale("log")
    _axis_scale(ax, df, axis)
    ax.set_yscale("log")
    ax.set_xlabel(axis_label(axis))
    ax.set_ylabel(TIME_LABEL)
    ax.set_title(f"phase times against {axis}: fitted power laws (dashed)" if title is None else title)
    ax.grid(True, which="both", alpha=0.25)
    _legend(ax, censored, INTERVAL_LEGEND + "\ndashed: least-squares power law")
    return fig, exps


@styled
def plot_trajectories(trajs: dict[str, pd.DataFrame], axes=None, title: str = "", groups: dict[str, str] | None = None):
    """α, γ, ρ, risk and error against f (log s) of every trajectory, overlaid.

    ``groups`` maps a trajectory's label to its group (e.g. ``"q=0.25"``): one colour (viridis, in the
    groups' order) and one legend entry per group, so seeds of the same setting share a colour. The
    legend sits beside the last panel.
    """
    import matplotlib as mpl

    cols = [("alpha", "α"), ("gamma", "γ (in-set logit)"), ("rho", "ρ (cross-set logit)"), ("risk", "logistic risk")]
    cols.append(("err_f", "test error vs f"))
    # constrained layout: the figure title gets its own row above the panels' titles
    fig, axes = axes_or_new(axes, 1, len(cols), figsize=(3.0 * len(cols) + 1.6, 3.2))
    cmap = mpl.colormaps["viridis"]
    groups = groups or {label: label for label in trajs}
    order = list(dict.fromkeys(groups[label] for label in trajs))
    n = max(len(order), 1)
    labelled: set[str] = set()
    for label, tr in trajs.items():
        g = groups[label]
        color = cmap(0.9 * order.index(g) / max(n - 1, 1))  # the yellow end of viridis is faint on white
        s = tr["s"].to_numpy(float)
        keep = s > 0
        for ax, (c, _name) in zip(axes, cols, strict=True):
            if c in tr.columns:
                first = ax is axes[0] and g not in labelled
                ax.plot(
                    s[keep], tr[c].to_numpy(float)[keep], color=color, lw=1.0, alpha=0.85, label=g if first else None
                )
        labelled.add(g)
    for ax, (c, name) in zip(axes, cols, strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("s = η·t (log scale)")
        ax.set_ylabel(name + (" (log scale)" if c in ("risk", "err_f") else ""))
        ax.set_title(name)
        if c in ("risk", "err_f"):
            ax.set_yscale("log")
    if n <= 12:
        legend_outside(
            axes[-1], *axes[0].get_legend_handles_labels(), title="one colour per setting\n(its seeds alike)"
        )
    fig.suptitle(title or "trajectories of the reduced dynamics (Lemmas 4.1–4.3)")
    return fig
