"""Benchmarks: each measures a theorydyn kernel against a plain reference implementation in the
same run and prints the ratio (no timings are asserted anywhere).

    python -m theorydyn.bench reduced     # reduced risk end to end (sampling included) vs NumPy, flow wall time
    python -m theorydyn.bench reduced --scaling      # the largest D whose default flow fits a time budget
    python -m theorydyn.bench simulate    # the simulator step vs one pass over X, torch autograd, simulate()
    python -m theorydyn.bench simulate --scaling     # step time against N and D; memory per sample
    python -m theorydyn.bench all

Every benchmark prints the machine (:func:`machine_info`) next to its numbers, because the
numbers are only meaningful with it (and with the load average, which is printed too).

Each benchmark is a configuration and two modules. The configuration (:mod:`.config`: a frozen
:class:`theorydyn.core.config.Config`, one field per flag) is what it measures; the measurement, ``NAME.py``,
whose ``measure(options, report=None)`` takes it and returns its tables (``[(name, DataFrame)]``), its messages
going to the ``report`` callback (None: silent); and its command, ``NAME_cli.py``: the parser made from the
configuration's fields, the checks made before any work (:mod:`.flags`), and a
:class:`theorydyn.cli.runner.Command` that prints. Adding an option is one field in :mod:`.config`. The dispatcher
(:mod:`theorydyn.bench.__main__`) lists them as records (:class:`theorydyn.infra.registry.Entry`).
"""

from __future__ import annotations

import functools
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..infra.atomic import write_with


class BenchError(RuntimeError):
    """A benchmark's contenders disagree (or one of them failed) before any ratio could be measured:
    the command prints the message and exits 1."""


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
    host's numerics identity (:func:`theorydyn.infra.provenance.numerics_host`: CPU family, model and flags,
    the kernel OpenBLAS picked), since a model name such as "AMD EPYC" covers several machines."""
    import numba  # here, not at the top: ``python -m theorydyn.bench --help`` loads no Numba

    from ..infra.provenance import cpu_model, numerics_host

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


def write_tables(tables, out, info: dict) -> list[Path]:
    """Write each (name, DataFrame) of a benchmark as CSV with the machine's description in every row:
    ``out`` for the main table, ``out`` with ``_<name>`` before the suffix for the others. Returns the
    paths written, in order."""
    out.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, t in tables:
        t = t.assign(**{k: str(v) for k, v in info.items()})
        path = out if name == "main" else out.with_name(f"{out.stem}_{name}{out.suffix}")
        write_with(path, functools.partial(t.to_csv, index=False))  # atomic, never through a link
        paths.append(path)
    return paths
