"""Phase detection on a trajectory of (α, γ, ρ) (Section 4.1 of the paper, SPEC §3).

Works on any DataFrame with the columns

    required: ``s`` (time, s = η·t), ``alpha``, ``gamma``, ``rho``, ``err_f``;
    optional: ``Lambda``, ``Gamma`` (else computed from γ, ρ when a Setting is given or the
              trajectory's ``attrs["setting"]`` holds one), ``risk``, ``err_y``.

so the finite-sample simulator can reuse it with its in-set / cross-set means as γ and ρ.
Rows must be sorted by s. Times are reported in s and are recorded values of s (no interpolation).

Definitions:

* **T0** (end of Event I: α has grown while A barely moved). With g(s) = d ln α / d ln s (on the
  recorded points with s > 0, by finite differences in ln s), T0 is the first recorded s after the
  peak of g at which g falls below ``rate_frac`` (default 0.1) of its peak value — α has stopped
  growing on the log-time scale. ``None`` if α never grows (ln(max α / α(first s > 0)) ≤ 0.05)
  or never settles. In SPEC §9's regime α(T0) is ≈ 96% of its plateau.
* **T1** (the paper's definition): the first recorded s with γ(s) > max_t |ρ(t)|, the maximum over
  the whole recorded trajectory.
* **T1_mass**: the first recorded s at which the in-set attention mass Λ + (C−1)Γ reaches 1/2.
* **T2**: the first recorded s with err_f < ``err_tol``.
* **lemma43_ratio** (Lemma 4.3: γ's increment exceeds |ρ|'s, by a factor of order D): the median,
  over consecutive recorded points inside phase II [T0, T1] (falling back to [T0, end] when T1 is
  not reached, to the whole trajectory when T0 is not found), of Δγ / |Δρ| between the two points
  (intervals with Δρ = 0 skipped). ``lemma43_ratio_total`` is the ratio of the total increments
  over the same window, (γ(end) − γ(start)) / |ρ(end) − ρ(start)|. Both are ratios of increments of
  the *values*, i.e. of the per-entry updates of the full model.
* **gamma_ge_rho**: γ(s) ≥ ρ(s) at every recorded s (patch association, Lemma 4.3).
* **plateau_alpha, plateau_risk, plateau_err** (err against f), **plateau_err_y**: values at T0.
* **final_risk, final_err_y, final_err_f**: values at the last recorded row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

REQUIRED = ("s", "alpha", "gamma", "rho", "err_f")


def _first(mask: np.ndarray, s: np.ndarray):
    idx = np.flatnonzero(mask)
    return (float(s[idx[0]]), int(idx[0])) if len(idx) else (None, None)


def _in_set_mass(traj: pd.DataFrame, setting) -> np.ndarray | None:
    if "Lambda" in traj and "Gamma" in traj:
        C = setting.C if setting is not None else traj.attrs.get("setting", {}).get("C")
        if C is None:
            return None
        return traj["Lambda"].to_numpy(float) + (C - 1) * traj["Gamma"].to_numpy(float)
    if setting is None:
        return None
    from .reduced import softmax_values

    return np.array([lam + (setting.C - 1) * gam for lam, gam, _ in
                     (softmax_values(setting, g, r) for g, r in zip(traj["gamma"], traj["rho"]))])


def _setting_from_attrs(traj: pd.DataFrame):
    d = traj.attrs.get("setting")
    if not d:
        return None
    from .setting import Setting

    d = dict(d)
    if isinstance(d.get("partition"), list):
        d["partition"] = [tuple(S) for S in d["partition"]]
    if isinstance(d.get("feature"), list):
        d["feature"] = tuple(d["feature"])
    try:
        return Setting(**d)
    except (TypeError, ValueError):
        return None


def detect_t0(s: np.ndarray, alpha: np.ndarray, rate_frac: float = 0.1,
              min_growth: float = 0.05) -> tuple[float | None, int | None]:
    """T0 and its row index: see the module docstring."""
    pos = np.flatnonzero((s > 0) & (alpha > 0))
    if len(pos) < 3:
        return None, None
    ls, la = np.log(s[pos]), np.log(alpha[pos])
    if not la.max() - la[0] > min_growth:  # α never grew: no phase I
        return None, None
    g = np.gradient(la, ls)
    k = int(np.argmax(g))
    after = np.flatnonzero(g[k:] < rate_frac * g[k])
    if not len(after):
        return None, None
    i = int(pos[k + after[0]])
    return float(s[i]), i


def detect_phases(traj: pd.DataFrame, err_tol: float = 0.02, setting=None, rate_frac: float = 0.1) -> dict:
    """The phase summary of a trajectory (definitions in the module docstring).

    Args:
        traj: DataFrame with at least the columns ``s, alpha, gamma, rho, err_f`` (sorted by s).
        err_tol: tolerance on err_f for T2.
        setting: the Setting (for T1_mass when ``Lambda``/``Gamma`` are absent); defaults to
            ``traj.attrs["setting"]`` if present.
        rate_frac: T0 threshold on d ln α / d ln s relative to its peak.

    Returns:
        dict with keys T0, T1, T1_mass, T2, lemma43_ratio, lemma43_ratio_total, gamma_ge_rho,
        max_abs_rho, plateau_alpha, plateau_risk, plateau_err, plateau_err_y, final_risk,
        final_err_y, final_err_f (None where not reached / not available).
    """
    missing = [c for c in REQUIRED if c not in traj.columns]
    if missing:
        raise ValueError(f"detect_phases needs the columns {REQUIRED}; missing {missing}")
    out = dict.fromkeys(["T0", "T1", "T1_mass", "T2", "lemma43_ratio", "lemma43_ratio_total", "gamma_ge_rho",
                         "max_abs_rho", "plateau_alpha", "plateau_risk", "plateau_err", "plateau_err_y",
                         "final_risk", "final_err_y", "final_err_f"])
    if len(traj) == 0:
        return out
    s = traj["s"].to_numpy(float)
    a, g, r = (traj[c].to_numpy(float) for c in ("alpha", "gamma", "rho"))
    ef = traj["err_f"].to_numpy(float)
    col = lambda name, i: float(traj[name].iloc[i]) if name in traj.columns and i is not None else None  # noqa: E731

    T0, i0 = detect_t0(s, a, rate_frac)
    out["T0"] = T0
    out["max_abs_rho"] = float(np.max(np.abs(r)))
    out["T1"], i1 = _first(g > out["max_abs_rho"], s)
    if setting is None:
        setting = _setting_from_attrs(traj)
    mass = _in_set_mass(traj, setting)
    if mass is not None:
        out["T1_mass"], _ = _first(mass >= 0.5, s)
    out["T2"], _ = _first(ef < err_tol, s)
    out["gamma_ge_rho"] = bool(np.all(g >= r))

    lo = i0 if i0 is not None else 0
    hi = i1 if (i1 is not None and i1 > lo) else len(s) - 1
    if hi > lo:
        dg, dr = np.diff(g[lo:hi + 1]), np.diff(r[lo:hi + 1])
        ok = dr != 0
        if np.any(ok):
            out["lemma43_ratio"] = float(np.median(dg[ok] / np.abs(dr[ok])))
        tot = abs(r[hi] - r[lo])
        out["lemma43_ratio_total"] = float((g[hi] - g[lo]) / tot) if tot > 0 else None

    out["plateau_alpha"] = col("alpha", i0)
    out["plateau_risk"] = col("risk", i0)
    out["plateau_err"] = col("err_f", i0)
    out["plateau_err_y"] = col("err_y", i0)
    out["final_risk"] = col("risk", len(s) - 1)
    out["final_err_y"] = col("err_y", len(s) - 1)
    out["final_err_f"] = col("err_f", len(s) - 1)
    return out
