"""``python -m theorydyn.transfer``: the transfer experiment (Theorems 5.1, 5.2)."""

import sys

from .run import main

if __name__ == "__main__":
    sys.exit(main())
