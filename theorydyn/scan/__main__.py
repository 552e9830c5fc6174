"""``python -m theorydyn.scan``: the command line of :mod:`theorydyn.scan` (see its docstring).

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli.configs import converter
from ..cli.runner import RESUMES, Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    RawDescriptionHelpFormatter,
    add_common_arguments,
    add_fresh_argument,
    add_number,
    add_positive,
    add_seeds,
    add_setting_arguments,
    fail,
)
from ..core.setting import D_MAX
from ..infra.limits import N_POINTS_MAX, S_MAX_MAX, S_MAX_MIN, SIM_STEPS_MAX, TAU_MIN
from ..infra.paths import SCAN, run_name
from .defaults import DEFAULT_Q_FACTORS, DEFAULT_SEEDS, PROG, RESULTS_DIR
from .schema import option_flag, option_rule

if TYPE_CHECKING:
    from .grid import ScanSpec


def _token(name: str, vals: list[Any]) -> str:
    return SCAN.token(name, vals)  # the one naming scheme (theorydyn.infra.paths.run_name)


def _safe_name(name: str) -> str:
    """A file name for the scan's results (:func:`theorydyn.infra.paths.safe_name`)."""
    return run_name("scan", name)


def _check_results_files(results_dir: str | Path, name: str) -> None:
    """Refuse, before any work, a results CSV or a ``.rejected.csv`` that is a symbolic link (the
    toolkit never writes through a link it did not create) or not a regular file (a FIFO or a
    device: reading it would block or never end)."""
    for path in (Path(results_dir) / f"{name}.csv", Path(results_dir) / f"{name}.rejected.csv"):
        try:
            if path.is_symlink():
                fail(
                    f"--out: {path} is a symbolic link; theorydyn does not write through links "
                    f"(remove it, or use another --name or --out)",
                    PROG,
                )
            if path.exists() and not path.is_file():
                fail(
                    f"--out: {path} exists and is not a regular file (a folder, a pipe or a device); "
                    f"use another --name or --out",
                    PROG,
                )
        except OSError as e:
            fail(f"--out: cannot use {str(path)!r}: {e.strerror or e}", PROG)


def _add_axis_arguments(ap: argparse.ArgumentParser) -> None:
    """The scan axes: lists of values, each replacing its single-valued Setting flag, each value checked at
    parse time by the rule the library applies (the Setting's ranges, :func:`~theorydyn.scan.schema.option_rule`)."""
    # The axes that take lists replace their single-valued counterparts.
    g = ap.add_argument_group("scan axes (lists)")
    add_number(
        g, "--D", int, low=2, high=D_MAX, nargs="+", default=None, help=f"number(s) of patches, 2..{D_MAX} (default 64)"
    )
    add_number(
        g,
        "--C",
        int,
        low=2,
        high=D_MAX,
        nargs="+",
        default=None,
        help="set size(s), 2 <= C < D, dividing D (default 4)",
    )
    add_number(
        g,
        "--q",
        float,
        low=0,
        high=1,
        rule="q must lie in [0, 1]",
        nargs="+",
        default=None,
        help="q value(s), in [0, 1] (default: 0.6, 0.8, 1, 1.2, 1.4 × C²/D, at most 1)",
    )
    add_number(
        g,
        "--tau",
        float,
        low=TAU_MIN,
        nargs="+",
        default=None,
        help=f"softmax temperature(s) >= {TAU_MIN:g} (default 1)",
    )
    g.add_argument(
        "--eta",
        type=converter(option_rule("eta"), "--eta"),
        nargs="+",
        default=None,
        help="GD step(s) η > 0: reduced --method gd and the simulator (default 10)",
    )
    g.add_argument(
        "--N",
        type=converter(option_rule("N"), "--N"),
        nargs="+",
        default=None,
        help="simulator sample size(s), >= 1 (default 16384)",
    )
    add_seeds(
        g,
        None,
        f"number of seeds, an integer >= 1: seeds --first-seed F … F+K-1 (default {len(DEFAULT_SEEDS)}; "
        "with --spec: the spec's seed list). Any other list of seeds: seed = [...] in a --spec file",
    )
    add_positive(
        g,
        "--first-seed",
        int,
        allow_zero=True,
        default=None,
        metavar="F",
        help="the first of the --seeds seeds, an integer >= 0 (default 0)",
    )


def _add_solver_options(ap: argparse.ArgumentParser) -> None:
    """The solver options of every point (a single value each; the scan axes take lists), each checked at
    parse time by its rule (:func:`~theorydyn.scan.schema.option_rule`: the library's)."""
    o = ap.add_argument_group("solver options")
    o.add_argument(
        "--method", choices=("flow", "gd"), default=None, help="reduced dynamics: gradient flow or GD (default flow)"
    )
    options = (
        ("s_max", f"horizon in s = η·t, in [{S_MAX_MIN:g}, {S_MAX_MAX:g}] (default 5e4·max(1, D/64)^1.5, per D)"),
        ("n_samples", "Monte Carlo count samples, >= 2 (default 4000)"),
    )
    for k, text in options:
        o.add_argument(option_flag(k), type=converter(option_rule(k), option_flag(k)), default=None, help=text)
    o.add_argument(
        "--expectation", choices=("mc", "exact"), default=None, help="Monte Carlo or exact (small L; default mc)"
    )
    o.add_argument(
        "--n-points",
        type=converter(option_rule("n_points"), "--n-points"),
        default=None,
        help=f"trajectory points, 2..{N_POINTS_MAX:.0e} (default 400)",
    )
    o.add_argument("--simulate", action="store_true", default=None, help="also run the finite-sample simulator")
    sim = (
        ("sim_steps", f"simulator GD steps, 1..{SIM_STEPS_MAX:.0e} (default 1200)"),
        ("omega", "simulator init scale ω >= 0 (default 1e-3)"),
    )
    for k, text in sim:
        o.add_argument(option_flag(k), type=converter(option_rule(k), option_flag(k)), default=None, help=text)
    o.add_argument(
        "--dtype",
        choices=("float64", "float32", "bfloat16"),
        default=None,
        help="simulator storage of X (default float64, as the library's simulate(); bfloat16 rounds the data)",
    )


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(
        prog=PROG,
        description="Where do the phases of Section 4.1 hold, and when? A resumable scan.",
        formatter_class=RawDescriptionHelpFormatter,
        conflict_handler="resolve",
        epilog="With only --D/--C: q in {0.6, 0.8, 1, 1.2, 1.4}·C²/D (when one size) × seeds {0, 1, 2}, "
        "reduced gradient flow to s = 5·10⁴·max(1, D/64)^1.5 (2.5 × the ledger's "
        "horizon) with 4000 Monte Carlo samples.",
    )
    ap.add_argument(
        "--spec",
        help="a saved grid, scans/NAME.toml (flags given as well override its entries; default: none, the flags alone)",
    )
    ap.add_argument("--name", help="scan name (default: derived from the spec or the flags)")
    add_setting_arguments(ap)
    _add_axis_arguments(ap)
    _add_solver_options(ap)
    r = ap.add_argument_group("running")
    add_positive(
        r,
        "--workers",
        int,
        allow_zero=True,
        default=2,
        help="local worker processes; 0 runs in this process (default 2)",
    )
    r.add_argument(
        "--scheduler",
        help="run on a Dask cluster, e.g. tcp://HOST:8786, or on Slurm jobs: slurm[:queue=Q,account=A,walltime="
        "HH:MM:SS,memory=4GB,cores=1,jobs=2] (needs the dask extra; default: local --workers)",
    )
    r.add_argument("--no-plots", action="store_true", help="skip the plots")
    add_common_arguments(
        r,
        seed=None,
        out=RESULTS_DIR,
        out_help="output folder: the results store and <name>.csv, the plots beside them",
        force="machine",
    )
    add_fresh_argument(
        r,
        "this scan's rows in the results store, its CSV export, trajectories and figures",
        aliases=("--recompute",),
    )
    r.add_argument(
        "--runner",
        default=None,
        help="advanced: 'module:function' computing one point (default theorydyn.scan.point:run_point)",
    )
    return ap


_LIST_FLAGS = {"D": "D", "C": "C", "q": "q", "tau": "tau", "eta": "eta", "N": "N"}
_SINGLE_SETTING = {
    "d": None,
    "sigma2": None,
    "p": 3,
    "nu": None,
    "beta": 1.0,
    "partition": "blocks",
    "partition_seed": 0,
}
_OPTION_FLAGS = ("method", "s_max", "n_samples", "expectation", "n_points", "simulate", "sim_steps", "omega", "dtype")


def spec_from_args(args: argparse.Namespace) -> ScanSpec:
    """The scan the flags describe (on top of ``--spec`` when given)."""
    from .grid import ScanError, ScanSpec

    if args.spec is not None:
        try:
            spec = ScanSpec.from_toml(args.spec)
        except ScanError as e:
            raise ScanError(str(e) if str(e).startswith("--spec") else f"--spec: {e}") from None
        tokens = [spec.name]
    else:
        spec = ScanSpec(name="", base={}, axes={})
        tokens = []
    given: dict[str, Any] = {}
    for flag, axis in _LIST_FLAGS.items():
        vals = getattr(args, flag)
        if vals is not None:
            given[axis] = list(dict.fromkeys(vals))  # keep order, drop repeats
    if args.seeds is not None or args.first_seed is not None:  # --seeds K: K seeds from --first-seed
        first = args.first_seed or 0
        given["seed"] = list(range(first, first + (len(DEFAULT_SEEDS) if args.seeds is None else args.seeds)))
    for k, default in _SINGLE_SETTING.items():
        v = getattr(args, k)
        if v != default:
            given[k] = [v]
    for k in _OPTION_FLAGS:
        v = getattr(args, k)
        if v is not None:
            given[k] = [v]
    if not args.spec:
        # The default scan around docs/theory.md §9.
        D = given.get("D", [64])
        C = given.get("C", [4])
        given.setdefault("D", D)
        given.setdefault("C", C)
        name_tokens = [_token("D", D), _token("C", C)]
        if "q" not in given and len(D) == 1 and len(C) == 1:
            qs = sorted({round(min(1.0, f * C[0] ** 2 / D[0]), 6) for f in DEFAULT_Q_FACTORS})
            spec.axes["q"] = qs
        if "seed" not in given:
            spec.axes["seed"] = list(DEFAULT_SEEDS)
        tokens = name_tokens
    for k, vals in given.items():
        spec.base.pop(k, None)
        spec.axes.pop(k, None)
        if len(vals) > 1 or k == "seed":
            spec.axes[k] = vals
        else:
            spec.base[k] = vals[0]
        is_default = not args.spec and k == "seed" and vals == list(DEFAULT_SEEDS)
        if (args.spec or k not in ("D", "C")) and not is_default:
            tokens.append("sim" if k == "simulate" else _token(k.replace("_", ""), vals))
    if "eta" in given and not (
        spec.base.get("simulate") or spec.base.get("method") == "gd" or "simulate" in spec.axes or "method" in spec.axes
    ):
        raise ScanError("--eta: has no effect on the reduced gradient flow; add --simulate or --method gd")
    if "N" in given and not (spec.base.get("simulate") or "simulate" in spec.axes):
        raise ScanError("--N: is the simulator's sample size; add --simulate")
    if "seed" in spec.axes:  # seeds vary fastest: the table reads one setting after the other
        spec.axes["seed"] = spec.axes.pop("seed")
    if args.runner:
        spec.runner = args.runner
    spec.name = _safe_name(args.name or "_".join(tokens))
    return spec


#: a grid key → the flag that sets it (for messages that name a key: they name the flag as well)
_KEY_FLAGS = {
    "D": "--D",
    "C": "--C",
    "q": "--q",
    "tau": "--tau",
    "eta": "--eta",
    "N": "--N",
    "seed": "--seeds",
    "d": "--d",
    "sigma2": "--sigma2",
    "p": "--p",
    "nu": "--nu",
    "beta": "--beta",
    "partition": "--partition",
    "partition_seed": "--partition-seed",
    "s_max": "--s-max",
    "n_samples": "--n-samples",
    "n_points": "--n-points",
    "sim_steps": "--sim-steps",
    "omega": "--omega",
    "n_test": "--n-test",
    "record_every": "--record-every",
    "expectation": "--expectation",
    "method": "--method",
    "dtype": "--dtype",
}


def _name_flags(message: str, args: argparse.Namespace) -> str:
    """Prefix a grid's message with the flags of the keys it names (``--D: D must be …``); a value that
    may have come from the spec file names ``--spec`` as well."""
    if message.startswith("--"):
        return message
    head = message.split("\n", 2)[:2]
    named = [
        flag
        for key, flag in _KEY_FLAGS.items()
        if any(re.search(rf"(?<![\w.]){re.escape(key)}(=| must)", line) for line in head)
    ]
    if args.spec is not None:
        named.append("--spec")
    return f"{'/'.join(dict.fromkeys(named))}: {message}" if named else message


def run(inv: Invocation) -> int:
    """Every input is checked before any point runs (exit 2 naming the flag): flags, the spec file,
    every point of the grid (its setting, options and memory estimate), the runner, the results folder."""
    from ..infra.store import RejectedRowsWarning
    from .grid import ScanError, validate_points
    from .run import check_runner, run_scan
    from .summary import summary_text

    args = inv.args
    cores = os.cpu_count() or 1
    if args.workers > 4 * cores:
        fail(
            f"--workers: {args.workers} worker processes on {cores} cores (at most 4 per core: each worker holds "
            f"a point in memory)",
            PROG,
        )
    if args.name is not None and not args.name.strip():
        fail("--name: must not be empty", PROG)
    try:
        if args.scheduler and args.scheduler.partition(":")[0] == "slurm":
            from .executor import slurm_options

            slurm_options(args.scheduler)  # a bad Slurm option is refused before any work
        spec = spec_from_args(args)
        validate_points(
            spec.expand(),
            force=args.force,  # every point computable before any work
            concurrent=1 if args.scheduler else max(args.workers, 1),
        )
        check_runner(spec)
    except ScanError as e:
        fail(_name_flags(str(e), args), PROG)
    inv.output_dir(args.out, "--out")
    _check_results_files(args.out, spec.name)
    if not args.fresh:  # every output file of the scan: a link or a folder in its place is refused now
        from ..infra.atomic import UnsafeTarget
        from .run import check_output_files

        try:
            check_output_files(args.out, spec.name, [p.key for p in spec.expand()])
        except UnsafeTarget as e:
            fail(f"--out: {e} (remove it, or use another --name or --out)", PROG)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RejectedRowsWarning)
            outcome = run_scan(
                spec,
                results_dir=args.out,
                workers=args.workers,
                scheduler=args.scheduler,
                force=args.fresh,
                force_memory=args.force,
                progress=not args.quiet,
                plots=not args.no_plots,
                plot_format=inv.figure_format,
                report=lambda message: print(message, file=sys.stderr),
            )
            # inside the warnings block, as when run_scan printed it: the summary's warnings stay caught
            summary = summary_text(spec, outcome)
    except ScanError as e:
        fail(str(e), PROG)
    except OSError as e:  # a full disk under the store or an output: the rows committed so far stay
        print(
            f"{PROG}: error: {e}; the rows committed so far stay in the store: free space and rerun the same "
            "command to resume",
            file=sys.stderr,
        )
        return 1
    print(summary)
    for w in caught:
        if issubclass(w.category, RejectedRowsWarning):
            print(f"{PROG}: warning: {w.message}", file=sys.stderr)
    if not len(outcome.frame):  # the summary lists failures only beside finished points; --quiet hid the bar
        for key, err in outcome.failed:
            print(f"{PROG}: FAILED {key[:12]}: {err}", file=sys.stderr)
    return outcome.exit_code


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the points computed so far are stored: {RESUMES}", draws="png"
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
