"""Pictures of the finite-sample simulator: Figure 4 and the semi-realistic comparison.

Figure 4 of the paper shows, for a trained model, the set mask (which entries of A are
in-set), the learned positional attention Â, and the test error along training. Here:
(a) the set mask 1[j ∈ S(i)], (b) the learned Â with its diagonal β hidden (it is not
trained), (c) test error against y and against f, (d) cos(v̂, w*) and the patch association
(Definition 2.2) against steps.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.model import association
from ..core.plotting import COLORS, GREY, LABELS, axes_or_new, legend_outside, styled
from ..core.result import Result


@styled
def plot_figure4(res: Result, axes=None):
    """Figure 4: set mask, learned Â, test error and cos(v̂, w*) against steps.

    Args:
        res: a simulator :class:`~theorydyn.core.result.Result`.
        axes: four axes to draw into (a new 1×4 figure when None).

    Returns:
        The matplotlib Figure.
    """
    s = res.setting
    t = res.trajectory
    fig, ax = axes_or_new(axes, 1, 4, figsize=(17, 4.6))
    ax[0].imshow(s.same_set, cmap="Greys", interpolation="nearest")
    ax[0].set_title(f"set mask (D={s.D}, C={s.C})")
    ax[0].set_xlabel("patch j")
    ax[0].set_ylabel("patch i")
    A = np.array(res.A, dtype=float)
    np.fill_diagonal(A, np.nan)  # β is fixed, not learned
    lim = np.nanmax(np.abs(A)) or 1.0
    im = ax[1].imshow(A, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax[1], fraction=0.046, label="learned attention Â_ij")
    ax[1].set_xlabel("patch j")
    ax[1].set_ylabel("patch i")
    ax[1].set_title(f"learned Â (off-diagonal), step {int(t['step'].iloc[-1]) if len(t) else 0}")
    for a in ax[:2]:
        a.grid(False)  # matrices: no grid over the cells
    if len(t):
        ax[2].plot(t["step"], t["err_y"], color=COLORS["err_y"], label=LABELS["err_y"])
        if t["err_f"].notna().any():
            ax[2].plot(t["step"], t["err_f"], color=COLORS["err_f"], ls="--", label=LABELS["err_f"])
        tol = res.phases.err_tol
        ax[2].axhline(tol, color=GREY, lw=0.8, ls=":", label=f"{tol:.0%}: Event III's level")
        ax[2].set_yscale("log")
        ax[2].set_xlabel("GD step")
        ax[2].set_ylabel("test error (log scale)")
        ax[2].set_title(f"test error; at step {int(t['step'].iloc[-1])}: {t['err_y'].iloc[-1]:.3f} vs y")
        legend_outside(ax[2], where="below", ncol=1)
        ax[3].plot(t["step"], t["cos_v"], color=COLORS["cos_v"], label=LABELS["cos_v"])
        ax[3].plot(t["step"], t["association"], color=COLORS["association"], label=LABELS["association"])
        ax[3].set_ylim(-0.05, 1.05)
        ax[3].set_xlabel("GD step")
        ax[3].set_ylabel("cosine / fraction of rows")
        legend_outside(ax[3], where="below", ncol=1)
        ax[3].set_title(
            f"association: peak {t['association'].max():.2f}, at step {int(t['step'].iloc[-1])}: "
            f"{t['association'].iloc[-1]:.2f}"
        )
    fig.suptitle(_setting_text(res))
    return fig


def _setting_text(res: Result) -> str:
    """One line with every number the run depends on (setting, GD options, seed, status)."""
    s, o = res.setting, res.options
    return (
        f"realistic GD (Theorem 4.2): D={s.D}, C={s.C}, q={s.q:g}, ν={s.nu:g}, N={o.get('N')}, η={o.get('eta'):g}, "
        f"{o.get('steps')} steps, ω={o.get('omega'):g}, X in {o.get('dtype')}, {o.get('n_test')} test samples, "
        f"seed {o.get('seed')} (status: {res.status})"
    )


@styled
def plot_attention(res: Result, axes=None):
    """The learned Â of a simulator run against the set mask, with the histogram of its in-set and
    cross-set entries and the patch association (Definition 2.2) in the title.

    Args:
        res: a simulator :class:`~theorydyn.core.result.Result`.
        axes: three axes to draw into (a new figure when None).

    Returns:
        The matplotlib Figure.
    """
    s = res.setting
    A = np.array(res.A, dtype=float)
    off = A.copy()
    np.fill_diagonal(off, np.nan)  # the diagonal is the fixed β, not learned
    fig, ax = axes_or_new(axes, 1, 3, figsize=(14, 4.4), gridspec_kw=dict(width_ratios=[1, 1.2, 1.1]))
    ax[0].imshow(s.same_set, cmap="Greys", interpolation="nearest")
    ax[0].set_title(f"set mask: i, j in the same S_ℓ (C={s.C})")
    lim = np.nanmax(np.abs(off))
    im = ax[1].imshow(off, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax[1], shrink=0.9, label="learned attention Â_ij")
    ax[1].set_title("learned Â (off-diagonal)")
    vals_in, vals_x = A[s.in_set_mask], A[s.cross_set_mask]
    ax[2].hist(vals_x, bins=60, alpha=0.7, label=f"cross-set entries ({vals_x.size})", color=GREY, log=True)
    ax[2].hist(vals_in, bins=30, alpha=0.8, label=f"in-set entries ({vals_in.size})", color=COLORS["gamma"], log=True)
    ax[2].set_title(f"entries of Â; patch association {association(s, A):.2f}")
    ax[2].set_xlabel("learned attention Â_ij")
    ax[2].set_ylabel("number of entries (log scale)")
    legend_outside(ax[2], where="below")
    for a in ax[:2]:
        a.set_xlabel("patch j")
        a.set_ylabel("patch i")
        a.grid(False)  # matrices: no grid over the cells
    fig.suptitle(_setting_text(res))
    return fig


@styled
def plot_comparison(
    gaps: pd.DataFrame,
    curves: dict | None = None,
    axes=None,
    final_gap: dict | None = None,
    setting: str = "",
):
    """The semi-realistic comparison: gap to the reduced dynamics against N (log-log), and optionally
    the curves themselves.

    Args:
        gaps: :func:`theorydyn.experiments.semirealistic.compare_with_reduced`'s table (columns N, gap_alpha,
            gap_gamma, gap_rho, gap_err_f; one row per N and seed): the max over s of |simulator − reduced|,
            drawn as the mean over seeds.
        curves: optional {label: DataFrame with s, alpha, gamma, rho, err_f} (e.g. the reduced
            flow and one simulator run per N) drawn in extra panels.
        axes: 1 (+3 with curves) axes to draw into (a new figure when None).
        final_gap: optional {N: |err_f simulator − reduced| at the last s}, drawn hollow beside the max.
        setting: the setting, written as the figure's title.

    Returns:
        The matplotlib Figure.
    """
    n_extra = 3 if curves else 0
    import matplotlib as mpl

    fig, ax = axes_or_new(axes, 1, 1 + n_extra, figsize=(4.3 * (1 + n_extra) + 2.4, 4.2), squeeze=False)
    ax = np.ravel(ax)
    g = gaps.groupby("N").mean(numeric_only=True).reset_index()
    for col in ("gap_alpha", "gap_gamma", "gap_rho", "gap_err_f"):
        q = col.removeprefix("gap_")
        if col in g and g[col].notna().any():
            ax[0].loglog(g["N"], g[col], "o-", color=COLORS[q], label=f"{LABELS[q].split(' (')[0]}: max over s")
    if final_gap:
        n = np.array([int(k) for k in final_gap], float)
        v = np.array([np.nan if x is None else x for x in final_gap.values()], float)
        ax[0].loglog(n, v, "o--", mfc="none", color=COLORS["err_f"], label="test error vs f at the last step (seed 0)")
    if len(g) > 1:
        n0 = g["N"].iloc[0]
        y0 = g["gap_alpha"].iloc[0]
        ax[0].loglog(g["N"], y0 * np.sqrt(n0 / g["N"]), ls=":", color=GREY, lw=0.8, label="∝ N$^{-1/2}$ (a guide)")
    ax[0].set_xlabel("N (training samples, log scale)")
    ax[0].set_ylabel("|simulator − reduced| (log scale)")
    ax[0].set_title(f"gap against N (mean of {gaps['seed'].nunique() if 'seed' in gaps else 1} seeds)")
    legend_outside(ax[0], where="below", ncol=1)
    if curves:
        cmap = mpl.colormaps["viridis"]
        runs = [label for label in curves if label != "reduced"]
        for k, col in enumerate(("alpha", "gamma", "err_f")):
            for label, df in curves.items():
                if label == "reduced":
                    kw = dict(color="k", lw=2.2, label="reduced GD recursion (N = ∞)")
                else:
                    kw = dict(color=cmap(0.9 * runs.index(label) / max(len(runs) - 1, 1)), lw=1.1, label=label)
                ax[1 + k].plot(df["s"], df[col], **kw)
            ax[1 + k].set_xlabel("s = η·t")
            ax[1 + k].set_ylabel(LABELS[col])
            ax[1 + k].set_title(f"{LABELS[col]} (seed 0)")
        legend_outside(ax[-1], *ax[1].get_legend_handles_labels(), title="simulator, N samples")
    if setting:
        fig.suptitle(f"finite-sample GD against the reduced dynamics: {setting}")
    return fig
