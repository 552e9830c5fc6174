"""Figures of the transfer experiment (Theorems 5.1, 5.2): ``transfer_target`` and ``transfer_curves``,
read from the ledger's transfer folder. Registered in :data:`theorydyn.figures.REGISTRY` on import by
:mod:`theorydyn.figures.core`."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from .. import transfer
from ..core.plotting import axes_or_new
from .record import _num, register

# ---- transfer ---------------------------------------------------------------------------------------
_TRANSFER: dict[bool, tuple] = {}


def _transfer_dir(quick: bool) -> Path:
    from ..claims.transfer import checks_dir  # the ledger's folder: the figures read its rows

    return checks_dir(quick)


def _transfer_setting(quick: bool) -> dict:
    cfg = dict(transfer.QUICK if quick else transfer.FULL)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}


def transfer_tables(quick: bool, recompute: bool = False):
    """The transfer experiment's tables (quick: QUICK sizes, else FULL): the very rows behind the
    ledger's Theorem 5.1/5.2 verdicts (the same resumable folder, ``<run dir>/transfer_checks[_quick]``;
    ``recompute``: a fresh temporary folder instead)."""
    if recompute or quick not in _TRANSFER:
        cfg: dict[str, Any] = dict(transfer.QUICK if quick else transfer.FULL)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) if recompute else _transfer_dir(quick)
            _raw, summary, tgt, slopes, _up = transfer.run(
                transfer.base_setting(), cfg["Ds"], transfer.options_from(cfg), out=out, progress=None
            )
            _TRANSFER[quick] = (summary, tgt, slopes, pd.read_csv(out / "transfer_levels.csv"))
    return _TRANSFER[quick]


def _transfer_numbers(tables) -> dict:
    """Ñ_target per method, level and D (kind, lo, hi: a crossing, a bracket at the floor Ñ ≤ 2, or a
    lower bound at the grid's cap), the count of D reached by the floor per method and level, and the
    log-log slopes the claims quote (its bracket and 95% intervals over seeds, and over seeds and sizes)."""
    _summary, tgt, slopes, _levels = tables
    tgt = tgt if "level" in tgt else tgt.assign(level="common")
    out: dict[str, Any] = {}
    for (method, level), g in tgt.groupby(["method", "level"], sort=True):
        out.setdefault(method, {})[level] = {
            str(int(r["D"])): dict(kind=str(r["kind"]), lo=_num(r["lo"]), hi=_num(r["hi"])) for _, r in g.iterrows()
        }
        out.setdefault("at_floor", {}).setdefault(method, {})[level] = [int((g["kind"] == "floor").sum()), len(g)]
    if slopes is not None and len(slopes):
        level = slopes["level"] if "level" in slopes else pd.Series("common", index=slopes.index)
        for key, method, lev in (
            ("pretrained_vanishing", "pretrained", "vanishing"),  # the ledger's Theorem 5.1 row
            ("pretrained_theorem", "pretrained", "theorem"),
            ("logreg_common", "logreg", "common"),  # Theorem 5.2's baseline at the common target
        ):
            r = slopes[(slopes["method"] == method) & (slopes["x"] == "log D") & (level == lev)]
            if len(r):
                r = r.iloc[0]
                out[f"{key}_slope"] = dict(
                    low=_num(r["slope_low"]),
                    high=_num(r["slope_high"]),
                    seeds_ci=[_num(r.get("seeds_ci_low")), _num(r.get("seeds_ci_high"))],
                    ci=[_num(r["ci_low"]), _num(r["ci_high"])],
                    n_D=int(r["n_D"]),
                )
    return out


#: The levels the figure draws beside the common target, and their names in its legend: the theorem level
#: a*(D) − ε and the vanishing level a*(D) − 1/D, at which the ledger judges Theorem 5.1. The epsilon level
#: (test error ≤ 0.05) is left out: its target, 0.95, is the theorem level's wherever a*(D) ≈ 1.
FIGURE_LEVELS = {"common": "", "theorem": " @ a*−0.05", "vanishing": " @ a*−1/D"}


def _by_level(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of :data:`FIGURE_LEVELS`, each level's methods renamed apart from the common target's."""
    if "level" not in df:
        return df
    df = df[df["level"].isin(list(FIGURE_LEVELS))].copy()
    df["method"] = df["method"] + df["level"].map(FIGURE_LEVELS)
    return df


def _is_quick(summary: pd.DataFrame) -> bool:
    """Whether the tables are the QUICK configuration's (their Ñ grid is within QUICK's)."""
    return set(summary["N_tilde"].unique()) <= set(transfer.QUICK["Ns"])


def _transfer_title(quick: bool) -> str:
    c = _transfer_setting(quick)
    return (
        f"Transfer ({'quick' if quick else 'full'} sizes): D ∈ {{{', '.join(map(str, c['Ds']))}}}, q(D − C) fixed, "
        f"{c['seeds']} seeds, upstream N={c['upstream_N']}, {c['upstream_steps']} steps, {c['N_test']} test samples"
    )


def _draw_transfer_target(tables, axes=None):
    _summary, tgt, slopes, _levels = tables
    fig, ax = axes_or_new(axes, figsize=(11.0, 5.6))
    transfer.plot_samples_to_target(
        _by_level(tgt),
        ax,
        None if slopes is None else _by_level(slopes),
        ylabel="Ñ_target: downstream samples to accuracy ≥ 0.75\n(@: the pre-trained Â to a*(D) − 0.05, − 1/D)",
    )
    fig.suptitle(_transfer_title(_is_quick(_summary)))
    return fig


def _draw_transfer_curves(tables, axes=None):
    summary, _tgt, _slopes, levels = tables
    n = summary["D"].nunique()
    fig, ax = axes_or_new(axes, 1, n, figsize=(3.8 * n + 2.6, 4.2), sharey=True, squeeze=False)
    transfer.plot_curves(summary, levels, list(ax.flat) if hasattr(ax, "flat") else ax)
    fig.suptitle(_transfer_title(_is_quick(summary)))
    return fig


register(
    "transfer_target",
    "Transfer: the downstream samples Ñ_target needed against D (Theorems 5.1, 5.2)",
    "Theorem 5.1: with the pre-trained Â, Ñ_target at a*(D) − 1/D (the ledger's level) is reached by the floor "
    "Ñ ≤ 2 at {at_floor[pretrained][vanishing][0]} of {at_floor[pretrained][vanishing][1]} D and at "
    "{pretrained[vanishing][256][lo]:.3g} samples at D = 256; at a*(D) − 0.05 by the floor at "
    "{at_floor[pretrained][theorem][0]} of {at_floor[pretrained][theorem][1]} D; a need at the floor bounds "
    "the log-log slope only to [{pretrained_vanishing_slope[low]:.2f}, {pretrained_vanishing_slope[high]:.2f}]. "
    "Theorem 5.2 at the common target 0.75: logistic regression needs Ñ = {logreg[common][32][lo]:.1f} at "
    "D = 32 and {logreg[common][64][lo]:.1f} at D = 64 (slope {logreg_common_slope[low]:.2f}, 95% CI over seeds "
    "[{logreg_common_slope[seeds_ci][0]:.2f}, {logreg_common_slope[seeds_ci][1]:.2f}]; two D), while Â at init "
    "and Â pre-trained on another partition reach 0.75 by the floor at {at_floor[init][common][0]} and "
    "{at_floor[other-partition][common][0]} of {at_floor[init][common][1]} D (their shortfall is their "
    "accuracy ceiling, ≈ 0.9, not their sample need). Training from scratch does not reach a*(D) − 0.05 "
    "within its grid (▲: > {scratch[theorem][32][lo]:.0f} samples at D = 32).",
    (),
    _draw_transfer_target,
    _transfer_setting,
    _transfer_numbers,
    inputs=_transfer_dir,
)(transfer_tables)
register(
    "transfer_curves",
    "Transfer: downstream accuracy against Ñ per D, mean and 95% interval over 5 seeds",
    "Theorems 5.1, 5.2: the accuracy curves behind Ñ_target; dotted: the common target 0.75, dash-dotted: "
    "a*(D) − 0.05 (the pre-trained Â's theorem level), dashed: a*(D).",
    (),
    _draw_transfer_curves,
    _transfer_setting,
    _transfer_numbers,
    inputs=_transfer_dir,
)(transfer_tables)
