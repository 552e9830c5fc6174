"""``python -m theorydyn.verify``: the claims ledger (see :mod:`theorydyn.verify`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from ..cli import add_setting_arguments, fail, output_dir, positive, setting_from_args  # noqa: E402
from ..provenance import attach_to_frame, provenance  # noqa: E402
from . import PROG, SOURCES, collect, default_out, format_markdown, format_table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description="The claims ledger: one verdict per claim of the paper.")
    add_setting_arguments(ap)
    ap.add_argument("--quick", action="store_true", help="the quick ledger (a few minutes on 2 cores at D=64); without it "
                         "the GD checks run at full size (N=16384, 1200 steps, 5 seeds: hours)")
    ap.add_argument("--only", nargs="+", choices=sorted(SOURCES), help="run only these sources of checks")
    ap.add_argument("--s-max", type=positive(float, "--s-max"), default=None,
                    help="horizon of the reduced flow (default 2e4·max(1, D/64)^1.5)")
    ap.add_argument("--n-samples", type=positive(int, "--n-samples"), default=None,
                    help="Monte Carlo samples of the reduced risk per seed (default 4000; 1500 with --quick)")
    ap.add_argument("--seed", type=positive(int, "--seed", allow_zero=True), default=0,
                    help="first seed of the reduced flows (seeds seed … seed+4)")
    ap.add_argument("--out", default=None, help="CSV path (default scans/results/verify_D<D>_C<C>[_quick].csv)")
    ap.add_argument("--markdown", nargs="?", const="", default=None, metavar="CSV",
                    help="print the README table from a ledger CSV (default: the --out path of these settings) "
                         "and exit, without running any check")
    args = ap.parse_args(argv)
    s = setting_from_args(args)
    if args.markdown is not None:
        path = Path(args.markdown or args.out or default_out(s, args.quick))
        if not path.is_file():
            fail(f"--markdown: no ledger at {path} (run {PROG} first, or give the CSV path)", PROG)
        print(format_markdown(pd.read_csv(path)))
        return 0
    out = Path(args.out) if args.out else default_out(s, args.quick)
    output_dir(out.parent, "--out")
    t = time.perf_counter()
    df = collect(s, quick=args.quick, only=args.only, s_max=args.s_max, n_samples=args.n_samples, seed=args.seed)
    attach_to_frame(df, provenance()).to_csv(out, index=False)
    print(f"theorydyn verify at {s}\n")
    print(format_table(df))
    counts = df["verdict"].value_counts().to_dict()
    print(f"\n{' · '.join(f'{k} {v}' for k, v in sorted(counts.items()))} · {time.perf_counter() - t:.0f} s · "
          f"ledger: {out}")
    return 1 if counts.get("FAIL", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
