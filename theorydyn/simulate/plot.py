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
from ..core.plotting import axes_or_new
from ..core.result import Result


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
    fig, ax = axes_or_new(axes, 1, 4, figsize=(18, 4.6), layout="constrained")
    ax[0].imshow(s.same_set, cmap="Greys", interpolation="nearest")
    ax[0].set_title(f"set mask (D={s.D}, C={s.C})")
    ax[0].set_xlabel("j")
    ax[0].set_ylabel("i")
    A = np.array(res.A, dtype=float)
    np.fill_diagonal(A, np.nan)  # β is fixed, not learned
    lim = np.nanmax(np.abs(A)) or 1.0
    im = ax[1].imshow(A, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax[1], fraction=0.046, label="Â_ij")
    ax[1].set_xlabel("j")
    ax[1].set_ylabel("i")
    ax[1].set_title(f"learned Â (off-diagonal), step {int(t['step'].iloc[-1]) if len(t) else 0}")
    if len(t):
        ax[2].plot(t["step"], t["err_y"], label="test error vs y")
        if t["err_f"].notna().any():
            ax[2].plot(t["step"], t["err_f"], label="test error vs f")
        tol = res.phases.err_tol
        ax[2].axhline(tol, color="grey", lw=0.8, ls=":", label=f"{tol:.0%}")
        ax[2].set_yscale("log")
        ax[2].set_xlabel("step")
        ax[2].set_ylabel("test error (log scale)")
        ax[2].set_title(f"test error; at step {int(t['step'].iloc[-1])}: {t['err_y'].iloc[-1]:.3f} vs y")
        ax[2].legend(fontsize=8)
        ax[3].plot(t["step"], t["cos_v"], label="cos(v̂, w*)")
        ax[3].plot(t["step"], t["association"], label="patch association")
        ax[3].set_ylim(-0.05, 1.05)
        ax[3].set_xlabel("step")
        ax[3].set_ylabel("cosine / fraction of rows")
        ax[3].legend(fontsize=8)
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
    fig, ax = axes_or_new(
        axes, 1, 3, figsize=(14, 4.4), layout="constrained", gridspec_kw=dict(width_ratios=[1, 1.2, 1.1])
    )
    ax[0].imshow(s.same_set, cmap="Greys", interpolation="nearest")
    ax[0].set_title(f"set mask: i, j in the same S_ℓ (C={s.C})")
    lim = np.nanmax(np.abs(off))
    im = ax[1].imshow(off, cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
    fig.colorbar(im, ax=ax[1], shrink=0.9, label="Â_ij")
    ax[1].set_title("learned Â (off-diagonal)")
    vals_in, vals_x = A[s.in_set_mask], A[s.cross_set_mask]
    ax[2].hist(vals_x, bins=60, alpha=0.7, label=f"cross-set ({vals_x.size})", color="tab:gray", log=True)
    ax[2].hist(vals_in, bins=30, alpha=0.8, label=f"in-set ({vals_in.size})", color="tab:red", log=True)
    ax[2].set_title(f"entries of Â; patch association {association(s, A):.2f}")
    ax[2].set_xlabel("Â_ij")
    ax[2].set_ylabel("count")
    ax[2].legend(fontsize=8)
    for a in ax[:2]:
        a.set_xlabel("j")
        a.set_ylabel("i")
    fig.suptitle(_setting_text(res), fontsize=10)
    return fig


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
    fig, ax = axes_or_new(axes, 1, 1 + n_extra, figsize=(4.6 * (1 + n_extra), 4.4), squeeze=False, layout="constrained")
    ax = np.ravel(ax)
    g = gaps.groupby("N").mean(numeric_only=True).reset_index()
    colors = {}
    for col in ("gap_alpha", "gap_gamma", "gap_rho", "gap_err_f"):
        if col in g and g[col].notna().any():
            (line,) = ax[0].loglog(g["N"], g[col], "o-", label=col.replace("gap_", "") + " (max over s)")
            colors[col] = line.get_color()
    if final_gap:
        n = np.array([int(k) for k in final_gap], float)
        v = np.array([np.nan if x is None else x for x in final_gap.values()], float)
        ax[0].loglog(
            n, v, "o--", mfc="none", color=colors.get("gap_err_f", "C3"), label="err_f at the last step (seed 0)"
        )
    if len(g) > 1:
        n0 = g["N"].iloc[0]
        y0 = g["gap_alpha"].iloc[0]
        ax[0].loglog(g["N"], y0 * np.sqrt(n0 / g["N"]), "k:", lw=0.8, label="∝ N^{-1/2}")
    ax[0].set_xlabel("N (training samples)")
    ax[0].set_ylabel("|simulator − reduced|")
    ax[0].set_title(f"gap against N (mean of {gaps['seed'].nunique() if 'seed' in gaps else 1} seeds)")
    ax[0].legend(fontsize=7)
    if curves:
        for k, col in enumerate(("alpha", "gamma", "err_f")):
            for label, df in curves.items():
                ax[1 + k].plot(df["s"], df[col], label=label, lw=2.2 if label == "reduced" else 1.2)
            ax[1 + k].set_xlabel("s = η t")
            ax[1 + k].set_ylabel(col)
            ax[1 + k].set_title(f"{col} (seed 0)")
        ax[1].legend(fontsize=7)
    if setting:
        fig.suptitle(f"finite-sample GD against the reduced dynamics: {setting}", fontsize=9)
    return fig
