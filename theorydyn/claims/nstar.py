"""N*(D) in the ledger (docs/theory.md §4, §15): how many samples Theorem 4.2 needs, against D.

Theorem 4.2 assumes N = poly(d) and gives no degree. The runs are :mod:`theorydyn.experiments.nstar`'s (all in
one call: :func:`~theorydyn.experiments.nstar.run`, of :func:`~theorydyn.experiments.nstar.nstar_runs`); this module
judges them (:func:`rows`). At each D and N of a grid and each seed, realistic GD at
the stated rule's step size (:mod:`theorydyn.experiments.stepsize`), read by *persistent* association over
the windows [T_a, k·T_a] of Theorem 4.2's rows (k = 1.5 and 3, each row naming its k). Per D and k:

* N_50, the N at which the isotonic fit of the success rate (over the runs that converged) reaches 1/2, as
  a bracket (lo, hi] between two grid points, with the 95% bracket over seeds
  (:func:`~theorydyn.experiments.nstar.n50`); censored at a grid edge as a bound. INFO: the paper gives no
  degree. Diverged runs are left out and counted apart (a diverged run says nothing about the sample need);
* the association margin at T_a against N (:func:`~theorydyn.experiments.nstar.margin_trend`): its slope
  per doubling of N, INFO here, the regime reading of Theorem 4.2's rows (:func:`theorydyn.claims.forms.achievable`).

Across D, per k and q reading: "N = poly(d)" read on the brackets (:func:`theorydyn.core.stats.bracket_power_law`,
:func:`theorydyn.claims.forms.rate`): PASS when a power law passes through every N_50 bracket (censored sizes
as one-sided brackets) with at least 3 uncensored sizes, FAIL when the local exponent accelerates beyond the
brackets across them, INFO otherwise; the exponent is the range of the power laws that fit.

Two readings of q, each labelled: Assumption 2's q = C²/D at D = 2C², 3C², … (q ≤ 1/2 and q(D − C) > C hold
there: Theorem 3.1's scope rule), and the ledger's fixed q at the same D. Common random numbers across N:
per (D, q, seed) one training set of N_max samples; the run at N uses its first N and the seed's
initialisation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..core.stats import bracket_power_law
from ..experiments import nstar as runs_ns
from ..experiments.nstar import KS, NStarConfig, NStarResults, nstar_Ds, readings
from ..infra.memory import MemoryEstimate
from . import forms
from .check import Check, Form, Verdict
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class NStarSizes(ClaimSizes):
    """The sizes of the N*(D) rows (:func:`rows` of :data:`EXPERIMENT`)."""

    Ns: tuple[int, ...] = grid_option(tuple(2**k for k in range(10, 17)), "the N grid at each D")
    seeds: Seeds = seeds_option(3, "the seeds j (run seed 1000 j + D + 7)")
    ks: tuple[float, ...] = grid_option(KS, "the windows [T_a, k T_a] of persistent association", kind=float, low=1.0)
    n_D: int = option(4, "how many D: D = 2C², 3C², …", positive=True)
    budget_s: float = option(30000.0, "estimated seconds of runs allowed per q reading", low=0.0, low_open=True)
    min_steps: int = option(250, "the least GD steps of a run (where the flow never associates)", positive=True)


#: The sizes, fixed before any run. Quick: one D (2C²), N = 2^10 … 2^14 (Theorem 4.2's quick N, so its regime is
#: read on this grid; five N, so the margin's trend interval has 3 degrees of freedom: the first choice, N = 2^10,
#: 2^12, 2^14, left it one, t = 12.7, and could never resolve a slope), 3 seeds; full: four D, N = 2^10 … 2^16, 3
#: seeds. Both: the windows k = 1.5
#: and 3 of Theorem 4.2's rows, the stated rule's step size. Full mode's budget is an estimate of seconds
#: per q reading from the cost model (:func:`~theorydyn.experiments.nstar.estimated_seconds`: float32,
#: doubled for a shared machine, no early stop: an upper bound); a D past it is not run, its row says so.
SIZES = Sizes(quick=NStarSizes(Ns=tuple(2**k for k in range(10, 15)), n_D=1), full=NStarSizes())


def _route() -> str:
    return (
        "association vs brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c); "
        "N_50 brackets vs enumeration and censoring on planted tables "
        "(tests/test_verdicts_a.py::test_n50_is_a_bracket_censored_at_the_grid_edges); the exponent's verdict "
        "on planted brackets (tests/test_verdicts_a.py::test_nstar_rate_passes_a_power_law_and_fails_acceleration)"
    )


def _where(D: int, q: float, label: str, g: pd.DataFrame, k: float | None = None) -> str:
    r = g.iloc[0]
    eta = f"eta = {r.eta:g}" + (" (the rule)" if math.isclose(r.eta, r.eta_rule) else f" (rule: {r.eta_rule:g})")
    win = f", window [T_a, {k:g} T_a]" if k is not None else ""
    return f"[D = {D}, q = {q:.4g} ({label}), {eta}, {int(r.steps)} steps{win}, T_a = {r.T_a:.4g}]"


def _counts(g: pd.DataFrame, col: str) -> str:
    parts = []
    for N, gg in g.groupby("N"):
        ok = gg[col].notna()
        parts.append(f"N={N}: {int(gg.loc[ok, col].sum())}/{int(ok.sum())}")
    return ", ".join(parts)


def check_n_star(s: Setting, runs: pd.DataFrame, label: str, ks: tuple[float, ...]) -> list[Check]:
    """Rows of one q reading (``label``) from :func:`~theorydyn.experiments.nstar.nstar_runs` (module
    docstring), read by :func:`~theorydyn.experiments.nstar.readings`: :func:`n_star_rows`."""
    return n_star_rows(s, runs, readings(s, runs, ks), label, ks)


def n_star_rows(
    s: Setting, runs: pd.DataFrame, read: dict[int, dict[str, Any]], label: str, ks: tuple[float, ...]
) -> list[Check]:
    """Rows of one q reading (``label``) from :func:`~theorydyn.experiments.nstar.nstar_runs`' table ``runs``
    and its readings ``read`` (:func:`~theorydyn.experiments.nstar.readings`; module docstring): per D, N_50 per
    window (INFO) and the margin's trend in N (INFO); per window, the rate row."""
    out: list[Check] = []
    fits: dict[float, dict[int, dict]] = {k: {} for k in ks}
    skipped = runs[runs["N"] == 0]
    runs = runs[runs["N"] > 0]
    for D, g in runs.groupby("D"):
        D = int(D)
        rd = read[D]
        Ns, q, scope = rd["Ns"], rd["q"], rd["scope"]
        div = g[g["status"] == "diverged"]
        div_text = (
            f"diverged {len(div)} of {len(g)} runs (left out of N_50; a diverged run says nothing about the sample "
            "need): " + ", ".join(f"N={x.N} seed {x.seed + 1}" for x in div.itertuples())
            if len(div)
            else "no run diverged"
        )
        params: dict[str, Any] = dict(D=D, C=s.C, q=round(q, 6), eta=float(g["eta"].iloc[0]))
        params.update(steps=int(g["steps"].iloc[0]), N=f"{Ns[0]}..{Ns[-1]}", seeds=int(g["seed"].nunique()))
        params.update(diverged=len(div))
        for k in ks:
            col = f"success_k{k:g}"
            r = rd["n50"][k]
            fits[k][D] = r
            # the plan's records in the window (a run stopped at its first failing record has fewer)
            recs = int(
                ((k - 1.0) * float(g["T_a"].iloc[0]) / float(g["eta"].iloc[0])) // int(g["record_every"].iloc[0])
            )
            out.append(
                Check(
                    f"Theorem 4.2 (N = poly(d)) {_where(D, q, label, g, k)}",
                    "N_50 (a bracket): where the isotonic fit of persistent association over seeds reaches 1/2",
                    math.nan,
                    "INFO (the paper: N = poly(d), no degree)",
                    Verdict.INFO,
                    params=dict(params, k=k, records_in_window=recs),
                    ci_low=_finite(r["boot_lo"]),
                    ci_high=_finite(r["boot_hi"]),
                    note=(
                        f"{r['text']}; persistent successes per N (converged runs): {_counts(g, col)}; {div_text}"
                        + (f"; outside the scope rule: {scope}" if scope else "")
                        + f"; {recs} recorded steps in the window (a run stops at its first record there without "
                        "association); common random numbers: each seed's N_max samples, the first N used at N"
                    ),
                    route=_route(),
                    form=Form.RATE,
                )
            )
        tr = rd["trend"]
        means = ", ".join(f"N={N}: {m:.3g}" for N, m in (tr["means"].items() if tr else []))
        out.append(
            Check(
                f"Theorem 4.2 (N = poly(d)) {_where(D, q, label, g)}",
                "slope of the association margin at T_a (min over rows) per doubling of N",
                math.nan if tr is None else tr["b"],
                "INFO (> 0: more samples approach association; the regime reading of Theorem 4.2's rows)",
                Verdict.INFO,
                params=params,
                ci_low=math.nan if tr is None else tr["b_low"],
                ci_high=math.nan if tr is None else tr["b_high"],
                note=f"mean margin at T_a per N: {means}; the margin is > 0 iff every row is associated; {div_text}",
                route="association_margin vs Definition 2.2 on random A "
                "(tests/test_verdicts_a.py::test_association_margin_sign_is_association)",
                form=Form.DIAGNOSTIC,
            )
        )
    for x in skipped.itertuples():
        ran = sorted(int(D) for D in runs["D"].unique())
        out.append(
            Check.not_run(
                f"Theorem 4.2 (N = poly(d)) [D = {x.D}, q = {x.q:.4g} ({label}), eta = {x.eta:g}, {x.steps} steps]",
                "N_50 (a bracket): where the isotonic fit of persistent association over seeds reaches 1/2",
                "INFO (the paper: N = poly(d), no degree)",
                f"{x.status}; ran up to D = {ran[-1] if ran else 'none'}",
                "theorydyn.experiments.nstar.nstar_runs with budget_s=None",
                params=dict(D=int(x.D), C=s.C, q=round(float(x.q), 6), steps=int(x.steps)),
                form=Form.RATE,
            )
        )
    for k in ks:
        out.append(exponent_row(fits[k], label, dict(C=s.C, q=label, k=k)))
    return out


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else math.nan


def exponent_row(fits: dict[int, dict], label: str, params: dict) -> Check:
    """ "N = poly(d)" across D from the N_50 brackets of one q reading and window (module docstring): the
    range of exponents b of the power laws N_50 ∝ D^b passing through every 95% bracket over seeds (censored
    sizes one-sided), judged by :func:`theorydyn.claims.forms.rate`."""
    k = params.get("k")
    Ds = sorted(D for D, r in fits.items() if not math.isnan(r["lo"]))
    uncensored = [D for D in Ds if fits[D]["censored"] is None]
    bounds = "; ".join(f"D={D}: {fits[D]['text']}" for D in Ds)
    claim = f"Theorem 4.2 (N = poly(d)) [{label}, D = {'/'.join(map(str, Ds))}, window [T_a, {k:g} T_a]]"
    quantity = "exponent b of N_50(D) ~ D^b: the range of power laws through every N_50 bracket"
    if len(Ds) < 2:
        return Check(
            claim,
            quantity,
            math.nan,
            f"a verdict needs >= {forms.MIN_UNCENSORED} uncensored D",
            Verdict.INFO,
            params=dict(params, uncensored=len(uncensored)),
            note=f"{len(Ds)} size(s) measured; {bounds}",
            route=_route(),
            form=Form.RATE,
        )
    lo = [fits[D]["boot_lo"] if fits[D]["censored"] != "below" else 0.0 for D in Ds]
    hi = [fits[D]["boot_hi"] if fits[D]["censored"] != "above" else math.inf for D in Ds]
    fit = bracket_power_law(Ds, lo, hi)
    verdict, why = forms.rate(fit["shape"], fit["feasible"], len(uncensored))
    return Check(
        claim,
        quantity,
        math.nan,
        f"PASS: a power law passes through every bracket ({forms.MIN_UNCENSORED}+ uncensored D); "
        "FAIL: the local exponent accelerates beyond the brackets",
        verdict,
        params=dict(params, uncensored=len(uncensored)),
        ci_low=fit["b_min"] if fit["feasible"] else math.nan,
        ci_high=fit["b_max"] if fit["feasible"] else math.nan,
        note=f"{why}; {len(uncensored)} uncensored size(s); "
        + (
            f"power laws through every bracket: b in [{fit['b_min']:.3g}, {fit['b_max']:.3g}]; "
            if fit["feasible"]
            else "local exponents per pair of sizes: "
            + ", ".join(f"[{a:.3g}, {b:.3g}]" for a, b in fit["local"])
            + "; "
        )
        + bounds,
        route=_route(),
        form=Form.RATE,
    )


def config(s: Setting, quick: bool) -> NStarConfig:
    """What :func:`theorydyn.experiments.nstar.run` needs for the rows at :data:`SIZES`: these sizes and, in full
    mode, their time budget per q reading (none in quick mode)."""
    n = SIZES.pick(quick)
    return NStarConfig(n, None if quick else n.budget_s)


#: N*(D)'s experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); this module runs nothing. Its runs: D = 2C², 3C², … in two readings of q,
#: q = C²/D (Assumption 2's scaling) and the ledger's fixed q, each labelled, over the N grid and seeds of
#: :data:`SIZES` (a store: a rerun reads them back).
EXPERIMENT = runs_ns.run


def rows(res: NStarResults) -> list[Check]:
    """The ledger rows of N*(D) (module docstring) from ``res`` (:func:`theorydyn.experiments.nstar.run` at the
    ledger's setting ``res.s``): per q reading, in its order, :func:`n_star_rows` of its runs and readings."""
    out: list[Check] = []
    for r in res.readings:
        out += n_star_rows(res.s, r.runs, r.read, r.label, res.ks)
    return out


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config`: the runs' at the largest D and N
    (:func:`theorydyn.experiments.nstar.memory`)."""
    n = SIZES.pick(quick)
    return runs_ns.memory(s, max(nstar_Ds(s.C, n.n_D)), max(n.Ns))
