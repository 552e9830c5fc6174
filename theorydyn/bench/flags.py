"""The command layer the benchmarks share: their parser (one flag per field of the benchmark's configuration,
:mod:`theorydyn.bench.config`, in the groups of its :class:`~theorydyn.bench.config.BenchParts`), the checks
of the parts made before any work, the configuration built from the parsed flags, and the run that prints
(the measurements print nothing).

Imports nothing heavy: ``python -m theorydyn.bench NAME --help`` loads no solver.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from ..cli.configs import C, add_config_flags, config_from_args, flag_of
from ..cli.runner import Invocation
from ..cli.tools import ArgumentParser, add_common_arguments, fail
from .config import BenchParts

#: the title of the group of flags that only the main table uses
MAIN_GROUP = "main table (not with --scaling-only)"


def bench_parser(
    prog: str, description: str, cls: type, parts: BenchParts, out: str, out_help: str
) -> argparse.ArgumentParser:
    """The parser of a benchmark whose configuration is ``cls``: the fields of ``parts.main`` (group
    :data:`MAIN_GROUP`), ``parts.common``, ``--scaling`` and ``--scaling-only``, ``parts.scaling`` (group
    ``--scaling``), then those of :func:`add_bench_arguments` (``--out``: default ``out``, help ``out_help``)."""
    ap = ArgumentParser(prog=prog, description=description)
    add_config_flags(ap.add_argument_group(MAIN_GROUP), cls, only=parts.main)
    add_config_flags(ap, cls, only=(*parts.common, "scaling", "scaling_only"))
    add_config_flags(ap.add_argument_group("--scaling"), cls, only=parts.scaling)
    add_bench_arguments(ap, out, out_help)
    return ap


def check_parts(cls: type, parts: BenchParts, args, given: set[str] | frozenset[str], prog: str) -> None:
    """Refuse, before any work (exit 2 naming the flag), what the two parts cannot do: ``--scaling``
    with ``--scaling-only``, a flag of the main table with ``--scaling-only``, a flag of ``--scaling``
    without it. ``given``: the dests given on the command line."""
    if args.scaling and args.scaling_only:
        fail("--scaling: implied by --scaling-only; give one of them", prog)
    if args.scaling_only:
        for name in parts.main:
            if name in given:
                fail(f"{flag_of(cls, name)}: only used by the main table, which --scaling-only skips", prog)
    elif not args.scaling:
        for name in parts.scaling:
            if name in given:
                fail(f"{flag_of(cls, name)}: only used by --scaling / --scaling-only", prog)


def add_bench_arguments(parser, out: str, out_help: str) -> None:
    """The flags every benchmark shares (:func:`theorydyn.cli.tools.add_common_arguments`): ``--out`` (default
    ``out``), ``--force`` (the memory guard's, against the machine's memory); no ``--seed``, and no
    ``--quiet``: no progress bar to silence, the tables are the output."""
    add_common_arguments(parser, seed=None, out=out, out_help=out_help, quiet=False, force="machine")


def config_of(cls: type[C], args: argparse.Namespace, prog: str) -> C:
    """The benchmark's configuration ``cls`` of the parsed (and checked) flags (a value its rule refuses:
    exit 2 naming the flag)."""
    try:
        return config_from_args(cls, args)
    except ValueError as e:
        fail(str(e), prog)


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
