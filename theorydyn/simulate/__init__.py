"""The realistic dynamics, N samples and the full D×D attention (Theorem 4.2; docs/theory.md §4).

* :func:`simulate` — GD on the empirical risk from the realistic initialisation, returning one
  :class:`~theorydyn.core.result.Result` (the same type and trajectory schema as the reduced solver);
  :func:`simulate_replicas` — several initialisations or step sizes on one data set, a list of them;
* :func:`training_data` — the training set a seed draws, for common random numbers across N (the
  run at n trains on ``train=(b.X[:n], b.y[:n])`` of the largest N's draw); :func:`heldout_data`, its test
  set, passed back as ``test=`` to draw it once per seed;
* :func:`attention_stats`, :func:`symmetry_breaking` — measurements of Â and v̂;
* :func:`plot_figure4`, :func:`plot_comparison` — pictures, into given axes;
* :mod:`theorydyn.simulate.memory` — the memory estimate of a run;
* :class:`SimConfig` — one run's options (defaults, rules, help: the library's and the CLI's, one object).

**Shared input vocabulary** with :func:`theorydyn.reduced.integrate` (horizon ``s_max``/``steps``,
``eta``, ``seed``, start ``init=(α, γ, ρ)``, recording ``s_grid``): the one table of what each keyword
means in each solver is in :mod:`theorydyn.reduced`'s docstring. Here ``N`` is the training set of
Theorem 4.2, a parameter of the problem (the reduced solver's ``n_samples`` is a Monte Carlo accuracy);
``A0``/``v0`` start from any Â, v̂, and the default start is the realistic N(0, ω²) (``omega``). Both
return one :class:`~theorydyn.core.result.Result`; several runs on one data set: :func:`simulate_replicas`.

The fused Numba step (``_kernel``) is private. ``simulate(..., update="v")`` trains v̂ alone (Â frozen; also
:func:`theorydyn.simulate.partial.descend_partial`), ``device="cpu" | "cuda"`` runs the same step on torch
(:mod:`theorydyn.simulate.torch_step`). CLI: ``python -m theorydyn.simulate --help``.
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the names, for type checkers; at run time each submodule loads on first use
    from .config import SIM_DEFAULTS, SimConfig
    from .measure import attention_stats, row_in_means, symmetry_breaking
    from .plot import plot_attention, plot_comparison, plot_figure4
    from .run import COLUMNS, heldout_data, init_params, simulate, simulate_replicas, training_data

__all__ = [
    "COLUMNS",
    "SIM_DEFAULTS",
    "SimConfig",
    "attention_stats",
    "init_params",
    "row_in_means",
    "simulate",
    "simulate_replicas",
    "symmetry_breaking",
    "training_data",
    "heldout_data",
    "plot_attention",
    "plot_comparison",
    "plot_figure4",
]
__getattr__, __dir__ = lazy_exports(__name__)


class _Package(types.ModuleType):
    """``theorydyn.simulate`` names both this package and the function :func:`theorydyn.simulate.run.simulate`
    (``from theorydyn import simulate``). Once anything imports the package (``theorydyn.simulate.config``),
    the import system binds the name ``theorydyn.simulate`` to it, so ``from theorydyn import simulate`` then
    returns the package: calling the package runs the function, whichever of the two a user holds."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from .run import simulate

        return simulate(*args, **kwargs)


sys.modules[__name__].__class__ = _Package  # the documented way to give a module behaviour (Python 3.5+)
