"""Where a ledger's files are: the results folder and the ledger CSV of ``--out``, a saved ledger read back
whole, the HTML page of ``--report``, and what ``--fresh`` sets aside.

Each function raises ValueError whose message starts with the flag it is about (``--out: …``), for the
command to report (exit 2) before any work; none prints or exits.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.setting import Setting
from .config import LedgerConfig
from .defaults import DEFAULT_DIR, PROG

if TYPE_CHECKING:
    import pandas as pd


def usable(path: Path, flag: str) -> Path:
    """``path``, after checking that the system can look it up (a 256-byte name: ENAMETOOLONG).

    Raises:
        ValueError: ``flag: cannot use …``.
    """
    try:
        path.exists()
    except OSError as e:
        raise ValueError(f"{flag}: cannot use {str(path)!r}: {e.strerror or e}") from None
    return path


def whole_ledger(path: Path) -> pd.DataFrame:
    """A ledger CSV, refused (ValueError) when torn: a last line without its newline, a row without
    a claim or verdict, or fewer rows than its ``ledger_rows`` column says were written."""
    import pandas as pd

    if not path.read_bytes().endswith(b"\n"):
        raise ValueError("the last line is cut (no newline at the end): a torn ledger")
    df = pd.read_csv(path)
    if df[["claim", "verdict"]].isna().any(axis=None):
        raise ValueError("a row has no claim or verdict: a torn ledger")
    if "ledger_rows" in df and not (df["ledger_rows"] == len(df)).all():
        raise ValueError(f"{len(df)} rows, but the ledger was written with {df['ledger_rows'].iloc[0]}: a torn ledger")
    return df


def read_ledger(path: Path, flag: str) -> pd.DataFrame:
    """:func:`whole_ledger`, any failure to read it (ValueError) naming ``flag``: bad input, not a crash."""
    try:
        return whole_ledger(path)
    except Exception as e:  # noqa: BLE001 — any unreadable file is bad input, not a crash
        raise ValueError(f"{flag}: cannot read a ledger from {str(path)!r}: {type(e).__name__}: {e}") from None


def outputs(out: Path | None, s: Setting, cfg: LedgerConfig) -> tuple[Path, Path]:
    """(results folder, ledger CSV) of ``--out`` ``out`` (module docstring of :mod:`theorydyn.verify`):
    None, the default folder; a path ending in .csv, the CSV itself in its folder; else a folder.

    Raises:
        ValueError: a blank path, or a file where a folder is meant (or a folder where a CSV is).
    """
    from .core import default_out

    if out is None:
        return DEFAULT_DIR, default_out(s, cfg.quick, cfg.only, cfg.extra)
    if not str(out).strip():
        raise ValueError(f"--out: must be a folder (or a .csv file path), got {out!r}")
    out = usable(Path(out), "--out")
    if out.suffix.lower() == ".csv":
        if out.is_dir():
            raise ValueError(f"--out: {str(out)!r} is a folder; a path ending in .csv names the ledger CSV")
        return out.parent, out
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {str(out)!r} exists and is not a folder (give a folder, or a path ending in .csv)")
    return out, default_out(s, cfg.quick, cfg.only, cfg.extra, folder=out)


def saved_ledger(s: Setting, cfg: LedgerConfig, *, force: bool = False, quiet: bool = False) -> Path:
    """The ledger CSV that ``--markdown`` or ``--report`` (``cfg.saved``: the flag and its value) reads: the
    CSV given, or the one these options would write.

    Raises:
        ValueError: neither mode asked; a flag that would do nothing there (the run's options, ``force`` and
            ``quiet`` among them, and the other of the two modes; with a CSV given, the options that name a
            ledger), or no ledger.
    """
    if cfg.saved is None:
        raise ValueError("--markdown or --report: neither was given, so there is no saved ledger to read")
    flag, value = cfg.saved
    run_only = {"--force": force, "--fresh/--recompute": cfg.fresh, "--scheduler": cfg.scheduler, "--quiet": quiet}
    run_only |= {"--detail": cfg.detail, "--report": cfg.markdown is not None and cfg.report is not None}
    for other, v in run_only.items():
        if v:
            raise ValueError(f"{other}: has no effect with {flag} (it reads a saved ledger and runs nothing)")
    if value:
        named: dict[str, Any] = {
            "--s-max": cfg.s_max,
            "--n-samples": cfg.n_samples,
            "--seed": cfg.seed,
            "--only": cfg.only,
        }
        if flag == "--markdown":
            named["--out"] = cfg.out
        for other, v in named.items():
            if v is not None:
                raise ValueError(f"{other}: has no effect with {flag} CSV (the rows are read from that CSV)")
    path = Path(value) if value else outputs(cfg.out, s, cfg)[1]
    if not usable(path, flag).is_file():
        raise ValueError(f"{flag}: no ledger at {path} (run {PROG} with the same flags first, or give the CSV path)")
    return path


def report_path(value: str, out: Path | None, csv: Path) -> Path:
    """Where ``--report`` writes: beside the ledger CSV these flags name (``value`` blank), or, for a CSV
    given, in ``--out`` ``out`` (a folder, or a path ending in .html; default the ledger's folder of the
    run directory).

    Raises:
        ValueError: ``--out`` is a file that does not end in .html.
    """
    if not value:
        return csv.with_suffix(".html")
    if out is None:
        return DEFAULT_DIR / (csv.stem + ".html")
    out = usable(Path(out), "--out")
    if out.suffix.lower() == ".html":
        return out
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {str(out)!r} exists and is not a folder (give a folder, or a path ending in .html)")
    return out / (csv.stem + ".html")


def start_over(ledger_csv: Path, folder: Path) -> list[str]:
    """``--fresh``: the earlier ledger CSV renamed to ``<name>.old-<UTC time>``; a damaged results store
    moved aside (``results.sqlite.damaged-<UTC time>``). Returns what was moved, one line each. The
    selected claims' stored rows are set aside by :func:`~theorydyn.verify.collect` (``recompute``: each
    is replaced, the old row kept in the store's rejected table)."""
    from ..infra.atomic import set_aside
    from ..infra.store import DB_NAME, move_aside_if_damaged

    said = []
    moved = set_aside(ledger_csv)
    if moved is not None:
        said.append(f"--fresh: the earlier ledger moved to {moved}")
    if (aside := move_aside_if_damaged(folder / DB_NAME)) is not None:
        said.append(f"--fresh: the damaged store moved to {aside}")
    return said
