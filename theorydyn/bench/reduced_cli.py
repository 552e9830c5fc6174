"""``python -m theorydyn.bench reduced``: the command of :mod:`theorydyn.bench.reduced` — its parser, the
defaults of its flags, the checks made before any work (flags of a part that does not run, the memory
of the main table, the output file; exit 2 naming the flag) and the run that prints.

Imports nothing heavy: ``--help`` loads no solver; the measurement is imported in :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..cli.runner import Command, Invocation
from ..cli.tools import fail, guard_memory, output_file
from ..core.setting import D_MAX
from ..infra.limits import S_MAX_MAX, S_MAX_MIN
from .flags import BenchFlags, Flag, options_from_args, repeats_flag, run_bench, settle_flag

if TYPE_CHECKING:
    from ..infra.memory import MemoryEstimate

PROG = "python -m theorydyn.bench reduced"
#: the flags, in their groups (:class:`~theorydyn.bench.flags.BenchFlags`); ``fill``: the default of a flag
#: left None in the parser (those of :class:`theorydyn.bench.reduced.Options`)
FLAGS = BenchFlags(
    main=(
        Flag("--n-samples", "Monte Carlo samples, >= 2 (default 100000)", low=2, fill=100_000),
        repeats_flag("timed calls per measurement (default 7)", fill=7),
        settle_flag("pause before each timed call, 0..10 s (lets spinning BLAS threads sleep; default 0.2)", fill=0.2),
        Flag("--no-flow", "skip the flow timing", bool),
    ),
    common=(
        Flag(
            "--s-max",
            "horizon of the timed flow and of --scaling at D = 64 (default 1e5)",
            float,
            low=S_MAX_MIN,
            high=S_MAX_MAX,
            fill=1e5,
        ),
    ),
    scaling_help="the largest D whose default flow fits in --budget-s",
    scaling=(
        Flag(
            "--s-max-exponent",
            "--scaling runs to s_max·(D/64)^this (default 1.5; 0 keeps s_max)",
            float,
            low=0,
            fill=1.5,
        ),
        Flag("--budget-s", "time budget per flow, s (default 60)", float, low=0, low_open=True, fill=60.0),
        Flag("--D-max", f"largest D tried by --scaling, 64..{D_MAX} (default 65536)", low=64, high=D_MAX, fill=65536),
    ),
    out="bench_results/reduced.csv",
    out_help="output file: the CSV of the table; the scaling table goes next to it",
)


def build_parser() -> argparse.ArgumentParser:
    return FLAGS.parser(PROG, "Benchmark of the reduced solver (docs/theory.md §3).")


def _memory(n: int) -> MemoryEstimate:
    """The main table at D = 64, C = 4: the bank of ``n`` samples (reduced.memory.reduced_memory) and the NumPy
    reference's count vectors (N, L, 3) (int64 twice, their float64 copy) and (N, L) float64 temporaries."""
    from ..core.setting import Setting
    from ..infra.memory import MemoryEstimate, Term
    from ..reduced.memory import reduced_memory

    s = Setting(D=64, C=4)
    return reduced_memory(s.D, s.C, s.q, n) + MemoryEstimate(
        "NumPy reference",
        (
            Term(
                f"count vectors ({n}, {s.L}, 3) int64 ×3 and float64, ~10 ({n}, {s.L}) float64 temporaries",
                n * s.L * (4 * 3 * 8 + 10 * 8),
                {"n_samples": n},
            ),
        ),
    )


def check(args: argparse.Namespace, given: set[str]) -> argparse.Namespace:
    """Check every input before any work (exit 2 naming the flag) and fill the defaults; ``given``: the
    dests given on the command line."""
    FLAGS.check_parts(args, given, PROG)
    if not (args.scaling or args.scaling_only) and args.no_flow and "s_max" in given:
        fail("--s-max: only used by the flow timing (which --no-flow skips) and by --scaling", PROG)
    FLAGS.fill_defaults(args)
    if not args.scaling_only:
        guard_memory(_memory(args.n_samples), force=args.force, prog=PROG)
    output_file(args.out, "--out", PROG)
    return args


def run(inv: Invocation) -> int:
    """The checks, then the machine, the tables and where they went (:func:`theorydyn.bench.flags.run_bench`)."""
    from .reduced import Options, measure

    args = check(inv.args, inv.given())
    return run_bench(inv, options_from_args(Options, args), measure, PROG)


COMMAND = Command(PROG, build_parser, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
