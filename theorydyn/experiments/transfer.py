"""The transfer experiment of Theorems 5.1 and 5.2 at the ledger's sizes (docs/theory.md §5, §10.10, §10.11).

The experiment itself (frozen attention, ṽ trained on Ñ downstream samples, Ñ_target against D) is
:mod:`theorydyn.transfer`; this module is the door the ledger goes through:

* :func:`run` — :func:`theorydyn.transfer.ledger.ledger_run` at the D's and options a claim declares, at
  :func:`~theorydyn.transfer.base_setting`; returns its tables (:class:`LedgerRun`), rows and caches kept in
  the folder it is given (the transactional store there: reruns resume, its keys unchanged);
* :func:`memory` — the peak of that run (:func:`theorydyn.transfer.memory.transfer_memory`);
* :func:`polylog_sizes_interval` — the "sizes" interval a planted (ln D)^k gets from the censoring-box
  regression of the run's slopes (:func:`theorydyn.transfer.box_regression_interval`);
* the experiment's presets :data:`QUICK` and :data:`FULL`, its options :class:`TransferOptions` (made from a
  preset by :func:`options_from`) and :func:`describe_slope`, the words of a slope row.

:mod:`theorydyn.claims.transfer` turns the tables into rows and runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..core.setting import setting_at
from ..infra.memory import MemoryEstimate
from ..transfer import (
    FULL,
    QUICK,
    TransferOptions,
    base_setting,
    box_regression_interval,
    describe_slope,
    options_from,
)
from ..transfer.ledger import LedgerRun, ledger_run
from ..transfer.memory import transfer_memory

__all__ = [
    "FULL",
    "QUICK",
    "LedgerRun",
    "TransferOptions",
    "describe_slope",
    "memory",
    "options_from",
    "polylog_sizes_interval",
    "run",
]


def run(
    Ds: Sequence[int],
    options: TransferOptions,
    *,
    quick: bool,
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> LedgerRun:
    """The transfer experiment at the D's ``Ds`` with ``options`` (:func:`theorydyn.transfer.ledger.ledger_run`;
    ``quick`` is named in the rows' params), rows and caches in ``out`` (reruns resume)."""
    return ledger_run(Ds, options, quick, out, progress)


def memory(Ds: Sequence[int], options: TransferOptions) -> MemoryEstimate:
    """Peak of :func:`run`: :func:`theorydyn.transfer.memory.transfer_memory` at the largest D of ``Ds`` (the
    D's run in turn; the largest dominates), every method's downstream samples bounded by the largest Ñ of
    the grid (an upper bound); the upstream pre-training counted where that D is simulated."""
    D = max(Ds)
    su = setting_at(base_setting(), D, "count")
    upstream_N = options.upstream_N if D <= options.sim_max_D else None
    return transfer_memory(
        D,
        su.C,
        su.d,
        su.q,
        options.N_test,
        max(options.Ns),
        ceiling_samples=options.ceiling_samples,
        flow_n_samples=options.flow_n_samples,
        upstream_N=upstream_N,
    )


def polylog_sizes_interval(Ds: Sequence[int], k: int) -> tuple[float, float]:
    """The "sizes" interval of the exponent on log D that an exact (ln D)^k gets on the D's ``Ds``: the
    censoring-box regression (:func:`theorydyn.transfer.box_regression_interval`) of y = k ln ln D on
    x = ln D with no censoring, i.e. the Student-t interval its own curvature gives.

    Example:
        >>> lo, hi = polylog_sizes_interval([32, 64, 128, 256], 2)
        >>> bool(lo < 0.45 < hi)
        True
    """
    lnln = k * np.log(np.log(np.asarray(Ds, float)))
    return box_regression_interval(np.log(np.asarray(Ds, float)), lnln, lnln)
