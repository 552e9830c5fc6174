"""The reduced solver's named constants, in a module that imports nothing heavy: the values behind
:class:`theorydyn.reduced.config.FlowConfig`'s defaults, the one object from which the library
(:func:`theorydyn.reduced.integrate`) and the command line (``python -m theorydyn.reduced``) take them,
so a notebook and the CLI integrate to the same horizon (issue 29), and ``--help`` shows them without
loading SciPy or Numba."""

from __future__ import annotations

#: The default horizon s = η·t of one reduced run, the library's and the CLI's (beyond T2 of the
#: default setting, s ≈ 1.2e4 at D = 64, C = 4; scans and the ledger use
#: :func:`theorydyn.reduced.default_horizon`, which grows with D).
S_MAX = 2e4
#: ODE solvers of ``method="flow"`` (``scipy.integrate.solve_ivp``'s names); the first is the default.
SOLVERS = ("LSODA", "BDF", "Radau", "RK45")
#: Monte Carlo bank size of ``expectation="mc"``.
N_SAMPLES = 4000
