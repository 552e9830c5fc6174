"""The N*(D) grid's time, before and after issue 32: ``python -m theorydyn.bench simulate --nstar quick|full``.

The grid is the ledger's (:data:`theorydyn.claims.nstar.SIZES` of the mode, the q = C²/D reading, at
C = 4): each D of ``nstar_Ds``, each seed, each N of the grid, GD at the Theorem 4.2 row's η, ω for
⌈k T_a / η⌉ steps, float32, records every steps/50 on 256 test samples. Two routes run the same
(D, N, seed, steps):

  before: one :func:`theorydyn.simulate.simulate` per (D, N, seed), each drawing its own N samples
          (the route when the issue was filed, whose full-ledger grid took 633 s); timed as its draws
          plus its GD on the new route's samples, so that both routes take the same steps;
  after:  :func:`theorydyn.experiments.nstar.nstar_runs`: one N_max draw per (D, seed), every N of the
          grid a prefix of it, all N in one pass over X a step (``simulate_replicas(n_train=Ns)``).

Each route runs once (a grid is minutes, not milliseconds); the load average is read before and after
each, and the two routes alternate per D so that a change of load hits both. A diverged run stops
early: each row counts them per route (the same runs, as both train on the same samples).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..claims import nstar as claim
from ..claims import theorem4
from ..core import data
from ..core.setting import Setting, setting_at
from ..experiments.nstar import nstar_Ds, nstar_runs, plan_at, q_readings, run_options
from ..simulate import simulate


def _before(sd: Setting, Ns, seeds, steps: int, eta: float, omega: float, every: int) -> tuple[list[str], float, float]:
    """The old route's runs one by one: each draws N samples of its own (timed, then dropped: they are
    not a prefix of the N_max draw), then trains on the samples nstar_runs gives it (the first N of the
    seed's N_max draw, made untimed: the same GD as the new route, so the same runs diverge). Returns
    the runs' statuses and the seconds of the draws and of the GD."""
    out, gen, gd = [], 0.0, 0.0
    for j in seeds:
        seed = int(1000 * j + sd.D + 7)
        b = data.sample(sd, int(max(Ns)), seed=seed + 1, dtype=np.float32)
        for N in Ns:
            t0 = time.perf_counter()
            data.sample(sd, int(N), seed=seed + 1, dtype=np.float32)
            t1 = time.perf_counter()
            res = simulate(sd, seed=seed, train=(b.X[: int(N)], b.y[: int(N)]), **run_options(eta, omega, steps, every))
            gen, gd = gen + t1 - t0, gd + time.perf_counter() - t1
            out.append(str(res.status))
    return out, gen, gd


def nstar_grid(mode: str, report: Callable[[str], None]) -> pd.DataFrame:
    """One row per D of the ``mode`` ("quick" or "full") grid: its runs, steps, and the seconds of each
    route (before: its draws and runs, summed; after: nstar_runs, wall) with the load average around it;
    a last row sums the D's."""
    n = claim.SIZES.pick(mode == "quick")
    s = Setting(D=64, C=4)
    omega = theorem4.RUN.omega
    preset = n.min_steps
    q_label, q_of = q_readings(s)[0]
    rows = []
    for D in nstar_Ds(s.C, n.n_D):
        sd = setting_at(s, D).at(q=float(q_of(D)))
        plan = plan_at(sd, n.ks, None, preset)
        eta, steps, every = plan["eta"], plan["steps"], plan["record_every"]
        row: dict = dict(D=D, q=sd.q, runs=len(n.Ns) * len(n.seeds), Ns="/".join(map(str, n.Ns)), steps=steps)
        load0 = os.getloadavg()[0]
        statuses, gen, gd = _before(sd, n.Ns, n.seeds, steps, eta, omega, every)
        row.update(before_s=gen + gd, before_draws_s=gen, before_load=f"{load0:.2f}-{os.getloadavg()[0]:.2f}")
        row["before_diverged"] = sum(st != "ok" for st in statuses)
        load0 = os.getloadavg()[0]
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:  # timed afresh: not read back from a store
            runs = nstar_runs(s, (D,), q_of, n.Ns, n.seeds, n.ks, None, omega, preset=preset, dtype="float32", out=tmp)
        row.update(after_s=time.perf_counter() - t0, after_load=f"{load0:.2f}-{os.getloadavg()[0]:.2f}")
        row["after_diverged"] = int((runs["status"] == "diverged").sum())
        row["after_over_before"] = row["after_s"] / row["before_s"]
        report(
            f"  D = {D} ({q_label}, q = {sd.q:.3g}), {row['runs']} runs of {steps} steps: before "
            f"{row['before_s']:.1f} s (its draws {row['before_draws_s']:.1f} s; load {row['before_load']}, "
            f"{row['before_diverged']} diverged), after "
            f"{row['after_s']:.1f} s (load {row['after_load']}, {row['after_diverged']} diverged) "
            f"-> {row['after_over_before']:.2f}x"
        )
        rows.append(row)
    t = pd.DataFrame(rows)
    total = dict(D="all", before_s=t["before_s"].sum(), after_s=t["after_s"].sum(), runs=int(t["runs"].sum()))
    total["after_over_before"] = total["after_s"] / total["before_s"]
    report(
        f"  the {mode} N* grid: before {total['before_s']:.1f} s, after {total['after_s']:.1f} s "
        f"-> {total['after_over_before']:.2f}x (goal <= 0.5x)"
    )
    return pd.concat([t, pd.DataFrame([total])], ignore_index=True)
