"""The runs of Theorem 4.2 at finite N (docs/theory.md §4): realistic GD over seeds, and its Â-frozen control.

* :func:`run_seeds` — per seed, realistic GD on (E) with the full D × D Â
  (:func:`theorydyn.simulate.simulate`), optionally paired with its Â-frozen control on the same data
  and initialisation (:func:`train_paired`); each run measured at its end: association (Definition
  2.2), the errors on fresh samples (:func:`~theorydyn.experiments.measure.fresh_errors`), cos(v̂, w*)
  and its trajectory. Returns :class:`Theorem4Runs`; :mod:`theorydyn.claims.theorem4` judges it.
* :func:`run_frozen` — the model without patch association on runs of its own: Â frozen at its
  initialisation, v̂ trained by GD (:func:`train_v_frozen`), one error per seed.
* :func:`steps_for` — how long a run must last: the idealized (N = ∞) flow's max(T1, T2) at the
  run's setting (:func:`theorydyn.reduced.flows_until_t2`), times :data:`HORIZON_FACTOR`, over η.

Seeds: seed k of a run with base ``seed`` is ``seed + 1000 k + 42`` (``+ 4242`` for
:func:`run_frozen`); the fresh test samples of a run with seed sd are drawn with ``sd + 7919``.

Each seed's measured run of :func:`run_seeds` is kept in a keyed store (``<run directory>/theorem4/``), under
the key of everything that determines it (the setting, the run's options, the seed, the record interval, the
control, :data:`RUNS_VERSION`): a rerun reads it back whatever else changed in the code, and a kill loses at
most the seed in flight.

Shapes: A: (D, D), v: (d,), X: (N, D, d).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from ..core import data, model
from ..core.config import Seeds
from ..core.model import association
from ..core.setting import Setting
from ..infra.keyed import KeyedStore
from ..infra.paths import run_dir
from ..reduced import flows_until_t2
from ..simulate import simulate, simulate_replicas
from ..simulate.config import SimConfig
from ..simulate.partial import descend_partial
from ..simulate.run import init_params
from .measure import fresh_errors

#: A run's steps are at least the preset and at least HORIZON_FACTOR × the time the idealized
#: (N = ∞) flow at the row's setting needs to end phases II and III, max(T1, T2), over η: the theorem
#: runs T ≥ poly(d)/η iterations, and a run stopped before the idealized dynamics associates would
#: judge the horizon, not the theorem (at D = 32, q = 1/2, T1 = 3664: 250 steps reach s = 2500 only).
HORIZON_FACTOR = 1.5
#: The numerics of a stored seed run (:func:`run_seeds`' store): a change of what a run measures bumps it.
RUNS_VERSION = 1
#: The trajectory columns a stored seed run keeps (what the claims read of it).
KEPT_COLUMNS = ("step", "s", "association", "margin_min", "cos_v", "risk", "err_f", "amb_f", "alpha", "gamma", "rho")


def steps_for(s: Setting, preset: int, eta: float = 10.0) -> tuple[int, float | None]:
    """(steps, s_end): ``max(preset, ⌈HORIZON_FACTOR · s_end / η⌉)`` with s_end = max(T1, T2) of the
    reduced flow at ``s`` (1500 Monte Carlo samples, seed 0, the horizon of
    :func:`theorydyn.reduced.flows_until_t2`, as the ledger's idealized rows);
    the preset and None when the flow reaches neither (the dynamics never associates there)."""
    ph = flows_until_t2(s, [0], n_samples=1500)[0][0].phases
    ends = [float(x) for x in (ph.T1, ph.T2) if x is not None and math.isfinite(x)]
    if not ends:
        return int(preset), None
    return max(int(preset), math.ceil(HORIZON_FACTOR * max(ends) / eta)), max(ends)


def train_upstream(s: Setting, run: SimConfig):
    """GD on (E) with the full D×D Â from the realistic initialisation: :func:`theorydyn.simulate.simulate`
    with every option of ``run``."""
    return simulate(s, config=run)


def train_paired(s: Setting, run: SimConfig):
    """(trained, control): :func:`train_upstream`'s run and its Â-frozen control on the same N samples
    and the same initialisation, both stepped in one pass over X a step
    (:func:`theorydyn.simulate.simulate_replicas` with ``run``'s options and ``update=["Av", "v"]``): the
    control is the trained run with ∂Â skipped, so the two differ only in whether Â learns (issue 32: X
    read once a step for both, instead of a second run on its own data)."""
    opts = dict(run.simulate_kwargs(), update=["Av", "v"])
    res, ctl = simulate_replicas(s, **opts, init_seeds=[run.seed, run.seed])
    return res, ctl


def train_v_frozen(
    s: Setting, N: int, eta: float, steps: int, omega: float, seed: int, dtype: str = "float32"
) -> tuple[np.ndarray, np.ndarray]:
    """GD on (E) in v alone, Â frozen at the realistic initialisation (Â_ij ~ N(0, ω²), Â_ii = β,
    v̂ ~ N(0, ω² I_d): :func:`theorydyn.simulate.init_params`), on N fresh samples; returns (Â, v̂).
    The steps are the fused kernel's with ∂Â skipped (:func:`theorydyn.simulate.partial.descend_partial`),
    tested against the NumPy gradient :func:`frozen_grad_v` (tests/test_simulate_partial.py)."""
    rng = np.random.default_rng(seed)
    b = data.sample(s, int(N), seed=rng, dtype=np.dtype(dtype))
    A, v = init_params(s, omega, rng)
    _, v = descend_partial(s, A, v, b.X, b.y, eta, int(steps), update="v")
    return A, v


def frozen_grad_v(s: Setting, S: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """∇_v of the empirical risk (E) at fixed scores S (D, D): the v part of
    :func:`theorydyn.core.model.risk_and_grad` in two flat passes over X (N, D, d) in X's dtype.
    The NumPy reference route of :func:`train_v_frozen`'s fused steps (no longer called by the run)."""
    N, D, d = X.shape
    y = np.asarray(y, dtype=np.float64)
    U = (X.reshape(-1, d) @ v.astype(X.dtype)).reshape(N, D).astype(np.float64)
    H = U @ S.T
    F = model.activation(s, H).sum(axis=1)
    G = (-y * expit(-y * F) / N)[:, None] * model.activation_grad(s, H)
    dU = (G @ S).astype(X.dtype)
    return (dU.reshape(-1) @ X.reshape(-1, d)).astype(np.float64)


@dataclass(frozen=True)
class SeedRun:
    """One seed's realistic GD run of :func:`run_seeds`, measured at its end.

    Attributes:
        assoc: patch association of Â at the last step (Definition 2.2, fraction of rows).
        err_f, amb_f: Pr[f F ≤ 0 | f ≠ 0] and Pr[f = 0] on fresh samples
            (:func:`~theorydyn.experiments.measure.fresh_errors`).
        cos: cos(v̂, w*) at the last step.
        cos_after: min over the recorded s ≥ T0 (the end of phase I) of cos(v̂(s), w*); nan when T0 is
            not reached.
        cos_rise: cos at the last step minus cos at the first record (the initialisation).
        status, message: the simulator's status (``"ok"``, ``"diverged"`` …) and, for a diverged run,
            its message ("" otherwise).
        trajectory: the run's records (columns s, cos_v, association …, about 100 rows).
        control_err: Pr[f F ≤ 0 | f ≠ 0] of the paired Â-frozen control on the same fresh samples, or
            None without a control.
    """

    assoc: float
    err_f: float
    amb_f: float
    cos: float
    cos_after: float
    cos_rise: float
    status: str
    message: str
    trajectory: pd.DataFrame
    control_err: float | None = None


@dataclass(frozen=True)
class Theorem4Runs:
    """The runs of :func:`run_seeds` at setting ``s``: one :class:`SeedRun` per seed, in seed order,
    and the options they ran with (``run``: N samples, ``steps`` GD steps of size η, initial scale ω …)."""

    s: Setting
    run: SimConfig
    runs: tuple[SeedRun, ...]
    control: bool = False

    def values(self, name: str) -> list:
        """The field ``name`` of every seed's run, in seed order (e.g. ``values("assoc")``)."""
        return [getattr(r, name) for r in self.runs]


def open_store(out: str | Path | None = None) -> KeyedStore:
    """The store of :func:`run_seeds`' seed runs in ``out`` (default: the run directory's ``theorem4/``)."""
    folder = Path(out) if out is not None else run_dir("theorem4")
    folder.mkdir(parents=True, exist_ok=True)
    return KeyedStore(folder / "theorem4_runs.csv", payload_column="params", create=True)


def _to_json(r: SeedRun) -> str:
    d = dataclasses.asdict(r)
    tr = r.trajectory
    d["trajectory"] = {c: [float(x) for x in tr[c]] for c in KEPT_COLUMNS if c in tr}
    return json.dumps(d, allow_nan=True)


def _from_json(text: str) -> SeedRun:
    d = json.loads(text)
    d["trajectory"] = pd.DataFrame(d["trajectory"])
    return SeedRun(**d)


def run_seeds(
    s: Setting,
    run: SimConfig,
    seeds: Seeds,
    *,
    progress: Callable[[str], None] | None = None,
    control: bool = False,
    record_every: int | None = None,
    out: str | Path | None = None,
) -> Theorem4Runs:
    """Realistic GD at ``s`` over independent seeds (data and initialisation): each seed k of ``seeds``
    runs :func:`train_upstream` (with ``control``: :func:`train_paired`, the Â-frozen control on the
    same data and initialisation) with ``run``'s options (its ``n_test`` also the size of the simulator's
    own test set) and seed sd = ``run.seed + 1000 k + 42``, records every ``record_every`` steps (default
    about 100 records, ``max(1, steps // 100)``; the claim asks for enough records in its shortest window),
    and is measured on ``run.n_test`` fresh samples drawn with sd + 7919 (the control on the same samples).
    Each seed's run is read from / committed to the keyed store of ``out`` (:func:`open_store`)."""
    N, steps = run.N, run.steps
    store = open_store(out)
    done: list[SeedRun] = []
    for i, k in enumerate(seeds):
        sd = int(run.seed + 1000 * k + 42)
        every = record_every or max(1, steps // 100)
        payload = dict(
            version=RUNS_VERSION, setting=s.to_dict(), run=run.to_dict(), seed=sd, record_every=every, control=control
        )
        got = store.get(payload)
        if got is not None:
            done.append(_from_json(got["run"]))
            continue
        if progress:
            with_ctl = " with its A-frozen control" if control else ""
            progress(f"Theorem 4.2: D={s.D}, N={N}, {steps} steps, seed {i + 1}/{len(seeds)}{with_ctl}")
        # the window rows read association at every recorded step
        one = run.replace(seed=sd, record_every=every)
        ctl_err: float | None = None
        if control:
            res, ctl = train_paired(s, one)
            ctl_err = fresh_errors(s, ctl.A, ctl.v, run.n_test, sd + 7919)["err_f"]
        else:
            res = train_upstream(s, one)
        e = fresh_errors(s, res.A, res.v, run.n_test, sd + 7919)
        cos = float(res.v @ s.w_star / np.linalg.norm(res.v))
        status = str(getattr(res, "status", "ok"))
        tr = res.trajectory
        T0 = res.phases.T0
        after = tr[tr["s"] >= T0] if T0 is not None else tr.iloc[0:0]
        done.append(
            SeedRun(
                assoc=association(s, res.A),
                err_f=e["err_f"],
                amb_f=e["amb_f"],
                cos=cos,
                cos_after=float(after["cos_v"].min()) if len(after) else float("nan"),
                cos_rise=cos - float(tr["cos_v"].iloc[0]),
                status=status,
                message=str(res.message) if status == "diverged" else "",
                trajectory=tr,
                control_err=ctl_err,
            )
        )
        store.put(payload, dict(D=s.D, seed=sd, run=_to_json(done[-1])))
    return Theorem4Runs(s, run, tuple(done), control)


def run_frozen(
    s: Setting, run: SimConfig, seeds: Seeds, *, progress: Callable[[str], None] | None = None
) -> list[float]:
    """Pr[f F ≤ 0 | f ≠ 0] per seed of the model with Â frozen at its realistic initialisation and v̂
    trained by GD (:func:`train_v_frozen`) at ``run``'s N, η, steps, ω and dtype, each seed k of
    ``seeds`` on its own data and initialisation (seed sd = ``run.seed + 1000 k + 4242``), measured on
    ``run.n_test`` fresh samples drawn with sd + 7919."""
    errs = []
    for i, k in enumerate(seeds):
        if progress:
            progress(f"A frozen at init: D={s.D}, N={run.N}, {run.steps} steps, seed {i + 1}/{len(seeds)}")
        sd = int(run.seed + 1000 * k + 4242)
        A, v = train_v_frozen(s, run.N, run.eta, run.steps, run.omega, sd, dtype=run.dtype)
        errs.append(fresh_errors(s, A, v, run.n_test, sd + 7919)["err_f"])
    return errs
