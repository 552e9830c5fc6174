"""Benchmarks: each measures a theorydyn kernel against a plain reference implementation in the
same run and prints the ratio (no timings are asserted anywhere).

    python -m theorydyn.bench reduced     # reduced risk-and-gradient (Numba tables vs NumPy), flow wall time
    python -m theorydyn.bench simulate    # the finite-sample simulator (theorydyn.bench.simulate.run)
    python -m theorydyn.bench all

Each benchmark is a module of this package with a function ``run(argv: list[str] | None) -> int``
(``simulate`` may take no argument).
"""

from __future__ import annotations

import time
from typing import Callable


def best_time(fn: Callable[[], object], repeats: int = 5, min_total: float = 0.2) -> float:
    """Best wall time of ``fn()`` over ``repeats`` calls (more calls while the total is under ``min_total`` s)."""
    times: list[float] = []
    t_start = time.perf_counter()
    while len(times) < repeats or (time.perf_counter() - t_start < min_total and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)
