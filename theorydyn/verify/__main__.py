"""``python -m theorydyn.verify``: the claims ledger (see :mod:`theorydyn.verify`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input. NOT_RUN and SKIP rows never make it non-zero.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from .. import claims  # noqa: E402
from ..claims.check import Verdict  # noqa: E402
from ..cli import (
    ArgumentParser,
    add_setting_arguments,
    fail,
    guard_memory,
    number,
    output_dir,
    positive,  # noqa: E402
    setting_from_args,
)
from ..provenance import attach_to_frame, provenance  # noqa: E402
from ..resources import MemoryEstimate  # noqa: E402
from ..setting import Setting  # noqa: E402
from . import PROG, collect, default_out, format_markdown, format_table  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="The claims ledger: one verdict per claim of the paper.")
    add_setting_arguments(ap)
    ap.add_argument("--quick", action="store_true",
                    help="the quick ledger (a few minutes on 2 cores at D=64); without it "
                         "the GD checks run at full size (N=16384, 1200 steps, 5 seeds: hours)")
    ap.add_argument("--only", nargs="+", choices=claims.names(),
                    help="run only these claims (theorydyn.claims.REGISTRY), or the groups reduced (= dynamics) "
                         "and theorems (= theorem31 theorem32 theorem4)")
    ap.add_argument("--s-max", type=positive(float, "--s-max"), default=None,
                    help="horizon of the reduced flow (default 2e4·max(1, D/64)^1.5)")
    ap.add_argument("--n-samples", type=number(int, "--n-samples", low=2), default=None,
                    help="Monte Carlo samples of the reduced risk per seed, >= 2 (default 4000; 1500 with --quick)")
    ap.add_argument("--seed", type=positive(int, "--seed", allow_zero=True), default=None,
                    help="first seed of the reduced flows (seeds seed … seed+4; default 0)")
    ap.add_argument("--out", default=None, help="CSV path (default scans/results/verify_D<D>_C<C>[_quick].csv); "
                                                "its folder is created and proven writable before any check")
    ap.add_argument("--markdown", nargs="?", const="", default=None, metavar="CSV",
                    help="print the README table from a ledger CSV (default: the --out path of these settings) "
                         "and exit, without running any check")
    ap.add_argument("--force", action="store_true", help="run even where the memory estimate exceeds the machine's")
    return ap


def _memory(s: Setting, quick: bool, only: list[str] | None, n_samples: int | None) -> MemoryEstimate | None:
    """The largest peak among the selected claims' ``memory`` (they run one after the other, each
    freeing its arrays before the next starts); claims that are not installed are left out."""
    parts = []
    for name in claims.select(only):
        try:
            mod = claims.load(name)
        except ImportError:
            continue  # a SKIP row, nothing allocated
        parts.append(mod.memory(s, quick, n_samples=n_samples) if name == "dynamics" else mod.memory(s, quick))
    return max(parts, key=lambda e: e.total) if parts else None


def main(argv: list[str] | None = None) -> int:
    """Every input is checked before any check runs (exit 2 naming the flag): the setting, flags
    that would do nothing (the reduced flow's options without the reduced source, run options with
    --markdown), the output folder, and the memory estimate (``--force`` skips it)."""
    args = build_parser().parse_args(argv)
    s = setting_from_args(args, PROG)
    reduced_flags = (("--s-max", args.s_max), ("--n-samples", args.n_samples), ("--seed", args.seed))
    if args.markdown is not None:
        for flag, v in reduced_flags + (("--only", args.only), ("--force", args.force or None)):
            if v is not None:
                fail(f"{flag}: has no effect with --markdown (it prints a saved ledger and runs nothing)", PROG)
        if args.markdown and args.out:
            fail("--out: has no effect with --markdown CSV (the table is read from that CSV)", PROG)
        path = Path(args.markdown or args.out or default_out(s, args.quick))
        if not path.is_file():
            fail(f"--markdown: no ledger at {path} (run {PROG} first, or give the CSV path)", PROG)
        try:
            table = format_markdown(pd.read_csv(path))
        except Exception as e:  # noqa: BLE001 — any unreadable file is bad input, not a crash
            fail(f"--markdown: cannot read a ledger from {str(path)!r}: {type(e).__name__}: {e}", PROG)
        print(table)
        return 0
    if "dynamics" not in claims.select(args.only):
        for flag, v in reduced_flags:
            if v is not None:
                fail(f"{flag}: only used by the reduced dynamics (dynamics, or the group reduced), which --only "
                     "leaves out", PROG)
    out = Path(args.out) if args.out else default_out(s, args.quick)
    if args.out is not None and (not args.out.strip() or out.is_dir()):
        fail(f"--out: must be a CSV file path, got {args.out!r}", PROG)
    est = _memory(s, args.quick, args.only, args.n_samples)
    if est is not None:  # the sample sizes of the checks are fixed by --quick: only the setting's flags are named
        guard_memory(est, force=args.force, prog=PROG, flags={"N": None, "N_flat": None, "n_test": None})
    output_dir(out.parent, "--out")
    t = time.perf_counter()
    df = collect(s, quick=args.quick, only=args.only,
                 options={"dynamics": dict(s_max=args.s_max, n_samples=args.n_samples, seed=args.seed or 0)})
    attach_to_frame(df, provenance()).to_csv(out, index=False)
    print(f"theorydyn verify at {s}\n")
    print(format_table(df))
    counts = df["verdict"].value_counts().to_dict()
    print(f"\n{' · '.join(f'{k} {v}' for k, v in sorted(counts.items()))} · {time.perf_counter() - t:.0f} s · "
          f"ledger: {out}")
    if counts.get("NOT_RUN", 0):
        print(f"NOT_RUN: {counts['NOT_RUN']} rows did not run here (not a pass); each note gives the command that "
              "would run it")
    return 1 if counts.get(str(Verdict.FAIL), 0) else 0


if __name__ == "__main__":
    sys.exit(main())
