"""The idealized dynamics, N = ∞ (Lemmas 4.1–4.3, Section 4.1; docs/theory.md §3).

Population GD from the idealized initialisation stays in the three-value form
(A_ii = β, A_ij = γ in-set, ρ across sets, v = α w*), so the whole dynamics is three scalars:

* :func:`population_risk` — ℓ_red(α, γ, ρ) and its gradient, exactly or by Monte Carlo;
* :func:`integrate` — the paper's GD recursion or the gradient flow, returning a
  :class:`~theorydyn.core.result.Result` with the phases of :mod:`theorydyn.core.phases`;
* :func:`plot_trajectory` — α, γ, ρ, risk and errors against s, into given axes.

* :class:`FlowConfig` — one run's options (defaults, rules, help: the library's and the CLI's, one object);
* :func:`default_horizon` — the default s_max of a flow, 2·10⁴·max(1, D/64)^1.5;
* :func:`flows_until_t2` — flows over seeds whose default horizon doubles until every seed reaches T2;
* :mod:`theorydyn.reduced.memory` — its memory estimate and the count-type law's sizes.

Modules, one idea each: ``bank`` (the samples of the expectation: :func:`make_bank`, Monte Carlo
or exact), ``risk`` (ℓ_red, its gradient and errors on a bank: :func:`population_risk`,
:func:`forward_counts`), ``solve`` (the GD recursion and the flow: :func:`integrate`).

**Shared input vocabulary** of :func:`theorydyn.reduced.integrate` and :func:`theorydyn.simulate.simulate`
(the same keyword means the same thing in both; where the names differ, so does the meaning):

```text
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
```

Both return one :class:`~theorydyn.core.result.Result` with the common trajectory schema
(:data:`theorydyn.core.result.CORE_COLUMNS`); several simulator runs on one data set:
:func:`theorydyn.simulate.simulate_replicas` (a list of Results). The default horizon of a reduced
flow is :func:`theorydyn.reduced.default_horizon`.

The Numba kernels (``_kernels``) are private. CLI: ``python -m theorydyn.reduced --help``.
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each submodule loads on first use
    from .bank import MAX_TERMS, Bank, bank_from_set_counts, make_bank, mc_set_counts, n_exact_terms
    from .config import FLOW_DEFAULTS, FlowConfig
    from .plot import plot_trajectory
    from .risk import Estimate, forward_counts, population_risk
    from .solve import COLUMNS, HORIZON_GROWTH_MAX, SOLVERS, default_horizon, flows_until_t2, integrate

__all__ = [
    "COLUMNS",
    "FLOW_DEFAULTS",
    "FlowConfig",
    "MAX_TERMS",
    "SOLVERS",
    "Bank",
    "Estimate",
    "bank_from_set_counts",
    "default_horizon",
    "flows_until_t2",
    "HORIZON_GROWTH_MAX",
    "forward_counts",
    "integrate",
    "make_bank",
    "mc_set_counts",
    "n_exact_terms",
    "population_risk",
    "plot_trajectory",
]
__getattr__, __dir__ = lazy_exports(__name__)
