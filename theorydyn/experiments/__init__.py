"""The experiments the claims judge: runs of the solvers at a setting and sizes, returned as plain results.

A layer between the solvers (:mod:`theorydyn.simulate`, :mod:`theorydyn.reduced`,
:mod:`theorydyn.positional`) and the claims (:mod:`theorydyn.claims`): each function takes a
:class:`~theorydyn.core.setting.Setting` and the sizes of its runs (a solver's config such as
:class:`~theorydyn.simulate.config.SimConfig`, or keyword options: N, steps, η …; the seeds always as
:data:`~theorydyn.core.config.Seeds`, a tuple of integers) and returns a frozen dataclass or a DataFrame;
it judges nothing and imports no claim. A claim declares its sizes (:mod:`theorydyn.claims.sizes`), calls
the experiment and turns the result into ledger rows::

    run = SimConfig(N=16384, steps=250, dtype="float32")
    runs = experiments.run_seeds(s, run, seeds=(0, 1, 2, 3, 4), control=True)   # Theorem4Runs
    rows = claims.theorem4.theorem_4_rows(runs, T_a=T_a, ks=ks)                  # list[Check]

* :mod:`.measure` — measurements shared by the runs: errors on fresh samples, association on a window;
* :mod:`.theorem4` — Theorem 4.2 at finite N: realistic GD over seeds with its Â-frozen control;
* :mod:`.nstar` — N*(D): realistic GD on a grid of D, N and seeds (common random numbers across N);
* :mod:`.lemma41` — Lemma 4.1: GD on the exact population (P), and realistic GD against N;
* :mod:`.semirealistic` — finite-N GD against population GD (the reduced recursion) at the same s;
* :mod:`.figure2` — Figure 2's training runs (torch, :mod:`theorydyn.positional`);
* :mod:`.vanishing` — the idealized flows at several D, their ends measured on a stream of their own (o(1)).

Names are re-exported lazily (:func:`theorydyn.infra._lazy.lazy_exports` reads the module of each from
the ``if TYPE_CHECKING:`` imports below; there is no table beside them): importing the package loads no
solver. A claim imports its
experiment from its module (``from ..experiments.lemma99 import lemma99_runs``); a name listed here is
for a notebook's ``experiments.NAME``.
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the exports: type checkers import them; at run time each module loads on first use
    from .figure2 import UNIT_INIT, Figure2Runs, paper_init, train_runs
    from .lemma41 import PopulationRun, lemma_4_1_scaling_runs, population_gd, symmetry_deviation
    from .measure import fresh_errors, window_summary
    from .nstar import STEP_S_64, estimated_seconds, nstar_runs
    from .semirealistic import (
        QUANTITIES,
        ClosenessRuns,
        closeness_runs,
        compare_with_reduced,
        gaps,
        reduced_trajectory,
    )
    from .theorem4 import (
        HORIZON_FACTOR,
        SeedRun,
        Theorem4Runs,
        frozen_grad_v,
        run_frozen,
        run_seeds,
        steps_for,
        train_paired,
        train_upstream,
        train_v_frozen,
    )
    from .vanishing import READ_FACTOR, VanishingRuns, across_D_settings, flow_errors_across_D

__all__ = [
    "HORIZON_FACTOR",
    "QUANTITIES",
    "READ_FACTOR",
    "STEP_S_64",
    "UNIT_INIT",
    "ClosenessRuns",
    "Figure2Runs",
    "PopulationRun",
    "SeedRun",
    "Theorem4Runs",
    "VanishingRuns",
    "across_D_settings",
    "closeness_runs",
    "compare_with_reduced",
    "estimated_seconds",
    "flow_errors_across_D",
    "fresh_errors",
    "frozen_grad_v",
    "gaps",
    "lemma_4_1_scaling_runs",
    "nstar_runs",
    "paper_init",
    "population_gd",
    "reduced_trajectory",
    "run_frozen",
    "run_seeds",
    "steps_for",
    "symmetry_deviation",
    "train_paired",
    "train_runs",
    "train_upstream",
    "train_v_frozen",
    "window_summary",
]
__getattr__, __dir__ = lazy_exports(__name__)
