"""The scan's named defaults, in a module that imports nothing heavy (``python -m theorydyn.scan --help``
reads them without loading the solvers)."""

from __future__ import annotations

from ..core.config import Seeds, as_seeds
from ..infra.paths import run_dir

PROG = "python -m theorydyn.scan"
#: where scan rows land (the run directory, theorydyn.infra.paths)
RESULTS_DIR = run_dir("scans")
#: The default scan around docs/theory.md §9: q at these multiples of C²/D (Assumption 2's q = poly(C)/D).
DEFAULT_Q_FACTORS = (0.6, 0.8, 1.0, 1.2, 1.4)
#: the default scan's seeds (``--seeds 3``): 0, 1, 2
DEFAULT_SEEDS: Seeds = as_seeds(3)
