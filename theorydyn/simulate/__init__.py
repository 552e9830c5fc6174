"""The realistic dynamics, N samples and the full D×D attention (Theorem 4.2; docs/theory.md §4).

* :func:`simulate` / :func:`simulate_replicas` — GD on the empirical risk from the realistic
  initialisation, returning :class:`~theorydyn.result.Result` (the same type and trajectory
  schema as the reduced solver);
* :func:`attention_stats`, :func:`symmetry_breaking` — measurements of Â and v̂;
* :func:`plot_figure4`, :func:`plot_comparison` — pictures, into given axes.

The fused Numba step (``_kernel``) is private. CLI: ``python -m theorydyn.simulate --help``.
"""

from .plot import plot_attention, plot_comparison, plot_figure4
from .run import COLUMNS, attention_stats, init_params, row_in_means, simulate, simulate_replicas, symmetry_breaking

__all__ = ["COLUMNS", "attention_stats", "init_params", "row_in_means", "simulate", "simulate_replicas",
           "symmetry_breaking", "plot_attention", "plot_comparison", "plot_figure4"]
