"""The ledger for a notebook: :func:`ledger` returns the summary (one row per claim of the paper) beside
the claims' rows, two DataFrames (the command is ``python -m theorydyn.verify``). Exported at the
root as ``theorydyn.ledger``."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pandas as pd

from .. import claims
from ..core.setting import Setting
from .core import collect
from .defaults import DEFAULT_DIR
from .summary import summarize

__all__ = ["Ledger", "ledger"]


class Ledger(NamedTuple):
    """The ledger as two DataFrames: ``summary``, one row per claim of the paper with the verdict of
    its deciding row (:func:`theorydyn.verify.summary.summarize`; its ``row`` numbers the detail's
    rows from 1), and ``detail``, every row (:data:`theorydyn.verify.COLUMNS`)."""

    summary: pd.DataFrame
    detail: pd.DataFrame


def ledger(
    setting: Setting | None = None,
    *,
    quick: bool = True,
    only: list[str] | None = None,
    store: str | Path | None = None,
    recompute: bool = False,
    progress: bool = False,
) -> Ledger:
    """The claims ledger for a notebook: :func:`collect` with the command's store, and its summary.

    ``setting`` (default ``Setting()``, D = 64, C = 4), ``quick`` (the quick sizes, the default here),
    ``only`` (claim names or the groups ``reduced`` / ``theorems``; :func:`theorydyn.claims.select`).
    Each claim is committed to ``store`` (default: the ledger's folder ``<run dir>/ledger``, the same
    store ``python -m theorydyn.verify`` uses) as it finishes and read back on the next call, unless
    ``recompute``.

    Returns a :class:`Ledger` ``(summary, detail)``: ``detail`` has the columns
    :data:`theorydyn.verify.COLUMNS` (claim, quantity, measured, ci_low, ci_high, threshold, verdict,
    note, …), one row per check; ``summary`` one row per claim of the paper (claim, verdict, the
    deciding row's quantity, measured and interval, its setting where it differs from ``setting``,
    ``row``: its number in ``detail`` counted from 1, …), the same lines ``verify`` ends with.

    >>> import tempfile
    >>> from theorydyn import Setting
    >>> summary, detail = ledger(Setting(D=16, C=4), only=["definition21"], store=tempfile.mkdtemp())
    >>> set(detail["verdict"]) <= {"PASS", "FAIL", "DEVIATES", "INFO", "OUT_OF_SCOPE", "NOT_RUN"}
    True
    >>> summary["claim"].tolist(), summary["verdict"].iloc[0] == detail["verdict"].iloc[summary["row"].iloc[0] - 1]
    (['Definition 2.1'], True)
    """
    s = setting if setting is not None else Setting()
    if not isinstance(s, Setting):
        raise TypeError(f"setting must be a theorydyn.Setting, got {type(s).__name__}")
    if only is not None:
        unknown = [n for n in only if n not in claims.names()]
        if unknown:
            raise ValueError(f"only: unknown claim(s) {unknown}; known: {', '.join(claims.names())}")
    folder = Path(store) if store is not None else DEFAULT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    detail = collect(s, quick=quick, only=only, progress=progress, store=folder, recompute=recompute)
    return Ledger(summarize(detail, {"D": s.D, "C": s.C, "q": round(s.q, 6)}), detail)
