"""The idealized dynamics in (α, γ, ρ): the paper's GD recursion and the gradient flow (docs/theory.md §3).

By Lemmas 4.1 and 4.2, population GD from the idealized initialisation (Parametrization 3.1)
keeps A_ii = β, A_ij = γ (same set), A_ij = ρ (different sets) and v = α w*, so the dynamics is
that of the reduced risk ℓ_red(α, γ, ρ) (:mod:`theorydyn.reduced.risk`), an expectation over the
samples of a fixed bank (:mod:`theorydyn.reduced.bank`: Monte Carlo or exact). With the per-entry
updates of the full model:

    GD   (``method="gd"``):   α ← α − η ∂ℓ/∂α,  γ ← γ − η ∂ℓ/∂γ / (D(C−1)),  ρ ← ρ − η ∂ℓ/∂ρ / (D(D−C));
    flow (``method="flow"``): the same right-hand side in time s = η·t, integrated by a stiff
                              scipy solver (LSODA by default) on a fixed bank (common random numbers).

Phases (Section 4.1): see :func:`theorydyn.core.phases.detect_phases`. Measured limit of
Lemma 4.3: γ ≥ ρ holds from the idealized init for q ≤ C²/(2D) in every case tried, but fails at
small D with large q (e.g. D=16, C=4, q=1; D=24, C=4, q=2/3), where γ decreases.

CLI: ``python -m theorydyn.reduced --help``.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import integrate as si
from scipy.optimize import brentq

from ..core.config import as_seeds
from ..core.phases import Phases, detect_phases
from ..core.result import Result, Status
from ..core.setting import Setting
from ..core.validate import check_integrate, gd_steps
from ..infra._progress import progress_bar
from ..infra.limits import STEPS_MAX
from . import _kernels as rk
from .bank import MAX_TERMS, Bank, make_bank
from .config import FLOW_DEFAULTS as _F
from .config import FlowConfig
from .defaults import SOLVERS
from .risk import _Evaluator

__all__ = ["default_horizon", "integrate", "COLUMNS", "SOLVERS"]

#: Columns of a trajectory returned by :func:`integrate`: the common schema of
#: :data:`theorydyn.core.result.CORE_COLUMNS`, then the softmax values of the three-value form.
COLUMNS = [
    "s",
    "step",
    "alpha",
    "gamma",
    "rho",
    "in_mass",
    "association",
    "risk",
    "err_y",
    "err_f",
    "amb_f",
    "Lambda",
    "Gamma",
    "Xi",
]


def default_horizon(D: int) -> float:
    """The default horizon s_max (in s = η·t) of a reduced flow at D: 2·10⁴·max(1, D/64)^1.5, i.e. the
    horizon of :data:`~theorydyn.reduced.config.FLOW_DEFAULTS` (the library's and the CLI's) grown with D.

    A chosen horizon, not a derived one: long enough to pass Event III for C = 4 (the transfer
    experiment's pre-training and the ledger's flows of the idealized dynamics both use it).
    """
    return _F.s_max * max(1.0, D / 64) ** 1.5  # 2e4 at D <= 64: integrate(Setting()) flows this far


#: At most this multiple of the starting horizon (doubling) :func:`flows_until_t2` extends the flows.
HORIZON_GROWTH_MAX = 16


def flows_until_t2(
    s: Setting,
    seeds: int | Sequence[int],
    s_max: float | None = None,
    *,
    grow_max: int = HORIZON_GROWTH_MAX,
    progress: Callable[[str], None] | None = None,
    **kw: Any,
) -> tuple[list[Result], float, int]:
    """Gradient flows of ``s``, one per seed of ``seeds`` (:func:`integrate`, ``kw`` passed on), to the
    horizon ``s_max``; with ``s_max`` None it starts at :func:`default_horizon` (chosen for C = 4) and,
    while some seed has not reached T2 (the end of phase III), runs them all again to twice the horizon,
    up to ``grow_max`` times it: "not reached" is then censored by the dynamics' own time scale, not by
    the C = 4 choice. A given ``s_max`` is kept.

    Returns (results, the horizon used, its multiple of the starting one)."""
    say = progress or (lambda msg: None)
    seeds = as_seeds(seeds)  # a count or the seeds themselves: one type (theorydyn.core.config.Seeds)
    horizon = float(s_max) if s_max is not None else default_horizon(s.D)

    def run(h: float) -> list[Result]:
        out = []
        for k, seed in enumerate(seeds):
            say(f"reduced flow at D={s.D}, s_max={h:g}, seed {k + 1}/{len(seeds)}")
            out.append(integrate(s, method="flow", s_max=h, seed=seed, **kw))
        return out

    runs, grown = run(horizon), 1
    while s_max is None and grown < grow_max and any(r.phases.T2 is None for r in runs):
        horizon, grown = 2 * horizon, 2 * grown
        runs = run(horizon)
    return runs, horizon, grown


# ---- dynamics ---------------------------------------------------------------------------------


class _Diverged(Exception):
    pass


def _row(ev: _Evaluator, s_val: float, step: float, th) -> dict | None:
    """One trajectory row at θ = (α, γ, ρ), or None where the risk is not finite."""
    e = ev.estimate(*th)
    if not (np.isfinite(e.risk) and np.all(np.isfinite(e.grad))):
        return None
    s = ev.s
    # Definition 2.2 at the three-value form: row i's C largest entries are its set iff min(β, γ) > ρ
    assoc = 1.0 if min(s.beta, float(th[1])) > float(th[2]) else 0.0
    return dict(
        s=s_val,
        step=step,
        alpha=float(th[0]),
        gamma=float(th[1]),
        rho=float(th[2]),
        in_mass=e.Lambda + (s.C - 1) * e.Gamma,
        association=assoc,
        risk=e.risk,
        err_y=e.err_y,
        err_f=e.err_f,
        amb_f=e.amb_f,
        Lambda=e.Lambda,
        Gamma=e.Gamma,
        Xi=e.Xi,
    )


def _checked_options(method, solver, eta, steps, s_max, n_points, err_tol, s_grid):
    """:func:`integrate`'s checks of its options by :class:`~theorydyn.reduced.config.FlowConfig`'s rules
    (ValueError naming the option); returns ``s_grid`` as sorted unique float64 times (or None) and
    ``s_max``, which defaults to the last of them when neither ``s_max`` nor ``steps`` is given."""
    FlowConfig.check_values(method=method, solver=solver, eta=eta, steps=steps, n_points=n_points, err_tol=err_tol)
    if s_max is not None:
        FlowConfig.check_values(s_max=s_max)
    if s_grid is not None:
        s_grid = np.unique(np.asarray(s_grid, dtype=np.float64))
        if len(s_grid) == 0 or not np.all(np.isfinite(s_grid)) or s_grid[0] < 0:
            raise ValueError("s_grid must be a non-empty array of finite times >= 0")
        if s_max is None and steps is None:
            s_max = float(s_grid[-1])
    return s_grid, s_max


def integrate(
    s: Setting,
    config: FlowConfig | None = None,
    *,
    init: tuple[float, float, float] | None = None,
    s_grid: Any = None,
    s_min: float | None = None,
    bank: Bank | None = None,
    max_terms: int = MAX_TERMS,
    progress: bool = False,
    **options: Any,
) -> Result:
    """Population GD (``method="gd"``) or gradient flow (``method="flow"``) of ℓ_red from the idealized init.

    The options of the run are the fields of :class:`~theorydyn.reduced.config.FlowConfig` (their defaults,
    rules and help are there, written once): ``config``, or keywords named after its fields
    (``method="gd", eta=0.5``), not both. What they do beyond their help: ``"gd"`` is the paper's recursion
    with per-entry updates, ``steps`` steps of size ``eta`` (s = η·step; ``steps`` defaults to ⌈s_max/η⌉);
    ``"flow"`` is dθ/ds = −(∂ℓ/∂α, ∂ℓ/∂γ/(D(C−1)), ∂ℓ/∂ρ/(D(D−C))) up to ``s_max`` (not given: the end of
    ``s_grid``, else η·steps, else FlowConfig's, the CLI's: one object,
    :data:`~theorydyn.reduced.config.FLOW_DEFAULTS`) with the scipy solver ``solver`` (LSODA, BDF, Radau;
    RK45 for non-stiff checks), tolerances rtol/atol. ``expectation="mc"`` is a fixed bank of ``n_samples``
    count vectors drawn with ``seed`` (common random numbers: the right-hand side is a smooth deterministic
    function), ``"exact"`` small L only. ``n_points``: rows of the trajectory, s = 0 and ``n_points − 1``
    log-spaced values from ``s_min`` to the end (gd: rounded to whole steps).

    Args:
        s: the setting. Start (Parametrization 3.1): α = ν^{1/(p−1)}, γ = ρ = 0, unless ``init``.
        config: a :class:`~theorydyn.reduced.config.FlowConfig`
            (:meth:`~theorydyn.reduced.config.FlowConfig.integrate_kwargs`), as ``python -m theorydyn.reduced``
            calls it.
        init: the start (α, γ, ρ).
        s_grid: explicit increasing times s ≥ 0 to record instead of the log grid (gd rounds them
            to whole steps; the end of the run is max(s_grid) unless s_max/steps say otherwise).
        s_min: the first time of the log grid (default min(η, s_max/100) for gd, min(0.01, s_max/100) for flow).
        bank: reuse a bank from :func:`make_bank` (then expectation/n_samples/seed are not used).
        max_terms: the most count vectors of an exact bank (:func:`make_bank`).
        progress: a progress bar on stderr.
        **options: fields of :class:`~theorydyn.reduced.config.FlowConfig`, each replacing its default.

    Returns:
        :class:`~theorydyn.core.result.Result` with ``solver="reduced"``: the trajectory has the
        columns :data:`COLUMNS`; ``phases`` from :func:`theorydyn.core.phases.detect_phases`, whose
        crossing times the flow refines through its dense output (independent of the output
        grid); ``status`` DIVERGED / FAILED with the rows before kept.

    Raises:
        TypeError: a keyword that is not a field of FlowConfig.
        ValueError: naming a bad option (FlowConfig's rule), or options given beside ``config``.

    >>> from theorydyn import Setting
    >>> r = integrate(Setting(D=16, C=4))
    >>> str(r.status), float(r.trajectory["s"].iloc[-1])  # the flow to the default horizon, s = 2e4
    ('ok', 20000.0)
    >>> round(r.phases.T0, 1)  # the end of phase I: α's plateau (Lemma 4.2)
    8.2
    """
    # s_max not given is derived (the end of s_grid, η·steps, else FLOW_DEFAULTS'); a config's GD with steps
    # runs exactly those steps (FlowConfig.integrate_kwargs)
    o = FlowConfig.call_options("integrate", config, options, derived="s_max")
    if config is not None:
        o = config.integrate_kwargs()
    method, eta, steps, s_max = o["method"], o["eta"], o["steps"], o["s_max"]
    n_samples, seed, expectation, n_points = o["n_samples"], o["seed"], o["expectation"], o["n_points"]
    solver, err_tol, rtol, atol = o["solver"], o["err_tol"], o["rtol"], o["atol"]
    # -- argument checks (FlowConfig's rules and theorydyn.core.validate's: the CLI's, before any work) --
    check_integrate(s, s_min=s_min, init=init, max_terms=max_terms, s_grid=s_grid)
    FlowConfig.check_values(n_samples=n_samples, seed=seed, expectation=expectation, rtol=rtol, atol=atol)
    s_grid, s_max = _checked_options(method, solver, eta, steps, s_max, n_points, err_tol, s_grid)
    if method == "gd":
        if steps is None:  # a derived quantity, checked where derived (eta = 5e-324 is > 0, s_max/eta is inf)
            steps = gd_steps(s_max if s_max is not None else _F.s_max, eta, STEPS_MAX)
        s_end = eta * steps
    else:
        s_end = s_max if s_max is not None else (eta * steps if steps is not None else _F.s_max)
    t_start = time.perf_counter()
    if bank is None:
        bank = make_bank(s, expectation, n_samples=n_samples, seed=seed, max_terms=max_terms)
    ev = _Evaluator(s, bank)
    th0 = np.array(init if init is not None else (s.alpha0, 0.0, 0.0), dtype=np.float64)
    options = dict(
        method=method,
        eta=eta,
        steps=steps,
        s_max=s_end,
        n_samples=n_samples if bank.kind == "mc" else None,
        seed=seed if bank.kind == "mc" else None,
        expectation=bank.kind,
        n_points=n_points,
        solver=solver if method == "flow" else None,
        rtol=rtol if method == "flow" else None,
        atol=atol if method == "flow" else None,
        init=[float(x) for x in th0],
        err_tol=err_tol,
    )
    bar = progress_bar(progress, total=s_end, desc=f"reduced {method}", unit="s")
    refine = None
    # overflow of e^{...} in far-off regions is detected and reported as divergence, not printed
    with bar, np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if method == "gd":
            rows, run = _run_gd(s, ev, th0, eta, steps, n_points, s_min, bar, s_grid)
        else:
            rows, run, dense = _run_flow(s, ev, th0, s_end, eta, n_points, s_min, solver, rtol, atol, bar, s_grid)
            refine = _flow_refiner(s, ev, dense)
        traj = pd.DataFrame(rows, columns=COLUMNS)
        phases = detect_phases(traj, err_tol=err_tol, refine=refine) if len(traj) else Phases(err_tol=err_tol)
    status, message, stopped = run
    return Result("reduced", s, traj, phases, status, message, stopped, options, time.perf_counter() - t_start)


def _log_grid(lo: float, hi: float, n: int) -> np.ndarray:
    return np.concatenate([[0.0], np.geomspace(lo, hi, n - 1)]) if n > 1 else np.array([0.0])


_OK = (Status.OK, "", None)


def _diverged(where: str, step: float | None):
    return Status.DIVERGED, f"diverged (non-finite risk) at {where}", step


def _run_gd(s, ev, th, eta, steps, n_points, s_min, bar, s_grid=None):
    if s_grid is None:
        lo = max(1.0, (s_min if s_min is not None else min(eta, eta * steps / 100)) / eta)
        grid = np.unique(np.rint(_log_grid(min(lo, steps), steps, n_points)).astype(np.int64))
    else:
        grid = np.unique(np.rint(s_grid / eta).astype(np.int64))
        grid = grid[grid <= steps]
    rows, cur = [], 0
    th = th.copy()
    for target in grid:
        n = int(target - cur)
        if n > 0:
            done = rk.gd_run(th, float(eta), float(s.n_in), float(s.n_cross), n, ev.setting, ev.arrays, ev.tab, ev.out)
            cur += done
            if done < n:
                return rows, _diverged(f"step {cur} (s={cur * eta:.6g})", cur)
        row = _row(ev, cur * eta, float(cur), th)
        if row is None:
            return rows, _diverged(f"step {cur} (s={cur * eta:.6g})", cur)
        rows.append(row)
        bar.update(cur * eta - bar.n)
    return rows, _OK


class _Dense:
    """The flow's state θ(s) between records: the solver's dense output, step by step."""

    def __init__(self):
        self.t_hi: list[float] = []
        self.pieces: list = []

    def add(self, t_hi: float, piece) -> None:
        self.t_hi.append(t_hi)
        self.pieces.append(piece)

    def __call__(self, t: float) -> np.ndarray:
        k = min(bisect.bisect_left(self.t_hi, t), len(self.pieces) - 1)
        return self.pieces[k](t)


def _flow_refiner(s: Setting, ev: _Evaluator, dense: _Dense):
    """``refine(column, s_lo, s_hi, level, rising)`` for :func:`detect_phases`: the crossing from the
    dense output — Brent's method for the smooth columns, bisection for the errors (a finite bank
    makes them step functions of s, whose first jump below the level is found to 1e-9 relative)."""

    def value(name: str, t: float) -> float:
        th = dense(t)
        if name in ("alpha", "gamma", "rho"):
            return float(th["alpha gamma rho".split().index(name)])
        row = _row(ev, t, t, th)
        return float("nan") if row is None else float(row[name])

    def refine(name: str, lo: float, hi: float, level: float, rising: bool) -> float:
        if not dense.pieces:
            return hi
        sign = 1.0 if rising else -1.0
        g = lambda t: sign * (value(name, t) - level)  # noqa: E731 — crossing where g turns positive
        glo, ghi = g(lo), g(hi)
        if not (glo <= 0 < ghi):
            return hi
        if name in ("err_y", "err_f", "association"):
            for _ in range(60):
                mid = 0.5 * (lo + hi)
                if g(mid) > 0:
                    hi = mid
                else:
                    lo = mid
                if hi - lo <= 1e-9 * hi:
                    break
            return hi
        return float(brentq(g, lo, hi, xtol=1e-12, rtol=1e-10))

    return refine


def _run_flow(s, ev, th0, s_end, eta, n_points, s_min, solver, rtol, atol, bar, s_grid=None):
    scale = np.array([1.0, 1.0 / s.n_in, 1.0 / s.n_cross])
    dense = _Dense()

    def rhs(t, th):
        o = ev.raw(th[0], th[1], th[2])
        if not ev.finite():
            raise _Diverged(t)
        return -o[2:5] * scale

    if s_grid is None:
        lo = s_min if s_min is not None else min(0.01, s_end / 100)
        grid = _log_grid(min(lo, s_end), s_end, n_points)
    else:
        grid = s_grid[s_grid <= s_end]
    rows = []
    gi = 0
    while gi < len(grid) and grid[gi] == 0.0:
        row = _row(ev, 0.0, 0.0, th0)
        if row is None:
            return rows, _diverged("s=0", 0.0), dense
        rows.append(row)
        gi += 1
    try:
        ode = getattr(si, solver)(rhs, 0.0, th0.copy(), s_end, rtol=rtol, atol=atol)
        while gi < len(grid):
            ode.step()
            if ode.status == "failed":
                return (
                    rows,
                    (Status.FAILED, f"solver {solver} failed at s={ode.t:.6g}: {ode.message}", ode.t / eta),
                    dense,
                )
            dense.add(ode.t, ode.dense_output())
            while gi < len(grid) and grid[gi] <= ode.t:
                row = _row(ev, float(grid[gi]), float(grid[gi] / eta), dense(grid[gi]))
                if row is None:
                    return rows, _diverged(f"s={grid[gi]:.6g}", grid[gi] / eta), dense
                rows.append(row)
                gi += 1
            bar.update(min(ode.t, s_end) - bar.n)
            if ode.status == "finished":
                break
    except _Diverged as e:
        return rows, _diverged(f"s={e.args[0]:.6g}", e.args[0] / eta), dense
    return rows, _OK, dense
