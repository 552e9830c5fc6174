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

:func:`run` gathers them as the ledger's rows read them (:class:`Theorem31Config` → :class:`Theorem31Results`);
:mod:`theorydyn.claims.theorem31` judges them (its ``rows``; ``verify`` runs :func:`run`).
"""

from __future__ import annotations

from collections.abc import Callable
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
    "Theorem31Config",
    "Theorem31Results",
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
class Theorem31Config:
    """What :func:`run` needs for the Theorem 3.1 rows.

    Attributes:
        sizes: the sample sizes (a validated sizes config of the claims, :mod:`theorydyn.claims.sizes`): ``N_fit``
            samples the GLMs on z_j = ⟨w*, X_j⟩ are fitted on, ``N_flat`` those of the GLM on the flattened X,
            ``N_test`` held-out samples of the best φ and the error, ``N_literal`` Monte Carlo samples of the literal
            construction, each per seed of ``seeds``.
        literal_at: the small setting (D, C, q) at which the literal construction is computed exactly.
        lam: the ridge of the logistic regressions.
        seed: the base seed (fitted: ``SeedSequence([seed, k, 31])``; literal Monte Carlo: ``seed + k``).
        literal: measure the literal construction (:func:`literal`).
        scan: measure the crossings over the scan's (D, C) grid (:func:`scan`).
    """

    sizes: Any
    literal_at: dict[str, Any]
    lam: float = 1e-3
    seed: int = 0
    literal: bool = True
    scan: bool = True


@dataclass(frozen=True)
class Theorem31Results:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        config: the :class:`Theorem31Config` it ran at (its sizes and ridge name the rows' params).
        exact: the equal-weight GLM's exact errors at ``s`` (:func:`theorydyn.core.glm.glm_oracle_error_exact`:
            ``err`` = Pr[f g ≤ 0], ``err_cond`` given f ≠ 0, ``amb`` = Pr[f = 0]).
        scope: the toolkit's scope rule at ``s`` (None in scope, else the assumption it breaks:
            :func:`theorydyn.core.glm.theorem_3_1_scope`).
        fitted: per fitted model, one dict of errors per seed (:func:`fitted`).
        literal, literal_scope: the literal construction (:func:`literal`) and the scope rule at its small setting
            ``config.literal_at`` (None when not run).
        scan: the crossings over the scan's (D, C) grid, one row per (D, C) (:func:`scan`; None when not run).
    """

    s: Setting
    config: Theorem31Config
    exact: dict[str, float]
    scope: str | None
    fitted: dict[str, list[dict[str, float]]]
    literal: dict[str, Any] | None
    literal_scope: str | None
    scan: pd.DataFrame | None


def run(s: Setting, config: Theorem31Config, progress: Callable[[str], None] | None = None) -> Theorem31Results:
    """Theorem 3.1's measurements at ``s`` (:class:`Theorem31Results`): the exact error of the equal-weight GLM with
    the best link, the fitted GLMs over ``config.sizes``' seeds (:func:`fitted`), the literal construction
    (``config.literal``: exact at ``config.literal_at``, ``N_literal`` Monte Carlo samples per seed at ``s``,
    :func:`literal`), the toolkit's scope rule at ``s`` (and at ``config.literal_at``) and the scan of the crossings
    (``config.scan``: :func:`scan`)."""
    if progress:
        progress("Theorem 3.1")
    n = config.sizes
    exact = glm_oracle_error_exact(s)
    per_seed = fitted(s, n.N_fit, n.N_test, n.N_flat, n.seeds, config.lam, config.seed)
    lit = literal(s, n.N_literal, n.seeds, config.seed, config.literal_at) if config.literal else None
    return Theorem31Results(
        s,
        config,
        exact=exact,
        scope=theorem_3_1_scope(s),
        fitted=per_seed,
        literal=lit,
        literal_scope=theorem_3_1_scope(Setting(**config.literal_at)) if config.literal else None,
        scan=scan() if config.scan else None,
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
