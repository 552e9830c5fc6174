"""``python -m theorydyn.verify``: the claims ledger (see :mod:`theorydyn.verify`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input. NOT_RUN and SKIP rows never make it non-zero.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

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
    positive,  # noqa: E402
    probe_output,
    setting_from_args,
    write_output,
)
from ..limits import S_MAX_MAX, S_MAX_MIN  # noqa: E402
from ..provenance import attach_to_frame, provenance  # noqa: E402
from ..resources import MemoryEstimate  # noqa: E402
from ..setting import Setting  # noqa: E402
from . import PROG, collect, default_out, format_markdown, format_table  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="The claims ledger: one verdict per claim of the paper.")
    add_setting_arguments(ap)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="the quick ledger. Measured on 2 cores at D=64 for every claim but vision: 1651 s cold "
        "(load 5-10), 428 s with the transfer runs cached; vision trains ~80 small networks first "
        "(about an hour cold). Without it the GD checks run at full size (N=16384, 1200 steps, 5 seeds: "
        "hours; never run to the end so far)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        choices=claims.names(),
        help="run only these claims (theorydyn.claims.REGISTRY), or the groups reduced (= dynamics) "
        "and theorems (= theorem31 theorem32 lemma41 theorem4 nstar)",
    )
    ap.add_argument(
        "--s-max",
        type=number(float, "--s-max", low=S_MAX_MIN, high=S_MAX_MAX),
        default=None,
        help="horizon of the reduced flow (default reduced.default_horizon(D) = 2e4·max(1, D/64)^1.5)",
    )
    ap.add_argument(
        "--n-samples",
        type=number(int, "--n-samples", low=2),
        default=None,
        help="Monte Carlo samples of the reduced risk per seed, >= 2 (default 4000; 1500 with --quick)",
    )
    ap.add_argument(
        "--seed",
        type=positive(int, "--seed", allow_zero=True),
        default=None,
        help="first seed of the reduced flows (seeds seed … seed+4; default 0)",
    )
    ap.add_argument(
        "--out",
        default=None,
        help="CSV path (default scans/results/verify_D<D>_C<C>[_quick].csv); "
        "its folder is created and proven writable before any check",
    )
    ap.add_argument(
        "--markdown",
        nargs="?",
        const="",
        default=None,
        metavar="CSV",
        help="print the README table from a ledger CSV (default: the --out path of these settings) "
        "and exit, without running any check",
    )
    ap.add_argument("--force", action="store_true", help="run even where the memory estimate exceeds the machine's")
    return ap


def _memory(
    s: Setting, quick: bool, only: list[str] | None, options: dict[str, dict[str, Any]]
) -> MemoryEstimate | None:
    """The largest peak among the selected claims' ``memory`` (with the options their ``checks`` get):
    they run one after the other, each freeing its arrays before the next starts. Claims that are
    not installed are left out (a SKIP row, nothing allocated)."""
    parts = []
    for name in claims.select(only):
        try:
            mod = claims.load(name)
        except ImportError:
            continue  # a SKIP row, nothing allocated
        parts.append(mod.memory(s, quick, **options.get(name, {})))
    return max(parts, key=lambda e: e.total) if parts else None


def _stat_ok(path: Path, flag: str) -> Path:
    """``path``, after checking that the system can look it up (a 256-byte name: ENAMETOOLONG, exit 2)."""
    try:
        path.exists()
    except OSError as e:
        fail(f"{flag}: cannot use {str(path)!r}: {e.strerror or e}", PROG)
    return path


def _whole_ledger(path: Path) -> pd.DataFrame:
    """A ledger CSV, refused (ValueError) when torn: a last line without its newline, a row without
    a claim or verdict, or fewer rows than its ``ledger_rows`` column says were written."""
    if not path.read_bytes().endswith(b"\n"):
        raise ValueError("the last line is cut (no newline at the end): a torn ledger")
    df = pd.read_csv(path)
    if df[["claim", "verdict"]].isna().any(axis=None):
        raise ValueError("a row has no claim or verdict: a torn ledger")
    if "ledger_rows" in df and not (df["ledger_rows"] == len(df)).all():
        raise ValueError(f"{len(df)} rows, but the ledger was written with {df['ledger_rows'].iloc[0]}: a torn ledger")
    return df


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
        if not _stat_ok(path, "--markdown").is_file():
            fail(f"--markdown: no ledger at {path} (run {PROG} first, or give the CSV path)", PROG)
        try:
            table = format_markdown(_whole_ledger(path))
        except Exception as e:  # noqa: BLE001 — any unreadable file is bad input, not a crash
            fail(f"--markdown: cannot read a ledger from {str(path)!r}: {type(e).__name__}: {e}", PROG)
        print(table)
        return 0
    if "dynamics" not in claims.select(args.only):
        for flag, v in reduced_flags:
            if v is not None:
                fail(
                    f"{flag}: only used by the reduced dynamics (dynamics, or the group reduced), which --only "
                    "leaves out",
                    PROG,
                )
    out = Path(args.out) if args.out else default_out(s, args.quick)
    if args.out is not None and (not args.out.strip() or _stat_ok(out, "--out").is_dir()):
        fail(f"--out: must be a CSV file path, got {args.out!r}", PROG)
    # the reduced flow's flags are options of the dynamics claim, for its checks and its memory alike
    options = {"dynamics": dict(s_max=args.s_max, n_samples=args.n_samples, seed=args.seed or 0)}
    est = _memory(s, args.quick, args.only, options)
    if est is not None:  # the sample sizes of the checks are fixed by --quick: only the setting's flags are named
        guard_memory(est, force=args.force, prog=PROG, flags={"N": None, "N_flat": None, "n_test": None})
    probe_output(out, "--out", PROG)  # a link, a name too long, a full disk: refused before any check
    t = time.perf_counter()
    df = collect(s, quick=args.quick, only=args.only, options=options)
    ledger = attach_to_frame(df, provenance()).assign(ledger_rows=len(df))  # lets --markdown see a torn ledger
    write_output(out, lambda t: ledger.to_csv(t, index=False), PROG)  # atomic: the old ledger or the new one
    print(f"theorydyn verify at {s}\n")
    print(format_table(df))
    counts = df["verdict"].value_counts().to_dict()
    print(
        f"\n{' · '.join(f'{k} {v}' for k, v in sorted(counts.items()))} · {time.perf_counter() - t:.0f} s · "
        f"ledger: {out}"
    )
    if counts.get("NOT_RUN", 0):
        print(
            f"NOT_RUN: {counts['NOT_RUN']} rows did not run here (not a pass); each note gives the command that "
            "would run it"
        )
    return 1 if counts.get(str(Verdict.FAIL), 0) else 0


if __name__ == "__main__":
    sys.exit(main())
