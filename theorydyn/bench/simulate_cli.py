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
from ..cli.tools import ArgumentParser, fail, guard_memory, number, output_file, positive
from ..core.setting import D_MAX, Setting
from .flags import add_bench_arguments, check_parts, fill_defaults, flag_of, options_from_args, run_bench
from .timing import BATCH, SETTLE

PROG = "python -m theorydyn.bench simulate"
#: flags of the main table / of --scaling / of its memory runs (each an error where its part does not run)
_MAIN_FLAGS = ("N", "D", "n_test", "replicas", "sim_steps", "dtypes", "no_torch", "no_simulate")
_SCALING_FLAGS = (
    "no_memory",
    "scaling_N",
    "scaling_D",
    "scaling_N_for_D",
    "scaling_dtype",
    "memory_N",
    "memory_budget_gib",
)
#: the defaults of the flags above (None in the parser, so that a flag given where it does nothing is seen)
_DEFAULTS = dict(
    N=16384,
    D=[64, 128],
    n_test=8192,
    replicas=8,
    sim_steps=50,
    dtypes=["float64", "float32"],
    scaling_N=[4096, 16384, 65536],
    scaling_D=[16, 32, 64, 128],
    scaling_N_for_D=4096,
    scaling_dtype="float32",
    memory_N=[4096, 16384],
    memory_budget_gib=24.0,
)


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m theorydyn.bench simulate``."""
    ap = ArgumentParser(prog=PROG, description="Benchmark of the finite-sample simulator's step.")
    g = ap.add_argument_group("main table (not with --scaling-only)")
    g.add_argument("--N", type=number(int, "--N", low=2), default=None, help="training samples (default 16384)")
    g.add_argument(
        "--D",
        type=number(int, "--D", low=8, high=D_MAX),
        nargs="+",
        default=None,
        help="patches, multiples of C = 4, one table each (d = D; default 64 128)",
    )
    g.add_argument(
        "--n-test",
        type=number(int, "--n-test", low=1),
        default=None,
        help="test samples of the timed simulate() run (default 8192)",
    )
    g.add_argument(
        "--replicas", type=number(int, "--replicas", low=1), default=None, help="replicas sharing one X (default 8)"
    )
    g.add_argument(
        "--sim-steps",
        type=number(int, "--sim-steps", low=1),
        default=None,
        help="steps of each timed simulate() (default 50: records at 0 and 50, its default rate)",
    )
    g.add_argument(
        "--dtypes",
        nargs="+",
        choices=("float64", "float32"),
        default=None,
        help="storage dtypes of X (default float64 float32)",
    )
    g.add_argument("--no-torch", action="store_true", help="skip the autograd reference")
    g.add_argument("--no-simulate", action="store_true", help="skip timing simulate() per step")
    ap.add_argument("--repeats", type=number(int, "--repeats", low=1), default=7, help="timed calls per measurement")
    ap.add_argument(
        "--settle",
        type=number(float, "--settle", low=0, high=10),
        default=SETTLE,
        help="pause before each repeat's calls, 0..10 s (default %(default)s: lets spinning BLAS threads sleep)",
    )
    ap.add_argument(
        "--batch",
        type=number(int, "--batch", low=1, high=100),
        default=BATCH,
        help="calls timed back to back per repeat, after one untimed call "
        "(default %(default)s: a GD loop's steady state)",
    )
    ap.add_argument("--scaling", action="store_true", help="step time against N and D, memory per sample")
    ap.add_argument("--scaling-only", action="store_true", help="only the --scaling part")
    g = ap.add_argument_group("--scaling")
    g.add_argument("--no-memory", action="store_true", help="skip the memory runs of --scaling")
    g.add_argument(
        "--scaling-N",
        type=number(int, "--scaling-N", low=1),
        nargs="+",
        default=None,
        help="N of the runs against N (default 4096 16384 65536)",
    )
    g.add_argument(
        "--scaling-D",
        type=number(int, "--scaling-D", low=1),
        nargs="+",
        default=None,
        help="multiples of 4, >= 8 (default 16 32 64 128)",
    )
    g.add_argument(
        "--scaling-N-for-D",
        type=number(int, "--scaling-N-for-D", low=1),
        default=None,
        help="N of the runs against D (default 4096)",
    )
    g.add_argument("--scaling-dtype", choices=("float32", "float64"), default=None, help="default float32")
    g.add_argument(
        "--memory-N",
        type=number(int, "--memory-N", low=1),
        nargs="+",
        default=None,
        help="the two N of the memory runs, increasing (default 4096 16384)",
    )
    g.add_argument(
        "--memory-budget-gib",
        type=positive(float, "--memory-budget-gib"),
        default=None,
        help="memory budget of the N_max extrapolation, GiB (default 24)",
    )
    add_bench_arguments(
        ap, "bench_results/simulate.csv", "output file: the CSV of the main table; the scaling tables go next to it"
    )
    return ap


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

    if not args.scaling_only:
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
    check_parts(args, given, PROG, _MAIN_FLAGS, _SCALING_FLAGS)
    if args.no_simulate:
        for k in ("sim_steps", "n_test"):
            if k in given:
                fail(f"{flag_of(k)}: only used by the timed simulate() run, which --no-simulate skips", PROG)
    if args.no_memory:
        for k in ("memory_N", "memory_budget_gib"):
            if k in given:
                fail(f"{flag_of(k)}: only used by the memory runs, which --no-memory skips", PROG)
    fill_defaults(args, _DEFAULTS)
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
