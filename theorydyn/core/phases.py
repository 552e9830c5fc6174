"""One phase detector for both solvers (Section 4.1 of the paper; docs/theory.md §3).

It reads a trajectory in the common schema of :mod:`theorydyn.core.result` — the columns ``s``,
``alpha``, ``gamma``, ``rho``, ``in_mass``, ``association``, ``risk``, ``err_y``, ``err_f``
(sorted by s) — whether it comes from the reduced dynamics (N = ∞: γ, ρ are the in-set and
cross-set values of Lemma 4.1's three-value form) or from the finite-sample simulator (γ, ρ are
the means of the in-set and cross-set off-diagonal entries of Â, α = ⟨v̂, w*⟩).

Definitions (times in s = η·t; each is the *crossing* of a level, located by linear
interpolation between the two recorded points around it, and refined further when the solver
supplies the state between records — the gradient flow does, through its dense output):

* **plateau_alpha**: the plateau of α in phase I–II, max α(s) over s ≤ T1 (over the whole run
  when T1 is not reached).
* **T0** (end of Event I): the first s with α(s) ≥ 0.9 · plateau_alpha.
* **T1** (the paper's definition of Event II): the first s with γ(s) > max_t |ρ(t)|, the
  maximum over the whole recorded trajectory.
* **T1_mass**: the first s at which the in-set attention mass (mean over rows i of
  Σ_{j ∈ S(i)} S_ij; Λ + (C−1)Γ at the three-value form) reaches 1/2.
* **T2** (Event III): the first s with err_f < ``err_tol`` (default :data:`ERR_TOL` = 2%);
  against err_y when err_f is undefined (data without a labelling function).
* **T_assoc**: the first s with association ≥ 0.9 (Definition 2.2, fraction of rows).
* **T1_entrywise** (simulator, where the column ``cross_absmax`` exists): the first s with the
  in-set mean above the current max_ij |cross-set Â_ij| — every cross entry below the average
  in-set one.
* **lemma43_ratio** (Lemma 4.3: γ's increment exceeds |ρ|'s, by a factor of order D): the
  median over consecutive recorded points inside [T0, T1] (or [T0, end], or the whole run) of
  Δγ/|Δρ| (intervals with Δρ = 0 skipped); ``lemma43_ratio_total`` the ratio of the total
  increments over the same window.
* **gamma_ge_rho**: γ(s) ≥ ρ(s) at every recorded s; **min_gap_after_start**: min over
  recorded s > 0 of γ(s) − ρ(s) (at s = 0 both are 0 from the idealized init, so a check on
  the whole trajectory would be pinned at 0 and could not fail).
* **assoc_peak** and its time; for the simulator also the dip of cos(v̂, w*) (its minimum after
  the start, the peak before it and the recovery after it).
* plateau_risk / plateau_err (against f) / plateau_err_y at T0, final_* at the last row.

Where a level is never crossed the time is ``None`` (not reached).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # annotations only: importing the phases (and their ERR_TOL) loads no pandas
    import pandas as pd

#: Error tolerance defining T2 (docs/theory.md §3: "population error against f below 2%").
ERR_TOL = 0.02
#: T0: α has reached this fraction of its plateau.
T0_FRACTION = 0.9
#: T_assoc: association (fraction of rows, Definition 2.2) reaches this level.
ASSOC_LEVEL = 0.9

REQUIRED = ("s", "alpha", "gamma", "rho", "err_f")

#: ``refine(quantity, s_lo, s_hi, level, rising) -> s*``: the crossing of ``level`` by the named
#: trajectory column between two recorded times, computed from the solver's own state.
Refiner = Callable[[str, float, float, float, bool], float]


@dataclass(frozen=True)
class Phases:
    """The phase summary of one trajectory (definitions in the module docstring)."""

    T0: float | None = None
    T1: float | None = None
    T1_mass: float | None = None
    T2: float | None = None
    T_assoc: float | None = None
    T1_entrywise: float | None = None
    err_tol: float = ERR_TOL
    plateau_alpha: float | None = None
    plateau_risk: float | None = None
    plateau_err: float | None = None
    plateau_err_y: float | None = None
    max_abs_rho: float | None = None
    gamma_ge_rho: bool | None = None
    min_gap_after_start: float | None = None
    lemma43_ratio: float | None = None
    lemma43_ratio_total: float | None = None
    assoc_peak: float | None = None
    assoc_peak_s: float | None = None
    cos_v_min: float | None = None
    cos_v_min_s: float | None = None
    cos_v_peak_before_min: float | None = None
    cos_v_max_after_min: float | None = None
    cos_v_max_after_min_s: float | None = None
    final_alpha: float | None = None
    final_risk: float | None = None
    final_err_y: float | None = None
    final_err_f: float | None = None

    TIMES = ("T0", "T1", "T1_mass", "T2", "T_assoc", "T1_entrywise")

    def as_dict(self) -> dict:
        return asdict(self)

    def in_steps(self, eta: float) -> dict[str, float | None]:
        """The phase times divided by η (GD steps)."""
        return {k: (None if getattr(self, k) is None else getattr(self, k) / eta) for k in self.TIMES}


def _crossing(s: np.ndarray, x: np.ndarray, level: float, rising: bool) -> tuple[float | None, int | None]:
    """First s where x crosses ``level`` (rising: x > level; falling: x < level), interpolated.

    Returns (s*, i) with i the first recorded index past the crossing; (None, None) if never.
    """
    past = x > level if rising else x < level
    idx = np.flatnonzero(past & np.isfinite(x))
    if not idx.size:
        return None, None
    i = int(idx[0])
    if i == 0 or not np.isfinite(x[i - 1]) or x[i] == x[i - 1]:
        return float(s[i]), i
    frac = (level - x[i - 1]) / (x[i] - x[i - 1])
    return float(s[i - 1] + min(max(frac, 0.0), 1.0) * (s[i] - s[i - 1])), i


def _f(v) -> float | None:
    if v is None:
        return None
    v = float(v)
    return v if np.isfinite(v) else None


def detect_phases(traj: pd.DataFrame, err_tol: float = ERR_TOL, refine: Refiner | None = None) -> Phases:
    """The :class:`Phases` of a trajectory in the common schema (module docstring).

    Args:
        traj: DataFrame with at least ``s, alpha, gamma, rho, err_f`` sorted by s; ``in_mass``,
            ``association``, ``risk``, ``err_y``, ``cos_v`` are used when present.
        err_tol: tolerance on err_f for T2, in (0, 1).
        refine: optional solver-supplied refinement of a crossing between two records.

    Raises:
        ValueError: a required column is missing or err_tol is outside (0, 1).
    """
    missing = [c for c in REQUIRED if c not in traj.columns]
    if missing:
        raise ValueError(f"detect_phases needs the columns {REQUIRED}; missing {missing}")
    if not (0.0 < err_tol < 1.0):
        raise ValueError(f"err_tol must be in (0, 1), got {err_tol}")
    if len(traj) == 0:
        return Phases(err_tol=err_tol)
    s = traj["s"].to_numpy(float)
    a, g, r = (traj[c].to_numpy(float) for c in ("alpha", "gamma", "rho"))
    col = lambda name: traj[name].to_numpy(float) if name in traj.columns else None  # noqa: E731

    def cross(name: str, x: np.ndarray, level: float, rising: bool) -> tuple[float | None, int | None]:
        t, i = _crossing(s, x, level, rising)
        if refine is not None and i is not None and i > 0:
            t = float(refine(name, float(s[i - 1]), float(s[i]), float(level), rising))
        return t, i

    out: dict = dict(err_tol=err_tol)
    max_abs_rho = float(np.nanmax(np.abs(r)))
    out["max_abs_rho"] = max_abs_rho
    out["T1"], i1 = cross("gamma", g, max_abs_rho, True)
    upto = s <= out["T1"] if out["T1"] is not None else np.ones(len(s), bool)
    plateau = float(np.nanmax(a[upto])) if upto.any() else float("nan")
    out["plateau_alpha"] = _f(plateau)
    i0 = None
    if np.isfinite(plateau) and plateau > 0 and plateau > a[0]:
        out["T0"], i0 = cross("alpha", a, T0_FRACTION * plateau, True)
    mass = col("in_mass")
    if mass is not None:
        out["T1_mass"], _ = cross("in_mass", mass, 0.5, True)
    ef = traj["err_f"].to_numpy(float)
    err_name = "err_f"
    if np.all(np.isnan(ef)) and "err_y" in traj.columns:
        ef, err_name = traj["err_y"].to_numpy(float), "err_y"
    out["T2"], _ = cross(err_name, ef, err_tol, False)
    assoc = col("association")
    if assoc is not None and np.any(np.isfinite(assoc)):
        out["T_assoc"], _ = cross("association", assoc, ASSOC_LEVEL, True)
        k = int(np.nanargmax(assoc))
        out["assoc_peak"], out["assoc_peak_s"] = float(assoc[k]), float(s[k])

    cmax = col("cross_absmax")
    if cmax is not None:
        out["T1_entrywise"], _ = cross("gamma_minus_cross_absmax", g - cmax, 0.0, True)
    out["gamma_ge_rho"] = bool(np.all(g >= r))
    later = s > 0
    if later.any():
        out["min_gap_after_start"] = float(np.min(g[later] - r[later]))
    lo = i0 if i0 is not None else 0
    hi = i1 if (i1 is not None and i1 > lo) else len(s) - 1
    if hi > lo:
        dg, dr = np.diff(g[lo : hi + 1]), np.diff(r[lo : hi + 1])
        ok = dr != 0
        if np.any(ok):
            out["lemma43_ratio"] = float(np.median(dg[ok] / np.abs(dr[ok])))
        tot = abs(r[hi] - r[lo])
        out["lemma43_ratio_total"] = float((g[hi] - g[lo]) / tot) if tot > 0 else None

    cos = col("cos_v")
    if cos is not None and len(cos) > 1:
        k = int(np.argmin(cos[1:])) + 1
        out["cos_v_min"], out["cos_v_min_s"] = float(cos[k]), float(s[k])
        out["cos_v_peak_before_min"] = float(np.max(cos[1 : k + 1]))
        j = k + int(np.argmax(cos[k:]))
        out["cos_v_max_after_min"], out["cos_v_max_after_min_s"] = float(cos[j]), float(s[j])

    at = lambda name, i: _f(traj[name].iloc[i]) if (name in traj.columns and i is not None) else None  # noqa: E731
    # plateau values are read at the recorded point nearest T0 from above
    out["plateau_risk"], out["plateau_err"], out["plateau_err_y"] = at("risk", i0), at("err_f", i0), at("err_y", i0)
    last = len(s) - 1
    out["final_alpha"], out["final_risk"] = at("alpha", last), at("risk", last)
    out["final_err_y"], out["final_err_f"] = at("err_y", last), at("err_f", last)
    return Phases(**out)
