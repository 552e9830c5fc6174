"""The CPU thread policy of the vision commands: OpenMP threads that sleep while they wait.

torch runs its intra-op parallel loops on GNU OpenMP (libgomp). By default a libgomp thread that
reaches the barrier at the end of a parallel region spins (``GOMP_SPINCOUNT``, some 10⁵ iterations)
before it sleeps. A digits network runs thousands of small operators per epoch, each a parallel
region ending in a barrier. Alone on the cores that costs nothing; beside other busy processes, a
spinning thread holds a core that its team-mate is waiting for, so a barrier can last a scheduler
time slice instead of microseconds: ``vision digits --threads 2`` beside two other 2-thread torch jobs
fell to 17 images/s (1 thread: 1200–1500). ``OMP_WAIT_POLICY=PASSIVE`` makes a waiting thread sleep at
once and give its core back (docs/vision.md, "Threads", has the measurement).

libgomp reads the variable once, when ``import torch`` loads it, so :func:`passive_wait` must run
before the first import of torch in the process; the vision command-line tools call it first thing.
A policy the user set (``OMP_WAIT_POLICY=ACTIVE``) is kept. The wait policy changes no number: the
threads compute the same reductions in the same order either way.
"""

from __future__ import annotations

import os
import sys

VARIABLE = "OMP_WAIT_POLICY"


def passive_wait() -> str:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in this process's environment unless a policy is already set,
    and return the policy in force for torch: the variable's value, or ``"default (torch already
    imported)"`` when torch was imported before the call and the variable cannot act any more."""
    if "torch" not in sys.modules:
        os.environ.setdefault(VARIABLE, "PASSIVE")
    policy = os.environ.get(VARIABLE)
    if "torch" in sys.modules and policy is None:
        return "default (torch already imported)"
    return str(policy).upper()


def describe(threads: int) -> str:
    """The header fragment of a CPU training run: ``2 torch threads, OpenMP wait PASSIVE``."""
    policy = os.environ.get(VARIABLE, "default").upper()
    return f"{threads} torch thread{'s' if threads != 1 else ''}, OpenMP wait {policy}"
