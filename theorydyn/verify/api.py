"""The ledger for a notebook: :func:`ledger` returns the claims' rows as a DataFrame (the command is
``python -m theorydyn.verify``). Exported at the root as ``theorydyn.ledger``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .. import claims
from ..core.setting import Setting
from .core import collect
from .defaults import DEFAULT_DIR

__all__ = ["ledger"]


def ledger(
    setting: Setting | None = None,
    *,
    quick: bool = True,
    only: list[str] | None = None,
    store: str | Path | None = None,
    recompute: bool = False,
    progress: bool = False,
) -> pd.DataFrame:
    """The claims ledger as a DataFrame, for a notebook: :func:`collect` with the command's store.

    ``setting`` (default ``Setting()``, D = 64, C = 4), ``quick`` (the quick sizes, the default here),
    ``only`` (claim names or the groups ``reduced`` / ``theorems``; :func:`theorydyn.claims.select`).
    Each claim is committed to ``store`` (default: the ledger's folder ``<run dir>/ledger``, the same
    store ``python -m theorydyn.verify`` uses) as it finishes and read back on the next call, unless
    ``recompute``. Columns: :data:`theorydyn.verify.COLUMNS` (claim, quantity, paper, measured, ci_low, ci_high,
    threshold, verdict, note, …).

    >>> import tempfile
    >>> from theorydyn import Setting
    >>> df = ledger(Setting(D=16, C=4), only=["definition21"], store=tempfile.mkdtemp())
    >>> set(df["verdict"]) <= {"PASS", "FAIL", "DEVIATES", "INFO", "OUT_OF_SCOPE", "NOT_RUN"}
    True
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
    return collect(s, quick=quick, only=only, progress=progress, store=folder, recompute=recompute)
