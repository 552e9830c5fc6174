"""Round-robin timing of the benchmarks: a pause (:data:`SETTLE`) and one untimed call before each
repeat, :data:`BATCH` calls timed back to back, the median over repeats (:func:`_interleaved`)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import numpy as np

#: Pause before each timed call (s). After a call, numpy's OpenBLAS keeps its workers spinning for
#: 2²⁸ cycles (~0.1 s) and GNU OpenMP (Numba's and torch's thread team) for 300,000 iterations (a
#: few ms); on a 2-core machine a contender started right after shares the cores with them. Measured
#: on the 2-core AMD EPYC (N = 16384, D = d = 64, float32, medians of 31): the fused step right after
#: one ``X @ v`` 22–24 ms against 12 ms alone, and that pass right after the step 10.3–10.6 ms against
#: 5.8–6.7 ms; the main table prints both orders ("alternating with no pause"). Shorter spins
#: (OPENBLAS_THREAD_TIMEOUT=22, GOMP_SPINCOUNT=30000) removed the contention but made the one pass
#: itself 25–60% slower in its median (waking a sleeping thread costs milliseconds on this virtual
#: machine), so theorydyn sets neither: both are the machine's and the libraries', not the kernel's.
SETTLE = 0.2

#: Calls timed back to back after each pause, their mean the repeat's time, the pause followed by one
#: untimed call. A GD loop runs its steps back to back, while the first call after a pause also pays
#: for waking the threads of its library, which this virtual machine parks while idle: measured on
#: the 2-core AMD EPYC (N = 16384, D = d = 64, medians of 21) the float32 step 10.1–13.2 ms back to
#: back against 15.6–17.7 ms right after a 0.15 s pause, and one pass 4.8–8.6 ms against 5.0–10.0 ms.
BATCH = 4


@dataclasses.dataclass(frozen=True)
class Timed:
    """What a timed function returns when it times a part of itself (``seconds``) instead of the whole."""

    seconds: float


def _second_after_first(first: Callable[[], Any], second: Callable[[], Any]) -> Callable[[], Timed]:
    """``second``'s wall time when it starts right after ``first`` returns (no pause: what a script
    alternating the two sees, the idle threads of ``first``'s library still awake)."""

    def run() -> Timed:
        first()
        t0 = time.perf_counter()
        second()
        return Timed(time.perf_counter() - t0)

    return run


def _interleaved(fns: dict, repeats: int, settle: float = SETTLE, batch: int = BATCH) -> dict[str, float]:
    """Median over ``repeats`` round-robin repeats (after one warm-up) of each function's time per call:
    each repeat pauses ``settle`` s, makes one untimed call, then times ``batch`` calls back to back
    (:data:`BATCH`). A function returning an int n is timed per unit (wall time / n), one returning
    :class:`Timed` by the time it reports."""
    for f in fns.values():
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            time.sleep(settle)
            f()
            per_call = []
            for _ in range(batch):
                t0 = time.perf_counter()
                n = f()
                dt = time.perf_counter() - t0
                per_call.append(n.seconds if isinstance(n, Timed) else dt / (n if isinstance(n, int) else 1))
            times[k].append(float(np.mean(per_call)))
    return {k: float(np.median(t)) for k, t in times.items()}
