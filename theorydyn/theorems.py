"""``python -m theorydyn.theorems``: the command name of :mod:`theorydyn.claims` (the checks
themselves live in :mod:`theorydyn.claims.theorems`); kept so that the documented command works."""

import sys

from .claims.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
