"""The idealized dynamics, N = ∞ (Lemmas 4.1–4.3, Section 4.1; docs/theory.md §3).

Population GD from the idealized initialisation stays in the three-value form
(A_ii = β, A_ij = γ in-set, ρ across sets, v = α w*), so the whole dynamics is three scalars:

* :func:`population_risk` — ℓ_red(α, γ, ρ) and its gradient, exactly or by Monte Carlo;
* :func:`integrate` — the paper's GD recursion or the gradient flow, returning a
  :class:`~theorydyn.result.Result` with the phases of :mod:`theorydyn.phases`;
* :func:`plot_trajectory` — α, γ, ρ, risk and errors against s, into given axes.

The Numba kernels (``_kernels``) are private. CLI: ``python -m theorydyn.reduced --help``.
"""

from .plot import plot_trajectory
from .solve import (COLUMNS, MAX_TERMS, SOLVERS, Bank, Estimate, bank_from_set_counts, forward_counts, integrate,
                    make_bank, mc_set_counts, n_exact_terms, population_risk)

__all__ = ["COLUMNS", "MAX_TERMS", "SOLVERS", "Bank", "Estimate", "bank_from_set_counts", "forward_counts",
           "integrate", "make_bank", "mc_set_counts", "n_exact_terms", "population_risk", "plot_trajectory"]
