"""Picture of a reduced trajectory: α, γ, ρ, risk and errors against log s, phases marked."""

from __future__ import annotations

from ..core.plotting import COLORS, axes_or_new
from ..core.result import Result

_MARKS = ("T0", "T1", "T1_mass", "T2")


def plot_trajectory(res: Result, axes=None, title: str | None = None):
    """Three panels against log s (rows with s > 0): α; γ, ρ and the in-set attention mass; risk,
    err_y, err_f. Vertical lines at the phase times T0, T1, T1_mass, T2 of ``res.phases``.

    Works for either solver's :class:`~theorydyn.core.result.Result` (the columns are the same).

    Args:
        res: the result to draw.
        axes: three matplotlib axes to draw into (a new figure when None).

    Returns:
        The matplotlib Figure.
    """
    fig, axes = axes_or_new(axes, 3, 1, figsize=(7.5, 9), sharex=True, layout="constrained")
    t = res.trajectory[res.trajectory["s"] > 0]
    ph = res.phases
    axes[0].plot(t["s"], t["alpha"], color=COLORS["alpha"], label="α (v = α w*)")
    axes[1].plot(t["s"], t["gamma"], color=COLORS["gamma"], label="γ (in-set)")
    axes[1].plot(t["s"], t["rho"], color=COLORS["rho"], label="ρ (cross-set)")
    ax2 = axes[1].twinx()
    ax2.plot(t["s"], t["in_mass"], color=COLORS["T1_mass"], ls=":", label="in-set attention mass")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("attention mass")
    ax2.grid(False)
    ax2.legend(loc="center left")
    axes[2].plot(t["s"], t["risk"], color=COLORS["risk"], label="risk")
    axes[2].plot(t["s"], t["err_y"], color=COLORS["err_y"], label="error vs y")
    axes[2].plot(t["s"], t["err_f"], color=COLORS["err_f"], ls="--", label="error vs f")
    axes[2].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log")
        for key in _MARKS:
            if getattr(ph, key) is not None:
                ax.axvline(getattr(ph, key), color=COLORS[key], lw=0.8, ls="-.", alpha=0.7)
        ax.legend(loc="lower left" if ax is axes[2] else "upper left")
    for j, key in enumerate(_MARKS):
        if getattr(ph, key) is not None:  # staggered: T1_mass and T2 often coincide
            axes[0].text(
                getattr(ph, key),
                1.01 + 0.06 * (j % 2),
                key,
                color=COLORS[key],
                fontsize=8,
                transform=axes[0].get_xaxis_transform(),
                ha="center",
                va="bottom",
            )
    axes[2].set_xlabel("s = η t")
    axes[0].set_ylabel("α")
    axes[1].set_ylabel("logit")
    axes[2].set_ylabel("risk / error")
    s = res.setting
    setting = f"D={s.D}, C={s.C}, q={s.q:g}, d={s.d}, τ={s.tau:g}"
    method = res.options.get("method", "gd")
    fig.suptitle(title or f"{res.solver} dynamics ({method}) · {setting} · status: {res.status}")
    return fig
