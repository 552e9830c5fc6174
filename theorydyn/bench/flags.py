"""The command layer the benchmarks share: their common flags, the checks made before any work, the
options built from the parsed flags, and the run that prints (the measurements print nothing).

Imports nothing heavy: ``python -m theorydyn.bench NAME --help`` loads no solver.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable
from typing import Any

from ..cli.runner import Invocation
from ..cli.tools import add_common_arguments, fail


def add_bench_arguments(parser, out: str, out_help: str) -> None:
    """The flags every benchmark shares (:func:`theorydyn.cli.tools.add_common_arguments`): ``--out`` (default
    ``out``), ``--force`` (the memory guard's, against the machine's memory); no ``--seed``, and no
    ``--quiet``: no progress bar to silence, the tables are the output."""
    add_common_arguments(parser, seed=None, out=out, out_help=out_help, quiet=False, force="machine")


def check_parts(args, given: set[str] | frozenset[str], prog: str, main_flags, scaling_flags) -> None:
    """Refuse, before any work (exit 2 naming the flag), what a benchmark with a main table and a
    ``--scaling`` part cannot do: ``--scaling`` with ``--scaling-only``, a flag of the main table
    (``main_flags``, argparse dests) with ``--scaling-only``, a flag of ``--scaling`` (``scaling_flags``)
    without it. ``given``: the dests given on the command line."""
    if args.scaling and args.scaling_only:
        fail("--scaling: implied by --scaling-only; give one of them", prog)
    if args.scaling_only:
        for k in main_flags:
            if k in given:
                fail(f"{flag_of(k)}: only used by the main table, which --scaling-only skips", prog)
    elif not args.scaling:
        for k in scaling_flags:
            if k in given:
                fail(f"{flag_of(k)}: only used by --scaling / --scaling-only", prog)


def fill_defaults(args, defaults: dict[str, Any]) -> None:
    """Set each flag of ``defaults`` that was not given (None in the parser, so that a flag given where
    it does nothing is seen) to its default."""
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)


def flag_of(dest: str) -> str:
    """The command-line flag of an argparse dest: ``scaling_N`` → ``--scaling-N``."""
    return "--" + dest.replace("_", "-")


def options_from_args(cls: type, args: argparse.Namespace) -> Any:
    """The frozen options ``cls`` of a measurement, from the parsed (and checked) flags of the same
    names; lists become tuples."""
    values = {}
    for f in dataclasses.fields(cls):
        v = getattr(args, f.name)
        values[f.name] = tuple(v) if isinstance(v, list) else v
    return cls(**values)


def say(message: str) -> None:
    """A benchmark command's ``report``: each message on stdout at once (the tables are the output)."""
    print(message, flush=True)


def run_bench(
    inv: Invocation,
    options: Any,
    measure: Callable[..., list],
    prog: str,
    *,
    end: str = "load average (1 min) at the end: {:.2f}",
    error_stream: Any = None,
) -> int:
    """The run every benchmark command makes once its flags are checked: the machine, the
    measurement ``measure(options, report=…)`` (its messages printed as they come), ``end`` with the
    load average at the end, the tables written (``--out``) and named. A
    :class:`theorydyn.bench.BenchError` (contenders that disagree) is one line, ``PROG: error: …``, on
    ``error_stream`` (default stdout), and exit status 1 with nothing written."""
    from . import BenchError, format_machine, machine_info, write_tables

    info = machine_info()
    say(format_machine(info))
    try:
        tables = measure(options, report=say)
    except BenchError as e:
        print(f"{prog}: error: {e}", file=error_stream or sys.stdout)
        return 1
    say(end.format(machine_info()["loadavg_1min"]))
    for path in write_tables(tables, inv.args.out, info):
        print(f"table: {path}")
    return 0
