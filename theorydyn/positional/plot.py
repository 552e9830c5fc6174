"""Figure 2's plots (docs/theory.md §7): curves over seeds and Gram matrices, drawn into given axes.

No backend is chosen here (:mod:`theorydyn.core.plotting`'s rule); :func:`make_figure` returns a
:class:`matplotlib.figure.Figure`.
"""

from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from ..core.plotting import COLORS, GREY, STYLE, legend_outside, styled
from ..core.setting import Setting
from ..core.stats import mean_ci
from .model import block_contrast, chance_association, figure2_setting
from .train import TrainRun

_LABELS = {"positional": "ViT, positional attention: PᵀP", "T": "model (T): Â"}
_COLORS = {"positional": COLORS["alpha"], "T": COLORS["gamma"]}


def plot_curve(
    ax,
    results: dict[str, list[TrainRun]],
    attr: str = "test_err",
    ylabel: str = "test error Pr[y F ≤ 0]",
    band: str = "minmax",
) -> None:
    """A recorded curve (``attr`` of :class:`TrainRun`: test_err, train_loss, assoc_curve,
    contrast_curve) against Adam steps: the mean over seeds, a band (``"minmax"`` over seeds or
    ``"ci"``, the 95% t-interval), one line per kind."""
    for kind, rs in results.items():
        steps = rs[0].steps
        Y = np.array([getattr(r, attr) for r in rs])
        (line,) = ax.plot(
            steps, Y.mean(0), color=_COLORS.get(kind), label=f"{_LABELS.get(kind, kind)} ({len(rs)} seeds)"
        )
        if band == "ci" and len(rs) > 1:
            lo, hi = np.array([mean_ci(col)[1:] for col in Y.T]).T
        else:
            lo, hi = Y.min(0), Y.max(0)
        ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.25, lw=0)
    ax.set_xlabel("Adam steps (full batch)")
    ax.set_ylabel(ylabel)


@styled
def plot_error(ax, results: dict[str, list[TrainRun]], plateau: float | None = None) -> None:
    """Test error against Adam steps (mean over seeds, min–max band), with the uniform-attention
    plateau err(sign Σ_j ⟨w*, X_j⟩) as a dotted line."""
    plot_curve(ax, results, "test_err", "test error Pr[y F ≤ 0]")
    if plateau is not None:
        ax.axhline(plateau, color=GREY, ls=":", lw=1, label=f"uniform attention: {plateau:.3f}")
    ax.set_ylim(0, None)
    legend_outside(ax, where="below", ncol=1)


@styled
def plot_structure(ax, s: Setting, results: dict[str, list[TrainRun]]) -> None:
    """Block contrast z (:func:`block_contrast`) of PᵀP and of Â against steps, with the value of
    perfect blocks and 0 (random) as references."""
    plot_curve(ax, results, "contrast_curve", "block contrast z (in-set − cross-set)/std")
    ax.axhline(block_contrast(s, s.same_set.astype(float)), color=GREY, ls="--", lw=1, label="perfect blocks")
    ax.axhline(0.0, color=GREY, ls=":", lw=1, label="random (expectation)")
    legend_outside(ax, where="below", ncol=1)


@styled
def plot_association(ax, s: Setting, results: dict[str, list[TrainRun]]) -> None:
    """Patch association (Definition 2.2, fraction of rows) of PᵀP and of Â against steps."""
    plot_curve(ax, results, "assoc_curve", "patch association (fraction of rows)")
    ax.axhline(chance_association(s), color=GREY, ls=":", lw=1, label=f"chance {chance_association(s):.4f}")
    ax.set_ylim(-0.02, 1.02)
    legend_outside(ax, where="below", ncol=1)


@styled
def plot_gram(
    ax,
    s: Setting,
    G: np.ndarray,
    title: str = "",
    label: str = "cos(p_i, p_j)",
    normalise: bool = True,
    mask_diagonal: bool = False,
):
    """A (D, D) matrix with the patches ordered set by set and the set boundaries drawn.

    ``normalise``: show G_ij / √(G_ii G_jj) (the cosine for PᵀP, as in Figure 1a), else G itself.
    ``mask_diagonal``: draw the diagonal grey (for Â, whose diagonal β is fixed, not learned).
    Returns the image (for a colorbar).
    """
    G = np.array(G, dtype=float)
    if normalise:
        dg = np.sqrt(np.abs(np.diag(G)))
        G = G / np.outer(dg, dg)
    if mask_diagonal:
        np.fill_diagonal(G, np.nan)
    order = np.asarray(s.sets).ravel()
    M = G[np.ix_(order, order)]
    lim = 1.0 if normalise else float(np.nanmax(np.abs(M)))
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="0.7")  # a copy: the global map is untouched
    im = ax.imshow(M, cmap=cmap, vmin=-lim, vmax=lim)
    ax.grid(False)  # a matrix: no grid over the cells
    for b in range(1, s.L):
        ax.axhline(b * s.C - 0.5, color="k", lw=1)
        ax.axvline(b * s.C - 0.5, color="k", lw=1)
    ax.set_xticks(range(s.D), [str(i) for i in order], fontsize=6)
    ax.set_yticks(range(s.D), [str(i) for i in order], fontsize=6)
    ax.set_xlabel("patch j (grouped by set S_ℓ)")
    ax.set_ylabel("patch i")
    ax.set_title(title, fontsize=8)
    cb = ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cb.set_label(label)
    return im


@styled
def make_figure(results: dict[str, list[TrainRun]], s: Setting | None = None, seed_index: int = 0):
    """Figure 2 over seeds. Top: test error, block contrast z and patch association of the Gram
    against steps (mean, min–max band). Bottom, for one seed (the first, not a chosen one): the
    untrained and the learned PᵀP (cosines) and model (T)'s learned Â.
    Returns a matplotlib Figure (no backend chosen here)."""
    s = figure2_setting() if s is None else s
    pos = results["positional"]
    plateau = float(np.mean([r.linear_err for r in pos]))
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(15, 9.4))
    axes = fig.subplots(2, 3)
    p0 = pos[0].params
    plot_error(axes[0, 0], results, plateau)
    axes[0, 0].set_title(f"test error (D={s.D}, C={s.C}, N={p0['N']}, Adam lr {p0['lr']})")
    plot_structure(axes[0, 1], s, results)
    axes[0, 1].set_title("block structure of the learned matrix")
    plot_association(axes[0, 2], s, results)
    axes[0, 2].set_title("patch association (Definition 2.2)")
    r = pos[seed_index]
    plot_gram(
        axes[1, 0], s, r.gram_init, f"untrained PᵀP (seed {r.seed}): assoc. {r.assoc_init:.2f}, z {r.contrast_init:.2f}"
    )
    plot_gram(
        axes[1, 1],
        s,
        r.gram,
        f"learned PᵀP (seed {r.seed}): assoc. {r.assoc:.2f}, z {r.contrast:.2f}, err {r.final_err:.3f}",
    )
    if "T" in results:
        t = results["T"][seed_index]
        plot_gram(
            axes[1, 2],
            s,
            t.gram,
            f"model (T) learned Â (seed {t.seed}): assoc. {t.assoc:.2f}, z {t.contrast:.2f}, err {t.final_err:.3f}",
            label="Â_ij (diagonal β fixed, grey)",
            normalise=False,
            mask_diagonal=True,
        )
    else:
        axes[1, 2].set_axis_off()
    return fig
