"""The downstream task of the transfer experiment (Section 5; docs/theory.md §5): D̃, the attention
matrices that are frozen, the setting across D, population ceilings and the projected test set.

Shapes: X: (N, D, d), A: (D, D), v: (d,), z: (N, D).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..core import data, model
from ..core.result import Result
from ..core.setting import Setting
from ..reduced import forward_counts
from ..simulate import SimConfig, simulate
from .sizes import CACHED, DEFAULT_METHODS, FROZEN, METHODS  # noqa: F401 — re-exported


# ---- the downstream task ---------------------------------------------------------------------
def downstream_feature(s: Setting) -> int | tuple[float, ...]:
    """A unit feature w̃ ⟂ w*: the next basis vector for w* = e_k, else e_0 (or e_1) minus its w* part."""
    if isinstance(s.feature, int):
        return (s.feature + 1) % s.d
    w = s.w_star
    for k in range(s.d):
        e = np.zeros(s.d)
        e[k] = 1.0
        u = e - (e @ w) * w
        if np.linalg.norm(u) > 0.5:
            return tuple(float(x) for x in u / np.linalg.norm(u))
    raise AssertionError("unreachable: some basis vector is far from w*")


def downstream_setting(s: Setting) -> Setting:
    """D̃: the same setting (same sets) with a feature w̃ ⟂ w* (docs/theory.md §5)."""
    return s.replace(feature=downstream_feature(s))


# ---- attention matrices ----------------------------------------------------------------------
def init_attention(s: Setting, omega: float, rng: np.random.Generator) -> np.ndarray:
    """Realistic initialisation (Parametrization 3.1): Â_ij ~ N(0, ω²) (i ≠ j), Â_ii = β.  → (D, D)."""
    A = rng.normal(0.0, omega, size=(s.D, s.D))
    np.fill_diagonal(A, s.beta)
    return A


#: The logit gap of :func:`oracle_attention` (the ``oracle`` method's Â).
ORACLE_GAP = 10.0


def oracle_attention(s: Setting, gap: float = ORACLE_GAP) -> np.ndarray:
    """A reference block Â (Lemma 4.1's form): in-set logits γ = β (equal to the diagonal, so each
    patch averages its whole set) and cross-set logits ρ = β − gap; S_ij ≈ 1/C in-set."""
    return model.symmetric_attention(s, s.beta, s.beta - gap)


#: The upstream pre-training's run: :class:`~theorydyn.simulate.SimConfig`'s defaults (N = 16384, η = 10,
#: 1200 steps, ω = 10⁻³, seed 0) with X stored in float32.
PRETRAIN = SimConfig(dtype="float32")


def pretrain(s: Setting, config: SimConfig = PRETRAIN) -> Result:
    """Pre-train (A, v) by realistic GD on the upstream task: :func:`theorydyn.simulate.simulate` with
    ``config``, recorded at every quarter of its steps.

    Returns the simulate result (``res.A`` is the Â to transfer; ``res.trajectory`` the record).
    """
    return simulate(s, config=replace(config, record_every=max(1, config.steps // 4)))


# ---- the setting across D ------------------------------------------------------------------------
def with_count(s: Setting, K: float) -> Setting:
    """``s`` with q = K / (D − C): K expected ±w* patches outside the signal set."""
    return s.replace(q=K / (s.D - s.C))


# ---- population ceilings (exact up to Monte Carlo over set counts) ------------------------------------
#: The α grid of :func:`ceiling`: wide, because at init h = α(Λ − Ξ) z_i + α Ξ T with Λ − Ξ ≈ (e^β − 1)/D,
#: so the cubic regime needs α of order D.
ALPHAS = tuple(np.geomspace(1e-2, 1e4, 97))


def tie_tolerance(s: Setting, alpha: float) -> float:
    """|F| below this is an exact tie up to rounding: D · 1e-10 · σ(α) bounds the rounding error of a
    sum of D terms of size ≤ σ(α) (|h| ≤ α since rows of S sum to 1 and |z| ≤ 1)."""
    return 1e-10 * s.D * float(model.activation(s, alpha))


def ceiling(
    s: Setting, gamma: float, rho: float, alphas: Sequence[float] = ALPHAS, n_samples: int = 20000, seed: int = 0
) -> tuple[float, float]:
    """max over α of the population accuracy against f of model (T) with the three-value attention
    (β, γ, ρ) and v = α w, by Monte Carlo over ``n_samples`` draws of the feature values z
    (docs/theory.md §3: with v ∥ w the noise drops out of F exactly, and F is evaluated in O(L) per
    sample by ``reduced.forward_counts``). An exact tie F = 0 counts as an error (docs/theory.md,
    conventions: the paper's Pr[f F ≤ 0]; at init, F = 0 whenever Σ_j z_j = 0).

    ``gamma = β, rho = β − 10`` is the block attention (a*: the best with patch association);
    ``gamma = rho = 0`` is the expected attention at initialisation. The maximum is over v ∥ w and
    over the α grid only: a reference, not a proof of optimality over all v.
    Returns (accuracy, best α)."""

    _, _, z = data.sample_z(s, n_samples, np.random.default_rng(seed))
    f = data.labelling_from_z(s, z)
    dec = f != 0
    z, sf = z[dec], np.sign(f[dec])
    best = (-1.0, float("nan"))
    for a in alphas:
        F = forward_counts(s, float(a), float(gamma), float(rho), z)
        tie = np.abs(F) <= tie_tolerance(s, float(a))
        acc = float(np.mean(np.where(tie, False, np.sign(F) == sf)))
        if acc > best[0]:
            best = (acc, float(a))
    return best


def block_ceiling(s: Setting, n_samples: int = 20000, seed: int = 0) -> float:
    """a*(s): :func:`ceiling` of the block attention (in-set logits β, cross-set β − 10)."""
    return ceiling(s, s.beta, s.beta - 10.0, n_samples=n_samples, seed=seed)[0]


def linear_reference(s: Setting, n_samples: int = 200_000, seed: int = 0) -> float:
    """Population accuracy against f of the symmetric linear rule sign(Σ_j ⟨w, X_j⟩) (the noise is ⟂ w,
    so this is sign(Σ_j z_j)); a tie counts as an error (as in :func:`ceiling`). Theorem 3.1's kind of
    classifier."""
    rng = np.random.default_rng(seed)
    right, total = 0.0, 0
    for a in range(0, n_samples, 20000):  # chunks: z is (n, D)
        _, _, z = data.sample_z(s, min(20000, n_samples - a), rng)
        f = data.labelling_from_z(s, z)
        T = z.astype(np.int64).sum(axis=1)
        dec = f != 0
        right += float(np.sum(np.where(T[dec] == 0, False, np.sign(T[dec]) == np.sign(f[dec]))))
        total += int(dec.sum())
    return right / total


# ---- evaluation ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TestSet:
    """A fresh downstream test set in projected form (module docstring): z: (N, D) feature values,
    g: (N, D) standard normals for the noise projections, y (N,), f (N,) the labelling function."""

    z: np.ndarray
    g: np.ndarray
    y: np.ndarray
    f: np.ndarray

    @classmethod
    def draw(cls, s: Setting, N: int, seed: int) -> TestSet:
        rng = np.random.default_rng(seed)
        y, _, z = data.sample_z(s, N, rng)
        g = rng.standard_normal((N, s.D))
        return cls(z.astype(np.float64), g, y.astype(np.float64), data.labelling_from_z(s, z))


def outputs_v(s: Setting, S: np.ndarray, v: np.ndarray, test: TestSet) -> np.ndarray:
    """F_{A,v} on the test set, with S = softmax(A/τ): u = a z + σ‖P⊥v‖ g, F = Σ_i σ((u Sᵀ)_i).  → (N,)."""
    w = s.w_star
    a = float(v @ w)
    b = math.sqrt(s.sigma2) * float(np.linalg.norm(v - a * w))
    U = a * test.z + b * test.g
    with np.errstate(over="ignore", invalid="ignore"):
        return model.activation(s, U @ S.T).sum(axis=1)


def outputs_linear(s: Setting, W: np.ndarray, b0: float, test: TestSet) -> np.ndarray:
    """Σ_j ⟨W_j, X_j⟩ + b0 on the test set (W: (D, d)): Σ_j a_j z_j + σ(Σ_j ‖P⊥W_j‖²)^{1/2} g + b0.  → (N,)."""
    w = s.w_star
    a = W @ w
    sd = math.sqrt(s.sigma2) * float(np.linalg.norm(W - a[:, None] * w[None, :]))
    return test.z @ a + sd * test.g[:, 0] + b0


def accuracies(F: np.ndarray, test: TestSet) -> dict[str, float]:
    """acc_f = 1 − Pr[f F ≤ 0 | f ≠ 0] (Theorem 5.1's quantity) and acc_y = Pr[y F > 0].

    A non-finite output (overflow of σ, inf − inf) counts as an error, never as a success."""
    F = np.where(np.isfinite(F), F, 0.0)
    e = data.errors(F, test.y, test.f)
    return {"acc_f": 1.0 - e["err_f"], "acc_y": 1.0 - e["err_y"]}
