"""``python -m theorydyn.bench reduced``: the command of :mod:`theorydyn.bench.reduced` — its parser (the
flags of :class:`theorydyn.bench.config.ReducedBench`), the checks made before any work (flags of a part
that does not run, the memory of the main table, the output file; exit 2 naming the flag) and the run that
prints.

Imports nothing heavy: ``--help`` loads no solver; the measurement is imported in :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..cli.runner import Command, Invocation
from ..cli.tools import fail, guard_memory, output_file
from .config import REDUCED_PARTS, ReducedBench
from .flags import bench_parser, check_parts, config_of, run_bench

if TYPE_CHECKING:
    from ..infra.memory import MemoryEstimate

PROG = "python -m theorydyn.bench reduced"


def build_parser() -> argparse.ArgumentParser:
    return bench_parser(
        PROG,
        "Benchmark of the reduced solver (docs/theory.md §3).",
        ReducedBench,
        REDUCED_PARTS,
        "bench_results/reduced.csv",
        "output file: the CSV of the table; the scaling table goes next to it",
    )


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
    """Check every input before any work (exit 2 naming the flag); ``given``: the dests given on the
    command line."""
    check_parts(ReducedBench, REDUCED_PARTS, args, given, PROG)
    if not (args.scaling or args.scaling_only) and args.no_flow and "s_max" in given:
        fail("--s-max: only used by the flow timing (which --no-flow skips) and by --scaling", PROG)
    if not args.scaling_only:
        guard_memory(_memory(args.n_samples), force=args.force, prog=PROG)
    output_file(args.out, "--out", PROG)
    return args


def run(inv: Invocation) -> int:
    """The checks, then the machine, the tables and where they went (:func:`theorydyn.bench.flags.run_bench`)."""
    from .reduced import measure

    args = check(inv.args, inv.given())
    return run_bench(inv, config_of(ReducedBench, args, PROG), measure, PROG)


COMMAND = Command(PROG, build_parser, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
