"""The runs of N*(D) (docs/theory.md §4, issue 30): realistic GD on a grid of D, N and seeds.

At each D of a grid (the setting ``setting_at(s, D)`` at the q of one reading) and each seed, one
training set of N_max samples is drawn, and the run at N trains on its first N samples from the
seed's initialisation (common random numbers across N). Each run is
:func:`theorydyn.simulate.simulate` at the Theorem 4.2 row's η, ω, lasting ⌈k·T_a/η⌉ steps (T_a the
idealized flow's association time, :func:`theorydyn.experiments.theorem4.steps_for`), and is measured
by *persistent* association on the window [T_a, k·T_a]
(:func:`~theorydyn.experiments.measure.window_summary`) and by the association margin at its end
(:func:`association_margin`). :func:`nstar_runs` returns one row per run;
:mod:`theorydyn.claims.nstar` reads N_50 and the exponent from it.

Shapes: A: (D, D); the training set X: (N_max, D, d) float32.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ..cli.configs import Seeds
from ..core import data
from ..core.setting import Setting, setting_at
from ..simulate import simulate_replicas
from ..simulate.config import SIM_DEFAULTS
from .measure import window_summary
from .theorem4 import steps_for

#: Seconds of one GD step at D = 64, N = 16384 (float32) on 2 busy cores: the idle fused step measured
#: 23.9 ms (`python -m theorydyn.bench simulate`, 2-core Intel Xeon, load 1.9; 10 ms on an AMD EPYC),
#: doubled for a machine shared with other work (was 0.16, from 250 steps in ~40 s of a slower kernel
#: at load 4–15). A step costs ∝ N D² d = N D³ (d = D).
STEP_S_64 = 0.05


def estimated_seconds(D: int, Ns: Sequence[int], n_seeds: int, steps: int) -> float:
    """The cost model of one D's runs: STEP_S_64 · (ΣN / 16384) · (D / 64)³ · steps · n_seeds."""
    return STEP_S_64 * (sum(Ns) / 16384) * (D / 64) ** 3 * steps * n_seeds


def run_options(eta: float, omega: float, steps: int) -> dict:
    """The options of every N*(D) run: float32 X, records every steps/50 on 256 test samples."""
    return dict(eta=eta, steps=steps, omega=omega, record_every=max(1, steps // 50), dtype="float32", n_test=256)


def association_margin(s: Setting, A: np.ndarray) -> np.ndarray:
    """(D,) per row i: (min_{j ∈ S(i)} Â_ij − max_{j ∉ S(i)} Â_ij) / std_{j ≠ i} Â_ij, the diagonal
    counted in S(i) as in Definition 2.2 and the scale the spread of the row's off-diagonal entries
    (so that the margin does not depend on the scale of Â). Positive iff row i is associated (its C
    largest entries are its set, no tie); about −3 for a row of i.i.d. Gaussian entries."""
    A = np.asarray(A, dtype=float)
    same = np.asarray(s.same_set, bool)
    in_min = np.where(same, A, np.inf).min(axis=1)
    out_max = np.where(same, -np.inf, A).max(axis=1)
    off = ~np.eye(s.D, dtype=bool)
    scale = np.array([A[i, off[i]].std() for i in range(s.D)])
    with np.errstate(divide="ignore", invalid="ignore"):
        return (in_min - out_max) / scale


def nstar_runs(
    s: Setting,
    Ds: Sequence[int],
    q_of: Callable[[int], float],
    Ns: Sequence[int],
    seeds: Seeds,
    k: float,
    eta: float = 10.0,
    omega: float = 1e-3,
    preset: int = 250,
    progress=None,
    budget_s: float | None = None,
    device: str = SIM_DEFAULTS.device,
) -> pd.DataFrame:
    """One run per (D, N, seed j of ``seeds``) at ``setting_at(s, D).at(q=q_of(D))`` (seed
    1000 j + D + 7); each (D, seed) draws one
    training set of max(Ns) samples (float32) and the run at N uses its first N (common random numbers
    across N; the initialisation is the seed's); the runs of all N go in one pass over X a step
    (``simulate_replicas(n_train=Ns)``: equal to separate runs to the float64 rounding of the sums).
    Returns columns D, q, N, seed, success, frac, status,
    margin_min, margin_median (at the last step), T_a, steps. A D whose :func:`estimated_seconds` would
    take the total past ``budget_s`` is not run (nor any larger D): one row with status
    ``"skipped: …"`` and N = 0 says so. ``device``: where the steps run (``simulate(device=…)``: the Numba
    kernel, or torch on ``"cpu"`` / ``"cuda"``)."""
    rows: list[dict] = []
    N_max = int(max(Ns))
    spent = 0.0
    for D in Ds:
        sd = setting_at(s, int(D)).at(q=float(q_of(D)))
        _, T_a = steps_for(sd, preset, eta)
        steps = max(preset, math.ceil(k * T_a / eta)) if T_a is not None else preset
        cost = estimated_seconds(int(D), Ns, len(seeds), steps)
        if budget_s is not None and spent + cost > budget_s:
            why = f"skipped: estimated {cost:.0f} s ({steps} steps) would pass the budget of {budget_s:.0f} s"
            rows.append(dict(D=int(D), q=sd.q, N=0, seed=-1, success=False, frac=0.0, status=why, steps=steps))
            break
        spent += cost
        for i, j in enumerate(seeds):
            seed = int(1000 * j + D + 7)
            b = data.sample(sd, N_max, seed=seed + 1, dtype=np.float32)
            if progress:
                progress(
                    f"N*(D): D={D}, q={sd.q:.3g}, N={'/'.join(map(str, Ns))} in one pass, "
                    f"seed {i + 1}/{len(seeds)}, {steps} steps"
                )
            # every N of the grid in one pass a step: replica r trains on the first Ns[r] samples
            runs = simulate_replicas(
                sd,
                seed=seed,
                **run_options(eta, omega, steps),
                train=(b.X, b.y),
                init_seeds=[seed] * len(Ns),
                n_train=[int(N) for N in Ns],
                device=device,
            )
            del b
            for N, res in zip(Ns, runs, strict=True):
                status = str(getattr(res, "status", "ok"))
                w = window_summary(res.trajectory, T_a, k) if T_a is not None else dict(frac=0.0)
                m = association_margin(sd, res.A)
                rows.append(
                    dict(
                        D=int(D),
                        q=sd.q,
                        N=int(N),
                        seed=j,
                        success=bool(w["frac"] == 1.0 and status == "ok"),
                        frac=w["frac"],
                        status=status,
                        margin_min=float(np.min(m)),
                        margin_median=float(np.median(m)),
                        T_a=math.nan if T_a is None else T_a,
                        steps=steps,
                    )
                )
    return pd.DataFrame(rows)
