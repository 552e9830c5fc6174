"""The runs of Theorem 4.2 at finite N (docs/theory.md §4): realistic GD over seeds, and its Â-frozen control.

* :func:`run_seeds` — per seed, realistic GD on (E) with the full D × D Â
  (:func:`theorydyn.simulate.simulate`), optionally paired with its Â-frozen control on the same data
  and initialisation (:func:`train_paired`); each run measured at its end: association (Definition
  2.2), the errors on fresh samples (:func:`~theorydyn.experiments.measure.fresh_errors`), cos(v̂, w*)
  and its trajectory. Returns :class:`Theorem4Runs`; :mod:`theorydyn.claims.theorem4` judges it.
* :func:`run_frozen` — the model without patch association on runs of its own: Â frozen at its
  initialisation, v̂ trained by GD (:func:`train_v_frozen`), one error per seed.
* :func:`~theorydyn.experiments.nstar.steps_for` (named here too) — how long a run must last: the idealized
  (N = ∞) flow's max(T1, T2) at the run's setting, times :data:`~theorydyn.experiments.nstar.HORIZON_FACTOR`,
  over η.
* :func:`run` — everything the ledger's Theorem 4.2 rows read, planned, run and read in one call
  (:class:`Theorem4Config` → :class:`Theorem4Results`): first the whole plan in one call (:func:`plan` →
  :class:`Theorem4Plan`: the setting where the theorem has content, :func:`run_setting`; its steps and windows,
  :func:`run_plan`; N*(D)'s runs there; the closeness runs' setting), then the seeds with their controls
  (:func:`run_seeds`), then the readings: the seeds on their windows, N*(D)'s regime there
  (:func:`theorydyn.experiments.nstar.regime_reading`) and the semi-realistic closeness
  (:func:`theorydyn.experiments.semirealistic.closeness`); :func:`memory` its peak.

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from ..core import data, model
from ..core.config import Seeds
from ..core.glm import glm_oracle_error_exact, smallest_in_scope, theorem_3_1_scope
from ..core.model import association
from ..core.setting import Setting, setting_at  # the same q, ν at another D (d = D, σ² = 1/d)
from ..infra.keyed import KeyedStore
from ..infra.memory import MemoryEstimate
from ..infra.paths import run_dir
from ..simulate import simulate, simulate_replicas
from ..simulate.config import SimConfig
from ..simulate.memory import simulate_memory
from ..simulate.partial import descend_partial
from ..simulate.run import init_params
from .measure import fresh_errors, fresh_errors_of, window_ks, window_summary
from .nstar import HORIZON_FACTOR, plan_at, regime_reading, steps_for  # noqa: F401  (steps_for: named here before)
from .semirealistic import Closeness, closeness

#: The numerics of a stored seed run (:func:`run_seeds`' store): a change of what a run measures bumps it.
RUNS_VERSION = 1
#: The trajectory columns a stored seed run keeps (what the claims read of it).
KEPT_COLUMNS = ("step", "s", "association", "margin_min", "cos_v", "risk", "err_f", "amb_f", "alpha", "gamma", "rho")
#: The options of the ledger's runs besides their sizes: ω = 10⁻³, X stored as bfloat16 (as N*(D)'s runs, whose
#: N_50 decides the regime: one footing; the test set stays float32), 8192 test samples; η is the stated rule's
#: at each setting (:func:`run_plan`; 10 is only the config's placeholder). The GPU rows run float32 (torch).
RUN = SimConfig(seed=0, dtype="bfloat16", n_test=8192)  # η, ω: the simulator's defaults


def train_upstream(s: Setting, run: SimConfig):
    """GD on (E) with the full D×D Â from the realistic initialisation: :func:`theorydyn.simulate.simulate`
    with every option of ``run``."""
    return simulate(s, config=run)


def train_paired(s: Setting, run: SimConfig, control: bool = True):
    """(trained, control): :func:`train_upstream`'s run and its Â-frozen control on the same N samples
    and the same initialisation, both stepped in one pass over X a step
    (:func:`theorydyn.simulate.simulate_replicas` with ``run``'s options and ``update=["Av", "v"]``): the
    control is the trained run with ∂Â skipped, so the two differ only in whether Â learns (issue 32: X
    read once a step for both, instead of a second run on its own data). Without ``control``: (trained, None),
    the one replica being :func:`train_upstream`'s run to the bit (the same single-replica pass)."""
    updates = ["Av", "v"] if control else ["Av"]
    res = simulate_replicas(s, **dict(run.simulate_kwargs(), update=updates), init_seeds=[run.seed] * len(updates))
    return (res[0], res[1]) if control else (res[0], None)


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
    runs :func:`train_paired` (:func:`train_upstream`'s run; with ``control`` the Â-frozen control on the
    same data and initialisation beside it) with ``run``'s options (its ``n_test`` also the size of the simulator's
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
        res, ctl = train_paired(s, one, control)
        # the run and its control measured on the same fresh samples, drawn once
        e, *ctl_e = fresh_errors_of(
            s, [(res.A, res.v)] + ([] if ctl is None else [(ctl.A, ctl.v)]), run.n_test, sd + 7919
        )
        ctl_err = ctl_e[0]["err_f"] if ctl_e else None
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


# ---- the ledger's Theorem 4.2 experiment: planned, sized and run in one call ------------------------------


def run_setting(s: Setting, D_max: int | None) -> tuple[Setting, str, str | None, float]:
    """The setting Theorem 4.2's runs are at, why, and Theorem 3.1's reading there (:func:`glm_reading`):
    (sg, why_q, scope, glm_err). D = min(s.D, ``D_max``) (``s.D`` without a D_max) and the ledger's q where the
    theorem has content there, i.e. where attention frozen at initialisation cannot reach Theorem 3.1's 1/8 (the
    exact equal-weight GLM error, :func:`theorydyn.core.glm.glm_oracle_error_exact`, is at least 1/8); else
    Assumption 2's q = C²/D at that D (issue 39: at D = 32, q = 1/4, q(D − C) = 7 and frozen attention errs below
    1/8). ``why_q`` names a changed q ("" if none)."""
    sg = setting_at(s, min(s.D, D_max)) if D_max is not None else s
    err = glm_oracle_error_exact(sg)["err_cond"]
    if err >= 0.125:
        return sg, "", theorem_3_1_scope(sg), err
    q2 = s.C**2 / sg.D
    if q2 <= 1.0:
        alt = sg.at(q=q2)
        alt_err = glm_oracle_error_exact(alt)["err_cond"]
        if alt_err >= 0.125:
            why = (
                f"q = C^2/D = {q2:.4g} instead of the ledger's {sg.q:g}: at D = {sg.D}, q = {sg.q:g} attention "
                "frozen at initialisation errs below 1/8 (the theorem has no content there)"
            )
            return alt, why, theorem_3_1_scope(alt), alt_err
    why = f"at D = {sg.D} no q of the ledger's or Assumption 2's makes frozen attention err >= 1/8"
    return sg, why, theorem_3_1_scope(sg), err


def run_plan(sg: Setting, n: Any, eta: float | None = None) -> dict:
    """The runs' plan at ``sg`` for the sizes ``n`` (its ``ks`` windows and least ``steps``): N*(D)'s
    (:func:`theorydyn.experiments.plan.plan_at`: T_a, the stated rule's step size η = 1/λ* or ``eta``, the
    steps covering the longest window, at least 24 records in the shortest), and the windows read
    (:func:`~theorydyn.experiments.measure.window_ks`)."""
    p = plan_at(sg, n.ks, eta, n.steps)
    p["ks"] = window_ks(p["T_a"], p["eta"], n.ks, n.steps)
    return p


def glm_reading(s: Setting) -> tuple[str | None, float]:
    """Theorem 3.1 at ``s``: (its scope rule's reason or None, :func:`~theorydyn.core.glm.theorem_3_1_scope`;
    the exact error of the equal-weight GLM with the best link, :func:`~theorydyn.core.glm.glm_oracle_error_exact`)."""
    return theorem_3_1_scope(s), glm_oracle_error_exact(s)["err_cond"]


@dataclass(frozen=True)
class Theorem4Config:
    """What :func:`run` needs for the ledger's Theorem 4.2 rows, each part a validated sizes config of the
    claims (:mod:`theorydyn.claims.sizes`):

    Attributes:
        sizes: the runs' sizes: ``N``, least ``steps``, ``seeds``, ``D_max`` (the largest D run; None: the
            ledger's), the windows ``ks`` and ``closeness`` (the closeness runs' ``Ns``, ``steps``, ``seeds``, ``eta``).
        regime: N*(D)'s sizes whose runs at the same D and q give the regime: ``Ns``, ``seeds``, ``ks``,
            ``min_steps``; ``regime_budget_s`` their time budget (None: none).
        closeness_from: the D the closeness runs' size search starts from (Lemma 4.1's finite-N rows' size,
            :func:`theorydyn.core.glm.smallest_in_scope` up to the ledger's D).
    """

    sizes: Any
    regime: Any
    closeness_from: int
    regime_budget_s: float | None = None


@dataclass(frozen=True)
class Theorem4Results:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        sg, why_q: the runs' setting (:func:`run_setting`) and why its q differs from the ledger's ("" if not).
        scope, glm_err: Theorem 3.1 at ``sg`` (:func:`run_setting`, as :func:`glm_reading`): its scope rule's
            reason (None inside) and the exact error of the equal-weight GLM with the best link, the Â-frozen
            control's bound.
        plan: :func:`run_plan` at ``sg`` (T_a, eta, eta_rule, lam, edge, steps, record_every, ks).
        runs: the seeds' runs with their Â-frozen controls (:func:`run_seeds`).
        windows: per k of ``plan["ks"]``, one :func:`~theorydyn.experiments.measure.window_summary` per seed
            (:func:`read_windows`).
        regime: N*(D)'s runs at ``sg``'s D and q on the longest window
            (:func:`theorydyn.experiments.nstar.regime_reading`).
        closeness: the semi-realistic closeness (:func:`theorydyn.experiments.semirealistic.closeness`).
    """

    s: Setting
    sg: Setting
    why_q: str
    scope: str | None
    glm_err: float
    plan: dict
    runs: Theorem4Runs
    windows: dict[float, list[dict[str, float]]]
    regime: dict
    closeness: Closeness


@dataclass(frozen=True)
class Theorem4Plan:
    """Everything :func:`run` decides before its first step (:func:`plan`), at the ledger's setting ``s``.

    Attributes:
        sg, why_q: the runs' setting (:func:`run_setting`) and why its q differs from the ledger's ("" if not).
        scope, glm_err: Theorem 3.1 at ``sg`` (:func:`run_setting`).
        schedule: :func:`run_plan` at ``sg`` (T_a, eta, eta_rule, lam, edge, steps, record_every, ks).
        run: the seeds' options (:data:`RUN` with the sizes' N and the plan's steps and η).
        regime_setting, regime_plan: N*(D)'s runs at ``sg``'s D and q (their setting names q,
            ``setting_at(s, D).at(q=q)``) and their :func:`~theorydyn.experiments.nstar.plan_at`.
        closeness_setting: the closeness runs' setting (:func:`theorydyn.core.glm.smallest_in_scope`).
    """

    sg: Setting
    why_q: str
    scope: str | None
    glm_err: float
    schedule: dict
    run: SimConfig
    regime_setting: Setting
    regime_plan: dict
    closeness_setting: Setting


def plan(s: Setting, config: Theorem4Config) -> Theorem4Plan:
    """:func:`run`'s plan at the ledger's setting ``s``, in one call: the setting where the theorem has content
    (:func:`run_setting`), its steps, step size, records and windows (:func:`run_plan`), N*(D)'s runs there
    (:func:`~theorydyn.experiments.nstar.plan_at` at ``config.regime``'s windows and least steps) and the
    closeness runs' setting, the smallest D in Theorem 3.1's scope from ``config.closeness_from``."""
    n, r = config.sizes, config.regime
    # first where each run is (the scope rules: no run), then how long and with which step (the flows)
    sg, why_q, scope, glm_err = run_setting(s, n.D_max)
    sl, _ = smallest_in_scope(s, config.closeness_from, s.D)
    sr = sg.at(q=sg.q)  # N*(D)'s runs name their q: setting_at(s, D).at(q=q), the same setting
    schedule = run_plan(sg, n)
    regime = plan_at(sr, r.ks, None, r.min_steps)
    run_ = RUN.replace(N=n.N, steps=schedule["steps"], eta=schedule["eta"])
    return Theorem4Plan(sg, why_q, scope, glm_err, schedule, run_, sr, regime, sl)


def run(s: Setting, config: Theorem4Config, progress: Callable[[str], None] | None = None) -> Theorem4Results:
    """Everything the ledger's Theorem 4.2 rows read at the ledger's setting ``s`` (:class:`Theorem4Results`):
    planned in one call (:func:`plan`: the setting where the theorem has content, its steps and windows, N*(D)'s
    runs there, the closeness runs' setting), then run: the seeds with their Â-frozen controls riding along
    (issue 32: same data and init, one pass over X a step), then read: the seeds on the plan's windows, N*(D)'s
    regime at the same D and q, and the semi-realistic closeness."""
    p, n, r, c = plan(s, config), config.sizes, config.regime, config.sizes.closeness
    runs = run_seeds(p.sg, p.run, n.seeds, progress=progress, control=True, record_every=p.schedule["record_every"])
    return Theorem4Results(
        s,
        p.sg,
        p.why_q,
        p.scope,
        p.glm_err,
        p.schedule,
        runs,
        read_windows(runs, p.schedule["T_a"], p.schedule["ks"]),
        regime_reading(p.regime_setting, p.regime_plan, r.Ns, r.seeds, r.ks, config.regime_budget_s, progress),
        closeness(p.closeness_setting, Ns=c.Ns, steps=c.steps, seeds=c.seeds, eta=c.eta, progress=progress),
    )


def memory(s: Setting, config: Theorem4Config) -> MemoryEstimate:
    """Peak of :func:`run`: its largest simulation (:func:`theorydyn.simulate.memory.simulate_memory`),
    Theorem 4.2 at ``config.sizes``' N and D = min(s.D, its D_max)."""
    n = config.sizes
    D = s.D if n.D_max is None else min(s.D, n.D_max)
    return simulate_memory(D, s.C, s.d if s.d != s.D else D, N=n.N)


def read_windows(runs: Theorem4Runs, T_a: float | None, ks: tuple[float, ...]) -> dict[float, list[dict[str, float]]]:
    """Each seed's run of ``runs`` read on the windows [T_a, k·T_a], k in ``ks``
    (:func:`~theorydyn.experiments.measure.window_summary`); {} without T_a or without recorded association."""
    if T_a is None or not runs.runs or "association" not in runs.runs[0].trajectory:
        return {}
    return {k: [window_summary(r.trajectory, T_a, k) for r in runs.runs] for k in ks}
