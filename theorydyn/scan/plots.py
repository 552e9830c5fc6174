"""Pictures of a scan: phase times against a scanned axis, T1/T2 scaling in D, trajectories.

Phase times are those of Section 4.1 (docs/theory.md §3, :mod:`theorydyn.phases`): T0 (end of
Event I), T1 (γ(T1) > max_t |ρ(t)|), T1_mass (in-set attention mass reaches ½) and T2 (error
against f < 2%). The scaling fit is least squares of log T = a + b log D over every seed's point,
with a 95% Student-t interval on the slope b (the exponent in T ∝ D^b); where one power law does
not hold, the local slopes between neighbouring D say so.

Each function draws into a given ``ax`` (a new figure when None) and returns the Figure.
"""

from __future__ import annotations

from typing import Iterable

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plotting import axes_or_new
from ..stats import fit_power_law_ci

PHASES = ("T0", "T1", "T1_mass", "T2")
_STYLE = {"T0": ("tab:blue", "o"), "T1": ("tab:orange", "s"), "T1_mass": ("tab:olive", "^"), "T2": ("tab:red", "D")}


def local_slopes(x: Iterable[float], y: Iterable[float]) -> list[tuple[float, float, float]]:
    """(x_i, x_{i+1}, d log y / d log x) between neighbouring x of the means of y."""
    m = pd.Series(np.asarray(list(y), float)).groupby(np.asarray(list(x), float)).mean().dropna()
    xs, ys = m.index.to_numpy(float), m.to_numpy(float)
    return [(xs[i], xs[i + 1], float(np.log(ys[i + 1] / ys[i]) / np.log(xs[i + 1] / xs[i])))
            for i in range(len(xs) - 1) if ys[i] > 0 and ys[i + 1] > 0]


def plot_phase_times(df: pd.DataFrame, axis: str, ax=None, title: str = ""):
    """T0, T1, T1_mass, T2 against ``axis``: each seed as a dot, the seed-mean as a line."""
    fig, ax = axes_or_new(ax, figsize=(6, 4))
    for ph in PHASES:
        if ph not in df.columns or df[ph].isna().all():
            continue
        color, marker = _STYLE[ph]
        ax.scatter(df[axis], df[ph], color=color, marker=marker, alpha=0.45, s=18)
        m = df.groupby(axis)[ph].mean()
        ax.plot(m.index, m.to_numpy(), color=color, marker=marker, label=ph)
    ax.set_yscale("log")
    if axis in ("D", "N", "tau", "eta", "n_samples") and (df[axis] > 0).all():
        ax.set_xscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("phase time s = η·t")
    ax.set_title(title or f"phase times against {axis} (Section 4.1)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def plot_scaling(df: pd.DataFrame, axis: str = "D", ax=None, title: str = "") -> tuple[object, dict]:
    """log-log T0, T1, T2 against D with the fitted power laws (exponent and its 95% interval
    over all seeds' points in the legend) and the local slopes between neighbouring D written
    at the segment midpoints. Returns (Figure, {phase: fit dict of :func:`fit_power_law_ci` or None})."""
    fig, ax = axes_or_new(ax, figsize=(6, 4.2))
    exps: dict[str, dict | None] = {}
    for ph in ("T0", "T1", "T2"):
        if ph not in df.columns or df[ph].isna().all():
            exps[ph] = None
            continue
        color, marker = _STYLE[ph]
        m = df.groupby(axis)[ph].mean()
        ax.scatter(df[axis], df[ph], color=color, marker=marker, alpha=0.4, s=16)
        fit = fit_power_law_ci(df[axis], df[ph])
        exps[ph] = fit
        label = ph if fit is None else f"{ph} ∝ {axis}^{fit['b']:.2f} [{fit['b_low']:.2f}, {fit['b_high']:.2f}]"
        ax.plot(m.index, m.to_numpy(), color=color, marker=marker, ls="none", label=label)
        if fit is not None:
            xs = np.geomspace(m.index.min(), m.index.max(), 50)
            ax.plot(xs, fit["prefactor"] * xs ** fit["b"], color=color, ls="--", lw=1)
        for x0, x1, sl in local_slopes(df[axis], df[ph]):
            xm = np.sqrt(x0 * x1)
            ax.annotate(f"{sl:.2f}", (xm, np.interp(np.log(xm), np.log(m.index.to_numpy(float)), m.to_numpy(float))),
                        color=color, fontsize=7, xytext=(0, 5), textcoords="offset points", ha="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("phase time s = η·t")
    ax.set_title(title or f"phase scaling with {axis}: fitted exponent [95% CI]; local slopes at midpoints")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig, exps


def plot_trajectories(trajs: dict[str, pd.DataFrame], axes=None, title: str = "",
                      groups: dict[str, str] | None = None):
    """α, γ, ρ, risk and error against f (log s) of every trajectory, overlaid.

    ``groups`` maps a trajectory's label to its group (e.g. ``"q=0.25"``): one colour and one
    legend entry per group, so seeds of the same setting share a colour.
    """
    cols = [("alpha", "α"), ("gamma", "γ"), ("rho", "ρ"), ("risk", "risk"), ("err_f", "error vs f")]
    fig, axes = axes_or_new(axes, 1, len(cols), figsize=(3.2 * len(cols), 3.2))
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
        for ax, (c, name) in zip(axes, cols):
            if c in tr.columns:
                first = ax is axes[0] and g not in labelled
                ax.plot(s[keep], tr[c].to_numpy(float)[keep], color=color, lw=1.1, alpha=0.85,
                        label=g if first else None)
        labelled.add(g)
    for ax, (c, name) in zip(axes, cols):
        ax.set_xscale("log")
        ax.set_xlabel("s = η·t")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
        if c in ("risk", "err_f"):
            ax.set_yscale("log")
    if n <= 12:
        axes[0].legend(fontsize=6)
    fig.suptitle(title or "trajectories of the reduced dynamics (Lemmas 4.1–4.3)")
    return fig
