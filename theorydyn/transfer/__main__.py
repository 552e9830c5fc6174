"""``python -m theorydyn.transfer``: the transfer experiment (Theorems 5.1, 5.2), resumable.

Exit status 0 on success, 2 on bad input (before any work).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from ..claims.transfer import checks  # noqa: E402
from ..cli import add_setting_arguments, fail, output_dir, positive, setting_from_args  # noqa: E402
from .experiment import (FULL, METHODS, QUICK, _progress, describe_slope, options_from, run, setting_at,  # noqa: E402
                         with_count)

PROG = "python -m theorydyn.transfer"


def _int_list(text: str) -> tuple[int, ...]:
    try:
        vals = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not vals or any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return vals


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m theorydyn.transfer",
                                 description="Transfer with a frozen attention: accuracy against Ñ and Ñ_target against D "
                                             "(Theorems 5.1, 5.2), resumable. Quick by default; --full for the report sizes.")
    add_setting_arguments(ap, D=64, C=4)
    ap.add_argument("--full", action="store_true", help="the sizes of the reported run (FULL)")
    ap.add_argument("--count", type=positive(float, "--count"), default=8.0,
                    help="K = q(D − C), kept across D (default 8; --q is then ignored)")
    ap.add_argument("--keep-q", action="store_true", help="keep --q fixed across D instead (the old, censored rule)")
    ap.add_argument("--eps", type=positive(float, "--eps"), default=0.05, help="target = a*(D) − eps (default 0.05)")
    ap.add_argument("--Ds", type=_int_list, help="comma-separated D values (each a multiple of C)")
    ap.add_argument("--Ns", type=_int_list, help="comma-separated increasing Ñ grid (default powers of 2 from 1)")
    ap.add_argument("--seeds", type=positive(int, "--seeds"), help="repeats per Ñ")
    ap.add_argument("--N-test", type=positive(int, "--N-test"), help="fresh test samples")
    ap.add_argument("--upstream-N", type=positive(int, "--upstream-N"), help="finite-sample pre-training samples")
    ap.add_argument("--upstream-steps", type=positive(int, "--upstream-steps"), help="finite-sample pre-training steps")
    ap.add_argument("--scratch-max-D", type=positive(int, "--scratch-max-D"), help="train 'scratch' only up to this D")
    ap.add_argument("--sim-max-D", type=positive(int, "--sim-max-D"), help="finite-sample pre-training only up to this D")
    ap.add_argument("--eta", type=positive(float, "--eta"), default=10.0, help="GD step size (default 10)")
    ap.add_argument("--omega", type=positive(float, "--omega"), default=1e-3, help="initialisation scale ω")
    ap.add_argument("--steps-v", type=positive(int, "--steps-v"), default=300, help="fine-tuning steps for ṽ")
    ap.add_argument("--method", choices=("gd", "lbfgs"), default="gd", help="optimiser of ṽ")
    ap.add_argument("--methods", default="pretrained,pretrained-sim,init,other-partition,scratch,logreg",
                    help=f"comma-separated subset of {','.join(METHODS)}")
    ap.add_argument("--out", default="runs/transfer", help="output folder (rows, CSVs, PNGs; default runs/transfer); "
                    "rerunning with the same folder resumes")
    ap.add_argument("--cache", default=None, help="folder of pre-trained attentions (.npz; default OUT/upstream_cache)")
    ap.add_argument("--checks", action="store_true", help="print the ledger rows (Theorems 5.1, 5.2) instead")
    args = ap.parse_args(argv)
    cfg = dict(FULL if args.full else QUICK)
    output_dir(args.out)
    if args.checks:
        rows = checks(quick=not args.full, progress=_progress, out=args.out)
        for r in rows:
            print(f"{r.claim} | {r.quantity} | {r.measured:.4g} [{r.ci_low:.4g}, {r.ci_high:.4g}] | {r.threshold} | "
                  f"{r.verdict}\n    {r.note}")
        return 0
    for k in ("Ds", "Ns", "seeds", "N_test", "upstream_N", "upstream_steps", "scratch_max_D", "sim_max_D"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    if list(cfg["Ns"]) != sorted(set(cfg["Ns"])):
        fail(f"--Ns: must be increasing, got {cfg['Ns']}")
    if not args.eps < 0.5:
        fail(f"--eps: must lie in (0, 0.5), got {args.eps}")
    methods = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        fail(f"--methods: each must be one of {', '.join(METHODS)}, got {args.methods!r}")
    s = setting_from_args(args, nu=args.nu if args.nu is not None else 1 / 64)
    count = None if args.keep_q else args.count
    base = with_count(s, count) if count is not None else s
    for D in cfg["Ds"]:
        if D % s.C or D <= s.C:
            fail(f"--Ds: each D must be a multiple of C={s.C} and larger than it, got D={D}")
        try:
            setting_at(base, D, "keep" if count is None else "count")
        except ValueError as e:
            fail(f"--Ds: D={D}: {e}")
    opts = options_from(cfg, omega=args.omega, eta=args.eta, steps_v=args.steps_v, method=args.method, count=count,
                        eps=args.eps)
    raw, summary, tgt, slopes, upstream = run(s, cfg["Ds"], opts, methods=methods, out=args.out, cache=args.cache)
    levels = pd.read_csv(Path(args.out) / "transfer_levels.csv")
    with pd.option_context("display.width", 200, "display.max_rows", 400):
        print(levels.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
        show = tgt.assign(N_target=[f"{r.lo:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]" if r.kind == "value" else
                                    (f"> {r.lo:g}" if r.kind == "lower" else f"<= {r.hi:g}") for r in tgt.itertuples()])
        print(show[["D", "method", "target", "N_target", "kind", "N_max", "max_acc"]].to_string(index=False))
        print(slopes.assign(slope=[describe_slope(r) for _, r in slopes.iterrows()])[
            ["method", "x", "slope", "censored", "n_D", "rms"]].to_string(index=False))
    print(f"wrote {args.out}/transfer_*.csv, transfer_curves.png, transfer_target.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
