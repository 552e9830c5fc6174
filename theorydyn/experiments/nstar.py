"""The runs of N*(D) (docs/theory.md §4, §15): realistic GD on a grid of D, N and seeds.

At each D of a grid (the setting ``setting_at(s, D)`` at the q of one reading) and each seed, one
training set of N_max samples is drawn, and the run at N trains on its first N samples from the
seed's initialisation (common random numbers across N); every N of the grid steps in one pass over
X a step (:func:`theorydyn.simulate.simulate_replicas` with ``n_train``). Each run:

* steps at the stated rule's step size (:func:`theorydyn.experiments.stepsize.rule_eta`: 1/λ* of the
  risk's largest curvature along the idealized trajectory up to the longest window), or a given η;
* lasts ⌈max(ks)·T_a/η⌉ steps (T_a the idealized flow's association time,
  :func:`steps_for`) and records at least :data:`MIN_WINDOW_RECORDS` steps
  inside the shortest window [T_a, min(ks)·T_a] (the same windows as Theorem 4.2's rows);
* stops at its first record at s ≥ T_a whose association is incomplete (``stop_after=T_a``): it has
  then failed every window, and the pass goes on with the others (the largest N is the costly one);
* is read per window by persistent association (:func:`~theorydyn.experiments.measure.window_summary`),
  and by the normalised association margin (:func:`theorydyn.core.model.association_margin`, min over
  rows) at the window's start T_a, which every run that did not diverge reaches: the order parameter
  read against N.

A diverged run (a non-finite risk or parameter) says nothing about the sample need: its success is
nan (left out of N_50), its status "diverged" is reported apart. Each (D, q, seed) pass is committed to a
keyed store (:class:`theorydyn.infra.keyed.KeyedStore`, ``<out>/nstar_runs.csv``) as soon as it ends:
a rerun reads it back, and a kill loses at most the pass in flight.

The ledger's N*(D) rows (:mod:`theorydyn.claims.nstar`) judge :func:`run`: at D = 2C², 3C², … (:func:`nstar_Ds`)
in two readings of q (:func:`q_readings`), the runs of each reading (:func:`reading_runs`) and their readings
across N (:func:`readings`: N_50 as a bracket, the association margin's trend).

Shapes: A: (D, D); the training set X: (N_max, D, d), bfloat16 bits on the Numba kernel, float32 on torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core import data
from ..core.config import Seeds
from ..core.glm import theorem_3_1_scope
from ..core.setting import Setting, setting_at
from ..core.stats import trend_slope_ci
from ..infra.keyed import KeyedStore
from ..infra.memory import MemoryEstimate
from ..infra.paths import run_dir
from ..reduced import flows_until_t2
from ..simulate import simulate_replicas
from ..simulate.config import SIM_DEFAULTS
from ..simulate.memory import simulate_memory
from .measure import window_summary
from .stepsize import curvature_along_flow

#: The windows [T_a, k·T_a] every run is read on: Theorem 4.2's (one footing for persistence).
KS = (1.5, 3.0)
#: A run's steps are at least the preset and at least HORIZON_FACTOR × the time the idealized
#: (N = ∞) flow at the row's setting needs to end phases II and III, max(T1, T2), over η: the theorem
#: runs T ≥ poly(d)/η iterations, and a run stopped before the idealized dynamics associates would
#: judge the horizon, not the theorem (at D = 32, q = 1/2, T1 = 3664: 250 steps reach s = 2500 only).
HORIZON_FACTOR = 1.5
#: Fewest recorded steps inside the shortest window.
MIN_WINDOW_RECORDS = 24
#: The numerics of the stored passes: a change of what a pass computes bumps it (older rows are recomputed).
NSTAR_VERSION = 2
#: The columns of each run's records kept in the store (the readings are made from them when read back, so
#: a new reading needs no new run).
RAW_COLUMNS = ("step", "s", "association", "margin_min", "risk", "err_f", "amb_f", "train_err")

#: Seconds of one GD step at D = 64, N = 16384 on 2 busy cores (float32 X; bfloat16 is ~0.77 of it): the
#: idle fused step measured 23.9 ms (`python -m theorydyn.bench simulate`, 2-core Intel Xeon, load 1.9),
#: doubled for a machine shared with other work. A step costs ∝ N D² d = N D³ (d = D). An upper bound of a
#: pass: replicas stopped early cost nothing after their stop.
STEP_S_64 = 0.05


def estimated_seconds(D: int, Ns: Sequence[int], n_seeds: int, steps: int) -> float:
    """The cost model of one D's runs: STEP_S_64 · (ΣN / 16384) · (D / 64)³ · steps · n_seeds."""
    return STEP_S_64 * (sum(Ns) / 16384) * (D / 64) ** 3 * steps * n_seeds


def run_options(eta: float, omega: float, steps: int, record_every: int | None = None, dtype: str = "float32") -> dict:
    """The options of every N*(D) run: records every ``record_every`` steps (default steps/50) on 256 test
    samples, X stored as ``dtype``."""
    every = max(1, steps // 50) if record_every is None else int(record_every)
    return dict(eta=eta, steps=steps, omega=omega, record_every=every, dtype=dtype, n_test=256)


def steps_for(s: Setting, preset: int, eta: float = SIM_DEFAULTS.eta) -> tuple[int, float | None]:
    """(steps, s_end): ``max(preset, ⌈HORIZON_FACTOR · s_end / η⌉)`` with s_end = max(T1, T2) of the
    reduced flow at ``s`` (1500 Monte Carlo samples, seed 0, the horizon of
    :func:`theorydyn.reduced.flows_until_t2`, as the ledger's idealized rows);
    the preset and None when the flow reaches neither (the dynamics never associates there)."""
    ph = flows_until_t2(s, [0], n_samples=1500)[0][0].phases
    ends = [float(x) for x in (ph.T1, ph.T2) if x is not None and math.isfinite(x)]
    if not ends:
        return int(preset), None
    return max(int(preset), math.ceil(HORIZON_FACTOR * max(ends) / eta)), max(ends)


def plan_at(sd: Setting, ks: Sequence[float], eta: float | None, preset: int) -> dict[str, Any]:
    """The run of one (D, q): T_a, the step size (the rule's where ``eta`` is None), the steps covering the
    longest window, the record interval giving :data:`MIN_WINDOW_RECORDS` records in the shortest.

    Returns dict(T_a, eta, eta_rule, lam, edge, steps, record_every): ``eta_rule`` the rule's step (also
    when ``eta`` is given: whether η is inside the rule is part of the verdict), ``lam`` λ* and ``edge`` 2/λ*.
    T_a None: the idealized flow never associates at this setting (no window; the preset's steps at η).
    """
    _, T_a = steps_for(sd, preset, 10.0)
    if T_a is None:
        e = 10.0 if eta is None else float(eta)
        return dict(T_a=None, eta=e, eta_rule=math.nan, lam=math.nan, edge=math.nan, steps=preset, record_every=1)
    curv = curvature_along_flow(sd, max(ks) * T_a)
    e = float(curv["eta"] if eta is None else eta)
    steps = max(int(preset), math.ceil(max(ks) * T_a / e))
    every = max(1, math.floor((min(ks) - 1.0) * T_a / e / MIN_WINDOW_RECORDS))
    return dict(
        T_a=T_a, eta=e, eta_rule=curv["eta"], lam=curv["lam"], edge=curv["edge"], steps=steps, record_every=every
    )


def raw_run(res: Any) -> dict[str, Any]:
    """What the store keeps of one run: its status, message and the :data:`RAW_COLUMNS` of its records."""
    tr = res.trajectory
    cols = {c: [float(x) for x in tr[c]] for c in RAW_COLUMNS if c in tr}
    return dict(status=str(getattr(res, "status", "ok")), message=str(getattr(res, "message", "")), records=cols)


def read_run(raw: dict[str, Any], T_a: float | None, ks: Sequence[float]) -> dict[str, Any]:
    """One run's reading from :func:`raw_run`: status, per k the persistence (success nan when diverged), the
    fraction of the window with complete association and its records, the margin at T_a and at the end."""
    status = raw["status"]
    tr = pd.DataFrame(raw["records"])
    out: dict[str, Any] = dict(status=status, message=raw["message"])
    sv = tr["s"].to_numpy(float) if len(tr) else np.zeros(0)
    for k in ks:
        w = window_summary(tr, T_a, k) if T_a is not None and len(tr) else dict(frac=0.0)
        inwin = int(np.sum((sv >= T_a - 1e-9) & (sv <= k * T_a + 1e-9))) if T_a is not None else 0
        out[f"frac_k{k:g}"] = float(w["frac"])
        out[f"records_k{k:g}"] = inwin
        out[f"success_k{k:g}"] = math.nan if status == "diverged" else float(w["frac"] == 1.0)
    m = tr["margin_min"].to_numpy(float) if "margin_min" in tr else np.zeros(0)
    at = np.flatnonzero(sv >= T_a - 1e-9) if T_a is not None else np.zeros(0, int)
    out["margin_Ta"] = float(m[at[0]]) if at.size and m.size else math.nan
    out["margin_end"] = float(m[-1]) if status == "ok" and m.size else math.nan
    out["s_end"] = float(sv[-1]) if sv.size else math.nan
    return out


def store_dir() -> Path:
    """The default folder of the N*(D) passes' store: the run directory's ``nstar/``."""
    return run_dir("nstar")


def open_store(out: str | Path | None = None) -> KeyedStore:
    """The store of the N*(D) passes in ``out`` (default: :func:`store_dir`), one row per
    (D, q, seed, options) with the pass's per-N readings as JSON."""
    folder = Path(out) if out is not None else store_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return KeyedStore(folder / "nstar_runs.csv", payload_column="params", create=True)


def nstar_runs(
    s: Setting,
    Ds: Sequence[int],
    q_of: Callable[[int], float],
    Ns: Sequence[int],
    seeds: Seeds,
    ks: Sequence[float] = KS,
    eta: float | None = None,
    omega: float = SIM_DEFAULTS.omega,
    preset: int = 250,
    progress=None,
    budget_s: float | None = None,
    device: str = SIM_DEFAULTS.device,
    dtype: str | None = None,
    out: str | Path | None = None,
) -> pd.DataFrame:
    """One run per (D, N, seed j of ``seeds``) at ``setting_at(s, D).at(q=q_of(D))`` (seed 1000 j + D + 7,
    module docstring), each D planned by :func:`plan_at` and run by :func:`runs_at`. ``eta`` None: the stated
    rule's step at each (D, q). ``dtype``: X's storage, default bfloat16 on the Numba kernel (it rounds the
    data to 8 bits; ~0.77 of float32's step) and float32 on torch. ``out``: the folder of the store (None: the
    run directory's ``nstar/``).

    Returns one row per run: D, q, N, seed, eta, eta_rule, edge, status, message, success_k<k>, frac_k<k>,
    records_k<k> (each k of ``ks``), margin_Ta, margin_end, s_end, T_a, steps, record_every, source
    ("computed" / "stored"). A D whose :func:`estimated_seconds` would take the total past ``budget_s`` is
    not run (nor any larger D): one row with N = 0 and status ``"skipped: …"`` says so.
    """
    store = open_store(out)
    rows: list[dict] = []
    spent = 0.0
    for D in Ds:
        sd = setting_at(s, int(D)).at(q=float(q_of(D)))
        plan = plan_at(sd, ks, eta, preset)
        part, cost = runs_at(
            sd,
            plan,
            Ns,
            seeds,
            ks,
            omega=omega,
            progress=progress,
            budget_s=budget_s,
            spent=spent,
            device=device,
            dtype=dtype,
            store=store,
        )
        rows.extend(part)
        if part and part[0]["N"] == 0:  # skipped: over the budget, and every larger D with it
            break
        spent += cost
    return pd.DataFrame(rows)


def runs_at(
    sd: Setting,
    plan: dict[str, Any],
    Ns: Sequence[int],
    seeds: Seeds,
    ks: Sequence[float] = KS,
    *,
    omega: float = SIM_DEFAULTS.omega,
    progress=None,
    budget_s: float | None = None,
    spent: float = 0.0,
    device: str = SIM_DEFAULTS.device,
    dtype: str | None = None,
    store: KeyedStore | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """The runs of one (D, q) of :func:`nstar_runs` at ``sd`` with its :func:`plan_at` ``plan``: per seed j of
    ``seeds`` one pass over every N of ``Ns`` (seed 1000 j + D + 7), read from / committed to ``store``
    (default :func:`open_store`), each run read by :func:`read_run`. Returns (rows, cost): the rows of
    :func:`nstar_runs` at this D and the pass's :func:`estimated_seconds`; when ``spent`` + the cost would
    pass ``budget_s``, one row with N = 0 and status ``"skipped: …"`` instead (nothing run)."""
    dt = dtype or ("bfloat16" if device == SIM_DEFAULTS.device else "float32")
    store = open_store() if store is None else store
    D, N_max = sd.D, int(max(Ns))
    T_a, steps, e = plan["T_a"], plan["steps"], plan["eta"]
    base = dict(
        D=int(D),
        q=sd.q,
        eta=e,
        eta_rule=plan["eta_rule"],
        edge=plan["edge"],
        T_a=math.nan if T_a is None else T_a,
        steps=steps,
        record_every=plan["record_every"],
    )
    cost = estimated_seconds(int(D), Ns, len(seeds), steps)
    if budget_s is not None and spent + cost > budget_s:
        why = (
            f"skipped: estimated {cost:.0f} s ({steps} steps at eta = {e:g}) would pass the budget of {budget_s:.0f} s"
        )
        return [dict(base, N=0, seed=-1, status=why, message=why)], cost
    rows: list[dict] = []
    opts = run_options(e, omega, steps, plan["record_every"], dt)
    for i, j in enumerate(seeds):
        seed = int(1000 * j + D + 7)
        payload = dict(
            version=NSTAR_VERSION,
            setting=sd.to_dict(),
            Ns=[int(N) for N in Ns],
            seed=seed,
            ks=[float(k) for k in ks],
            options=opts,
            device=device,
            stop_after=None if T_a is None else float(T_a),
        )
        got = store.get(payload)
        if got is not None:
            raws = json.loads(got["runs"])
            source = "stored"
        else:
            if progress:
                progress(
                    f"N*(D): D={D}, q={sd.q:.3g}, eta={e:g}, N={'/'.join(map(str, Ns))} in one pass, "
                    f"seed {i + 1}/{len(seeds)}, {steps} steps"
                )
            b = data.sample(sd, N_max, seed=seed + 1, dtype=np.float32)
            runs = simulate_replicas(
                sd,
                seed=seed,
                **opts,
                train=(b.X, b.y),
                init_seeds=[seed] * len(Ns),
                n_train=[int(N) for N in Ns],
                device=device,
                stop_after=None if T_a is None else float(T_a),
            )
            del b
            raws = [raw_run(res) for res in runs]
            store.put(payload, dict(D=int(D), seed=seed, runs=json.dumps(raws, allow_nan=True)))
            source = "computed"
        for N, raw in zip(Ns, raws, strict=True):
            rows.append(dict(base, N=int(N), seed=j, source=source, **read_run(raw, T_a, ks)))
    return rows, cost


# ---- the readings across N: N_50 as a bracket, the margin's trend ----------------------------------------
#: Bootstrap resamples of the seeds for N_50's bracket (fixed generator seed 0).
N_BOOT = 400


def isotonic(y: Sequence[float], w: Sequence[float] | None = None) -> np.ndarray:
    """The non-decreasing sequence closest to ``y`` in weighted least squares (pool adjacent violators).

    >>> isotonic([0.0, 1.0, 0.5, 1.0]).tolist()
    [0.0, 0.75, 0.75, 1.0]
    """
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


def _bracket(Ns: np.ndarray, succ: np.ndarray) -> tuple[float, float]:
    """N_50's bracket (lo, hi] of one (seeds, N) success table (nan: a diverged run, left out): the isotonic
    fit of the success rate over the runs that converged (weighted by their count) reaches 1/2 between the
    grid points lo and hi; (N_max, inf) when it stays below 1/2, (0, N_min] when it starts at or above it."""
    n = np.sum(np.isfinite(succ), axis=0)
    keep = n > 0
    if not keep.any():
        return math.nan, math.nan
    Nk = Ns[keep]
    rate = np.nansum(succ[:, keep], axis=0) / n[keep]
    p = isotonic(rate, n[keep])
    if p[-1] < 0.5:
        return float(Nk[-1]), math.inf
    j = int(np.argmax(p >= 0.5))
    return (0.0, float(Nk[0])) if j == 0 else (float(Nk[j - 1]), float(Nk[j]))


def n50(Ns: Sequence[int], succ: np.ndarray, n_boot: int = N_BOOT) -> dict[str, Any]:
    """N_50 from a (seeds, len(Ns)) success table (1, 0, or nan for a diverged run): a bracket, never a point.

    The isotonic fit of the success rate against log N (over the runs that converged) crosses 1/2 between two
    grid points: N_50 ∈ (lo, hi]. Over ``n_boot`` resamples of the seeds (generator seed 0) the brackets'
    2.5% lowest ``lo`` and 97.5% highest ``hi`` give the 95% bracket (boot_lo, boot_hi]. Censored: "above"
    (N_50 > N_max: hi = inf), "below" (N_50 ≤ N_min: lo = 0), else None.

    Returns:
        dict(lo, hi, boot_lo, boot_hi, censored, diverged, text).

    Example:
        >>> r = n50([1024, 2048, 4096], np.array([[0, 0, 1], [0, 1, 1], [0, 0, 1.0]]))
        >>> r["lo"], r["hi"], r["censored"]
        (2048.0, 4096.0, None)
    """
    Ns_a = np.asarray(Ns, float)
    succ = np.asarray(succ, float)
    lo, hi = _bracket(Ns_a, succ)
    rng = np.random.default_rng(0)
    boots = np.array([_bracket(Ns_a, succ[rng.integers(0, len(succ), len(succ))]) for _ in range(n_boot)])
    boots = boots[np.isfinite(boots[:, 0])]
    b_lo = float(np.quantile(boots[:, 0], 0.025, method="lower")) if len(boots) else math.nan
    b_hi = float(np.quantile(boots[:, 1], 0.975, method="higher")) if len(boots) else math.nan
    diverged = int(np.sum(~np.isfinite(succ)))
    censored = "above" if hi == math.inf else "below" if lo == 0.0 else None
    if math.isnan(lo):
        text = "N_50 not measured (every run diverged)"
    elif censored == "above":
        text = f"N_50 > {int(lo)} (censored above the grid)"
    elif censored == "below":
        text = f"N_50 <= {int(hi)} (censored below the grid)"
    else:
        text = f"N_50 in ({int(lo)}, {int(hi)}]"
    if censored != "above" and not math.isnan(lo):
        text += (
            f"; 95% over seeds: ({b_lo:.0f}, {b_hi:.0f}]" if math.isfinite(b_hi) else f"; 95% over seeds: > {b_lo:.0f}"
        )
    return dict(lo=lo, hi=hi, boot_lo=b_lo, boot_hi=b_hi, censored=censored, diverged=diverged, text=text)


def margin_trend(g: pd.DataFrame, column: str = "margin_Ta") -> dict[str, Any] | None:
    """The slope of the association margin against log2 N across the N grid of one (D, q), per doubling of N,
    with the interval of :func:`theorydyn.core.stats.trend_slope_ci` (seeds within each N and the N's around
    the line); the runs that diverged are left out. None with fewer than 2 N holding a finite margin."""
    per = [(int(N), gg[column].to_numpy(float)) for N, gg in g.groupby("N")]
    per = [(N, v[np.isfinite(v)]) for N, v in per]
    per = [(N, v) for N, v in per if v.size]
    if len(per) < 2:
        return None
    r = trend_slope_ci([N for N, _ in per], [v for _, v in per], log_y=False)
    ln2 = math.log(2.0)  # slope per e-fold of N -> per doubling
    return dict(
        b=r["b"] * ln2,
        b_low=r["b_low"] * ln2,
        b_high=r["b_high"] * ln2,
        means={N: float(m) for (N, _), m in zip(per, r["means"], strict=True)},
    )


def readings(s: Setting, runs: pd.DataFrame, ks: Sequence[float]) -> dict[int, dict[str, Any]]:
    """What the N*(D) rows read of a :func:`nstar_runs` table (its runs with N > 0), per D: q, the N grid ``Ns``,
    Theorem 3.1's scope rule at (D, q) (:func:`scope_at`), ``n50`` per k of ``ks`` (:func:`n50` on the
    success_k<k> column over seeds) and the association margin's ``trend`` in N (:func:`margin_trend`)."""
    out: dict[int, dict[str, Any]] = {}
    for D, g in runs[runs["N"] > 0].groupby("D"):
        Ns = sorted(int(N) for N in g["N"].unique())
        q = float(g["q"].iloc[0])
        tabs = {k: g.pivot(index="seed", columns="N", values=f"success_k{k:g}").reindex(columns=Ns) for k in ks}
        out[int(D)] = dict(
            q=q,
            Ns=Ns,
            scope=scope_at(s, int(D), q),
            n50={k: n50(Ns, tab.to_numpy(float)) for k, tab in tabs.items()},
            trend=margin_trend(g),
        )
    return out


def regime_reading(
    sd: Setting,
    plan: dict[str, Any],
    Ns: Sequence[int],
    seeds: Seeds,
    ks: Sequence[float],
    budget_s: float | None = None,
    progress=None,
) -> dict[str, Any]:
    """N*(D)'s runs at ``sd`` (:func:`runs_at` with its :func:`plan_at` ``plan``: the same runs as
    :func:`nstar_runs` at that D and q, read back from their store when the N*(D) rows ran them) read on the
    longest window of ``ks``: N_50 there (:func:`n50`) and the association margin's slope per doubling of N
    (:func:`margin_trend`), the regime of runs at ``sd``.

    Returns dict(n50, trend, eta, eta_rule, Ns, k): :func:`n50`'s dict, :func:`margin_trend`'s (or None),
    the runs' step size and the stated rule's, the N grid run and the window's k."""
    rows, _ = runs_at(sd, plan, Ns, seeds, ks, progress=progress, budget_s=budget_s)
    runs = pd.DataFrame(rows)
    runs = runs[runs["N"] > 0]
    k = max(ks)
    grid = sorted(int(x) for x in runs["N"].unique())
    tab = runs.pivot(index="seed", columns="N", values=f"success_k{k:g}").reindex(columns=grid).to_numpy(float)
    return dict(
        n50=n50(grid, tab),
        trend=margin_trend(runs),
        eta=float(runs["eta"].iloc[0]),
        eta_rule=float(runs["eta_rule"].iloc[0]),
        Ns=grid,
        k=k,
    )


def scope_at(s: Setting, D: int, q: float) -> str | None:
    """Theorem 3.1's scope rule (:func:`theorydyn.core.glm.theorem_3_1_scope`) at the setting of N*(D)'s runs
    at (D, q): ``setting_at(s, D).at(q=q)``; None inside it, else the reason."""
    return theorem_3_1_scope(setting_at(s, D).at(q=q))


def memory(s: Setting, D: int, N_max: int) -> MemoryEstimate:
    """Peak of :func:`nstar_runs` up to D and ``N_max``: the largest simulation
    (:func:`theorydyn.simulate.memory.simulate_memory`) at that D and N, plus the common-random-numbers
    training set it slices (as large again)."""
    return simulate_memory(D, s.C, D, N=2 * N_max, n_test=256)


# ---- the ledger's N*(D) runs: both q readings at the claim's sizes ----------------------------------------
def nstar_Ds(C: int, n: int) -> tuple[int, ...]:
    """D = m C² for m = 2 … n + 1: q = C²/D = 1/m ≤ 1/2, a multiple of C, L = mC ≥ 4.

    >>> nstar_Ds(4, 4)
    (32, 48, 64, 80)
    """
    return tuple(m * C * C for m in range(2, n + 2))


def q_readings(s: Setting) -> tuple[tuple[str, Callable[[int], float]], ...]:
    """The two readings of q along D, each with its label: q = C²/D (Assumption 2's scaling), then the
    ledger's fixed q (labelled as the second reading)."""
    return (("q = C^2/D", lambda D: s.C**2 / D), (f"fixed q = {s.q:g}, the ledger's", lambda D: s.q))


@dataclass(frozen=True)
class NStarConfig:
    """What :func:`run` needs for the ledger's N*(D) rows.

    Attributes:
        sizes: the claim's validated sizes (:mod:`theorydyn.claims.sizes`): the N grid ``Ns`` at each D,
            ``seeds``, the windows ``ks``, how many D ``n_D`` (:func:`nstar_Ds`) and the least GD steps
            ``min_steps`` of a run.
        budget_s: the estimated seconds of runs allowed per q reading (:func:`estimated_seconds`; a D past it
            is not run, nor any larger D); None: no budget.
    """

    sizes: Any
    budget_s: float | None = None


@dataclass(frozen=True)
class NStarReading:
    """One q reading of :func:`run`.

    Attributes:
        label: the reading's label (:func:`q_readings`).
        runs: its runs, :func:`nstar_runs`' table (one row per (D, N, seed); a D over the budget one row with
            N = 0).
        read: their readings per D run (:func:`readings`: q, the N grid, Theorem 3.1's scope rule, N_50 per
            window, the margin's trend in N).
    """

    label: str
    runs: pd.DataFrame
    read: dict[int, dict[str, Any]]


@dataclass(frozen=True)
class NStarResults:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        s: the ledger's setting (C names the D grid, q the fixed reading).
        ks: the windows [T_a, k·T_a] the runs are read on.
        readings: the q readings in :func:`q_readings`' order, each with its runs and their readings.
    """

    s: Setting
    ks: tuple[float, ...]
    readings: tuple[NStarReading, ...]


def reading_runs(
    s: Setting, Ds: Sequence[int], q_of: Callable[[int], float], config: NStarConfig, progress=None
) -> pd.DataFrame:
    """The N*(D) runs of one q reading at ``config``'s sizes (:func:`nstar_runs` at each D of ``Ds``, q = q_of(D),
    with the sizes' N grid, seeds, windows and least steps, and ``config.budget_s``): a store, so a rerun reads
    them back."""
    n = config.sizes
    return nstar_runs(s, Ds, q_of, n.Ns, n.seeds, n.ks, preset=n.min_steps, progress=progress, budget_s=config.budget_s)


def run(s: Setting, config: NStarConfig, progress: Callable[[str], None] | None = None) -> NStarResults:
    """Everything the ledger's N*(D) rows read at the ledger's setting ``s`` (:class:`NStarResults`): at
    D = 2C², 3C², … (:func:`nstar_Ds`, ``config.sizes.n_D`` of them), per q reading (:func:`q_readings`: q = C²/D,
    then the ledger's fixed q) its runs (:func:`reading_runs`: realistic GD over the N grid and seeds, common
    random numbers across N) and their readings across N (:func:`readings`: N_50 per window as a bracket, the
    association margin's slope per doubling of N)."""
    n = config.sizes
    Ds = nstar_Ds(s.C, n.n_D)
    out = []
    for label, q_of in q_readings(s):
        runs = reading_runs(s, Ds, q_of, config, progress)
        out.append(NStarReading(label, runs, readings(s, runs, n.ks)))
    return NStarResults(s, tuple(n.ks), tuple(out))
