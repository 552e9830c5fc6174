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
from .core import _num, register

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
    _summary, tgt, slopes, _levels = tables
    out: dict[str, Any] = {}
    for method, g in tgt.groupby("method", sort=True):
        out[method] = {
            str(int(r["D"])): dict(kind=str(r["kind"]), lo=_num(r["lo"]), hi=_num(r["hi"])) for _, r in g.iterrows()
        }
    if slopes is not None and len(slopes):
        level = slopes["level"] if "level" in slopes else pd.Series("common", index=slopes.index)
        for key, method, lev in (
            ("pretrained_slope_ci", "pretrained", "theorem"),  # the ledger's Theorem 5.1 row
            ("logreg_slope_ci", "logreg", "common"),
        ):
            r = slopes[(slopes["method"] == method) & (slopes["x"] == "log D") & (level == lev)]
            if len(r):
                out[key] = [_num(r.iloc[0]["ci_low"]), _num(r.iloc[0]["ci_high"])]
    return out


def _by_level(df: pd.DataFrame) -> pd.DataFrame:
    """The rows at the theorem level (the pre-trained Â at a*(D) − ε) renamed apart from the common target's."""
    if "level" not in df:
        return df
    df = df.copy()
    th = df["level"] == "theorem"
    df.loc[th, "method"] = df.loc[th, "method"] + " @ a*−ε"
    ep = df["level"] == "epsilon"  # Theorem 5.2's test error ≤ 0.05 (claims.transfer)
    df.loc[ep, "method"] = df.loc[ep, "method"] + " @ err≤0.05"
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
        ylabel="Ñ_target: downstream samples to accuracy ≥ 0.75\n('@ a*−ε': the pre-trained Â to a*(D) − 0.05)",
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
    "Theorem 5.1: with the pre-trained Â, Ñ_target at a*(D) − 0.05 stays at 1–2 samples for D = 16…256 "
    "(log-log slope 95% CI [{pretrained_slope_ci[0]:.3g}, {pretrained_slope_ci[1]:.3g}]); Theorem 5.2 at the "
    "common target 0.75: logistic regression's Ñ_target grows with D (slope 95% CI [{logreg_slope_ci[0]:.3g}, "
    "{logreg_slope_ci[1]:.3g}]), while Â at init, another partition and scratch reach 0.75 with 1–2 samples "
    "(their shortfall is their accuracy ceiling, ≈ 0.9, not their sample need). A method that never reaches "
    "its target within its Ñ grid would sit in a separate 'not reached' band with its grid's cap written.",
    ("theorydyn.transfer",),
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
    ("theorydyn.transfer",),
    _draw_transfer_curves,
    _transfer_setting,
    _transfer_numbers,
    inputs=_transfer_dir,
)(transfer_tables)
