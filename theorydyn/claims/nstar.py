"""N*(D) in the ledger (docs/theory.md §4, issue 30): how many samples Theorem 4.2 needs, against D.

Theorem 4.2 assumes N = poly(d) and gives no degree. At each D and N of a grid and each seed, one
realistic GD run (:func:`theorydyn.simulate.simulate`, the Theorem 4.2 row's η, ω) is judged by
*persistent* association: complete (Definition 2.2, every row) at every recorded step of the window
[T_a, k·T_a] (:mod:`theorydyn.claims.persistence`, T_a the idealized flow's association time at
that D and q), the run lasting ⌈k·T_a/η⌉ steps; the runs are :func:`theorydyn.experiments.nstar.nstar_runs`.
Then, per D:

* success against log N is read across seeds and N with a monotone model — the isotonic
  (pool-adjacent-violators) fit of the success rate (:func:`isotonic`) — giving N_50, the N at
  which the fitted rate reaches 1/2 (log-linear between grid points), with a bootstrap interval over
  seeds (:func:`n50`). A grid-edge result is censored and printed as a bound (``> N_max``,
  ``<= N_min``), never as a value. A diverged run is a failure and is named;
* the continuous order parameter beside it: the per-row margin between the smallest in-set and the
  largest out-of-set entry of Â, normalised by the row's in-set minus out-of-set mean
  (:func:`~theorydyn.experiments.nstar.association_margin`; > 0 in every row iff association is
  complete), at the end of the run.

Two readings of q, each labelled: Assumption 2's q = C²/D at D = 2C², 3C², … (q ≤ 1/2 and
q(D − C) > C hold there: Theorem 3.1's scope rule), and the ledger's fixed q at the same D. The
exponent of N_50 ∝ D^b is a verdict only with ≥ 3 uncensored sizes (:func:`exponent_row`), else INFO
with the bounds. Common random numbers across N: for each (D, q, seed) one training set of N_max
samples is drawn; the run at N uses its first N samples and the seed's initialisation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..cli.configs import Seeds, option
from ..core.glm import theorem_3_1_scope
from ..core.setting import Setting, setting_at
from ..core.stats import fit_power_law_ci
from ..experiments.nstar import nstar_runs
from ..infra.memory import MemoryEstimate
from ..simulate.memory import simulate_memory
from . import theorem4
from .check import Check, Verdict
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class NStarSizes(ClaimSizes):
    """The sizes of the N*(D) rows (:func:`checks`)."""

    Ns: tuple[int, ...] = grid_option(tuple(2**k for k in range(10, 15)), "the N grid at each D")
    seeds: Seeds = seeds_option(3, "the seeds j (run seed 1000 j + D + 7)")
    k: float = option(1.5, "the window [T_a, k T_a] of persistent association", low=1.0)
    n_D: int = option(4, "how many D: D = 2C², 3C², …", positive=True)


#: The sizes, fixed before any run: N grid, seeds, the window's k, and how many D (D = 2C², 3C², …).
#: Both modes read the [T_a, 1.5 T_a] window (T_a = 6685 at D = 32, q = 1/2: 1003 steps a run). Quick:
#: one D, N <= 4096; full: four D, N <= 16384, within :data:`BUDGET_S` per q reading (a D whose estimated
#: cost, :func:`~theorydyn.experiments.nstar.estimated_seconds`, would pass it is not run, and its row says so).
#: A run lasts at least Theorem 4.2's preset steps of the mode (:data:`theorydyn.claims.theorem4.SIZES`).
SIZES = Sizes(quick=NStarSizes(Ns=(256, 1024, 4096), n_D=1), full=NStarSizes())
#: Estimated seconds of runs allowed per q reading in full mode (the quick sizes are far below it).
#: 2400 (was 1800, with the 0.16 s step of experiments.nstar: D = 64 and 80 did not fit, and issue 30 asks
#: for N*(D) at 4 sizes): with the measured step, the q = C²/D reading's four D are estimated at 2029 s.
BUDGET_S = 2400.0

#: Bootstrap resamples of the seeds for N_50's interval (fixed generator seed 0).
N_BOOT = 400


def nstar_Ds(C: int, n: int) -> tuple[int, ...]:
    """D = m C² for m = 2 … n + 1: q = C²/D = 1/m ≤ 1/2, a multiple of C, L = mC ≥ 4."""
    return tuple(m * C * C for m in range(2, n + 2))


def isotonic(y: Sequence[float], w: Sequence[float] | None = None) -> np.ndarray:
    """The non-decreasing sequence closest to ``y`` in weighted least squares (pool adjacent violators)."""
    ya = np.asarray(y, float)
    wa = np.ones_like(ya) if w is None else np.asarray(w, float)
    blocks: list[list[float]] = []  # [value, weight, count]
    for yi, wi in zip(ya, wa, strict=True):
        blocks.append([yi, wi, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, n2 = blocks.pop()
            v1, w1, n1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, n1 + n2])
    return np.concatenate([[v] * int(n) for v, _, n in blocks])


def _n50_point(Ns: np.ndarray, succ: np.ndarray) -> float:
    """N_50 of one (seeds, N) success table: inf above the grid, N_min (or below) at its bottom edge."""
    p = isotonic(succ.mean(axis=0))
    if p[-1] < 0.5:
        return math.inf
    j = int(np.argmax(p >= 0.5))
    if j == 0:
        return -math.inf  # at or below the smallest N
    x0, x1 = math.log(Ns[j - 1]), math.log(Ns[j])
    return float(math.exp(x0 + (0.5 - p[j - 1]) / (p[j] - p[j - 1]) * (x1 - x0)))


def n50(Ns: Sequence[int], succ: np.ndarray, n_boot: int = N_BOOT) -> dict:
    """N_50 from a (seeds, len(Ns)) 0/1 success table: the isotonic fit of the success rate against
    log N reaching 1/2, with the 2.5 and 97.5 percentiles of the same over ``n_boot`` resamples of the
    seeds. Returns dict(value, low, high, censored, text): censored ``"above"`` (the fit stays below 1/2
    up to N_max: N_50 > N_max) or ``"below"`` (≥ 1/2 at N_min: N_50 ≤ N_min), value nan then; an
    interval end beyond the grid is ±inf."""
    Ns_a = np.asarray(Ns, float)
    succ = np.asarray(succ, float)
    v = _n50_point(Ns_a, succ)
    rng = np.random.default_rng(0)
    boots = np.array([_n50_point(Ns_a, succ[rng.integers(0, len(succ), len(succ))]) for _ in range(n_boot)])
    # order statistics, not interpolation: censored resamples are ±inf (and the ends conservative)
    lo, hi = float(np.quantile(boots, 0.025, method="lower")), float(np.quantile(boots, 0.975, method="higher"))
    if v == math.inf:
        return dict(value=math.nan, low=lo, high=math.inf, censored="above", text=f"N_50 > {int(Ns_a[-1])}")
    if v == -math.inf:
        return dict(value=math.nan, low=-math.inf, high=hi, censored="below", text=f"N_50 <= {int(Ns_a[0])}")
    return dict(value=v, low=lo, high=hi, censored=None, text=f"N_50 = {v:.4g} [{lo:.4g}, {hi:.4g}]")


def _route() -> str:
    return (
        "association vs brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c); "
        "isotonic fit vs enumeration, N_50 censoring and the exponent's verdict on planted tables "
        "(tests/test_verdicts_a.py::test_n50_censors_at_the_grid_edges, "
        "tests/test_verdicts_a.py::test_nstar_exponent_verdict_flips_on_exponential_growth)"
    )


def check_n_star(s: Setting, runs: pd.DataFrame, label: str, k: float) -> list[Check]:
    """Rows of one q reading (``label``) from :func:`~theorydyn.experiments.nstar.nstar_runs`: per D, N_50
    of persistent association (INFO: the paper gives no degree; censored as a bound) and the association
    margin at each N (INFO); then the exponent row (:func:`exponent_row`)."""
    out: list[Check] = []
    fits: dict[int, dict] = {}
    skipped = runs[runs["N"] == 0]
    runs = runs[runs["N"] > 0]
    for D, g in runs.groupby("D"):
        Ns = sorted(g["N"].unique())
        tab = g.pivot(index="seed", columns="N", values="success").reindex(columns=Ns).to_numpy(float)
        r = n50(Ns, tab)
        fits[int(D)] = r
        q, steps, T_a = float(g["q"].iloc[0]), int(g["steps"].iloc[0]), float(g["T_a"].iloc[0])
        sd = setting_at(s, int(D)).at(q=q)
        scope = theorem_3_1_scope(sd)
        div = g[g["status"] != "ok"]
        counts = ", ".join(f"N={n}: {int(gg['success'].sum())}/{len(gg)}" for n, gg in g.groupby("N"))
        where = f"[D = {D}, q = {q:.4g} ({label}), {steps} steps, window [T_a, {k:g} T_a], T_a = {T_a:.4g}]"
        params = dict(D=int(D), C=s.C, q=round(q, 6), steps=steps, N=f"{Ns[0]}..{Ns[-1]}", seeds=tab.shape[0], k=k)
        note = (
            f"{r['text']}; persistent successes per N: {counts}"
            + (
                "; diverged (counted as failures): "
                + ", ".join(f"N={x.N} seed {x.seed + 1}: {x.status}" for x in div.itertuples())
                if len(div)
                else "; no run diverged"
            )
            + (f"; outside the scope rule: {scope}" if scope else "")
            + "; common random numbers: each seed's N_max samples, the first N used at N"
        )
        out.append(
            Check(
                f"Theorem 4.2 (N = poly(d)) {where}",
                "N_50: N where the isotonic fit of persistent association (over seeds) reaches 1/2",
                r["value"],
                "INFO (the paper: N = poly(d), no degree)",
                Verdict.INFO,
                params=params,
                # an interval end beyond the grid is not a number the ledger can store: nan, the note gives the bound
                ci_low=_finite(r["low"]),
                ci_high=_finite(r["high"]),
                note=("censored: " if r["censored"] else "") + note,
                route=_route(),
            )
        )
        mm = g.groupby("N")["margin_min"].mean()
        cross = _crossing(mm.index.to_numpy(float), mm.to_numpy(float))
        out.append(
            Check(
                f"Theorem 4.2 (N = poly(d)) {where}",
                "normalised association margin, min over rows, at the end of the run (mean over seeds) at N_max",
                float(mm.iloc[-1]),
                "INFO (> 0 iff every row associated)",
                Verdict.INFO,
                params=params,
                note="mean over seeds per N: "
                + ", ".join(f"N={int(n)}: {v:.3g}" for n, v in mm.items())
                + f"; zero crossing (log-linear in N): {cross}; median-row margin at N_max "
                f"{g[g['N'] == Ns[-1]]['margin_median'].mean():.3g}",
                route="association_margin vs Definition 2.2 on random A "
                "(tests/test_verdicts_a.py::test_association_margin_sign_is_association)",
            )
        )
    for x in skipped.itertuples():
        out.append(
            Check.not_run(
                f"Theorem 4.2 (N = poly(d)) [D = {x.D}, q = {x.q:.4g} ({label}), {x.steps} steps]",
                "N_50: N where the isotonic fit of persistent association (over seeds) reaches 1/2",
                "INFO (the paper: N = poly(d), no degree)",
                f"{x.status}; ran up to D = {max(fits) if fits else 'none'}",
                "theorydyn.experiments.nstar.nstar_runs with budget_s=None",
                params=dict(D=int(x.D), C=s.C, q=round(float(x.q), 6), steps=int(x.steps), k=k),
            )
        )
    out.append(exponent_row(fits, label, dict(C=s.C, q=label, k=k)))
    return out


def _finite(x: float) -> float:
    return float(x) if math.isfinite(x) else math.nan


def _crossing(Ns: np.ndarray, m: np.ndarray) -> str:
    """Where a margin curve (mean over seeds, against N) first crosses 0, log-linear between grid points."""
    if m[0] > 0:
        return f"<= {int(Ns[0])} (positive at the smallest N)"
    up = np.nonzero(m > 0)[0]
    if len(up) == 0:
        return f"> {int(Ns[-1])} (negative up to N_max)"
    j = int(up[0])
    x0, x1 = math.log(Ns[j - 1]), math.log(Ns[j])
    return f"{math.exp(x0 + (-m[j - 1]) / (m[j] - m[j - 1]) * (x1 - x0)):.4g}"


def exponent_row(fits: dict[int, dict], label: str, params: dict) -> Check:
    """The exponent b of N_50 ∝ D^b over the D's whose N_50 is not censored (least squares of log N_50
    on log D). A verdict only with ≥ 3 uncensored sizes: N = poly(d) predicts a straight line in log-log,
    so PASS iff the fitted line passes through every D's N_50 interval, FAIL otherwise (a curve the power
    law cannot follow, e.g. exponential growth); with fewer, INFO giving the bounds."""
    ok = {D: r for D, r in fits.items() if r["censored"] is None}
    bounds = "; ".join(f"D={D}: {r['text']}" for D, r in sorted(fits.items()))
    claim = f"Theorem 4.2 (N = poly(d)) [{label}, D = {'/'.join(str(D) for D in sorted(fits))}]"
    quantity = "exponent b of N_50(D) ~ D^b"
    route = _route()
    if len(ok) < 3:
        return Check(
            claim,
            quantity,
            math.nan,
            "INFO (a verdict needs >= 3 uncensored D)",
            Verdict.INFO,
            params=dict(params, uncensored=len(ok)),
            note=f"{len(ok)} uncensored size(s); {bounds}",
            route=route,
        )
    Ds = sorted(ok)
    fit = fit_power_law_ci(Ds, [ok[D]["value"] for D in Ds])
    assert fit is not None  # 3 distinct D
    line = {D: fit["prefactor"] * D ** fit["b"] for D in Ds}
    inside = all(ok[D]["low"] <= line[D] <= ok[D]["high"] for D in Ds)
    return Check(
        claim,
        quantity,
        fit["b"],
        "the power law passes through every N_50 interval (N = poly(d))",
        Verdict.PASS if inside else Verdict.FAIL,
        params=dict(params, uncensored=len(ok)),
        ci_low=fit["b_low"],
        ci_high=fit["b_high"],
        note="fitted N_50 per D: " + ", ".join(f"D={D}: {line[D]:.4g}" for D in Ds) + f"; {bounds}",
        route=route,
    )


def q_readings(s: Setting) -> tuple[tuple[str, Callable[[int], float]], ...]:
    """The two readings of q along D, each with its label: q = C²/D (Assumption 2's scaling), then the
    ledger's fixed q (labelled as the second reading)."""
    return (("q = C^2/D", lambda D: s.C**2 / D), (f"fixed q = {s.q:g}, the ledger's", lambda D: s.q))


def checks(s: Setting, *, quick: bool = True, progress: Callable[[str], None] | None = None) -> list[Check]:
    """The ledger rows of N*(D) (module docstring) at :data:`SIZES`, in two readings of q:
    q = C²/D (Assumption 2's scaling) and the ledger's fixed q, each labelled."""
    say = progress or (lambda msg: None)
    n = SIZES.pick(quick)
    Ds = nstar_Ds(s.C, n.n_D)
    preset = theorem4.SIZES.pick(quick).steps
    out: list[Check] = []
    for label, q_of in q_readings(s):
        runs = nstar_runs(s, Ds, q_of, n.Ns, n.seeds, n.k, preset=preset, progress=say, budget_s=BUDGET_S)
        out += check_n_star(s, runs, label, n.k)
    return out


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :func:`checks` at :data:`SIZES`: the largest simulation
    (:func:`theorydyn.simulate.memory.simulate_memory`) at the largest D and N, plus the
    common-random-numbers training set it slices (as large again)."""
    n = SIZES.pick(quick)
    Dn = max(nstar_Ds(s.C, n.n_D))
    N_max = max(n.Ns)
    return simulate_memory(Dn, s.C, Dn, N=2 * N_max, n_test=256)
