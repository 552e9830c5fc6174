"""N*(D) in the ledger (docs/theory.md §4): how many samples Theorem 4.2 needs, against D.

Theorem 4.2 assumes N = poly(d) and gives no degree. Per D and seed, the smallest N of a doubling
grid whose GD run (:func:`theorydyn.claims.theorem4.train_upstream`, at the Theorem 4.2 row's η, ω
and steps) ends with full patch association (:func:`n_star_runs`); INFO rows of log2 N* per D and
of the exponent b of N* ∝ D^b (:func:`check_n_star`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from ..glm import theorem_3_1_scope
from ..model import association
from ..resources import MemoryEstimate
from ..setting import (
    Setting,
    setting_at,  # the same q, ν at another D (d = D, σ² = 1/d)
)
from ..simulate.memory import simulate_memory
from .check import Check, Verdict
from .theorem4 import THEOREM_4_2, steps_for, train_upstream


def n_star_runs(
    s: Setting,
    Ds: tuple[int, ...],
    seeds: int = 5,
    steps: int | dict[int, int] = 250,
    eta: float = 10.0,
    omega: float = 1e-3,
    N0: int = 256,
    N_max: int = 16384,
    seed: int = 0,
    dtype: str = "float32",
    progress=None,
) -> pd.DataFrame:
    """N*(D): per D and seed, the smallest N of the doubling grid N0, 2 N0, …, N_max whose GD run
    (:func:`train_upstream` at ``setting_at(s, D)``, η, ω, ``steps`` as the Theorem 4.2 row; a dict
    gives the steps per D) ends with
    full patch association (Definition 2.2, every row); inf when none up to ``N_max`` does (censored).

    Run (D, N, k) draws its own data and initialisation, ``seed + 1000 k + 100 log2 N + D + 7``.
    Returns a DataFrame with columns D, seed, N_star, tried (the N's run, with their association).
    """
    rows = []
    for D in Ds:
        sd_ = setting_at(s, D)
        st = int(steps[D]) if isinstance(steps, dict) else int(steps)
        for k in range(seeds):
            N, found, tried = int(N0), math.inf, []
            while N <= N_max:
                if progress:
                    progress(f"N*(D): D={D}, N={N}, seed {k + 1}/{seeds}")
                sd = int(seed + 1000 * k + 100 * round(math.log2(N)) + D + 7)
                res = train_upstream(sd_, N, eta, st, omega, sd, dtype=dtype, record_every=st)
                a = association(sd_, res.A)
                tried.append(f"{N}:{a:.3f}")
                if a == 1.0:
                    found = float(N)
                    break
                N *= 2
            rows.append(dict(D=int(D), seed=k, N_star=found, tried=" ".join(tried)))
    return pd.DataFrame(rows)


def check_n_star(
    s: Setting, runs: pd.DataFrame, steps: int | dict[int, int], N_max: int, eta: float = 10.0, omega: float = 1e-3
) -> list[Check]:
    """INFO rows of N*(D) (:func:`n_star_runs`): per D, log2 N* over seeds (N*(D) = the largest over
    seeds, the N that gives full association in every seed); and the exponent b of N* ∝ D^b, the
    least-squares slope of log N* on log D fitted per seed, with its 95% interval over seeds.
    Theorem 4.2 assumes N = poly(d) (d = D here) and gives no degree: INFO. A seed censored at some
    D (no N ≤ N_max) makes the exponent unmeasured (nan), said in the note."""
    Ds = sorted(runs["D"].unique())
    out = []
    steps_text = " ".join(f"{D}:{n}" for D, n in steps.items()) if isinstance(steps, dict) else steps
    base = dict(C=s.C, q=round(s.q, 6), eta=eta, omega=omega, steps=steps_text, N_grid=f"doubling..{N_max}")
    route = (
        "association vs brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c); "
        "search and fit on planted thresholds (tests/test_theorems.py::test_n_star_search_and_exponent)"
    )
    for D in Ds:
        g = runs[runs["D"] == D].sort_values("seed")
        vals = g["N_star"].to_numpy(float)
        scope = theorem_3_1_scope(setting_at(s, int(D)))
        note = (
            f"per seed N* {[int(v) if math.isfinite(v) else 'censored' for v in vals]}; runs (N:association) "
            + " | ".join(g["tried"])
            + (f"; outside the scope rule: {scope}" if scope else "; inside the scope rule")
        )
        worst = float(np.max(vals))
        if np.all(np.isfinite(vals)):
            out.append(
                Check.over_seeds(
                    f"Theorem 4.2 (N = poly(d)) [D = {D}]",
                    f"log2 N*(D), smallest doubling-grid N with full association; N*(D) over seeds = {int(worst)}",
                    np.log2(vals).tolist(),
                    "INFO (the paper: N = poly(d), no degree)",
                    Verdict.INFO,
                    params=dict(base, D=int(D)),
                    note=note,
                    route=route,
                )
            )
        else:
            out.append(
                Check(
                    f"Theorem 4.2 (N = poly(d)) [D = {D}]",
                    "log2 N*(D), smallest doubling-grid N with full association",
                    math.nan,
                    "INFO (the paper: N = poly(d), no degree)",
                    Verdict.INFO,
                    params=dict(base, D=int(D), seeds=len(vals)),
                    note=f"censored: no N <= {N_max} gave full association in some seed; {note}",
                    route=route,
                )
            )
    piv = runs.pivot(index="seed", columns="D", values="N_star")
    ok = len(Ds) >= 2 and bool(np.all(np.isfinite(piv.to_numpy(float))))
    params = dict(base, D="/".join(str(int(D)) for D in Ds))
    if ok:
        x = np.log(np.asarray(Ds, float))
        slopes = [float(np.polyfit(x, np.log(piv.loc[k].to_numpy(float)), 1)[0]) for k in piv.index]
        b_max = float(np.polyfit(x, np.log([float(piv[D].max()) for D in Ds]), 1)[0])
        out.append(
            Check.over_seeds(
                "Theorem 4.2 (N = poly(d))",
                "exponent b of N*(D) ~ D^b (slope per seed)",
                slopes,
                "INFO (the paper gives no degree)",
                Verdict.INFO,
                params=params,
                note=f"slope of the largest-over-seeds N*(D): {b_max:.3g}; doubling grid: each "
                f"N* is known to a factor 2",
                route=route,
            )
        )
    else:
        out.append(
            Check(
                "Theorem 4.2 (N = poly(d))",
                "exponent b of N*(D) ~ D^b (slope per seed)",
                math.nan,
                "INFO (the paper gives no degree)",
                Verdict.INFO,
                params=dict(params, seeds=len(piv)),
                note="not measured: "
                + ("fewer than two D" if len(Ds) < 2 else f"some seed censored (N* > {N_max}) at some D"),
                route=route,
            )
        )
    return out


def n_star_sizes(s: Setting, quick: bool) -> tuple[tuple[int, ...], int, int]:
    """The sizes :func:`checks` searches: the D's (16, 32 quick; 16, 32, 64 full; up to max(D, 32),
    multiples of C), the Theorem 4.2 row's preset steps (:func:`~.theorem4.steps_for` raises them per D
    where the idealized flow needs longer), and N_max (the row's N quick, 4× it full)."""
    N, steps = THEOREM_4_2["quick" if quick else "full"]
    Ds = tuple(D for D in ((16, 32) if quick else (16, 32, 64)) if D <= max(s.D, 32) and D % s.C == 0)
    return Ds, steps, N if quick else 4 * N


def checks(
    s: Setting,
    *,
    quick: bool = True,
    progress: Callable[[str], None] | None = None,
    seeds: int = 5,
) -> list[Check]:
    """The ledger rows of N*(D) (:func:`n_star_runs`) over D = 16, 32 (quick) or 16, 32, 64 (full; up
    to the ledger's D), at the Theorem 4.2 row's η, ω and steps, N up to the row's N (quick) or 4× it
    (full), over ``seeds`` seeds."""
    say = progress or (lambda msg: None)
    Ds, preset, N_max = n_star_sizes(s, quick)
    steps = {D: steps_for(setting_at(s, D), preset)[0] for D in Ds}  # the Theorem 4.2 row's rule per D
    runs = n_star_runs(s, Ds, seeds=seeds, steps=steps, N_max=N_max, progress=say)
    return check_n_star(s, runs, steps=steps, N_max=N_max)


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :func:`checks`: the largest simulation (:func:`theorydyn.simulate.memory.simulate_memory`),
    N_max samples at the largest D searched (d = D)."""
    Ds, _, N_max = n_star_sizes(s, quick)
    Dn = max(Ds, default=min(s.D, 32))
    return simulate_memory(Dn, s.C, Dn, N=N_max)
