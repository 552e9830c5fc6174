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
from ..cli.tools import ArgumentParser, fail, guard_memory, number, output_file, positive
from ..core.setting import D_MAX
from ..infra.limits import S_MAX_MAX, S_MAX_MIN
from .flags import add_bench_arguments, check_parts, fill_defaults, options_from_args, run_bench

if TYPE_CHECKING:
    from ..infra.memory import MemoryEstimate

PROG = "python -m theorydyn.bench reduced"
#: flags of the main table / of --scaling (each an error where its part does not run); None in the parser
_MAIN_FLAGS = ("n_samples", "repeats", "settle", "no_flow")
_SCALING_FLAGS = ("s_max_exponent", "budget_s", "D_max")
#: the defaults of the flags left None in the parser (those of :class:`theorydyn.bench.reduced.Options`)
_DEFAULTS = dict(n_samples=100_000, repeats=7, settle=0.2, s_max=1e5, s_max_exponent=1.5, budget_s=60.0, D_max=65536)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Benchmark of the reduced solver (docs/theory.md §3).")
    g = ap.add_argument_group("main table (not with --scaling-only)")
    g.add_argument(
        "--n-samples",
        type=number(int, "--n-samples", low=2),
        default=None,
        help="Monte Carlo samples, >= 2 (default 100000)",
    )
    g.add_argument(
        "--repeats", type=number(int, "--repeats", low=1), default=None, help="timed calls per measurement (default 7)"
    )
    g.add_argument(
        "--settle",
        type=number(float, "--settle", low=0, high=10),
        default=None,
        help="pause before each timed call, 0..10 s (lets spinning BLAS threads sleep; default 0.2)",
    )
    g.add_argument("--no-flow", action="store_true", help="skip the flow timing")
    ap.add_argument(
        "--s-max",
        type=number(float, "--s-max", low=S_MAX_MIN, high=S_MAX_MAX),
        default=None,
        help="horizon of the timed flow and of --scaling at D = 64 (default 1e5)",
    )
    ap.add_argument("--scaling", action="store_true", help="the largest D whose default flow fits in --budget-s")
    ap.add_argument("--scaling-only", action="store_true", help="only the --scaling part")
    g = ap.add_argument_group("--scaling")
    g.add_argument(
        "--s-max-exponent",
        type=positive(float, "--s-max-exponent", allow_zero=True),
        default=None,
        help="--scaling runs to s_max·(D/64)^this (default 1.5; 0 keeps s_max)",
    )
    g.add_argument(
        "--budget-s", type=positive(float, "--budget-s"), default=None, help="time budget per flow, s (default 60)"
    )
    g.add_argument(
        "--D-max",
        type=number(int, "--D-max", low=64, high=D_MAX),
        default=None,
        help=f"largest D tried by --scaling, 64..{D_MAX} (default 65536)",
    )
    add_bench_arguments(
        ap, "bench_results/reduced.csv", "output file: the CSV of the table; the scaling table goes next to it"
    )
    return ap


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
    check_parts(args, given, PROG, _MAIN_FLAGS, _SCALING_FLAGS)
    if not (args.scaling or args.scaling_only) and args.no_flow and "s_max" in given:
        fail("--s-max: only used by the flow timing (which --no-flow skips) and by --scaling", PROG)
    fill_defaults(args, _DEFAULTS)
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
