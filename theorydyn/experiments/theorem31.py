"""The measurements behind Theorem 3.1's rows (docs/theory.md §6.1): generalized linear models on Assumption 1's
data, from :mod:`theorydyn.core.glm` (the mathematics).

* the exact error of the equal-weight GLM with the best link (:func:`theorydyn.core.glm.glm_oracle_error_exact`)
  and the toolkit's scope rule at the setting;
* :func:`fitted` — fitted GLMs over seeds (:func:`theorydyn.core.glm.glm_fitted_errors`);
* :func:`literal` — the injective lookup construction w_j = 3^j w*, exact at a small setting and by Monte Carlo;
* :func:`crossing`, :func:`scan` — where the exact error crosses the bound 1/8 (:data:`THEOREM_3_1_BOUND`), at one
  (D, C) and over the scan's (D, C) grid (:data:`SCAN_31_D`);
* :func:`draw_scan` — the exact error against q(D − C)/C² drawn to a file, its crossings returned
  (``python -m theorydyn.claims --figure31``).

:func:`run` gathers them (:class:`Theorem31Run`); :mod:`theorydyn.claims.theorem31` judges them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..core.config import Seeds
from ..core.data import sample_memory
from ..core.glm import (
    SCAN_31_D,
    THEOREM_3_1_BOUND,
    glm_crossing,
    glm_crossings,
    glm_fitted_errors,
    glm_oracle_error_exact,
    literal_construction_exact,
    literal_construction_mc,
    save_theorem_3_1_figure,
    theorem_3_1_scope,
)
from ..core.setting import Setting
from ..infra.memory import MemoryEstimate, Term

__all__ = [
    "SCAN_31_D",
    "THEOREM_3_1_BOUND",
    "Theorem31Run",
    "crossing",
    "draw_scan",
    "fitted",
    "literal",
    "memory",
    "run",
    "scan",
]


def fitted(
    s: Setting, N_fit: int, N_test: int, N_flat: int, seeds: Seeds, lam: float, seed: int
) -> dict[str, list[dict[str, float]]]:
    """The fitted GLMs' errors (:func:`theorydyn.core.glm.glm_fitted_errors`, fitted on ``N_fit`` samples, the
    flattened X on ``N_flat``, judged on ``N_test``), per model one dict per seed (seed k of ``seeds`` draws from
    ``SeedSequence([seed, k, 31])``)."""
    per_seed: dict[str, list[dict[str, float]]] = {}
    for k in seeds:
        rng = np.random.default_rng(np.random.SeedSequence([seed, k, 31]))
        for name, e in glm_fitted_errors(s, N_fit, N_test, N_flat, lam, rng).items():
            per_seed.setdefault(name, []).append(e)
    return per_seed


def literal(s: Setting, N: int, seeds: Seeds, seed: int, exact_at: dict[str, Any]) -> dict[str, Any]:
    """The literal construction's errors: exact at the small setting ``exact_at`` (D, C, q) with weights 3^j
    (``ex``), equal weights (``eq``) and colliding weights 2^j (``ex2``); by Monte Carlo at ``s``, ``N``
    samples per seed (``mc``: one error per seed ``seed + k``)."""
    sx = Setting(**exact_at)
    ex = literal_construction_exact(base=3, **exact_at)
    eq = glm_oracle_error_exact(sx)
    ex2 = literal_construction_exact(base=2, **exact_at)
    mc = [literal_construction_mc(s, N, seed + k)["err"] for k in seeds]
    return dict(ex=ex, eq=eq, ex2=ex2, mc=mc)


def crossing(s: Setting) -> dict[str, float]:
    """This (D, C)'s crossing of the exact equal-weight error through 1/8 (:func:`theorydyn.core.glm.glm_crossing`
    on a grid of 24 q)."""
    return glm_crossing(s, n_grid=24)


def scan() -> pd.DataFrame:
    """The crossings over the scan's (D, C) grid (:func:`theorydyn.core.glm.glm_crossings` on a grid of 24 q)."""
    return glm_crossings(n_grid=24)


def draw_scan(path: str) -> pd.DataFrame:
    """The exact error of the equal-weight GLM with the best link against q(D − C)/C² (D in 64..256, C in 4..16:
    :func:`theorydyn.core.glm.theorem_3_1_scan`) drawn to ``path`` (its suffix picks the format, written
    atomically: :func:`theorydyn.core.glm.save_theorem_3_1_figure`); returns the crossings of 1/8, one row per
    (D, C)."""
    return save_theorem_3_1_figure(path)


@dataclass(frozen=True)
class Theorem31Run:
    """What :func:`run` measured at a setting: ``exact`` the equal-weight GLM's exact errors
    (:func:`theorydyn.core.glm.glm_oracle_error_exact`), ``scope`` the toolkit's scope rule there (None in scope,
    else the assumption it breaks: :func:`theorydyn.core.glm.theorem_3_1_scope`), ``fitted`` (:func:`fitted`),
    ``literal`` and ``literal_scope`` (:func:`literal`, the scope rule at its small setting; None when not run),
    ``scan`` (:func:`scan`; None when not run)."""

    exact: dict[str, float]
    scope: str | None
    fitted: dict[str, list[dict[str, float]]]
    literal: dict[str, Any] | None
    literal_scope: str | None
    scan: pd.DataFrame | None


def run(
    s: Setting,
    *,
    N_fit: int,
    N_test: int,
    N_flat: int,
    N_literal: int,
    seeds: Seeds,
    lam: float,
    seed: int,
    literal_at: dict[str, Any],
    with_literal: bool = True,
    with_scan: bool = True,
) -> Theorem31Run:
    """Theorem 3.1's measurements at ``s`` (:class:`Theorem31Run`): the exact equal-weight GLM, the fitted GLMs at the
    sizes given, the literal construction (``with_literal``: exact at ``literal_at``, ``N_literal`` Monte Carlo
    samples per seed at ``s``) and the scan of the crossings (``with_scan``)."""
    exact = glm_oracle_error_exact(s)
    per_seed = fitted(s, N_fit, N_test, N_flat, seeds, lam, seed)
    lit = literal(s, N_literal, seeds, seed, literal_at) if with_literal else None
    return Theorem31Run(
        exact=exact,
        scope=theorem_3_1_scope(s),
        fitted=per_seed,
        literal=lit,
        literal_scope=theorem_3_1_scope(Setting(**literal_at)) if with_literal else None,
        scan=scan() if with_scan else None,
    )


def memory(s: Setting, N_fit: int = 100_000, N_test: int = 100_000, N_flat: int = 2_000) -> MemoryEstimate:
    """Peak of :func:`run` without the scan (one seed at a time), as a
    :class:`~theorydyn.infra.memory.MemoryEstimate` (docs/theory.md §4).

    The exact route holds ≈ 5 float64 n × n grids, n = 2(L − 1)C + 1 (G, its rfft2, the power,
    the inverse and its shifted, clipped copies); the fitted GLMs hold z (N, D) int8 of the fit
    and test draws, their float64 copies, u (N, D) float64 and four (N, D) masks of the draw;
    the flattened fit holds X (N_flat, D, d) and a test X (min(N_test, 20000), D, d) float64.
    """

    n = 2 * (s.L - 1) * s.C + 1
    N_big = max(N_fit, N_test)
    flat = sample_memory(s.D, s.C, s.d, N_flat, 8, "N_flat")
    n_test_flat = min(N_test, 20_000)
    return MemoryEstimate(
        "Theorem 3.1 check",
        (
            Term(f"exact law: 5 float64 grids ({n}, {n})", 5 * n * n * 8, {"D": s.D}),
            Term(
                f"z of the fit and test draws ({N_fit}+{N_test}, {s.D}) int8 and float64 copies",
                (N_fit + N_test) * s.D * 9,
                {"D": s.D},
            ),
            Term(f"draw temporaries u, masks ({N_big}, {s.D})", N_big * s.D * (8 + 4), {"D": s.D}),
            Term(
                f"flattened X ({N_flat} + {n_test_flat}, {s.D}, {s.d}) float64",
                (N_flat + n_test_flat) * s.D * s.d * 8,
                {"D": s.D, "d": s.d},
            ),
            *flat.terms[1:],
        ),
    )
