"""The realistic dynamics, N samples and the full D×D attention (Theorem 4.2; docs/theory.md §4).

* :func:`simulate` — GD on the empirical risk from the realistic initialisation, returning one
  :class:`~theorydyn.result.Result` (the same type and trajectory schema as the reduced solver);
  :func:`simulate_replicas` — several initialisations or step sizes on one data set, a list of them;
* :func:`attention_stats`, :func:`symmetry_breaking` — measurements of Â and v̂;
* :func:`plot_figure4`, :func:`plot_comparison` — pictures, into given axes;
* :mod:`theorydyn.simulate.memory` — the memory estimate of a run.

**Shared input vocabulary** of :func:`theorydyn.reduced.integrate` and :func:`theorydyn.simulate.simulate`
(the same keyword means the same thing in both; where the names differ, so does the meaning):

==============  ==========================================  ==========================================
meaning         reduced ``integrate``                       ``simulate``
==============  ==========================================  ==========================================
horizon         in s = η·t: flow ``s_max`` (else η·steps);  ``steps`` (else ⌈s_max/η⌉, else 1200):
                GD ``steps`` (else ⌈s_max/η⌉)               as reduced GD
step size       ``eta``                                     ``eta``
seed            ``seed``: the Monte Carlo bank              ``seed``: training data, test data and
                                                            the random initialisation
start           ``init=(α, γ, ρ)`` (default the idealized   ``init=(α, γ, ρ)``: the same three-value
                (ν^{1/(p−1)}, 0, 0))                        start; or ``A0``/``v0`` (any Â, v̂); default
                                                            the realistic N(0, ω²) start (``omega``)
recording       the times ``s_grid`` (GD: rounded to        the times ``s_grid`` rounded to whole
                whole steps); else ``n_points`` rows on a   steps; else every ``record_every`` steps
                log grid from ``s_min``                     and every step up to ``dense_until``
samples         ``n_samples``: draws of the Monte Carlo     ``N``: the training set of Theorem 4.2, a
                estimate of a population expectation       parameter of the problem, not of accuracy
==============  ==========================================  ==========================================

Both return one :class:`~theorydyn.result.Result` with the common trajectory schema
(:data:`theorydyn.result.CORE_COLUMNS`); several simulator runs on one data set:
:func:`theorydyn.simulate.simulate_replicas` (a list of Results). The default horizon of a reduced
flow is :func:`theorydyn.reduced.default_horizon`.

The fused Numba step (``_kernel``) is private. CLI: ``python -m theorydyn.simulate --help``.
"""

from .plot import plot_attention, plot_comparison, plot_figure4
from .run import COLUMNS, attention_stats, init_params, row_in_means, simulate, simulate_replicas, symmetry_breaking

__all__ = [
    "COLUMNS",
    "attention_stats",
    "init_params",
    "row_in_means",
    "simulate",
    "simulate_replicas",
    "symmetry_breaking",
    "plot_attention",
    "plot_comparison",
    "plot_figure4",
]
