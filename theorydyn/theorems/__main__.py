"""``python -m theorydyn.theorems``: ``python -m theorydyn.verify --only theorems``, quick by default
(:mod:`theorydyn.theorems`). Every flag is the ledger's; ``--only`` is fixed to the group ``theorems``."""

from __future__ import annotations

import argparse
import sys

from ..cli.flags import restate
from ..cli.runner import Command, Invocation
from ..verify.__main__ import build_parser as ledger_parser
from ..verify.__main__ import run as ledger_run

PROG = "python -m theorydyn.theorems"
DESCRIPTION = (
    "The theorem rows of the ledger: exactly 'python -m theorydyn.verify --only theorems' (Theorems 3.1, 3.2, "
    "4.2, Lemma 4.1, N*), quick by default (--full for the full sizes)."
)


def build_parser() -> argparse.ArgumentParser:
    """The ledger's parser with ``--only theorems`` fixed and ``--quick`` the default."""
    ap = ledger_parser()
    ap.prog, ap.description = PROG, DESCRIPTION
    restate(ap, "--only", default=["theorems"], help=argparse.SUPPRESS)
    restate(ap, "--quick", default=True, help="the quick sizes (the default)")
    restate(ap, "--full", default=True, help="the full sizes (default: quick)")
    return ap


def run(inv: Invocation) -> int:
    if inv.args.only != ["theorems"]:
        inv.fail("--only: this command runs the group theorems; for other claims use python -m theorydyn.verify")
    return ledger_run(inv)


COMMAND = Command(PROG, build_parser, run)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
