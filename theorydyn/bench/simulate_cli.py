"""``python -m theorydyn.bench simulate``: the command of :mod:`theorydyn.bench.simulate` — its parser, the
defaults of its flags, the checks made before any work (flags of a part that does not run, the Setting
at each D, the memory of each part, the output folder; exit 2 naming the flag) and the run that prints.

Imports nothing heavy: ``--help`` loads no solver; the measurement is imported in :func:`run`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from ..cli.runner import Command, Invocation
from ..cli.tools import fail, guard_memory, output_file
from ..core.setting import D_MAX, Setting
from .flags import BenchFlags, Flag, flag_of, options_from_args, repeats_flag, run_bench, settle_flag
from .timing import BATCH, SETTLE

PROG = "python -m theorydyn.bench simulate"
_DTYPES = ("float64", "float32")
#: the flags, in their groups (:class:`~theorydyn.bench.flags.BenchFlags`); ``fill``: the default of a flag
#: that is an error where its part does not run (None in the parser, so that it is seen)
FLAGS = BenchFlags(
    main=(
        Flag("--N", "training samples (default 16384)", low=2, fill=16384),
        Flag(
            "--D",
            "patches, multiples of C = 4, one table each (d = D; default 64 128)",
            low=8,
            high=D_MAX,
            nargs="+",
            fill=[64, 128],
        ),
        Flag("--n-test", "test samples of the timed simulate() run (default 8192)", low=1, fill=8192),
        Flag("--replicas", "replicas sharing one X (default 8)", low=1, fill=8),
        Flag(
            "--sim-steps",
            "steps of each timed simulate() (default 50: records at 0 and 50, its default rate)",
            low=1,
            fill=50,
        ),
        Flag(
            "--dtypes",
            "storage dtypes of X (default float64 float32)",
            str,
            nargs="+",
            choices=_DTYPES,
            fill=[*_DTYPES],
        ),
        Flag("--no-torch", "skip the autograd reference", bool),
        Flag("--no-simulate", "skip timing simulate() per step", bool),
        Flag(
            "--nstar",
            "also time the N*(D) grid of the quick or full ledger, before issue 32 (a run per (D, N, seed)) "
            "and now (one draw per seed, every N in one pass)",
            str,
            choices=("quick", "full"),
        ),
        Flag("--nstar-only", "only the --nstar part (no step table)", bool),
    ),
    common=(
        repeats_flag("timed calls per measurement", default=7),
        settle_flag(
            "pause before each repeat's calls, 0..10 s (default %(default)s: lets spinning BLAS threads sleep)",
            default=SETTLE,
        ),
        Flag(
            "--batch",
            "calls timed back to back per repeat, after one untimed call "
            "(default %(default)s: a GD loop's steady state)",
            low=1,
            high=100,
            default=BATCH,
        ),
    ),
    scaling_help="step time against N and D, memory per sample",
    scaling=(
        Flag("--no-memory", "skip the memory runs of --scaling", bool),
        Flag(
            "--scaling-N",
            "N of the runs against N (default 4096 16384 65536)",
            low=1,
            nargs="+",
            fill=[4096, 16384, 65536],
        ),
        Flag("--scaling-D", "multiples of 4, >= 8 (default 16 32 64 128)", low=8, nargs="+", fill=[16, 32, 64, 128]),
        Flag("--scaling-N-for-D", "N of the runs against D (default 4096)", low=1, fill=4096),
        Flag("--scaling-dtype", "default float32", str, choices=("float32", "float64"), fill="float32"),
        Flag(
            "--memory-N",
            "the two N of the memory runs, increasing (default 4096 16384)",
            low=1,
            nargs="+",
            fill=[4096, 16384],
        ),
        Flag(
            "--memory-budget-gib",
            "memory budget of the N_max extrapolation, GiB (default 24)",
            float,
            low=0,
            low_open=True,
            fill=24.0,
        ),
    ),
    out="bench_results/simulate.csv",
    out_help="output file: the CSV of the main table; the scaling tables go next to it",
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m theorydyn.bench simulate``."""
    return FLAGS.parser(PROG, "Benchmark of the finite-sample simulator's step.")


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
    """Check every input before any work (exit 2 naming the flag) and fill the defaults: flags of a part
    that does not run, the Setting at each D, the memory of each part, the output folder. ``given``: the
    dests given on the command line."""
    FLAGS.check_parts(args, given, PROG)
    if args.no_simulate:
        for k in ("sim_steps", "n_test"):
            if k in given:
                fail(f"{flag_of(k)}: only used by the timed simulate() run, which --no-simulate skips", PROG)
    if args.no_memory:
        for k in ("memory_N", "memory_budget_gib"):
            if k in given:
                fail(f"{flag_of(k)}: only used by the memory runs, which --no-memory skips", PROG)
    if args.nstar_only and not args.nstar:
        fail("--nstar-only: needs --nstar quick or --nstar full", PROG)
    if args.nstar_only and args.scaling_only:
        fail("--nstar-only: runs no step table, and --scaling-only runs only the scaling part: pick one", PROG)
    FLAGS.fill_defaults(args)
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
    from .simulate import Options, measure

    args = check(inv.args, inv.given())
    return run_bench(
        inv,
        options_from_args(Options, args),
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
