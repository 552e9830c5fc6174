"""Transfer to a downstream task with a frozen attention (Theorems 5.1, 5.2; docs/theory.md §5).

:mod:`.run` trains ṽ on Ñ downstream samples with Â frozen (pre-trained, at initialisation, or
pre-trained on another partition) and measures the Ñ needed for a target accuracy across D;
:mod:`.logreg` is the L2 logistic-regression baseline on the flattened patches.
CLI: ``python -m theorydyn.transfer --help``.
"""

from . import logreg
from .run import *  # noqa: F401,F403 — the module's public names, listed in run.__all__ where given
