"""``python -m theorydyn.claims`` (also ``python -m theorydyn.theorems``): the theorem checks."""

import sys

from .theorems import main

if __name__ == "__main__":
    sys.exit(main())
