"""The command layer the benchmarks share: their flags (each declared once, a :class:`Flag` row of a
table: the parser, the parts' checks and the defaults are read from the tables), the checks made before
any work, the options built from the parsed flags, and the run that prints (the measurements print nothing).

Imports nothing heavy: ``python -m theorydyn.bench NAME --help`` loads no solver.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..cli.runner import Invocation
from ..cli.tools import ArgumentParser, add_common_arguments, fail, number

#: the title of the group of flags that only the main table uses
MAIN_GROUP = "main table (not with --scaling-only)"


@dataclass(frozen=True)
class Flag:
    """One flag of a benchmark command, declared once: ``flag`` (``--scaling-N``) and its ``help``;
    ``kind`` int or float: its converter is :func:`theorydyn.cli.tools.number` (``low``, ``high``,
    ``low_open``; it names the flag), str: text (with ``choices``), bool: a switch; ``nargs`` and
    ``default`` as argparse's. ``fill``: the value of a flag left out whose parser default is None (None
    there, so that a flag given where its part does not run is seen; :meth:`BenchFlags.fill_defaults`)."""

    flag: str
    help: str
    kind: type = int
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    nargs: str | None = None
    choices: tuple[str, ...] | None = None
    default: Any = None
    fill: Any = None

    @property
    def dest(self) -> str:
        return self.flag[2:].replace("-", "_")

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        if self.kind is bool:
            parser.add_argument(self.flag, action="store_true", help=self.help)
            return
        kw: dict[str, Any] = dict(nargs=self.nargs, choices=self.choices, default=self.default, help=self.help)
        if self.kind in (int, float):
            kw["type"] = number(self.kind, self.flag, low=self.low, high=self.high, low_open=self.low_open)
        parser.add_argument(self.flag, **kw)


def repeats_flag(help: str, **kw: Any) -> Flag:
    """``--repeats``: timed calls per measurement, an integer >= 1 (``kw``: :class:`Flag`'s ``default``, ``fill``)."""
    return Flag("--repeats", help, low=1, **kw)


def settle_flag(help: str, **kw: Any) -> Flag:
    """``--settle``: the pause before timed calls, 0..10 s, that lets spinning BLAS threads sleep (``kw``:
    :class:`Flag`'s ``default``, ``fill``)."""
    return Flag("--settle", help, float, low=0, high=10, **kw)


@dataclass(frozen=True)
class BenchFlags:
    """The flags of a benchmark with a main table and a ``--scaling`` part, in their order on the
    command line: ``main`` (group :data:`MAIN_GROUP`), ``common`` (both parts), ``--scaling`` (help
    ``scaling_help``) and ``--scaling-only``, ``scaling`` (group ``--scaling``), then those of
    :func:`add_bench_arguments` (``--out``: default ``out``, help ``out_help``)."""

    main: Sequence[Flag]
    common: Sequence[Flag]
    scaling_help: str
    scaling: Sequence[Flag]
    out: str
    out_help: str

    def parser(self, prog: str, description: str) -> argparse.ArgumentParser:
        ap = ArgumentParser(prog=prog, description=description)
        g = ap.add_argument_group(MAIN_GROUP)
        for f in self.main:
            f.add_to(g)
        for f in self.common:
            f.add_to(ap)
        ap.add_argument("--scaling", action="store_true", help=self.scaling_help)
        ap.add_argument("--scaling-only", action="store_true", help="only the --scaling part")
        g = ap.add_argument_group("--scaling")
        for f in self.scaling:
            f.add_to(g)
        add_bench_arguments(ap, self.out, self.out_help)
        return ap

    def check_parts(self, args, given: set[str] | frozenset[str], prog: str) -> None:
        """Refuse, before any work (exit 2 naming the flag), what the two parts cannot do: ``--scaling``
        with ``--scaling-only``, a flag of the main table with ``--scaling-only``, a flag of ``--scaling``
        without it. ``given``: the dests given on the command line."""
        if args.scaling and args.scaling_only:
            fail("--scaling: implied by --scaling-only; give one of them", prog)
        if args.scaling_only:
            for f in self.main:
                if f.dest in given:
                    fail(f"{f.flag}: only used by the main table, which --scaling-only skips", prog)
        elif not args.scaling:
            for f in self.scaling:
                if f.dest in given:
                    fail(f"{f.flag}: only used by --scaling / --scaling-only", prog)

    def fill_defaults(self, args) -> None:
        """Set each flag that was not given and has a :attr:`Flag.fill` (None in the parser, so that a flag
        given where it does nothing is seen) to that value."""
        for f in (*self.main, *self.common, *self.scaling):
            if f.fill is not None and getattr(args, f.dest) is None:
                setattr(args, f.dest, f.fill)


def add_bench_arguments(parser, out: str, out_help: str) -> None:
    """The flags every benchmark shares (:func:`theorydyn.cli.tools.add_common_arguments`): ``--out`` (default
    ``out``), ``--force`` (the memory guard's, against the machine's memory); no ``--seed``, and no
    ``--quiet``: no progress bar to silence, the tables are the output."""
    add_common_arguments(parser, seed=None, out=out, out_help=out_help, quiet=False, force="machine")


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
