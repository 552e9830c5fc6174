"""The ledger command's named defaults, in a module that imports nothing heavy (``--help`` reads them)."""

from __future__ import annotations

from ..infra.paths import run_dir

PROG = "python -m theorydyn.verify"
#: Where the ledger lands by default: its CSV exports and the claims' store (``results.sqlite``).
DEFAULT_DIR = run_dir("ledger")
