"""Resumable parameter scans: where do the phases of Section 4.1 hold, and when?

* :mod:`.grid` — the grid (Settings × solver options × seeds) and its keys;
* :mod:`.schema` — the solver options (read from the run configurations' fields), their types and the TOML
  spec files;
* :mod:`.point` — what one point computes (the reduced dynamics; the simulator on request);
* :mod:`.executor` — local processes or a Dask cluster;
* :mod:`theorydyn.infra.store` — the transactional results store (SQLite) and its CSV export;
* :mod:`.run` — :func:`run_scan` and the plots;
* :mod:`.summary` — the summary tables, with intervals over seeds;
* :mod:`.plots` — phase times against an axis, scaling in D, overlaid trajectories.

CLI: ``python -m theorydyn.scan --help`` (its flags and the scan they describe: :mod:`.flags`).
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each submodule loads on first use
    from ..infra.store import ResultStore
    from .grid import Point, ScanError, ScanSpec, load_scan, point_key
    from .outcome import ScanOutcome
    from .run import run_scan
    from .summary import seed_ci_table, summary_table

__all__ = [
    "Point",
    "ResultStore",
    "ScanError",
    "ScanOutcome",
    "ScanSpec",
    "point_key",
    "load_scan",
    "run_scan",
    "seed_ci_table",
    "summary_table",
]
__getattr__, __dir__ = lazy_exports(__name__)
