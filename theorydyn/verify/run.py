"""One ledger run as the command makes it: its memory estimate, where its claims run (here, or on a Dask
cluster), the collection into the store, and the ledger written with its provenance."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import claims
from ..core.setting import Setting
from .config import LedgerConfig

if TYPE_CHECKING:
    import pandas as pd

    from ..infra.memory import MemoryEstimate


def ledger_memory(s: Setting, cfg: LedgerConfig) -> MemoryEstimate | None:
    """The largest peak among the selected claims' ``memory`` (with the options their ``checks`` get):
    they run one after the other, each freeing its arrays before the next starts. Claims that are
    not installed are left out (a SKIP row, nothing allocated); None when none is."""
    parts = []
    for name in claims.select(cfg.only):
        try:
            mod = claims.load(name)
        except ImportError:
            continue  # a SKIP row, nothing allocated
        parts.append(mod.memory(s, cfg.quick, **cfg.options.get(name, {})))
    return max(parts, key=lambda e: e.total) if parts else None


def open_cluster(scheduler: str | None):
    """The executor handle of the Dask cluster at ``scheduler`` (:func:`theorydyn.scan.executor.make_executor`),
    or None (here, one claim after the other).

    Raises:
        ValueError: ``--scheduler: …``, the cluster cannot be reached (before any claim runs).
    """
    if scheduler is None:
        return None
    from ..scan.executor import make_executor
    from ..scan.grid import ScanError

    try:
        return make_executor(scheduler=scheduler)
    except ScanError as e:
        raise ValueError(str(e) if str(e).startswith("--scheduler") else f"--scheduler: {e}") from None


def run_ledger(s: Setting, cfg: LedgerConfig, folder: Path, *, progress: bool, cluster=None) -> pd.DataFrame:
    """:func:`theorydyn.verify.collect` of ``cfg``'s claims at ``s``, each stored in ``folder`` as it
    finishes; on ``cluster`` (:func:`open_cluster`: one task per claim; closed at the end, the claims still
    queued cancelled on a Ctrl-C), else here.

    Raises:
        theorydyn.infra.store.StoreError: the store cannot hold the results (before any claim runs).
        OSError: the disk filled under the store (the claims committed so far stay).
    """
    from . import core

    try:
        return core.collect(
            s,
            quick=cfg.quick,
            only=cfg.only,
            progress=progress,
            options=cfg.options,
            store=folder,
            recompute=cfg.fresh,
            executor=cluster.executor if cluster is not None else None,
        )
    except KeyboardInterrupt:  # the claims finished so far are stored
        if cluster is not None:  # the claims still queued on the cluster are cancelled, not left running
            cluster.close(cancel=True)
            cluster = None
        raise
    finally:
        if cluster is not None:
            cluster.close()


def ledger_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The ledger as its CSV holds it: the rows, the provenance columns, and ``ledger_rows`` (the count
    written, which lets a reader see a torn ledger, :func:`theorydyn.verify.files.whole_ledger`)."""
    from ..infra.provenance import attach_to_frame, provenance

    return attach_to_frame(df, provenance()).assign(ledger_rows=len(df))
