"""Figures of the claims outside the dynamics (Section 3): ``theorem31`` (the exact GLM error scan) and
``figure2`` (the positional-attention ViT). Registered in :data:`theorydyn.figures.REGISTRY` on import
by :mod:`theorydyn.figures.core`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.glm import plot_theorem_3_1_scan, theorem_3_1_scan
from ..core.plotting import axes_or_new
from ..core.setting import Setting
from ..experiments.figure2 import paper_init
from ..positional import figure2_setting
from ..positional import run as run_figure2
from ..positional.model import chance_association
from ..positional.plot import make_figure
from ..positional.train import FULL as FIG2_FULL
from ..positional.train import QUICK as FIG2_QUICK
from .record import _num, register


# ---- the claims outside the dynamics ----------------------------------------------------------------
def _t31_setting(quick: bool) -> dict:
    s = Setting()
    return dict(D=[64, 128, 256], C=[4, 8, 16], n_q=40, n_grid=48, p=s.p, nu="1/d", beta=s.beta, exact=True)


def _t31_numbers(data) -> dict:
    _curves, crossings = data
    return {
        f"D{int(r['D'])}_C{int(r['C'])}": dict(x_star=_num(r["x_star"]), x_star_cond=_num(r.get("x_star_cond")))
        for _, r in crossings.iterrows()
    }


def _draw_theorem31(data, axes=None):
    fig, ax = axes_or_new(axes, figsize=(9.8, 4.8))
    plot_theorem_3_1_scan(ax, *data)
    ax.set_title(
        "Theorem 3.1: exact error of the equal-weight GLM with the best link, D ∈ {64, 128, 256}, C ∈ {4, 8, 16}, "
        "p = 3, ν = 1/d (no sampling)"
    )
    return fig


@register(
    "theorem31",
    "Theorem 3.1: the exact error of the equal-weight GLM with the best link against q(D−C)/C² for "
    "D ∈ {64, 128, 256}, C ∈ {4, 8, 16}",
    "Theorem 3.1 (a GLM errs with probability ≥ 1/8) holds only once q(D−C) ≳ 0.75·C²: the exact error "
    "collapses on x = q(D−C)/C² and crosses 1/8 at x* = {D64_C4[x_star]:.3f} (D = 64, C = 4), "
    "{D256_C4[x_star]:.3f} (D = 256, C = 4), {D64_C8[x_star]:.3f} (D = 64, C = 8), {D256_C16[x_star]:.3f} "
    "(D = 256, C = 16), and not at all for q ≤ 1 at D = 64, 128 with C = 16 (the ledger's DEVIATES row); "
    "dotted: q(D−C) = C, the toolkit's scope edge.",
    (),
    _draw_theorem31,
    _t31_setting,
    _t31_numbers,
)
def fig_theorem31(quick: bool, recompute: bool = False):
    return theorem_3_1_scan()


def _fig2_setting(quick: bool) -> dict:
    s = figure2_setting()
    pi = paper_init(s)
    return dict(
        D=s.D, C=s.C, q=s.q, seeds=[0, 1, 2, 3, 4], p_std=pi["p_std"], omega=pi["omega"],
        **(FIG2_QUICK if quick else FIG2_FULL),
    )  # fmt: skip


def _fig2_numbers(results) -> dict:
    out: dict[str, Any] = {}
    for kind, rs in results.items():
        out[kind] = dict(
            mean_final_err=_num(np.mean([r.final_err for r in rs])),
            mean_association=_num(np.mean([r.assoc for r in rs])),
            mean_association_init=_num(np.mean([r.assoc_init for r in rs])),
            mean_contrast=_num(np.mean([r.contrast for r in rs])),
        )
    return out


def _draw_figure2(results, axes=None):
    st = _fig2_setting(results["positional"][0].params.get("N") == FIG2_QUICK["N"])
    fig = make_figure(results)
    fig.suptitle(
        f"Figure 2: D={st['D']}, C={st['C']}, q={st['q']:g}, N={st['N']}, {st['steps']} Adam steps (lr {st['lr']}), "
        f"P ~ N(0, {st['p_std']:.3g}²), ω={st['omega']:.3g}, seeds 0–4"
    )
    return fig


def _fig2_holds(n: dict) -> list[str]:
    """Figure 2's claim, at the ledger's thresholds (:mod:`theorydyn.claims.figure2`): low error (mean
    ≤ 0.05, both models) and the learned PᵀP not free of association (above chance,
    :func:`~theorydyn.positional.model.chance_association`) with a positive block contrast."""
    chance = chance_association(figure2_setting())
    bad = [f"{m}: mean final error {n[m]['mean_final_err']:.4f} > 0.05" for m in ("positional", "T")
           if n[m]["mean_final_err"] > 0.05]  # fmt: skip
    if not n["positional"]["mean_association"] > chance:
        bad.append(f"association {n['positional']['mean_association']:.4f} at chance ({chance:.4f}) or below")
    if not n["positional"]["mean_contrast"] > 0:
        bad.append(f"block contrast {n['positional']['mean_contrast']:.3f} <= 0")
    return bad


@register(
    "figure2",
    "Figure 2: a positional-attention ViT with learned P on Gaussian CNN-labelled data, 5 seeds",
    "Figure 2 / Section 3: low test error is reached ({positional[mean_final_err]:.3f} for the ViT, "
    "{T[mean_final_err]:.3f} for model (T); means of 5 seeds), but from the paper's initialisation the learned "
    "PᵀP is *not* free of patch association: {positional[mean_association]:.3f} of rows at the end (chance "
    "0.0022), block contrast z = {positional[mean_contrast]:.2f} (the ledger's DEVIATES row).",
    ("torch",),
    _draw_figure2,
    _fig2_setting,
    _fig2_numbers,
    holds=_fig2_holds,
)
def fig_figure2(quick: bool, recompute: bool = False):
    # the ledger's main row: P and v at Parametrization 3.1's scale (experiments.figure2.paper_init)
    st = _fig2_setting(quick)
    return run_figure2(figure2_setting(), seeds=st["seeds"], quick=quick, p_std=st["p_std"], omega=st["omega"])
