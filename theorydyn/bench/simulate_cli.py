"""``python -m theorydyn.bench simulate``: the command of :mod:`theorydyn.bench.simulate` — its parser (the
flags of :class:`theorydyn.bench.config.SimulateBench`), the checks made before any work (flags of a part
that does not run, the Setting at each D, the memory of each part, the output folder; exit 2 naming the
flag) and the run that prints.

Imports nothing heavy: ``--help`` loads no solver; the measurement is imported in :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from ..cli.configs import flag_of
from ..cli.runner import Command, Invocation
from ..cli.tools import fail, guard_memory, output_file
from ..core.setting import Setting
from .config import SIMULATE_PARTS, SimulateBench
from .flags import bench_parser, check_parts, config_of, run_bench

PROG = "python -m theorydyn.bench simulate"


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m theorydyn.bench simulate``."""
    return bench_parser(
        PROG,
        "Benchmark of the finite-sample simulator's step.",
        SimulateBench,
        SIMULATE_PARTS,
        "bench_results/simulate.csv",
        "output file: the CSV of the main table; the scaling tables go next to it",
    )


def _setting(D: int, flag: str) -> Setting:
    try:
        return Setting(D=D, C=4)
    except ValueError as e:
        fail(f"{flag}: D={D}: {e}", PROG)


def _guard(args) -> None:
    """Refuse (exit 2 naming the flag) a part whose arrays would not fit; the parts run one after the other."""
    from ..core.data import sample_memory
    from ..infra.memory import MemoryEstimate, Term
    from ..simulate._kernel import block_size
    from ..simulate.memory import simulate_memory

    if not (args.scaling_only or args.nstar_only):
        item = max(np.dtype(t).itemsize for t in args.dtypes)
        dtype = "float64" if item == 8 else "float32"
        R, D, N = args.replicas, max(args.D), args.N
        nb = -(-N // block_size(N))  # the kernel's blocks of samples (as in simulate_memory)
        est = simulate_memory(D, 4, None, N, 0 if args.no_simulate else args.n_test, dtype) + MemoryEstimate(
            "replicas",
            (
                Term(
                    f"{R} replicas: (R, D, D) logits, gradients and ({nb}, R, D, D) partial gradients",
                    (8 + nb) * R * D * D * 8,
                    {"replicas": R, "D": D},
                ),
            ),
        )
        guard_memory(est, force=args.force, prog=PROG, flags={"d": None})
    if args.scaling or args.scaling_only:
        item = np.dtype(args.scaling_dtype).itemsize
        guard_memory(
            sample_memory(64, 4, 64, max(args.scaling_N), item, "scaling_N"),
            force=args.force,
            prog=PROG,
            flags={"D": None, "d": None},
        )
        guard_memory(
            sample_memory(max(args.scaling_D), 4, max(args.scaling_D), args.scaling_N_for_D, item, "scaling_N_for_D"),
            force=args.force,
            prog=PROG,
            flags={"D": "--scaling-D", "d": None},
        )
        if not args.no_memory:
            guard_memory(
                simulate_memory(64, 4, None, args.memory_N[1], 1024, args.scaling_dtype),
                force=args.force,
                prog=PROG,
                flags={"N": "--memory-N", "D": None, "d": None, "n_test": None},
            )


def check(args: argparse.Namespace, given: set[str]) -> argparse.Namespace:
    """Check every input before any work (exit 2 naming the flag): flags of a part
    that does not run, the Setting at each D, the memory of each part, the output folder. ``given``: the
    dests given on the command line."""
    check_parts(SimulateBench, SIMULATE_PARTS, args, given, PROG)
    if args.no_simulate:
        for k in ("sim_steps", "n_test"):
            if k in given:
                fail(
                    f"{flag_of(SimulateBench, k)}: only used by the timed simulate() run, which --no-simulate skips",
                    PROG,
                )
    if args.no_memory:
        for k in ("memory_N", "memory_budget_gib"):
            if k in given:
                fail(f"{flag_of(SimulateBench, k)}: only used by the memory runs, which --no-memory skips", PROG)
    if args.nstar_only and not args.nstar:
        fail("--nstar-only: needs --nstar quick or --nstar full", PROG)
    if args.nstar_only and args.scaling_only:
        fail("--nstar-only: runs no step table, and --scaling-only runs only the scaling part: pick one", PROG)
    args.dtypes = list(dict.fromkeys(args.dtypes))  # choices checked by the parser
    if len(args.memory_N) != 2 or args.memory_N[0] >= args.memory_N[1]:
        fail(f"--memory-N: must be two increasing sizes N1 N2, got {' '.join(map(str, args.memory_N))}", PROG)
    if not args.scaling_only:
        for D in args.D:
            _setting(D, "--D")
    if args.scaling or args.scaling_only:
        for D in args.scaling_D:
            _setting(D, "--scaling-D")
    _guard(args)
    output_file(args.out, "--out", PROG)
    return args


def run(inv: Invocation) -> int:
    """The checks, then the machine, the tables and where they went (:func:`theorydyn.bench.flags.run_bench`);
    contenders that disagree: one line on stderr, exit 1."""
    from .simulate import measure

    args = check(inv.args, inv.given())
    return run_bench(
        inv,
        config_of(SimulateBench, args, PROG),
        measure,
        PROG,
        end="\nload average (1 min) at the end: {:.2f}",
        error_stream=sys.stderr,
    )


COMMAND = Command(PROG, build_parser, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
