"""Where every command writes: one run directory.

Commands write their outputs (scan rows, ledgers, trajectories, figures, vision runs) under one
folder, :func:`run_root`: ``$THEORYDYN_HOME`` when that variable is set and not empty, else
``runs/`` in the current directory. Nothing lands in a checkout unless a command is pointed there
(``--out``): the committed figures under ``figures/`` change only with ``figures --out figures``.

The defaults are read when a command module is imported, so a process sees one run directory.

>>> import os
>>> os.environ.pop(HOME_ENV, None) and None
>>> str(run_dir("ledger"))
'runs/ledger'
>>> os.environ[HOME_ENV] = "/tmp/td"
>>> str(run_dir("scans"))
'/tmp/td/scans'
>>> del os.environ[HOME_ENV]
"""

from __future__ import annotations

import os
from pathlib import Path

#: the environment variable naming the run directory
HOME_ENV = "THEORYDYN_HOME"


def run_root() -> Path:
    """``$THEORYDYN_HOME`` (``~`` expanded) when set and not blank, else ``runs`` (relative)."""
    home = os.environ.get(HOME_ENV, "").strip()
    return Path(home).expanduser() if home else Path("runs")


def run_dir(*parts: str) -> Path:
    """``run_root() / parts…``: the default folder of one kind of output."""
    return run_root().joinpath(*parts)


def committed_figures() -> Path | None:
    """The ``figures/`` folder of the source checkout this package is imported from (its manifest
    gives the measured costs), or None for an installed copy without one."""
    p = Path(__file__).resolve().parent.parent / "figures"
    return p if (p / "manifest.json").is_file() else None


def vision_ledger_dir() -> Path:
    """The cache of the ledger's vision runs (``<run dir>/vision/ledger``), shared by the ledger's
    Section 6 rows, the vision figures and ``theorydyn.vision.figs``: whichever trains a run first,
    the others read it."""
    return run_dir("vision", "ledger")
