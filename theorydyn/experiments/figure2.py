"""The training runs of Figure 2 (docs/theory.md §7): the positional-attention ViT and model (T) in torch.

The paper (Section 2, Figure 2): patches X_j i.i.d. N(0, I_d), y = sign f(X) with a one-hidden-layer
CNN f. :func:`train_runs` trains the models of :mod:`theorydyn.positional` (:func:`theorydyn.positional.run`,
full-batch Adam, one run per seed and kind, the curves recorded along the run) from two
initialisations:

* Parametrization 3.1's scale (:func:`paper_init`): each p_i ~ N(0, I/D), ω = 10⁻³ — both kinds, the
  runs the verdicts of :mod:`theorydyn.claims.figure2` are read on;
* P_{ki} ~ N(0, 1), ω = 0.1 (:data:`UNIT_INIT`, the earlier ledger's) — the positional model alone,
  for the sensitivity row.

Returns :class:`Figure2Runs`; :mod:`theorydyn.claims.figure2` turns it into rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.config import Seeds
from ..core.setting import Setting
from ..positional.train import TrainRun, run


def paper_init(s: Setting) -> dict[str, float]:
    """Parametrization 3.1's initialisation for :func:`theorydyn.positional.run`: each p_i ~ N(0, I/D)
    (``p_std`` = 1/√D) and ω = 10⁻³ (v ~ N(0, ω²/d I), and Â's off-diagonal for model (T)), the
    simulator's default ω (docs/theory.md §4)."""
    return dict(p_std=1.0 / math.sqrt(s.D), omega=1e-3)


#: the earlier ledger's initialisation, now the sensitivity row: P_{ki} ~ N(0, 1), ω = 0.1
UNIT_INIT: dict[str, float] = dict(p_std=1.0, omega=0.1)


@dataclass(frozen=True)
class Figure2Runs:
    """The runs of :func:`train_runs`: ``main`` maps each kind (``"positional"``, ``"T"``) to its runs
    at :func:`paper_init`, one :class:`~theorydyn.positional.TrainRun` per seed in seed order;
    ``unit`` the positional model's runs at :data:`UNIT_INIT` (empty when not trained)."""

    main: dict[str, list[TrainRun]]
    unit: list[TrainRun]


def train_runs(
    s: Setting,
    seeds: Seeds,
    *,
    progress: Callable[[str], None] | None = None,
    unit: bool = True,
    **sizes: Any,
) -> Figure2Runs:
    """Train Figure 2's models at ``s`` for every seed of ``seeds`` at ``sizes`` (the keywords of
    :func:`theorydyn.positional.run`: ``N``, ``N_test``, ``steps`` Adam steps, ``lr``, ``record_every``;
    those left out from :data:`theorydyn.positional.QUICK`): both kinds at :func:`paper_init`, then (with
    ``unit``) the positional model at :data:`UNIT_INIT`."""
    pi = paper_init(s)
    main = run(s, seeds, progress=progress, p_std=pi["p_std"], omega=pi["omega"], **sizes)
    units: list[TrainRun] = []
    if unit:
        units = run(
            s,
            seeds,
            kinds=("positional",),
            progress=progress,
            p_std=UNIT_INIT["p_std"],
            omega=UNIT_INIT["omega"],
            **sizes,
        )["positional"]
    return Figure2Runs(main, units)
