"""``python -m theorydyn.verify``: every numerical check of the paper's claims at one size, one table.

Sources of checks (each imported lazily; a part of the package that is missing, or whose
check raised, becomes a SKIP or ERROR row instead of stopping the report):

* the reduced dynamics (Lemmas 4.1–4.3, Section 4.1), computed here from one gradient-flow
  trajectory of :func:`theorydyn.reduced.integrate`:
  - Lemma 4.3: γ(t) ≥ ρ(t) at every recorded t (measured: min_t γ(t) − ρ(t), must be ≥ 0);
  - Lemma 4.3: γ's increment exceeds |ρ|'s (the solver's measured ratio, must be > 1; the
    lemma says by a factor of order D);
  - Section 4.1: Events I, II, III happen — T0, T1 (γ(T1) > max_t |ρ(t)|) and T2 (error against
    f below 2%) are reached before the horizon;
  - Theorem 4.1 (idealized): the final population error against f is small (< 2%);
  - SPEC §3: the paper's discrete recursion (GD) converges to the gradient flow as η → 0 in
    phase I: relative gap of α(s) < 2% at η = 1/16 (1/32 in full mode) and first order in η.
* :func:`theorydyn.theorems.run_all` (Theorems 3.1, 3.2, 4.1, 4.2, Lemma 4.1, Figure 2,
  transfer), when present.

Columns: claim, quantity, measured, threshold, verdict (PASS, FAIL, SKIP, ERROR), note, params.
Exit status: 0 when no check failed, 1 when one FAILED or raised, 2 on bad input.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .claims.check import Check
from .cli import add_setting_arguments, positive, setting_from_args
from .setting import Setting

PROG = "python -m theorydyn.verify"
COLUMNS = ["claim", "quantity", "measured", "threshold", "verdict", "note", "params"]


def _row(claim: str, quantity: str, measured: float, threshold: str, verdict: str, note: str = "",
         params: str = "") -> dict[str, Any]:
    return dict(claim=claim, quantity=quantity, measured=measured, threshold=threshold, verdict=verdict,
                note=note, params=params)


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


def reduced_checks(s: Setting, quick: bool = False, s_max: float | None = None, n_samples: int | None = None,
                   seed: int = 0) -> list[Check]:
    """The checks of the idealized dynamics (module docstring) on one flow trajectory."""
    from .reduced import integrate

    s_max = s_max or 2.0e4 * max(1.0, s.D / 64) ** 1.5
    n_samples = n_samples or (1500 if quick else 4000)
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), tau=s.tau, s_max=s_max, n_samples=n_samples, seed=seed)
    traj = integrate(s, method="flow", s_max=s_max, n_samples=n_samples, seed=seed)
    ph = dict(traj.attrs.get("phases") or {})
    status = str(traj.attrs.get("status", "ok"))
    note = "" if status == "ok" else f"solver: {status}"
    gap = float(np.min(traj["gamma"].to_numpy() - traj["rho"].to_numpy()))
    ratio = _num(ph.get("lemma43_ratio"))
    out = [
        Check("Lemma 4.3", "min over t of γ(t) − ρ(t) (patch association all along)", gap, ">= 0", gap >= 0,
              params, note),
        Check("Lemma 4.3", "increment ratio of γ to |ρ|", ratio, f"> 1 (order D = {s.D})",
              bool(np.isfinite(ratio) and ratio > 1), params, note),
    ]
    for name, event, what in (("T0", "Event I", "end of phase I, α at its plateau"),
                              ("T1", "Event II", "first s with γ(s) > max_t |ρ(t)|"),
                              ("T1_mass", "Event II", "in-set attention mass Λ+(C−1)Γ reaches 1/2"),
                              ("T2", "Event III", "error against f below 2%")):
        T = _num(ph.get(name))
        out.append(Check(f"Section 4.1, {event}", f"{name}: {what}", T, f"reached by s = {s_max:g}",
                         bool(np.isfinite(T)), params, note))
    err = _num(ph.get("final_err_f", traj["err_f"].iloc[-1] if "err_f" in traj else None))
    out.append(Check("Theorem 4.1 (idealized)", "final population error against f", err, "< 0.02",
                     bool(np.isfinite(err) and err < 0.02), params,
                     note or f"labelling ambiguity (L−1)(q/2)^C = {(s.L - 1) * (s.q / 2) ** s.C:.2g}"))
    out += _flow_vs_gd(s, n_samples=min(n_samples, 2000), seed=seed, quick=quick)
    return out


def _flow_vs_gd(s: Setting, n_samples: int, seed: int, quick: bool) -> list[Check]:
    """SPEC §3: the paper's recursion (GD) converges to the gradient flow as η → 0, at first order.

    Same Monte Carlo bank for both, horizon s ≤ 200 (phase I, where α moves fastest). Checks
    the gap at the smallest η and the observed order log2(gap(η)/gap(η/2)) ≈ 1 (explicit Euler).
    """
    from .reduced import integrate

    horizon = 200.0
    etas = (0.125, 0.0625) if quick else (0.125, 0.0625, 0.03125)
    flow = integrate(s, method="flow", s_max=horizon, n_samples=n_samples, seed=seed)
    gaps = []
    for eta in etas:
        gd = integrate(s, method="gd", eta=eta, steps=int(round(horizon / eta)), n_samples=n_samples, seed=seed)
        a_flow = np.interp(gd["s"].to_numpy(), flow["s"].to_numpy(), flow["alpha"].to_numpy())
        gaps.append(float(np.max(np.abs(gd["alpha"].to_numpy() - a_flow) / np.abs(a_flow))))
    params = dict(D=s.D, C=s.C, horizon=horizon, etas=list(etas), n_samples=n_samples)
    order = float(np.log2(gaps[-2] / gaps[-1]))
    return [
        Check("SPEC §3 (discrete GD vs flow)", f"max_s≤{horizon:g} |α_GD − α_flow| / α_flow at η = {etas[-1]:g}",
              gaps[-1], "< 0.02", gaps[-1] < 0.02, params, "gaps: " + ", ".join(f"{g:.3g}" for g in gaps)),
        Check("SPEC §3 (discrete GD vs flow)", f"order of convergence log2(gap(η)/gap(η/2)), η = {etas[-2]:g}",
              order, "in [0.8, 1.2] (first order)", 0.8 <= order <= 1.2, params),
    ]


def theorem_checks(s: Setting, quick: bool = False) -> list[Check]:
    from .claims.theorems import run_all

    def say(msg: str) -> None:
        print(f"[verify] theorems: {msg} …", file=sys.stderr, flush=True)

    import inspect

    hook = {"progress": say} if "progress" in inspect.signature(run_all).parameters else {}
    return list(run_all(s, quick=quick, **hook))


SOURCES: dict[str, tuple[str, Callable[..., list[Check]]]] = {
    "reduced": ("theorydyn.reduced", reduced_checks),
    "theorems": ("theorydyn.theorems (run_all)", theorem_checks),
}


def collect(s: Setting, quick: bool = False, only: list[str] | None = None, progress: bool = True,
            **reduced_kw: Any) -> pd.DataFrame:
    """Run every available source of checks; one row per check (and per skipped/failed source)."""
    rows: list[dict[str, Any]] = []
    for name, (where, fn) in SOURCES.items():
        if only and name not in only:
            continue
        t = time.perf_counter()
        if progress:
            print(f"[verify] {name} …", file=sys.stderr, flush=True)
        try:
            checks = fn(s, quick=quick, **(reduced_kw if name == "reduced" else {}))
        except ImportError as e:
            rows.append(_row(where, "(not available in this installation)", math.nan, "", "SKIP", str(e)))
            continue
        except Exception as e:  # noqa: BLE001 — one broken part must not hide the others' results
            last = traceback.extract_tb(e.__traceback__)[-1]
            rows.append(_row(where, "(the check raised)", math.nan, "", "ERROR",
                             f"{type(e).__name__}: {e} [{Path(last.filename).name}:{last.lineno}]"))
            continue
        for c in checks:
            r = c.row()
            rows.append(_row(r["claim"], r["quantity"], r["measured"], str(r["threshold"]), r["verdict"],
                             r.get("note", ""), r.get("params", "")))
        if progress:
            print(f"[verify] {name}: {len(checks)} checks in {time.perf_counter() - t:.1f} s", file=sys.stderr,
                  flush=True)
    return pd.DataFrame(rows, columns=COLUMNS)


def format_table(df: pd.DataFrame) -> str:
    show = df[["claim", "quantity", "measured", "threshold", "verdict"]].copy()
    show["measured"] = [f"{v:.4g}" if isinstance(v, (float, int)) and not (isinstance(v, float) and math.isnan(v))
                        else ("—" if not isinstance(v, str) else v) for v in df["measured"]]
    with pd.option_context("display.width", 220, "display.max_colwidth", 70, "display.max_rows", 500):
        return show.to_string(index=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_setting_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="smaller samples and the quick theorem checks (a couple of minutes at D=64); "
                         "without it the theorem checks pre-train at full size (N=16384, 1200 GD steps: tens of minutes)")
    ap.add_argument("--only", nargs="+", choices=sorted(SOURCES), help="run only these sources of checks")
    ap.add_argument("--s-max", type=positive(float, "--s-max"), default=None,
                    help="horizon of the reduced flow (default 2e4·max(1, D/64)^1.5)")
    ap.add_argument("--n-samples", type=positive(int, "--n-samples"), default=None,
                    help="Monte Carlo samples of the reduced risk (default 4000; 1500 with --quick)")
    ap.add_argument("--seed", type=positive(int, "--seed", allow_zero=True), default=0)
    ap.add_argument("--out", default=None, help="CSV path (default scans/results/verify_D<D>_C<C>.csv)")
    args = ap.parse_args(argv)
    s = setting_from_args(args)
    t = time.perf_counter()
    df = collect(s, quick=args.quick, only=args.only, s_max=args.s_max, n_samples=args.n_samples, seed=args.seed)
    out = Path(args.out or f"scans/results/verify_D{s.D}_C{s.C}{'_quick' if args.quick else ''}.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    print(f"theorydyn verify at {s}\n")
    print(format_table(df))
    counts = df["verdict"].value_counts().to_dict()
    print(f"\n{' · '.join(f'{k} {v}' for k, v in sorted(counts.items()))} · {time.perf_counter() - t:.0f} s · "
          f"table: {out}")
    return 1 if (counts.get("FAIL", 0) or counts.get("ERROR", 0)) else 0


if __name__ == "__main__":
    raise SystemExit(main())
