"""The flags of ``python -m theorydyn.scan`` and the scan they describe.

No flag is declared here by hand: the solver options' flags are the configurations' scanned fields
(:func:`theorydyn.cli.configs.add_scanned_flags` over :data:`~theorydyn.scan.schema.CONFIGS`: each option's
flag, converter, choices and help; a list, ``nargs="+"``, for the fields the scan sweeps), so a field of
:class:`~theorydyn.simulate.config.SimConfig` made :func:`~theorydyn.core.config.scanned` is a flag here
without a word in this module; the command's own flags are the fields of
:class:`~theorydyn.scan.config.ScanConfig` (:func:`~theorydyn.cli.configs.add_config_flags`); the
Setting's axes and the shared flags are :mod:`theorydyn.cli.tools`'. :func:`spec_from_args` turns the
parsed flags into a :class:`~theorydyn.scan.grid.ScanSpec`, :func:`run_options` into the run's keywords,
and :func:`scan_from_args` checks everything before any work, raising
:class:`~theorydyn.scan.schema.ScanError` whose message starts with the flags it is about
(:func:`name_flags`); only the command prints and exits.
"""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING, Any

from ..cli.configs import add_config_flags, add_scanned_flags
from ..cli.tools import (
    SETTING_FLAGS,
    ArgumentParser,
    RawDescriptionHelpFormatter,
    add_common_arguments,
    add_fresh_argument,
    add_number,
    add_seeds,
    add_setting_arguments,
)
from ..core.setting import D_MAX
from ..infra.limits import TAU_MIN
from ..infra.paths import SCAN, run_name
from .config import ScanConfig
from .defaults import DEFAULT_Q_FACTORS, DEFAULT_SEEDS, PROG, RESULTS_DIR
from .schema import CONFIGS, KEY_FLAGS, OPTIONS, SETTING_AXES, ScanError

if TYPE_CHECKING:
    from .grid import ScanSpec

#: the options whose flag takes a list (among the scan axes), and those that take one value
_AXIS_OPTIONS = tuple(o for o in OPTIONS if o.axis and o.flag)
_SINGLE_OPTIONS = tuple(o for o in OPTIONS if not o.axis and o.flag)


def _add_axis_arguments(ap: argparse.ArgumentParser) -> None:
    """The scan axes: lists of values, each replacing its single-valued Setting flag, each value checked at
    parse time by the rule the library applies (the Setting's ranges, the options' fields)."""
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
    add_scanned_flags(g, CONFIGS, axes=True)
    add_seeds(
        g,
        None,
        f"number of seeds, an integer >= 1: seeds --first-seed F … F+K-1 (default {len(DEFAULT_SEEDS)}; "
        "with --spec: the spec's seed list). Any other list of seeds: seed = [...] in a --spec file",
    )
    add_config_flags(g, ScanConfig, only=("first_seed",))


def scan_parser() -> argparse.ArgumentParser:
    """The flags of ``python -m theorydyn.scan`` (its ``build_parser``)."""
    ap = ArgumentParser(
        prog=PROG,
        description="Where do the phases of Section 4.1 hold, and when? A resumable scan.",
        formatter_class=RawDescriptionHelpFormatter,
        conflict_handler="resolve",
        epilog="With only --D/--C: q in {0.6, 0.8, 1, 1.2, 1.4}·C²/D (when one size) × seeds {0, 1, 2}, "
        "reduced gradient flow to s = 5·10⁴·max(1, D/64)^1.5 (2.5 × the ledger's "
        "horizon) with 4000 Monte Carlo samples.",
    )
    add_config_flags(ap, ScanConfig, only=("spec", "name"))
    add_setting_arguments(ap)  # the axes below replace the Setting's --D, --C, --q, --tau
    _add_axis_arguments(ap)
    solver = ap.add_argument_group("solver options")  # one value each, each checked by its field's rule
    add_scanned_flags(solver, CONFIGS, axes=False)
    r = ap.add_argument_group("running")
    add_config_flags(r, ScanConfig, only=("workers", "scheduler", "no_plots"))
    add_common_arguments(
        r,
        seed=None,
        out=RESULTS_DIR,
        out_help="output folder: the results store and <name>.csv, the plots beside them",
        force="machine",
    )
    add_fresh_argument(
        r, "this scan's rows in the results store, its CSV export, trajectories and figures", aliases=("--recompute",)
    )
    add_config_flags(r, ScanConfig, only=("runner",))
    return ap


def scan_name(name: str) -> str:
    """A file name for the scan's results (:func:`theorydyn.infra.paths.safe_name`)."""
    return run_name("scan", name)


def _given(args: argparse.Namespace) -> dict[str, list[Any]]:
    """The grid keys the flags set, each to its list of values, in the flags' order."""
    given: dict[str, list[Any]] = {}
    for k in (*SETTING_AXES, *(o.name for o in _AXIS_OPTIONS)):
        vals = getattr(args, k)
        if vals is not None:
            given[k] = list(dict.fromkeys(vals))  # keep order, drop repeats
    if args.seeds is not None or args.first_seed is not None:  # --seeds K: K seeds from --first-seed
        first = args.first_seed or 0
        given["seed"] = list(range(first, first + (len(DEFAULT_SEEDS) if args.seeds is None else args.seeds)))
    defaults = scan_parser()
    for k in SETTING_FLAGS:  # the Setting's single-valued flags: those away from their default
        if k not in SETTING_AXES and getattr(args, k) != defaults.get_default(k):
            given[k] = [getattr(args, k)]
    for o in _SINGLE_OPTIONS:
        if getattr(args, o.name) is not None:
            given[o.name] = [getattr(args, o.name)]
    return given


def spec_from_args(args: argparse.Namespace) -> ScanSpec:
    """The scan the flags describe (on top of ``--spec`` when given)."""
    from .grid import ScanSpec

    if args.spec is not None:
        try:
            spec = ScanSpec.from_toml(args.spec)
        except ScanError as e:
            raise ScanError(str(e) if str(e).startswith("--spec") else f"--spec: {e}") from None
        tokens = [spec.name]
    else:
        spec = ScanSpec(name="", base={}, axes={})
        tokens = []
    given = _given(args)
    if not args.spec:
        # The default scan around docs/theory.md §9.
        D = given.get("D", [64])
        C = given.get("C", [4])
        given.setdefault("D", D)
        given.setdefault("C", C)
        name_tokens = [SCAN.token("D", D), SCAN.token("C", C)]
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
            tokens.append("sim" if k == "simulate" else SCAN.token(k.replace("_", ""), vals))
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
    spec.name = scan_name(args.name or "_".join(tokens))
    return spec


def run_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keywords of :func:`theorydyn.scan.run.run_scan_report` that the flags set (where the rows go,
    how the points run, the plots)."""
    return dict(
        results_dir=args.out,
        fresh=args.fresh,
        workers=args.workers,
        scheduler=args.scheduler,
        force_memory=args.force,
        progress=not args.quiet,
        plots=not args.no_plots,
    )


def name_flags(message: str, args: argparse.Namespace) -> str:
    """Prefix a grid's message with the flags of the keys it names (``--D: D must be …``,
    :data:`~theorydyn.scan.schema.KEY_FLAGS`); a value that may have come from the spec file names
    ``--spec`` as well."""
    if message.startswith("--"):
        return message
    head = message.split("\n", 2)[:2]
    named = [
        flag
        for key, flag in KEY_FLAGS.items()
        if any(re.search(rf"(?<![\w.]){re.escape(key)}(=| must)", line) for line in head)
    ]
    if args.spec is not None:
        named.append("--spec")
    return f"{'/'.join(dict.fromkeys(named))}: {message}" if named else message


def scan_from_args(args: argparse.Namespace) -> ScanSpec:
    """The scan the flags describe, with every input checked before any work: the flags, the spec file,
    every point of the grid (its setting, options and memory estimate) and the runner.

    Raises:
        ScanError: the message starting with the flags it is about (:func:`name_flags`).
    """
    from .grid import validate_points
    from .run import check_runner

    cores = os.cpu_count() or 1
    if args.workers > 4 * cores:
        raise ScanError(
            f"--workers: {args.workers} worker processes on {cores} cores (at most 4 per core: each worker holds "
            f"a point in memory)"
        )
    if args.name is not None and not args.name.strip():
        raise ScanError("--name: must not be empty")
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
        raise ScanError(name_flags(str(e), args)) from None
    return spec
