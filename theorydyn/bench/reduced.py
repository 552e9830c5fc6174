"""Benchmark of the reduced solver (SPEC §3): ``python -m theorydyn.bench reduced``.

1. Monte Carlo risk-and-gradient of ℓ_red at D = 64, C = 4 (SPEC §9 setting) on 10⁵ count samples:
   the Numba kernel (tables over (count type, T), :mod:`theorydyn.reduced._kernels`) against
   :func:`theorydyn.reduced._kernels.reference_numpy`, a plain vectorised NumPy evaluation of the
   same formula per sample and per set, on the *same* samples, in the same run; the results are
   checked to agree before the ratio is printed. Two Numba figures: one row per sample (the
   like-for-like ratio) and with identical samples merged (what ``integrate`` uses).
2. Wall time of the default gradient flow, ``integrate(Setting(), "flow", s_max=1e5)``
   (4000 samples, LSODA), with its phase summary.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from . import best_time


def run(argv: list[str] | None = None) -> int:
    from ..cli import positive
    from ..reduced.solve import _Evaluator, bank_from_set_counts, integrate, mc_set_counts
    from ..reduced._kernels import reference_numpy
    from ..setting import Setting

    ap = argparse.ArgumentParser(prog="python -m theorydyn.bench reduced")
    ap.add_argument("--n-samples", type=positive(int, "--n-samples"), default=100_000)
    ap.add_argument("--repeats", type=positive(int, "--repeats"), default=5)
    ap.add_argument("--s-max", type=positive(float, "--s-max"), default=1e5, help="horizon of the timed flow")
    ap.add_argument("--no-flow", action="store_true", help="skip the flow timing")
    ap.add_argument("--out", type=Path, default=None, help="write the table as CSV here")
    args = ap.parse_args(argv)

    s = Setting(D=64, C=4)
    point = (3.9, 0.5, -0.05)  # a phase-II point of SPEC §9
    rows = []
    t0 = time.perf_counter()
    nc = mc_set_counts(s, args.n_samples, seed=0)
    t_draw = time.perf_counter() - t0
    t0 = time.perf_counter()
    bank_rows = bank_from_set_counts(s, nc, merge=False)
    bank_merged = bank_from_set_counts(s, nc, merge=True)
    t_bank = time.perf_counter() - t0
    ref_args = (*point, s.beta, s.tau, s.p, s.nu, s.C, s.D, nc)
    ref_risk, ref_grad, _, _ = reference_numpy(*ref_args)
    t_ref = best_time(lambda: reference_numpy(*ref_args), repeats=max(1, args.repeats // 2))
    rows.append(dict(implementation="numpy reference (per sample, per set)", rows=len(nc), seconds=t_ref, ratio=1.0))
    for label, bank in (("numba tables, one row per sample", bank_rows), ("numba tables, identical samples merged", bank_merged)):
        ev = _Evaluator(s, bank)
        est = ev.estimate(*point)  # also compiles / loads the cache
        if not (abs(est.risk - ref_risk) <= 1e-10 * abs(ref_risk) and np.allclose(est.grad, ref_grad, rtol=1e-9, atol=1e-14)):
            print(f"error: {label} disagrees with the NumPy reference: {est.risk} vs {ref_risk}")
            return 1
        t = best_time(lambda: ev.raw(*point), repeats=args.repeats * 4)
        rows.append(dict(implementation=label, rows=len(bank), seconds=t, ratio=t_ref / t))
    table = pd.DataFrame(rows)
    print(f"reduced risk-and-gradient, {s}, {args.n_samples:,} Monte Carlo samples, point (α, γ, ρ) = {point}")
    print(f"(drawing the count vectors: {t_draw:.3f} s; building both banks: {t_bank:.3f} s, once per run)")
    with pd.option_context("display.width", 120, "display.float_format", "{:.4g}".format):
        print(table.to_string(index=False))
    print(f"speed-up over NumPy (like for like, one row per sample): {rows[1]['ratio']:.1f}x (goal >= 20x)")
    print(f"speed-up with merged samples: {rows[2]['ratio']:.1f}x")
    if not args.no_flow:
        t0 = time.perf_counter()
        traj = integrate(s, "flow", s_max=args.s_max, n_samples=4000, seed=0)
        t_flow = time.perf_counter() - t0
        ph = traj.attrs["phases"]
        fmt = lambda v: "not reached" if v is None else f"{v:.4g}"  # noqa: E731
        print(f"default gradient flow to s = {args.s_max:g} (4000 samples, LSODA): {t_flow:.2f} s wall, "
              f"status {traj.attrs['status']}; T0={fmt(ph['T0'])}, T1={fmt(ph['T1'])}, T2={fmt(ph['T2'])}, "
              f"final err_f={fmt(ph['final_err_f'])}")
        table = pd.concat([table, pd.DataFrame([dict(implementation=f"flow to s={args.s_max:g}", rows=4000,
                                                     seconds=t_flow, ratio=np.nan)])], ignore_index=True)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out, index=False)
        print(f"table: {args.out}")
    return 0
