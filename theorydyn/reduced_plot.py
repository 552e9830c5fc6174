"""Picture of a reduced trajectory: α, γ, ρ, risk and errors against log s, phases T0/T1/T2 marked."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def plot_trajectory(traj: pd.DataFrame, path: str | Path, title: str | None = None) -> Path:
    """Three panels against log s (rows with s > 0): (α), (γ, ρ and the in-set mass Λ+(C−1)Γ
    when available), (risk, err_y, err_f); vertical lines at T0, T1, T1_mass, T2 from
    ``traj.attrs["phases"]``. Returns the path written (PNG)."""
    path = Path(path)
    t = traj[traj["s"] > 0]
    ph = traj.attrs.get("phases", {})
    fig, axes = plt.subplots(3, 1, figsize=(7, 8.5), sharex=True)
    axes[0].plot(t["s"], t["alpha"], color="C0", label="α (v = α w*)")
    axes[1].plot(t["s"], t["gamma"], color="C1", label="γ (in-set)")
    axes[1].plot(t["s"], t["rho"], color="C2", label="ρ (cross-set)")
    C = traj.attrs.get("setting", {}).get("C")
    if C is not None and "Lambda" in t and "Gamma" in t:
        ax2 = axes[1].twinx()
        ax2.plot(t["s"], t["Lambda"] + (C - 1) * t["Gamma"], color="C4", ls=":", label="in-set mass Λ+(C−1)Γ")
        ax2.set_ylim(0, 1)
        ax2.set_ylabel("attention mass")
        ax2.legend(loc="center left", fontsize=8)
    if "risk" in t:
        axes[2].plot(t["s"], t["risk"], color="k", label="risk")
    if "err_y" in t:
        axes[2].plot(t["s"], t["err_y"], color="C3", label="error vs y")
    axes[2].plot(t["s"], t["err_f"], color="C5", ls="--", label="error vs f")
    axes[2].set_yscale("log")
    marks = [("T0", "C0"), ("T1", "C1"), ("T1_mass", "C4"), ("T2", "C3")]
    for ax in axes:
        ax.set_xscale("log")
        for key, color in marks:
            if ph.get(key) is not None:
                ax.axvline(ph[key], color=color, lw=0.8, ls="-.", alpha=0.7)
        ax.legend(loc="upper left", fontsize=8)
    for j, (key, color) in enumerate(marks):
        if ph.get(key) is not None:  # staggered: T1_mass and T2 often coincide
            axes[0].text(ph[key], 1.01 + 0.06 * (j % 2), key, color=color, fontsize=8, transform=axes[0].get_xaxis_transform(),
                         ha="center", va="bottom")
    axes[2].set_xlabel("s = η t")
    axes[0].set_ylabel("α")
    axes[1].set_ylabel("logit")
    axes[2].set_ylabel("risk / error")
    opts = traj.attrs.get("options", {})
    fig.suptitle(title or f"reduced dynamics ({opts.get('method', '?')}), status: {traj.attrs.get('status', '?')}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
