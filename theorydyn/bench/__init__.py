"""Benchmarks: each measures a theorydyn kernel against a plain reference implementation in the
same run and prints the ratio (no timings are asserted anywhere).

    python -m theorydyn.bench reduced     # reduced risk end to end (sampling included) vs NumPy, flow wall time
    python -m theorydyn.bench reduced --scaling      # the largest D whose default flow fits a time budget
    python -m theorydyn.bench simulate    # the simulator step vs one pass over X, torch autograd, simulate()
    python -m theorydyn.bench simulate --scaling     # step time against N and D; memory per sample
    python -m theorydyn.bench all

Every benchmark prints the machine (:func:`machine_info`) next to its numbers, because the
numbers are only meaningful with it (and with the load average, which is printed too).

Each benchmark is a module of this package with a function ``run(argv: list[str] | None) -> int``
(``simulate`` may take no argument).
"""

from __future__ import annotations

import functools
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..atomic import write_with
from ..cli import add_common_arguments, fail


def best_time(fn: Callable[[], object], repeats: int = 5, min_total: float = 0.2) -> float:
    """Best wall time of ``fn()`` over ``repeats`` calls (more calls while the total is under ``min_total`` s)."""
    times: list[float] = []
    t_start = time.perf_counter()
    while len(times) < repeats or (time.perf_counter() - t_start < min_total and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def machine_info() -> dict[str, object]:
    """CPU model, cores usable by this process, thread count of Numba, library versions, load, and the
    host's numerics identity (:func:`theorydyn.provenance.numerics_host`: CPU family, model and flags,
    the kernel OpenBLAS picked), since a model name such as "AMD EPYC" covers several machines."""
    import numba  # here, not at the top: ``python -m theorydyn.bench --help`` loads no Numba

    from ..provenance import cpu_model, numerics_host

    info: dict[str, Any] = dict(
        cpu=cpu_model(),
        cores=len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        numba_threads=numba.get_num_threads(),
        python=platform.python_version(),
        numpy=np.__version__,
        numba=numba.__version__,
    )
    try:
        import torch  # optional (extra "vision"): only its version is reported

        info["torch"] = torch.__version__
    except ImportError:
        info["torch"] = "not installed"
    info["loadavg_1min"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    info["host"] = numerics_host()
    return info


def format_machine(info: dict[str, Any]) -> str:
    return (
        "machine: {cpu}, {cores} cores usable (numba threads {numba_threads}); python {python}, numpy {numpy}, "
        "numba {numba}, torch {torch}; load average (1 min) {loadavg_1min:.2f}\nhost: {host}"
    ).format(**info)


def write_tables(tables, out, info: dict) -> None:
    """Write each (name, DataFrame) of a benchmark as CSV with the machine's description in every row:
    ``out`` for the main table, ``out`` with ``_<name>`` before the suffix for the others."""
    out.parent.mkdir(parents=True, exist_ok=True)
    for name, t in tables:
        t = t.assign(**{k: str(v) for k, v in info.items()})
        path = out if name == "main" else out.with_name(f"{out.stem}_{name}{out.suffix}")
        write_with(path, functools.partial(t.to_csv, index=False))  # atomic, never through a link
        print(f"table: {path}")


def add_bench_arguments(parser, out: str, out_help: str) -> None:
    """The flags every benchmark shares (:func:`theorydyn.cli.add_common_arguments`): ``--out`` (default
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
