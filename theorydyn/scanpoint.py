"""What one scan point computes: the reduced dynamics and, when asked, the finite-sample run.

A *runner* is any importable function ``runner(s: Setting, options: dict, seed: int) -> dict``
returning the point's results as a flat dict of scalars; it may add
``"trajectories": {suffix: DataFrame}`` and ``"arrays": {suffix: ndarray}``, which the scan
saves as ``scans/results/<scan>/<key><suffix>.csv`` / ``.npy``. The default runner,
:func:`run_point`, integrates the idealized dynamics in (α, γ, ρ) (Lemmas 4.1–4.3, SPEC §3) and
reports the phases of Section 4.1: T0 (end of Event I), T1 (γ(T1) > max_t |ρ(t)|) and the
attention-mass-½ time, T2 (error against f below 2%), the plateau after Event I, the final
risk and errors, the Lemma 4.3 increment ratio and whether γ(t) ≥ ρ(t) held all along. With
``simulate`` on it also runs GD on N samples from a small random init (Theorem 4.2, SPEC §4)
and adds the same phase times (prefix ``sim_``), the final patch association (Definition 2.2)
and errors.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .setting import Setting

#: Row columns of the reduced run, in order (None where a phase is not reached).
REDUCED_FIELDS = ("T0", "T1", "T1_mass", "T2", "plateau_alpha", "plateau_risk", "plateau_err",
                  "final_risk", "final_err_y", "final_err_f", "lemma43_ratio", "gamma_ge_rho")


def _scalar(v: Any) -> Any:
    """numpy scalars → Python; anything that is not a scalar is dropped (None)."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return v
    return None


def run_point(s: Setting, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """The default runner (module docstring); ``options`` as normalised by the scan grid."""
    from .reduced import integrate  # lazily: the scan driver itself never needs the solver

    kw: dict[str, Any] = dict(method=options["method"], s_max=options["s_max"], seed=seed,
                              expectation=options["expectation"], n_points=options["n_points"])
    if options["expectation"] == "mc":
        kw["n_samples"] = options["n_samples"]
    if options["method"] == "gd":
        kw["eta"] = options["eta"]
        kw["steps"] = options["steps"]
    t = time.perf_counter()
    traj = integrate(s, **kw)
    out: dict[str, Any] = {}
    phases = dict(traj.attrs.get("phases") or {})
    for k in REDUCED_FIELDS:
        out[k] = _scalar(phases.get(k))
    for k, v in phases.items():  # whatever else the phase detector reports, after the fixed ones
        if k not in out and _scalar(v) is not None:
            out[k] = _scalar(v)
    if out["gamma_ge_rho"] is None and {"gamma", "rho"} <= set(traj.columns):
        out["gamma_ge_rho"] = bool(np.all(traj["gamma"].to_numpy() >= traj["rho"].to_numpy()))
    if len(traj):
        out["min_gamma_minus_rho"] = float(np.min(traj["gamma"].to_numpy() - traj["rho"].to_numpy()))
        out["final_alpha"] = float(traj["alpha"].iloc[-1])
        out["final_gamma"] = float(traj["gamma"].iloc[-1])
        out["final_rho"] = float(traj["rho"].iloc[-1])
        out["s_reached"] = float(traj["s"].iloc[-1])
    out["status"] = str(traj.attrs.get("status", "ok"))
    out["reduced_wall_s"] = time.perf_counter() - t
    trajectories = {"": traj}
    arrays: dict[str, np.ndarray] = {}
    if options.get("simulate"):
        sim, A, v = _simulate(s, options, seed)
        out.update(sim)
        trajectories["_sim"] = sim.pop("_trajectory")
        if A is not None:
            arrays["_A"] = np.asarray(A)
        if v is not None:
            arrays["_v"] = np.asarray(v)
    out["trajectories"] = trajectories
    out["arrays"] = arrays
    return out


def _simulate(s: Setting, options: dict[str, Any], seed: int):
    from .simulate import simulate

    t = time.perf_counter()
    res = simulate(s, N=options["N"], eta=options["eta"], steps=options["sim_steps"], omega=options["omega"],
                   seed=seed, record_every=options["record_every"], dtype=options["dtype"])
    traj = res.trajectory
    out: dict[str, Any] = {}
    for k, v in dict(traj.attrs.get("phases") or {}).items():
        v = _scalar(v)
        if v is not None or k.startswith("T"):
            out[f"sim_{k}"] = v
    if len(traj):
        last = traj.iloc[-1]
        for name, cols in (("association", ("association",)), ("train_risk", ("train_risk",)),
                           ("err_y", ("test_err_y", "err_y")), ("err_f", ("test_err_f", "err_f")),
                           ("cos_v", ("cos_v",))):
            col = next((c for c in cols if c in traj.columns), None)
            if col is not None:
                val = float(last[col])
                out[f"sim_{name}"] = val if math.isfinite(val) else None
    out["sim_status"] = str(getattr(res, "status", traj.attrs.get("status", "ok")))
    out["sim_wall_s"] = time.perf_counter() - t
    out["_trajectory"] = traj
    return out, getattr(res, "A", None), getattr(res, "v", None)
