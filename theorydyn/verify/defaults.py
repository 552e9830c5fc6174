"""The ledger command's named defaults, in a module that imports nothing heavy (``--help`` reads them)."""

from __future__ import annotations

from ..infra.paths import run_dir

PROG = "python -m theorydyn.verify"
#: Where the ledger lands by default: its CSV exports and the claims' store (``results.sqlite``).
DEFAULT_DIR = run_dir("ledger")
#: The ledger CSV of the default flags (``ledger_name(Setting(), True)``, checked by tests/test_cli_help.py),
#: named in --help without loading the ledger's code
DEFAULT_LEDGER = "verify_D64_C4_quick.csv"
