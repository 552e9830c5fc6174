"""The transfer experiment at the ledger's sizes: the run behind the rows of Theorems 5.1 and 5.2.

:func:`ledger_run` runs :func:`theorydyn.transfer.experiment.run` at the sizes the claim declares (made
from :data:`~theorydyn.transfer.config.QUICK_RUN` or :data:`~theorydyn.transfer.config.FULL_RUN`; at
:func:`~theorydyn.transfer.experiment.base_setting`, every method of
:data:`~theorydyn.transfer.sizes.DEFAULT_METHODS` and the generic kernel learner) and returns its tables;
:mod:`theorydyn.claims.transfer` turns them into rows (``checks_from``) and runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .config import TransferConfig
from .experiment import GENERIC, base_setting, run
from .sizes import DEFAULT_METHODS


@dataclass(frozen=True)
class LedgerRun:
    """The tables of one ledger run (:func:`theorydyn.transfer.experiment.run`'s ``summary``, Ñ_target
    table ``tgt``, growth fits ``slopes``, upstream table ``up``; ``levels`` the per-D targets from
    ``transfer_levels.csv``), its options and the params every row names."""

    summary: pd.DataFrame
    tgt: pd.DataFrame
    slopes: pd.DataFrame
    levels: pd.DataFrame
    up: pd.DataFrame
    opts: TransferConfig
    params: dict


def ledger_run(
    Ds: Sequence[int],
    opts: TransferConfig,
    quick: bool,
    out: Path,
    progress: Callable[[str], None] | None = None,
) -> LedgerRun:
    """The ledger's transfer run at the D's ``Ds`` with the options ``opts`` (the sizes the claim declares:
    :data:`theorydyn.claims.transfer.SIZES`, made from :data:`~.config.QUICK_RUN` / :data:`~.config.FULL_RUN`;
    ``quick`` is named in the rows' params), rows and caches in ``out`` (reruns resume: each finished row
    is in the store there)."""
    methods = DEFAULT_METHODS + GENERIC  # the kernel learner: Theorem 5.2's generic learner
    _raw, summary, tgt, slopes, up = run(base_setting(), tuple(Ds), opts, methods=methods, out=out, progress=progress)
    levels = pd.read_csv(out / "transfer_levels.csv")
    params = dict(
        C=4,
        K=opts.count,
        nu=1 / 64,
        Ds=list(Ds),
        seeds=opts.seeds,
        eps=opts.eps,
        err_eps=opts.err_eps,
        target=opts.target,
        N_grid=f"{list(opts.Ns)} (capped per method and D)",
        N_test=opts.N_test,
        quick=quick,
    )
    return LedgerRun(summary, tgt, slopes, levels, up, opts, params)
