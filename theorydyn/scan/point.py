"""What one scan point computes: the reduced dynamics and, when asked, the finite-sample run.

A *runner* is any function ``runner(s: Setting, options: dict, seed: int) -> dict``
returning the point's results as a flat dict of scalars; it may add
``"trajectories": {suffix: DataFrame}`` and ``"arrays": {suffix: ndarray}``, which the scan
saves as ``<run dir>/scans/<scan>/<key><suffix>.csv`` / ``.npy``. The default runner,
:func:`run_point`, integrates the idealized dynamics in (α, γ, ρ) (Lemmas 4.1–4.3, docs/theory.md §3) and
reports the phases of Section 4.1: T0 (end of Event I), T1 (γ(T1) > max_t |ρ(t)|) and the
attention-mass-½ time, T2 (error against f below 2%), the plateau after Event I, the final
risk and errors, the Lemma 4.3 increment ratio and whether γ(t) ≥ ρ(t) held all along. With
``simulate`` on it also runs GD on N samples from a small random init (Theorem 4.2, docs/theory.md §4)
and adds the same phase columns (prefix ``sim_``), the final patch association (Definition 2.2)
and errors (``sim_final_*``, beside the reduced ``final_association``, ``final_err_f``, ``final_err_y``
that are their N = ∞ reference) and ``sim_s_reached``, the simulator's horizon η·steps. A diverged
run leaves its phase columns empty.

Without an ``s_max`` the reduced horizon is :func:`scan_horizon` of the point's D (the grid fills it
in before the point's key is computed, so the key and the row carry the horizon used).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..core.result import Result
from ..core.setting import Setting
from ..reduced import default_horizon, integrate
from ..simulate import simulate
from .schema import reduced_kwargs, simulator_kwargs

#: The reduced flow's horizon at D = 64 for a scan, relative to the ledger's
#: (:func:`theorydyn.reduced.default_horizon`): the default scan's q reaches 1.4·C²/D, where T2 is about twice the
#: ledger's (q = C²/D) and passes the ledger's 2·10⁴ (T2 = 2.4·10⁴ at D = 64, q = 0.35).
SCAN_HORIZON_FACTOR = 2.5


def scan_horizon(D: int) -> float:
    """The default ``s_max`` of a scan point: :data:`SCAN_HORIZON_FACTOR` × the ledger's
    :func:`default_horizon`, so it follows D as the ledger's does (5·10⁴ up to D = 64, then ∝ D^1.5)."""
    return SCAN_HORIZON_FACTOR * default_horizon(D)


#: Row columns of the reduced run, in order (None where a phase is not reached); the same names,
#: prefixed ``sim_``, for the finite-sample run: both come from the one detector of theorydyn.core.phases.
REDUCED_FIELDS = (
    "T0",
    "T1",
    "T1_mass",
    "T2",
    "T_assoc",
    "plateau_alpha",
    "plateau_risk",
    "plateau_err",
    "final_risk",
    "final_err_y",
    "final_err_f",
    "lemma43_ratio",
    "gamma_ge_rho",
    "min_gap_after_start",
)


def _scalar(v: Any) -> Any:
    """numpy scalars → Python; anything that is not a scalar is dropped (None)."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        return v
    return None


def phase_fields(res: Result, prefix: str = "") -> dict[str, Any]:
    """The phase columns of a scan row; all empty (None) for a run that did not finish: a diverged
    trajectory has no meaningful phase times, and a row must not pretend it has."""
    ph = res.phases.as_dict()
    out = {f"{prefix}{k}": (_scalar(ph.get(k)) if res.ok else None) for k in REDUCED_FIELDS}
    out.update(
        {
            f"{prefix}{k}": (_scalar(v) if res.ok else None)
            for k, v in ph.items()
            if f"{prefix}{k}" not in out and _scalar(v) is not None
        }
    )
    out[f"{prefix}status"] = str(res.status)
    out[f"{prefix}message"] = res.message
    return out


def run_point(s: Setting, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """The default runner (module docstring); ``options`` as the scan grid completes them
    (:func:`~theorydyn.scan.schema.point_options`)."""
    res = integrate(s, seed=seed, **reduced_kwargs(options))
    traj = res.trajectory
    out = phase_fields(res)
    if len(traj):
        out["final_alpha"] = float(traj["alpha"].iloc[-1])
        out["final_gamma"] = float(traj["gamma"].iloc[-1])
        out["final_rho"] = float(traj["rho"].iloc[-1])
        if "association" in traj.columns:  # the N = ∞ reference of the simulator's association
            out["final_association"] = _scalar(float(traj["association"].iloc[-1]))
        out["s_reached"] = float(traj["s"].iloc[-1])
    out["reduced_wall_s"] = res.seconds
    trajectories = {"": traj}
    arrays: dict[str, np.ndarray] = {}
    if options.get("simulate"):
        sim = simulate(s, seed=seed, **simulator_kwargs(options))
        out.update(phase_fields(sim, "sim_"))
        if len(sim.trajectory):
            last = sim.trajectory.iloc[-1]
            for col in ("association", "risk", "err_y", "err_f", "cos_v"):
                out[f"sim_final_{col}"] = _scalar(float(last[col]))
            out["sim_s_reached"] = float(last["s"])
        out["sim_wall_s"] = sim.seconds
        trajectories["_sim"] = sim.trajectory
        arrays["_A"], arrays["_v"] = np.asarray(sim.A), np.asarray(sim.v)
    out["trajectories"] = trajectories
    out["arrays"] = arrays
    return out
