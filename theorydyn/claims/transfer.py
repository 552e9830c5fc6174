"""Theorems 5.1 and 5.2 in the ledger: verdicts from the transfer experiment (docs/theory.md §5).

The experiment itself (frozen attention, ṽ trained on Ñ downstream samples, Ñ_target against D)
is :mod:`theorydyn.transfer`; this module turns its tables into :class:`~theorydyn.claims.check.Check`
rows (:func:`checks` runs it, :func:`checks_from` is a pure function of its tables).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from ..resources import MemoryEstimate
from ..setting import Setting
from ..transfer import (
    DEFAULT_METHODS,
    FULL,
    QUICK,
    TransferOptions,
    base_setting,
    describe_slope,
    options_from,
    run,
    setting_at,
)
from ..transfer.memory import transfer_memory
from .check import Check, Verdict


def memory(s: Setting | None = None, quick: bool = True) -> MemoryEstimate:
    """Peak of :func:`checks` (``s`` not used): :func:`theorydyn.resources.transfer_memory` at the
    largest D of the preset (the D's run in turn; the largest dominates), every method's downstream
    samples bounded by the largest Ñ of the grid (an upper bound)."""
    opts = options_from(dict(QUICK if quick else FULL))
    D = max(cast("tuple[int, ...]", (QUICK if quick else FULL)["Ds"]))
    su = setting_at(base_setting(), D, "count")
    upstream_N = opts.upstream_N if D <= opts.sim_max_D else None
    return transfer_memory(
        D,
        su.C,
        su.d,
        su.q,
        opts.N_test,
        max(opts.Ns),
        ceiling_samples=opts.ceiling_samples,
        flow_n_samples=opts.flow_n_samples,
        upstream_N=upstream_N,
    )


def checks(
    s: Setting | None = None, *, quick: bool = True, progress=None, out: str | Path | None = None
) -> list[Check]:
    """Ledger rows for Theorems 5.1 and 5.2 from one run of :func:`run` (quick: :data:`QUICK`, else
    :data:`FULL`, at :func:`base_setting`: the ledger's ``s`` is not used). ``out``: where rows and
    caches live (default ``runs/transfer_checks[_quick]``; reruns resume).

    * Theorem 5.1 (``pretrained``, the idealized pre-trained Â): PASS if the 95% CI of the slope
      of log Ñ_target on log D lies below :data:`SLOPE_51`; FAIL if it lies above; otherwise
      INFO (inconclusive). Can tell a slow growth (≤ 0.5 in log-log) from a fast one; cannot tell
      a polylog from a small power (D^0.2 and (log D)^1 look alike on 16 ≤ D ≤ 256).
    * Theorem 5.2 (each of ``init``, ``other-partition``, ``logreg``, ``scratch``): PASS if Ñ_target
      grows — the slope's CI (censoring bounds included) lies above 0 — or if the target is never
      reached at any D while the pre-trained Â reaches it (need > Ñ_max everywhere: a lower bound,
      consistent with D^Ω(1) and with "never"); FAIL if the slope's CI lies at or below 0 or the
      method needs no more samples than the pre-trained Â; otherwise INFO. Slope > 0 is growth, not
      D^Ω(1) versus polylog (see the note's log-log-D fit).
    * INFO: the finite-sample pre-trained Â against the idealized one (accuracy gap at equal Ñ).
    """
    cfg = dict(QUICK if quick else FULL)
    opts = options_from(cfg)
    out = Path(out) if out is not None else Path("runs") / ("transfer_checks_quick" if quick else "transfer_checks")
    methods = DEFAULT_METHODS
    raw, summary, tgt, slopes, up = run(base_setting(), cfg["Ds"], opts, methods=methods, out=out, progress=progress)
    levels = pd.read_csv(out / "transfer_levels.csv")
    params = dict(
        C=4,
        K=opts.count,
        nu=1 / 64,
        Ds=list(cfg["Ds"]),
        seeds=opts.seeds,
        eps=opts.eps,
        N_grid=f"1..{max(opts.Ns)}",
        N_test=opts.N_test,
        quick=quick,
    )
    return checks_from(summary, tgt, slopes, levels, up, opts, params)


def checks_from(
    summary: pd.DataFrame,
    tgt: pd.DataFrame,
    slopes: pd.DataFrame,
    levels: pd.DataFrame,
    up: pd.DataFrame,
    opts: TransferOptions,
    params: dict,
) -> list[Check]:
    """The verdicts of :func:`checks` from the tables of :func:`run` (a pure function of them)."""
    a_rng = f"a*(D) in [{levels['a_star'].min():.4f}, {levels['a_star'].max():.4f}]"
    rows: list[Check] = []

    def fit(method, x="log D"):
        r = slopes[(slopes["method"] == method) & (slopes["x"] == x)]
        return r.iloc[0] if len(r) else None

    def table(method):
        g = tgt[tgt["method"] == method].sort_values("D")
        return "; ".join(
            f"D={int(r.D)}: "
            + (
                f"{r.lo:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]"
                if r.kind == "value"
                else f"> {r.lo:g}"
                if r.kind == "lower"
                else f"≤ {r.hi:g}"
            )
            for r in g.itertuples()
        )

    p = fit("pretrained")
    pre = tgt[tgt["method"] == "pretrained"]
    if p is None:
        rows.append(
            Check(
                "Theorem 5.1",
                "slope of log Ñ_target on log D (pre-trained Â)",
                math.nan,
                f"< {SLOPE_51}",
                Verdict.INFO,
                params,
                note="fewer than two D values",
            )
        )
    else:
        ll = fit("pretrained", "log log D")
        never = int((pre["kind"] == "lower").sum())
        verdict = (
            Verdict.DEVIATES
            if never
            else Verdict.PASS
            if p["ci_high"] < SLOPE_51
            else Verdict.FAIL
            if p["ci_low"] > SLOPE_51
            else Verdict.INFO
        )
        note = (
            f"idealized pre-trained Â (final γ, ρ of the reduced flow, = population GD) at every D; target = "
            f"a*(D) − {opts.eps} with {a_rng}, q = {opts.count:g}/(D − C). Ñ_target: {table('pretrained')}. "
            f"Slope on log D: {describe_slope(p)}; on log log D: {describe_slope(ll)}. "
            f"The threshold {SLOPE_51} admits polylog (log D)^k up to k ≈ 2 and rejects D^a, a > {SLOPE_51}; "
            "a small power (a < 0.5) and a polylog cannot be told apart on this range of D."
            + (f" Not reached at {never} D: a contradiction with Theorem 5.1 at these Ñ." if never else "")
            + ("" if verdict is not Verdict.INFO else " Inconclusive: the CI straddles the threshold.")
        )
        est = (
            p["slope_low"]
            if p["slope_low"] == p["slope_high"]
            else (p["slope_high"] if np.isfinite(p["slope_high"]) else p["slope_low"])
        )
        rows.append(
            Check(
                "Theorem 5.1",
                "slope of log Ñ_target on log D (pre-trained Â, ṽ by GD)",
                est,
                f"95% CI < {SLOPE_51} (polylog-like)",
                verdict,
                params,
                note=note,
                ci_low=p["ci_low"],
                ci_high=p["ci_high"],
                route="crossing and slope fit tested on synthetic "
                "power-law and polylog curves; test set in projected form tested against explicit X",
            )
        )
    for method, what in (
        ("init", "Â at initialisation"),
        ("other-partition", "Â pre-trained on another partition"),
        ("logreg", "logistic regression on flattened X"),
        ("scratch", "A and v trained from scratch"),
    ):
        g = tgt[tgt["method"] == method]
        if g.empty:
            continue
        r = fit(method)
        never_all = bool((g["kind"] == "lower").all())
        pre_ok = bool(len(pre)) and bool((pre["kind"] != "lower").all())
        ceil_note = ""
        if method == "init":
            ceil_note = (
                f" Population accuracy ceiling of the expected attention at init (v ∥ w̃, best α): "
                f"{levels['init_ceiling'].min():.3f}–{levels['init_ceiling'].max():.3f}, below the target."
            )
        if method in ("init", "other-partition", "scratch"):
            ceil_note += (
                " Best seed-mean accuracy measured: "
                + ", ".join(f"D={int(r.D)}: {r.max_acc:.3f}" for r in g.sort_values("D").itertuples())
                + "."
            )
        if method == "logreg":
            ceil_note = (
                f" The symmetric linear rule sign(Σ_j ⟨w̃, X_j⟩) reaches {levels['linear_reference'].min():.3f}–"
                f"{levels['linear_reference'].max():.3f} < target (cf. Theorem 3.1)."
            )
        if never_all:
            # censored at every D: a lower bound everywhere cannot show growth with D, and where the
            # target lies above the baseline's own population ceiling it could not be reached at any Ñ,
            # so no result of this run could have failed the claim; reported, never a PASS (issue 17)
            verdict = Verdict.INFO
            measured = float(g["lo"].min())
            note = (
                f"{what}: target never reached at any D (Ñ_target > Ñ_max at every D: {table(method)}), while the "
                f"pre-trained Â {'reaches' if pre_ok else 'does not always reach'} it (Ñ_target "
                f"{table('pretrained')}). Lower bounds only: consistent with D^Ω(1) and with no Ñ at all; the "
                "growth exponent is not measured, so this is INFO, not a PASS." + ceil_note
            )
            rows.append(
                Check(
                    "Theorem 5.2",
                    f"Ñ_target lower bound, min over D ({method})",
                    measured,
                    "INFO (censored at every D: no growth exponent measurable)",
                    verdict,
                    params,
                    note=note,
                    ci_low=measured,
                    ci_high=math.inf,
                )
            )
            continue
        if r is None:
            continue
        lo_ci, hi_ci = r["ci_low"], r["ci_high"]
        # more samples than the pre-trained Â wherever both were run: its lower end above the other's upper end
        worse = all(row.lo > pr.hi for row in g.itertuples() for pr in pre[pre["D"] == row.D].itertuples())
        verdict = Verdict.PASS if lo_ci > 0 and worse else Verdict.FAIL if hi_ci <= 0 or not worse else Verdict.INFO
        ll = fit(method, "log log D")
        note = (
            f"{what}: Ñ_target {table(method)}. Slope on log D: {describe_slope(r)}; on log log D: "
            f"{describe_slope(ll)}. Slope CI > 0 shows growth with D; it does not separate D^Ω(1) from a polylog "
            f"on D ≤ {int(g['D'].max())}. Needs more samples than the pre-trained Â at every D: {worse}." + ceil_note
        )
        est = r["slope_low"] if np.isfinite(r["slope_low"]) else r["slope_high"]
        rows.append(
            Check(
                "Theorem 5.2",
                f"slope of log Ñ_target on log D ({method})",
                est,
                "95% CI > 0 (grows with D)",
                verdict,
                params,
                note=note,
                ci_low=lo_ci,
                ci_high=hi_ci,
            )
        )
    # finite-sample against idealized pre-trained Â: accuracy at the largest Ñ both ran, and Ñ_target
    both = summary[summary["method"].isin(["pretrained", "pretrained-sim"])]
    piv = both.pivot_table(index=["D", "N_tilde"], columns="method", values="acc_f_mean").dropna()
    if len(piv) and {"pretrained", "pretrained-sim"} <= set(piv.columns):
        last = piv.groupby(level=0).tail(1)
        gap = (last["pretrained-sim"] - last["pretrained"]).to_numpy()
        upd = up[up["method"] == "pretrained-sim"] if "method" in up else up.iloc[0:0]
        sim_t = tgt[tgt["method"] == "pretrained-sim"]
        rows.append(
            Check.exact(
                "Theorem 5.1 (cross-check)",
                "max over D of |acc_f(finite-sample Â) − acc_f(idealized Â)| at the largest shared Ñ",
                float(np.max(np.abs(gap))),
                "INFO (small = the idealized Â stands in)",
                Verdict.INFO,
                params=dict(params, D=sorted(set(last.index.get_level_values(0)))),
                note=f"at (D, Ñ) = {[(int(d), int(n)) for d, n in last.index]}: gaps "
                + ", ".join(f"{x:+.4f}" for x in gap)
                + ". Ñ_target finite-sample: "
                + (table("pretrained-sim") if len(sim_t) else "—")
                + f"; idealized: "
                f"{table('pretrained')}. Finite-sample pre-training: N={opts.upstream_N}, "
                f"{opts.upstream_steps} GD steps of η={opts.eta}; status / association / upstream "
                "err_f: "
                + "; ".join(f"D={int(r.D)}: {r.status}, {r.association:.2f}, {r.err_f:.3f}" for r in upd.itertuples()),
            )
        )
    return rows


# ---- ledger presets ------------------------------------------------------------------------------
# The ledger's quick and full runs are the experiment's named sizes ``QUICK`` and ``FULL``
# (:mod:`theorydyn.transfer.experiment`, also the transfer CLI's default and --full).
#: Theorem 5.1's threshold on the log-log slope: a polylog (log D)^k has local log-log slope k / ln D,
#: i.e. ≈ k/4.2 at the geometric middle (D = 64) of D ∈ [16, 256]; 0.5 admits polylogs up to k ≈ 2
#: there and rejects any power law D^a with a > 0.5.
SLOPE_51 = 0.5
