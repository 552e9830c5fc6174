"""The training runs of Figure 2 (docs/theory.md §7): the positional-attention ViT and model (T) in torch.

The paper (Section 2, Figure 2): patches X_j i.i.d. N(0, I_d), y = sign f(X) with a one-hidden-layer
CNN f. :func:`train_runs` trains the models of :mod:`theorydyn.positional` (:func:`theorydyn.positional.run`,
full-batch Adam, one run per seed and kind, the curves recorded along the run) from two
initialisations:

* Parametrization 3.1's scale (:func:`paper_init`): each p_i ~ N(0, I/D), ω = 10⁻³ — both kinds, the
  runs the verdicts of :mod:`theorydyn.claims.figure2` are read on;
* P_{ki} ~ N(0, 1), ω = 0.1 (:data:`UNIT_INIT`, the earlier ledger's) — the positional model alone,
  for the sensitivity row.

Returns :class:`Figure2Runs`; :mod:`theorydyn.claims.figure2` turns it into rows and runs nothing: the
reference levels its verdicts quote (:func:`references`), the run's sizes (:data:`QUICK`, :data:`FULL`), its
setting (:func:`figure2_setting`) and its memory (:func:`memory`) are here too.

The run itself is :func:`train_runs` (``run`` in this module is :func:`theorydyn.positional.run`, the
one-kind trainer it calls).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..core.config import Seeds
from ..core.data import sample_memory
from ..core.setting import Setting
from ..infra.memory import MemoryEstimate, Term
from ..positional.model import block_contrast, chance_association, figure2_setting
from ..positional.train import FULL, QUICK, TrainRun, run

__all__ = [
    "FULL",
    "QUICK",
    "UNIT_INIT",
    "Figure2Runs",
    "References",
    "TrainRun",
    "figure2_setting",
    "memory",
    "paper_init",
    "references",
    "run",
    "train_runs",
]


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


@dataclass(frozen=True)
class References:
    """The reference levels of Figure 2's verdicts at a setting s (docs/theory.md §7).

    Attributes:
        chance: the association (Definition 2.2) of a Gram with a dominant diagonal and exchangeable
            off-diagonal entries, 1 / binom(D − 1, C − 1) (:func:`theorydyn.positional.chance_association`).
        blocks: the block contrast z of the exact block matrix 1[i, j in the same set]
            (:func:`theorydyn.positional.block_contrast`), the value of perfect set structure.

    Example:
        >>> r = references(figure2_setting())
        >>> round(1 / r.chance)
        455
    """

    chance: float
    blocks: float


def references(s: Setting) -> References:
    """The chance association and the perfect-block contrast at ``s`` (:class:`References`)."""
    return References(chance_association(s), block_contrast(s, s.same_set.astype(float)))


def memory(s: Setting, N: int, N_test: int) -> MemoryEstimate:
    """Peak of :func:`train_runs` at ``s`` with ``N`` training and ``N_test`` test samples: the samples X
    (N + N_test, D, d) drawn in float64 (:func:`theorydyn.core.data.sample_memory`) with their float32
    tensors, and the (N, D) activations of one forward and backward pass (≈ 6)."""
    n = N + N_test
    draw = sample_memory(s.D, s.C, s.d, n, 8, "N")
    return MemoryEstimate(
        "Figure 2 check",
        draw.terms
        + (
            Term(f"float32 tensors of X ({n}, {s.D}, {s.d})", n * s.D * s.d * 4, {"N": n}),
            Term(f"activations of one pass ({N}, {s.D}) float32 (6)", 6 * N * s.D * 4, {"N": N}),
        ),
    )
