"""Pictures of a scan: phase times against a scanned axis, T1/T2 scaling in D, trajectories.

Phase times are those of Section 4.1 (SPEC §3): T0 (end of Event I), T1 (γ(T1) > max_t |ρ(t)|),
T1_mass (in-set attention mass Λ + (C−1)Γ reaches ½) and T2 (error against f < 2%).
The scaling fit is least squares of log T = a + b log D over the seed-means of each D, so the
slope b is the exponent in T ∝ D^b.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

PHASES = ("T0", "T1", "T1_mass", "T2")
_STYLE = {"T0": ("tab:blue", "o"), "T1": ("tab:orange", "s"), "T1_mass": ("tab:olive", "^"), "T2": ("tab:red", "D")}


def _save(fig, path: Path, dpi: int = 110) -> list[Path]:
    """PNG (and PDF when asked by the suffix list) with the Agg backend."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return [path]


def fit_power_law(x: Iterable[float], y: Iterable[float]) -> tuple[float, float] | None:
    """(exponent b, prefactor e^a) of y ≈ e^a x^b by least squares in log-log; None if < 2 points."""
    x, y = np.asarray(list(x), float), np.asarray(list(y), float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if len(np.unique(x[ok])) < 2:
        return None
    b, a = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)
    return float(b), float(np.exp(a))


def scaling_exponents(df: pd.DataFrame, axis: str = "D", phases: Iterable[str] = ("T1", "T2")) -> dict[str, float | None]:
    """Fitted exponent of each phase time against ``axis`` (seed-means per value)."""
    out: dict[str, float | None] = {}
    for ph in phases:
        if ph not in df.columns:
            out[ph] = None
            continue
        m = df.groupby(axis)[ph].mean()
        fit = fit_power_law(m.index.to_numpy(float), m.to_numpy(float))
        out[ph] = None if fit is None else fit[0]
    return out


def plot_phase_times(df: pd.DataFrame, axis: str, path: Path, title: str = "") -> list[Path]:
    """T0, T1, T1_mass, T2 against ``axis``: each seed as a dot, the seed-mean as a line."""
    fig, ax = plt.subplots(figsize=(6, 4))
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
    return _save(fig, path)


def plot_scaling(df: pd.DataFrame, path: Path, axis: str = "D", title: str = "") -> tuple[list[Path], dict]:
    """log-log T1 and T2 against D with the fitted power laws; returns (paths, exponents)."""
    fig, ax = plt.subplots(figsize=(5.5, 4))
    exps: dict[str, float | None] = {}
    for ph in ("T0", "T1", "T2"):
        if ph not in df.columns or df[ph].isna().all():
            exps[ph] = None
            continue
        color, marker = _STYLE[ph]
        m = df.groupby(axis)[ph].mean()
        ax.scatter(df[axis], df[ph], color=color, marker=marker, alpha=0.4, s=16)
        fit = fit_power_law(m.index.to_numpy(float), m.to_numpy(float))
        exps[ph] = None if fit is None else fit[0]
        label = ph if fit is None else f"{ph} ∝ {axis}^{fit[0]:.2f}"
        ax.plot(m.index, m.to_numpy(), color=color, marker=marker, ls="none", label=label)
        if fit is not None:
            xs = np.geomspace(m.index.min(), m.index.max(), 50)
            ax.plot(xs, fit[1] * xs ** fit[0], color=color, ls="--", lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(axis)
    ax.set_ylabel("phase time s = η·t")
    ax.set_title(title or f"phase scaling with {axis} (fitted exponents)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path), exps


def plot_trajectories(trajs: dict[str, pd.DataFrame], path: Path, title: str = "",
                      groups: dict[str, str] | None = None) -> list[Path]:
    """α, γ, ρ, risk and error against f (log s) of every trajectory, overlaid.

    ``groups`` maps a trajectory's label to its group (e.g. ``"q=0.25"``): one colour and one
    legend entry per group, so seeds of the same setting share a colour.
    """
    cols = [("alpha", "α"), ("gamma", "γ"), ("rho", "ρ"), ("risk", "risk"), ("err_f", "error vs f")]
    fig, axes = plt.subplots(1, len(cols), figsize=(3.2 * len(cols), 3.2))
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
    fig.tight_layout()
    return _save(fig, path)
