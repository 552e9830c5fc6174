"""Moved to :mod:`theorydyn.logreg` (a base module: Theorem 3.1's claims and the transfer baseline use it).

Kept only until ``theorydyn/claims/theorems.py`` imports ``..logreg``; then delete this file.
"""

from ..logreg import DEFAULT_LAMBDAS, LogReg, fit_logreg, fit_logreg_cv, flatten, objective

__all__ = ["DEFAULT_LAMBDAS", "LogReg", "fit_logreg", "fit_logreg_cv", "flatten", "objective"]
