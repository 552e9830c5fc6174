"""Picture of a reduced trajectory: α, γ, ρ, risk and errors against log s, phases marked."""

from __future__ import annotations

from ..core.plotting import COLORS, LABELS, axes_or_new, censored_handle, legend_outside, styled
from ..core.result import Result

_MARKS = ("T0", "T1", "T1_mass", "T2")
#: each phase's line style, so that T1_mass and T2 (often close) stay apart without colour
_MARK_STYLE = {"T0": (0, (4, 2)), "T1": (0, (1, 1.5)), "T1_mass": (0, (6, 2, 1, 2)), "T2": (0, (2, 1))}


@styled
def plot_trajectory(res: Result, axes=None, title: str | None = None):
    """Three panels against log s (rows with s > 0): α; γ, ρ and the in-set attention mass; risk,
    err_y, err_f. Vertical lines at the phase times T0, T1, T1_mass, T2 of ``res.phases``, named with
    their values in a legend beside the panels (none over the data); a phase not reached by the end of
    the run is listed there as such (an open triangle, the scans' mark of a censored time).

    Works for either solver's :class:`~theorydyn.core.result.Result` (the columns are the same).

    Args:
        res: the result to draw.
        axes: three matplotlib axes to draw into (a new figure when None).
        title: the figure's title (default: the solver, the setting and the status).

    Returns:
        The matplotlib Figure.
    """
    fig, axes = axes_or_new(axes, 3, 1, figsize=(8.6, 8.4), sharex=True)
    t = res.trajectory[res.trajectory["s"] > 0]
    ph = res.phases
    axes[0].plot(t["s"], t["alpha"], color=COLORS["alpha"], label=LABELS["alpha"])
    axes[1].plot(t["s"], t["gamma"], color=COLORS["gamma"], label=LABELS["gamma"])
    axes[1].plot(t["s"], t["rho"], color=COLORS["rho"], label=LABELS["rho"])
    ax2 = axes[1].twinx()
    ax2.plot(t["s"], t["in_mass"], color=COLORS["in_mass"], ls=":", label=LABELS["in_mass"] + " (right axis)")
    ax2.set_ylim(0, 1)
    ax2.set_ylabel("in-set attention mass")
    ax2.grid(False)
    axes[2].plot(t["s"], t["risk"], color=COLORS["risk"], label=LABELS["risk"])
    axes[2].plot(t["s"], t["err_y"], color=COLORS["err_y"], label=LABELS["err_y"])
    axes[2].plot(t["s"], t["err_f"], color=COLORS["err_f"], ls="--", label=LABELS["err_f"])
    axes[2].set_yscale("log")
    marks = []
    horizon = float(t["s"].iloc[-1]) if len(t) else float("nan")
    for ax in axes:
        ax.set_xscale("log")
        for key in _MARKS:
            v = getattr(ph, key)
            if v is not None:
                line = ax.axvline(v, color=COLORS[key], lw=1.0, ls=_MARK_STYLE[key], alpha=0.9)
                if ax is axes[0]:
                    line.set_label(f"{LABELS[key]}: s = {v:.3g}")
                    marks.append(line)
            elif ax is axes[0]:
                marks.append(censored_handle(f"{LABELS[key]}: not reached by s = {horizon:.3g}", COLORS[key]))
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        if ax is axes[1]:
            h2, l2 = ax2.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
        if ax is axes[0]:  # the phase times, listed once beside the first panel
            handles, labels = [h for h in handles if h not in marks], [h.get_label() for h in handles if h not in marks]
            legend_outside(ax, handles, labels)
            ax.add_artist(ax.get_legend())
            legend_outside(ax, marks, title="phase times (vertical lines)", bbox_to_anchor=(1.02, 0.55))
        else:
            legend_outside(ax, handles, labels, bbox_to_anchor=(1.12, 1.0) if ax is axes[1] else (1.02, 1.0))
    axes[2].set_xlabel("s = η·t (log scale)")
    axes[0].set_ylabel("α = ⟨v, w*⟩")
    axes[1].set_ylabel("attention logit")
    axes[2].set_ylabel("risk and test error (log scale)")
    s = res.setting
    setting = f"D={s.D}, C={s.C}, q={s.q:g}, d={s.d}, τ={s.tau:g}"
    method = res.options.get("method", "gd")
    fig.suptitle(f"{res.solver} dynamics ({method}) · {setting} · status: {res.status}" if title is None else title)
    return fig
