"""Gradient descent on N samples with the full D×D attention (Theorem 4.2, docs/theory.md §4).

Model (T) with trainable off-diagonal Â (the diagonal stays at β) and v̂ ∈ R^d, trained by
plain GD on the empirical risk (E) from the realistic initialisation

    Â_ij ~ N(0, ω²) (i ≠ j),  Â_ii = β,  v̂ ~ N(0, ω² I_d),
    Â ← Â − η ∂(E)/∂Â,  v̂ ← v̂ − η ∇_v (E),   time s = η · step (comparable with the reduced flow).

The step itself is the private fused kernel (one pass over X: (N, D, d) per step, float32 or
float64 storage, never copied). Every ``record_every`` steps the trajectory records the common
schema of :mod:`theorydyn.core.result` (α = ⟨v̂, w*⟩; γ, ρ = means of Â's in-set / cross-set
off-diagonal entries; in_mass = mean in-set attention mass of S = softmax(Â/τ); association
(Definition 2.2); risk = empirical training risk; err_y, err_f, amb_f on fresh test samples),
then the simulator's own columns (docs/theory.md §4):

    eta, cos_v = cos(v̂, w*), v_norm, in_std, cross_std, cross_absmax,
    row_spread_max   max over rows i of (max − min) of row i's in-set off-diagonal entries,
    row_in_max, row_in_median   max / median over rows of the row's in-set mean (Lemma 4.1's
                     three-value form says all rows are equal; finite samples break it),
    train_err        training error Pr[y F ≤ 0] on the N samples,
    margin_min       min over rows of the normalised association margin
                     (:func:`theorydyn.core.model.association_margin`; > 0 iff association is complete).

Seeds: ``seed`` → ``np.random.SeedSequence(seed).spawn(3)`` = (training data, test data,
initialisation). Same seed → bit-identical trajectory.

CLI: ``python -m theorydyn.simulate --out DIR`` writes ``DIR/simulate_D<D>_C<C>[_…].csv`` (trajectory), ``.json``
(summary) and ``.png`` (Figure 4: the set mask, the learned Â, test error and cos(v̂, w*) against steps).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core import data
from ..core.config import as_seeds
from ..core.model import symmetric_attention
from ..core.phases import Phases, detect_phases
from ..core.result import CORE_COLUMNS, Result, Status
from ..core.setting import Setting
from ..core.validate import check_simulate, gd_steps
from ..infra._progress import progress_bar
from ..infra.limits import SIM_STEPS_MAX
from ._kernel import FusedModel, sample_counts
from .bfloat16 import BFLOAT16, is_bfloat16, to_bfloat16
from .config import SIM_DEFAULTS, UPDATES, SimConfig
from .config import SIM_DEFAULTS as _S
from .measure import attention_stats, row_in_means, symmetry_breaking
from .torch_step import TorchModel, resolve_device

__all__ = [
    "simulate",
    "simulate_replicas",
    "init_params",
    "training_data",
    "heldout_data",
    "attention_stats",
    "row_in_means",
    "symmetry_breaking",
    "COLUMNS",
]

#: Columns of a simulator trajectory: the common schema, then the simulator's own.
COLUMNS = list(CORE_COLUMNS) + [
    "eta",
    "cos_v",
    "v_norm",
    "in_std",
    "cross_std",
    "cross_absmax",
    "row_spread_max",
    "row_in_max",
    "row_in_median",
    "train_err",
    "margin_min",
]


# ---------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------
def init_params(s: Setting, omega: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Realistic initialisation (docs/theory.md §4): Â_ij ~ N(0, ω²) off the diagonal, Â_ii = β, v̂ ~ N(0, ω² I_d)."""
    A = rng.normal(0.0, omega, size=(s.D, s.D))
    np.fill_diagonal(A, s.beta)
    v = rng.normal(0.0, omega, size=s.d)
    return A, v


def training_data(s: Setting, N: int, seed: int = 0, dtype: str = "float64") -> data.Batch:
    """The training set :func:`simulate` draws for ``seed`` at ``N`` (X: (N, D, d) of ``dtype``, y: (N,)).

    Common random numbers across N: draw it once at the largest N of a grid and pass its first n
    samples, ``train=(b.X[:n], b.y[:n])`` (C-contiguous views, never copied), to the run at n with
    the same ``seed``. The test set and the initialisation are ``seed``'s as without ``train``, so
    the run at n = N is bit-identical to ``simulate(s, N=N, seed=seed, dtype=dtype)``, and a run at
    n < N sees exactly the first n of those samples (nested data sets: N* is monotone in the data
    by construction, and X is generated once per seed). ``dtype="bfloat16"``: X holds the bfloat16
    bits of the float32 draw (:mod:`theorydyn.simulate.bfloat16`), as ``simulate(dtype="bfloat16")``.
    """
    if not (isinstance(N, (int, np.integer)) and N >= 1):
        raise ValueError(f"N must be an integer >= 1, got {N!r}")
    dt = _check_dtype(dtype)
    ss_train = np.random.SeedSequence(seed).spawn(3)[0]
    if dt != BFLOAT16:
        return data.sample(s, int(N), seed=np.random.default_rng(ss_train), dtype=dt)
    b = data.sample(s, int(N), seed=np.random.default_rng(ss_train), dtype=np.float32)
    return dataclasses.replace(b, X=to_bfloat16(b.X))


def heldout_data(s: Setting, n_test: int = 8192, seed: int = 0, dtype: str = "float64") -> data.Batch:
    """The test set :func:`simulate` draws for ``seed`` (X: (n_test, D, d), y, z). Passed back as
    ``test=`` (a :class:`~theorydyn.core.data.Batch`, so f stays defined: ``err_f``/``amb_f`` are recorded),
    the run is bit-identical to drawing it: a grid of runs on one seed draws it once."""
    if not (isinstance(n_test, (int, np.integer)) and n_test >= 1):
        raise ValueError(f"n_test must be an integer >= 1, got {n_test!r}")
    ss_test = np.random.SeedSequence(seed).spawn(3)[1]
    return data.sample(s, int(n_test), seed=np.random.default_rng(ss_test), dtype=np.dtype(dtype))


def _as_data(s: Setting, given, what: str):
    """(X, y, weights, f) from a user-given (X, y) or (X, y, weights); f is None (undefined)."""
    if len(given) not in (2, 3):
        raise ValueError(f"{what} must be (X, y) or (X, y, weights)")
    X, y = given[0], np.asarray(given[1])
    w = given[2] if len(given) == 3 else None
    X = np.asarray(X)
    if X.ndim != 3 or X.shape[1:] != (s.D, s.d):
        raise ValueError(f"{what}: X must have shape (N, D={s.D}, d={s.d}), got {X.shape}")
    if y.shape != (X.shape[0],) or not np.all(np.isin(y, (-1, 1))):
        raise ValueError(f"{what}: y must be an (N,) array of ±1")
    return X, y, w, None


#: Steps of :func:`simulate` when neither ``steps`` nor ``s_max`` is given.
DEFAULT_STEPS = SIM_DEFAULTS.steps


def _resolve_steps(steps: int | None, s_max: float | None, etas: np.ndarray) -> int:
    """The number of GD steps: ``steps`` when given, else ⌈s_max / η⌉ (the horizon in s = η·t, as in
    :func:`theorydyn.reduced.integrate` with ``method="gd"``), else :data:`DEFAULT_STEPS`."""
    if steps is not None:
        return steps
    if s_max is None:
        return DEFAULT_STEPS
    if not (np.isfinite(s_max) and s_max > 0):
        raise ValueError(f"s_max must be > 0 and finite, got {s_max!r}")
    if not (np.all(np.isfinite(etas)) and np.all(etas > 0)):
        raise ValueError(f"eta must be finite and > 0, got {etas!r}")
    if np.unique(etas).size != 1:
        raise ValueError("s_max needs one step size eta shared by the replicas; give steps instead")
    return gd_steps(s_max, float(etas[0]), SIM_STEPS_MAX)  # checked where derived: s_max/5e-324 is inf


def _check_init(A0: Any, v0: Any, init: tuple[float, float, float] | None) -> tuple[float, float, float] | None:
    """``init`` = (α, γ, ρ) checked (exclusive with A0/v0, three numbers): the start of
    :func:`theorydyn.reduced.integrate` with the same ``init``, built by :func:`_prepare`."""
    if init is None:
        return None
    if A0 is not None or v0 is not None:
        raise ValueError("give either init=(alpha, gamma, rho) or A0/v0, not both")
    if len(init) != 3:
        raise ValueError(f"init must be (alpha, gamma, rho), got {init!r}")
    alpha, gamma, rho = (float(x) for x in init)
    return alpha, gamma, rho


def _check_dtype(dtype: Any) -> np.dtype:
    """The storage dtype of the training X (float32 or float64, as a name, a type or a dtype; or
    "bfloat16": its bits in :data:`~theorydyn.simulate.bfloat16.BFLOAT16`)."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        return BFLOAT16
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32, float64 or bfloat16, got {dtype!r}")
    return dt


def _dtype_name(dt: np.dtype) -> str:
    return "bfloat16" if dt == BFLOAT16 else dt.name


@dataclass
class _Plan:
    """What :func:`simulate_replicas` runs, resolved from its arguments: R replicas, each with its step
    size, its update (which of Â, v̂ GD moves) and its initialisation seed; the steps; the given start
    (A0, v0) or the three-value one ``init`` = (α, γ, ρ)."""

    R: int
    etas: np.ndarray
    steps: int
    updates: list[str]
    init_seeds: list[int]
    s_grid: np.ndarray | None
    A0: Any
    v0: Any
    init: tuple[float, float, float] | None = None

    @property
    def explicit_init(self) -> bool:
        """Whether the start was given (A0, v0 or init) rather than drawn from the init seeds."""
        return self.A0 is not None or self.v0 is not None or self.init is not None

    @property
    def want_A(self) -> np.ndarray:
        return np.array(["A" in u for u in self.updates])

    @property
    def want_v(self) -> np.ndarray:
        return np.array(["v" in u for u in self.updates])


def _plan(eta, steps, s_max, s_grid, replicas, init_seeds, update, device, seed, A0, v0, init) -> _Plan:
    """Resolve and check the replicas' options (ValueError naming the option, before any work)."""
    updates = [update] if isinstance(update, str) else list(update)
    for u in updates:
        if u not in UPDATES:
            raise ValueError(f"update must be one of {UPDATES} or one per replica, got {update!r}")
    if device != _S.device:
        resolve_device(device)  # ValueError/ImportError naming the device before any work
    etas = np.atleast_1d(np.asarray(eta, dtype=float))
    if s_grid is not None:
        s_grid = np.unique(np.asarray(s_grid, dtype=np.float64))
        if len(s_grid) == 0 or not np.all(np.isfinite(s_grid)) or s_grid[0] < 0:
            raise ValueError("s_grid must be a non-empty array of finite times >= 0")
        if steps is None and s_max is None and np.all(etas > 0):  # as reduced.integrate: to the grid's end
            steps = gd_steps(float(s_grid[-1]), float(np.min(etas)), SIM_STEPS_MAX)
    steps = _resolve_steps(steps, s_max, etas)
    init = _check_init(A0, v0, init)
    R = replicas if replicas is not None else (len(init_seeds) if init_seeds is not None else len(etas))
    if not (isinstance(R, (int, np.integer)) and R >= 1):
        raise ValueError(f"replicas must be an integer >= 1, got {R!r}")
    if etas.size == 1:
        etas = np.full(R, etas[0])
    if etas.size != R:
        raise ValueError(f"eta must be a scalar or have one value per replica ({R}), got {etas.size}")
    if len(updates) == 1:
        updates = updates * R
    if len(updates) != R:
        raise ValueError(f"update must be one value or one per replica ({R}), got {len(updates)}")
    seeds = list(as_seeds(int(R), first=seed)) if init_seeds is None else list(init_seeds)
    if len(seeds) != R:
        raise ValueError(f"init_seeds must have one seed per replica ({R}), got {len(seeds)}")
    if not (isinstance(steps, (int, np.integer)) and steps >= 0):
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    return _Plan(int(R), etas, int(steps), updates, seeds, s_grid, A0, v0, init)


@dataclass
class _Prepared:
    """What the setting gives a run before its first step (:func:`_prepare`): the training set (X: (N, D, d),
    y, the weights or None), the test set (Xt, yt as floats, f or None where undefined) and the start
    (A0, v0) when one is given or built from (α, γ, ρ) (None: drawn from the init seeds)."""

    X: np.ndarray
    y: np.ndarray
    w: Any
    Xt: np.ndarray
    yt: np.ndarray
    ft: Any
    A0: Any
    v0: Any


def _prepare(s: Setting, plan: _Plan, N, n_test, seed, dt: np.dtype, train, test, device) -> _Prepared:
    """The training and test sets and the start, each drawn or given, the given ones checked first (ValueError
    naming ``train``/``test`` before anything is drawn). X is generated straight into its storage dtype and
    never copied (bfloat16, ``dt`` is :data:`BFLOAT16`: drawn in float32, rounded by :func:`_models`); the test
    set stays float32 then. ``init`` = (α, γ, ρ) gives the three-value form of Lemma 4.1, Â = A(γ, ρ) with
    Â_ii = β and v̂ = α w*: the start of :func:`theorydyn.reduced.integrate` with the same ``init``."""
    ss_train, ss_test, _ = np.random.SeedSequence(seed).spawn(3)
    bf16 = dt == BFLOAT16
    dt_draw = np.dtype(np.float32) if bf16 else dt
    if bf16 and device != _S.device:
        raise ValueError(
            f"dtype='bfloat16' runs on the Numba kernel (device={_S.device!r}) only, got device={device!r}"
        )
    given = _as_data(s, train, "train") if train is not None else None
    if given is not None and is_bfloat16(given[0]) and not bf16:
        raise ValueError(f"train: X holds bfloat16 bits (uint16); pass dtype='bfloat16', got dtype={dt.name!r}")
    if isinstance(test, data.Batch):
        _as_data(s, (test.X, test.y), "test")  # shapes checked as for an explicit (X, y)
    given_test = _as_data(s, test, "test") if test is not None and not isinstance(test, data.Batch) else None
    if given is None:  # the draw of training_data(s, N, seed, dtype)
        b = data.sample(s, int(N), seed=np.random.default_rng(ss_train), dtype=dt_draw)
        X, y, w_train = b.X, b.y, None
        del b
    else:
        X, y, w_train, _ = given
    if given_test is None:  # the draw of heldout_data(s, n_test, seed, dtype), or one given
        bt = data.sample(s, int(n_test), seed=np.random.default_rng(ss_test), dtype=dt_draw) if test is None else test
        Xt, yt, ft = bt.X, bt.y, data.labelling_from_z(s, bt.z)
        del bt
    else:
        Xt, yt, _, ft = given_test
    A0, v0 = plan.A0, plan.v0
    if plan.init is not None:
        alpha, gamma, rho = plan.init
        A0, v0 = symmetric_attention(s, gamma, rho), alpha * s.w_star
    return _Prepared(X, y, w_train, Xt, np.asarray(yt, dtype=float), ft, A0, v0)


def _models(s: Setting, prep: _Prepared, dt: np.dtype, device) -> tuple[Any, Any]:
    """(model, test model): the steps on the prepared training and test sets, on the fused Numba kernel or on
    torch (:mod:`theorydyn.simulate.torch_step`); bfloat16 (``dt`` is :data:`BFLOAT16`): the training X
    rounded to bfloat16 first (a given float X too: a copy). The training X is replaced in ``prep``."""
    if dt == BFLOAT16 and not is_bfloat16(prep.X):
        prep.X = to_bfloat16(prep.X)
    if device == _S.device:
        model: Any = FusedModel(prep.X, prep.y, s.p, s.nu, s.tau, weights=prep.w)
        tmodel: Any = FusedModel(prep.Xt, None, s.p, s.nu, s.tau)
    else:  # the same step on torch (theorydyn.simulate.torch_step)
        model = TorchModel(prep.X, prep.y, s.p, s.nu, s.tau, weights=prep.w, device=device)
        tmodel = TorchModel(prep.Xt, None, s.p, s.nu, s.tau, device=device)
    return model, tmodel


def _start(s: Setting, plan: _Plan, omega: float, A0: Any, v0: Any) -> tuple[np.ndarray, np.ndarray]:
    """(A: (R, D, D), V: (d, R)): each replica's realistic initialisation from its init seed, or the
    start ``A0``, ``v0`` (:func:`_prepare`'s); the diagonal at β."""
    R = plan.R
    A = np.empty((R, s.D, s.D))
    V = np.empty((s.d, R))
    for r in range(R):
        rng = np.random.default_rng(np.random.SeedSequence(plan.init_seeds[r]).spawn(3)[2])
        A[r], V[:, r] = init_params(s, omega, rng)
    if A0 is not None:
        A0 = np.asarray(A0, dtype=float)
        A[...] = A0 if A0.ndim == 3 else A0[None]
        if A.shape != (R, s.D, s.D):
            raise ValueError(f"A0 must have shape (D, D) or (R, D, D) with D={s.D}")
    if v0 is not None:
        v0 = np.asarray(v0, dtype=float)
        V[...] = v0 if v0.ndim == 2 else v0[:, None]
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(V))):
        raise ValueError("A0 and v0 must be finite")
    diag = np.arange(s.D)
    A[:, diag, diag] = s.beta  # the diagonal is not trained (docs/theory.md §2)
    return A, V


class _Descent:
    """GD of R replicas on one X, one pass a step (:meth:`run`), with the records of each replica."""

    def __init__(
        self,
        s: Setting,
        plan: _Plan,
        A,
        V,
        model,
        tmodel,
        yt,
        ft,
        record_every: int,
        dense_until: int,
        n=None,
        stop_after: float | None = None,
    ):
        self.s, self.plan, self.A, self.V, self.n, self.stop_after = s, plan, A, V, n, stop_after
        self.model, self.tmodel, self.yt, self.ft = model, tmodel, yt, ft
        self.record_every, self.dense_until = record_every, dense_until
        R = plan.R
        self.rows: list[list[dict[str, Any]]] = [[] for _ in range(R)]
        self.alive = np.ones(R, bool)
        self.status = [Status.OK] * R
        self.message = [""] * R
        self.div_step: list[int | None] = [None] * R
        self.last = [(A[r].copy(), V[:, r].copy()) for r in range(R)]
        # the steps each replica records: every record_every-th, the last and the first dense_until, or
        # the times s_grid rounded to the replica's whole steps (as reduced.integrate's GD does)
        g = plan.s_grid
        self.grid = None if g is None else [set(np.rint(g / e).astype(np.int64).tolist()) for e in plan.etas]
        self.bar: Any = None

    def wanted(self, t: int) -> np.ndarray:
        if self.grid is None:
            steps, R = self.plan.steps, self.plan.R
            return np.full(R, t % self.record_every == 0 or t == steps or t <= self.dense_until)
        return np.array([t in g for g in self.grid])

    def record(self, t: int, risk: np.ndarray, err: np.ndarray, which: np.ndarray) -> None:
        s, A, V, etas, rows, yt, ft = self.s, self.A, self.V, self.plan.etas, self.rows, self.yt, self.ft
        idx = np.flatnonzero(which)
        F = self.tmodel.forward(A[idx], V[:, idx])
        for col, r in enumerate(idx):
            Fr = F[:, col]
            row = {"step": t, "s": float(etas[r] * t), "eta": float(etas[r])}
            row.update(attention_stats(s, A[r], V[:, r]))
            row["risk"] = float(risk[r])
            row["train_err"] = float(err[r])
            if ft is None:
                row.update(err_y=data.errors(Fr, yt, yt)["err_y"], err_f=float("nan"), amb_f=float("nan"))
            else:
                row.update(data.errors(Fr, yt, ft))
            rows[r].append(row)
            if self.stop_after is not None and row["s"] >= self.stop_after and row["association"] < 1.0:
                self._stop(int(r), t, row["s"])
        r0 = idx[0] if idx.size else 0
        if rows[r0]:
            self.bar.set_postfix(
                risk=f"{rows[r0][-1]['risk']:.4g}",
                err=f"{rows[r0][-1]['err_y']:.4f}",
                assoc=f"{rows[r0][-1]['association']:.2f}",
                refresh=False,
            )

    def _stop(self, r: int, t: int, s_now: float) -> None:
        """End replica r at step t by the caller's stopping rule (its parameters stay those of step t)."""
        self.alive[r] = False
        self.div_step[r] = t
        self.status[r] = Status.STOPPED
        self.message[r] = (
            f"stopped at step {t}: association incomplete at s = {s_now:.6g} >= stop_after = {self.stop_after:g}"
        )

    def _die(self, r: int, t: int, what: str) -> None:
        self.alive[r] = False
        self.div_step[r] = t
        self.status[r] = Status.DIVERGED
        self.message[r] = f"diverged (non-finite {what}) at step {t}"

    def run(self, progress: bool) -> None:
        A, V, etas, alive, plan = self.A, self.V, self.plan.etas, self.alive, self.plan
        want_A, want_v, steps, R = plan.want_A, plan.want_v, plan.steps, plan.R
        self.bar = bar = progress_bar(progress, total=steps, desc="simulate", unit="step")
        # a non-finite risk or parameter is caught below and reported as divergence, not printed
        with bar, np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for t in range(steps + 1):
                idx = np.flatnonzero(alive)
                if idx.size == 0:
                    break
                risk = np.full(R, np.nan)
                err = np.full(R, np.nan)
                gA = np.zeros_like(A)
                gV = np.zeros_like(V)
                risk[idx], err[idx], gA[idx], gV[:, idx] = self.model.risk_grad(
                    A[idx], V[:, idx], want_A[idx], want_v[idx], n=None if self.n is None else self.n[idx]
                )
                for r in idx.tolist():
                    if not (np.isfinite(risk[r]) and np.all(np.isfinite(gA[r])) and np.all(np.isfinite(gV[:, r]))):
                        self._die(r, t, "risk or gradient")
                which = alive & self.wanted(t)
                if which.any():
                    self.record(t, risk, err, which)  # may stop replicas (stop_after)
                if t == steps:
                    break
                for r in idx.tolist():
                    if self.status[r] is Status.STOPPED:
                        self.last[r] = (A[r].copy(), V[:, r].copy())
                for r in np.flatnonzero(alive).tolist():
                    self.last[r] = (A[r].copy(), V[:, r].copy())
                    if want_A[r]:
                        A[r] -= etas[r] * gA[r]
                    if want_v[r]:
                        V[:, r] -= etas[r] * gV[:, r]
                    if not (np.all(np.isfinite(A[r])) and np.all(np.isfinite(V[:, r]))):
                        self._die(r, t + 1, "parameters")
                for r in np.flatnonzero(~alive).tolist():  # keep dead replicas harmless in the shared pass
                    A[r], V[:, r] = self.last[r]
                bar.update(1)


def simulate_replicas(
    s: Setting,
    config: SimConfig | None = None,
    *,
    train: Any = None,
    test: Any = None,
    A0: Any = None,
    v0: Any = None,
    init: tuple[float, float, float] | None = None,
    s_grid: Any = None,
    progress: bool = False,
    replicas: int | None = None,
    init_seeds: Sequence[int] | None = None,
    n_train: Sequence[int] | None = None,
    stop_after: float | None = None,
    **options: Any,
) -> list[Result]:
    """R runs sharing one X in one pass per step (U = X V with V: (d, R)): a list of R Results.

    Replica r uses the training/test data of ``seed``, the learning rate ``eta[r]`` (a scalar
    is shared) and the initialisation of ``init_seeds[r]`` (default seed, seed+1, …); a
    replica with init seed equal to ``seed`` starts where :func:`simulate` with that seed does.
    ``A0`` (D, D) or (R, D, D) and ``v0`` (d,) or (d, R), or ``init`` = (α, γ, ρ), fix the
    initialisation instead. ``s_max`` needs one η shared by the replicas; ``s_grid`` is rounded
    to each replica's own steps.
    A replica that diverges stops there; the others go on. ``update`` may name one value per replica
    (e.g. ``["Av", "v"]``: a trained model and its Â-frozen control, on one X in one pass a step).
    ``n_train`` (one per replica) trains replica r on the first ``n_train[r]`` samples of the training
    set only: runs at several N on one draw in one pass a step (nested data, as N*(D) reads them); its
    Result's ``N`` is ``n_train[r]``, and it agrees with :func:`simulate` on those samples to the
    rounding of the float64 sums over blocks. ``stop_after`` (a time s): a replica ends at its first record
    at s ≥ ``stop_after`` whose patch association is incomplete (status ``stopped``; its records up to there
    are kept and its final Â, v̂ are those of that step): a run judged by persistent association over a
    window starting at ``stop_after`` has its verdict then, and the pass goes on without it. The options
    are :func:`simulate`'s (``config`` or keywords named after the fields of
    :class:`~theorydyn.simulate.config.SimConfig`), ``eta`` and ``update`` one value or one per replica;
    see :func:`simulate` for the rest.

    >>> from theorydyn import Setting
    >>> runs = simulate_replicas(Setting(D=8, C=2), N=64, eta=[0.5, 1.0], steps=2, n_test=64)
    >>> [r.options["eta"] for r in runs], [r.options["init_seed"] for r in runs]
    ([0.5, 1.0], [0, 1])
    """
    o = SimConfig.call_options("simulate_replicas", config, options, derived="steps")  # steps not given: derived
    N, eta, steps, s_max, omega, seed = o["N"], o["eta"], o["steps"], o["s_max"], o["omega"], o["seed"]
    record_every, dtype, n_test, dense_until = o["record_every"], o["dtype"], o["n_test"], o["dense_until"]
    err_tol, update, device = o["err_tol"], o["update"], o["device"]
    # -- argument checks (SimConfig's rules, core.validate's: the CLI's, before any work; 0 steps: the start) --
    inputs = dict(train=train, test=test, init=init, s_grid=s_grid)
    check_simulate(s, **o, **inputs, init_seeds=init_seeds, replicas=replicas, min_steps=0, fields=SimConfig)
    plan = _plan(eta, steps, s_max, s_grid, replicas, init_seeds, update, device, seed, A0, v0, init)
    dt = _check_dtype(dtype)
    t_start = time.perf_counter()
    n_r = None  # the counts, checked before the data are drawn (a train tuple of 3 carries weights)
    if n_train is not None:
        n_r = sample_counts(n_train, plan.R, int(N) if train is None else len(train[0]), uniform=len(train or ()) < 3)
    prep = _prepare(s, plan, N, n_test, seed, dt, train, test, device)
    model, tmodel = _models(s, prep, dt, device)
    n_all, n_held = int(prep.X.shape[0]), int(prep.Xt.shape[0])
    A, V = _start(s, plan, omega, prep.A0, prep.v0)
    if stop_after is not None and not (isinstance(stop_after, (int, float)) and math.isfinite(stop_after)):
        raise ValueError(f"stop_after must be a finite time s or None, got {stop_after!r}")
    run = _Descent(s, plan, A, V, model, tmodel, prep.yt, prep.ft, record_every, dense_until, n_r, stop_after)
    run.run(progress)
    seconds = time.perf_counter() - t_start
    results = []
    for r in range(plan.R):
        traj = pd.DataFrame(run.rows[r], columns=COLUMNS)
        options = dict(
            N=n_all if n_r is None else int(n_r[r]),
            eta=float(plan.etas[r]),
            steps=int(plan.steps),
            omega=float(omega),
            seed=int(seed),
            init_seed=int(plan.init_seeds[r]),
            record_every=int(record_every),
            dtype=_dtype_name(dt),
            n_test=n_held,
            explicit_train=train is not None,
            explicit_test=test is not None,
            explicit_init=plan.explicit_init,
            replicas=plan.R,
            dense_until=int(dense_until),
            err_tol=err_tol,
        )
        if plan.s_grid is not None:
            options["s_grid"] = [float(x) for x in plan.s_grid]
        if plan.updates[r] != _S.update:  # the defaults are not recorded: default runs' options stay as they were
            options["update"] = plan.updates[r]
        if device != _S.device:
            options["device"] = device
        ph = detect_phases(traj, err_tol=err_tol) if len(traj) else Phases(err_tol=err_tol)
        Af, vf = (A[r].copy(), V[:, r].copy()) if run.div_step[r] is None else run.last[r]
        if stop_after is not None:
            options["stop_after"] = float(stop_after)
        res = Result("simulate", s, traj, ph, run.status[r], run.message[r], run.div_step[r], options, seconds, Af, vf)
        results.append(res)
    return results


def simulate(
    s: Setting,
    config: SimConfig | None = None,
    *,
    train: Any = None,
    test: Any = None,
    A0: Any = None,
    v0: Any = None,
    init: tuple[float, float, float] | None = None,
    s_grid: Any = None,
    progress: bool = False,
    **options: Any,
) -> Result:
    """GD on the empirical risk (E) with the full D×D Â and v̂ (Theorem 4.2; docs/theory.md §4).

    The options of the run are the fields of :class:`~theorydyn.simulate.config.SimConfig` (their defaults,
    rules and help are there, written once): ``config``, or keywords named after its fields (``N=4096,
    eta=10``), not both. What they do beyond their help: ``steps`` not given is ⌈s_max/η⌉ when ``s_max``
    (the horizon in s = η·t, as in :func:`theorydyn.reduced.integrate`) is given, the end of ``s_grid``
    when that is, else :data:`DEFAULT_STEPS`; ``steps`` wins over ``s_max``. ``dtype="float32"`` is stepped
    in float32 within sub-blocks of ~60 samples with float64 accumulation across them (~1e-6 relative to
    float64); ``"bfloat16"`` rounds the training X to bfloat16 (≤ 2⁻⁸ relative), stepped as float32, the
    test set float32, Numba kernel only: it changes the data (docs/benchmarks.md). ``update="v"`` or
    ``"A"`` freezes the other parameter, whose gradient is not computed (:mod:`theorydyn.simulate.partial`).
    ``device`` other than ``"cpu-numba"`` runs the same step on torch (:mod:`theorydyn.simulate.torch_step`,
    the optional extra ``vision``), agreeing with the Numba kernel to rounding (float64: ~1e-15 a step).
    ``N`` and ``n_test`` are unused where ``train``/``test`` are given; ``omega`` where the start is.

    Args:
        s: the setting.
        config: a :class:`~theorydyn.simulate.config.SimConfig` (as ``python -m theorydyn.simulate`` calls it).
        train, test: optional explicit ``(X, y)`` (or ``(X, y, weights)`` for train) — e.g. docs/theory.md §7's
            Gaussian data, or an exhaustive enumeration with its probabilities. With an explicit
            test set, f is undefined: ``test_err_f`` is NaN and ``test_err_y`` is against the given y.
            ``test`` may also be a :class:`~theorydyn.core.data.Batch` of Assumption 1 (f from its z), e.g.
            :func:`heldout_data`; common random numbers across N: ``train=(b.X[:n], b.y[:n])`` of
            :func:`training_data` at the largest N.
        A0, v0: optional initialisation (D, D) and (d,); the diagonal of A0 is set to β.
        init: optional (α, γ, ρ), the same start as :func:`theorydyn.reduced.integrate`'s ``init``:
            Â at the three-value form (Â_ii = β, γ in-set, ρ across sets) and v̂ = α w*
            (exclusive with ``A0``/``v0``).
        s_grid: instead of ``record_every``/``dense_until``, record at these times s ≥ 0 rounded to
            whole steps, as :func:`theorydyn.reduced.integrate` does with ``method="gd"``.
        progress: a progress line on stderr at every record.
        **options: fields of :class:`~theorydyn.simulate.config.SimConfig`, each replacing its default.

    Returns:
        :class:`~theorydyn.core.result.Result` with ``solver="simulate"``; ``A_final`` / ``v_final``
        hold the last finite Â and v̂. Several initialisations on the same data:
        :func:`simulate_replicas` (a list of Results).

    Raises:
        TypeError: a keyword that is not a field of SimConfig (``replicas``: :func:`simulate_replicas`).
        ValueError: naming a bad option (SimConfig's rule), or options given beside ``config``.

    >>> from theorydyn import Setting
    >>> from theorydyn.simulate.config import SimConfig
    >>> s = Setting(D=8, C=2)
    >>> r = simulate(s, N=64, eta=0.5, steps=4, n_test=64)
    >>> r.options["N"], r.options["steps"], len(r.trajectory)  # recorded at steps 0..4 (dense_until=40)
    (64, 4, 5)
    >>> simulate(s, SimConfig(N=64, eta=0.5, steps=4, n_test=64)).trajectory.equals(r.trajectory)
    True
    """
    o = SimConfig.call_options("simulate", config, options, derived="steps")  # steps not given: derived
    # -- argument checks (SimConfig's rules and theorydyn.core.validate's: the CLI's, before any work) --
    check_simulate(s, **o, train=train, test=test, init=init, s_grid=s_grid, fields=SimConfig)
    # simulate's options are simulate_replicas's: forwarded as given, one replica initialised by ``seed``
    inputs = dict(train=train, test=test, A0=A0, v0=v0, init=init, s_grid=s_grid, progress=progress)
    return simulate_replicas(s, **inputs, **o, init_seeds=[o["seed"]])[0]
