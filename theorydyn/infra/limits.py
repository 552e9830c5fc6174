"""The ranges that rule out a run that never ends (issue 18, item 4), shared by the CLIs and the scan specs.

Each limit is far beyond any run of the paper (docs/theory.md §9: s_max ≈ 2·10⁴–5·10⁴, a few
thousand GD steps, a few hundred trajectory points) and well inside what the solvers handle:

* ``s_max`` below :data:`S_MAX_MIN` makes LSODA loop forever on steps of ~1e-300 (``--s-max
  1e-300`` hung); above :data:`S_MAX_MAX` the solver fails on a horizon it cannot represent.
* ``tau`` below :data:`TAU_MIN` overflows β/τ in the softmax (``--tau 5e-324`` divided by zero).
* the ODE solver's ``atol`` below :data:`ATOL_MIN`: LSODA's error weights 1/(rtol·|y| + atol) overflow
  at γ = ρ = 0 and the solve never ends (``atol=1e-200`` ran past 20 s on a 0.01-s problem; 1e-20 took
  0.014 s, 1e-100 0.6 s, on the 2-core Xeon).
* GD steps: at most :data:`STEPS_MAX` for the reduced recursion (cheap steps), at most
  :data:`SIM_STEPS_MAX` for the simulator (each step is a pass over N samples).
* :data:`N_POINTS_MAX` rows of a trajectory; :data:`GRID_POINTS_MAX` points in one scan grid
  (counted before the grid is expanded, so a 10⁷-point spec is refused at once with its size).
"""

from __future__ import annotations

#: the ceiling of every number that names no bound of its own (a flag's or a Setting field's): far above any
#: size, step, rate, variance or temperature a run of the paper uses, far below the values (1e308, 2**63) that
#: reach the computation as an endless loop or a MemoryError (issue 33; the Setting's too since issue 42)
VALUE_MAX = 1e11
S_MAX_MIN = 1e-6
S_MAX_MAX = 1e12
TAU_MIN = 1e-12
ATOL_MIN = 1e-20
STEPS_MAX = 10**9
SIM_STEPS_MAX = 10**7
N_POINTS_MAX = 10**7
GRID_POINTS_MAX = 100_000
