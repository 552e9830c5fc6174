"""Fitting on the Ñ downstream samples: ṽ with Â frozen (the fine-tuning problem (Ẽ)), or A and v
from scratch, by GD safeguarded against overflow (docs/theory.md §5)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ..core import model
from ..core.setting import Setting
from .config import KERNEL_DEGREE, KERNEL_RIDGE, TRANSFER_DEFAULTS
from .task import init_attention

_D = TRANSFER_DEFAULTS  # the library's defaults of ω, η and the step counts: one place


# ---- training of ṽ with Â frozen (the fine-tuning problem (Ẽ)) --------------------------------
def risk_and_grad_v(s: Setting, S: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Risk (Ẽ) and ∇_v for a fixed score matrix S = softmax(Â/τ) (docs/theory.md §2, the ∇_v formula).

    The products with X use stacked matmul / einsum rather than one large BLAS call: at the small
    Ñ of fine-tuning a threaded BLAS gemv costs more in thread start-up than in arithmetic.
    """
    y = np.asarray(y, dtype=np.float64)
    U = X @ v  # (N, D)
    H = U @ S.T
    m = y * model.activation(s, H).sum(axis=1)
    r = float(np.mean(model.logistic_loss(m)))
    G = (-y * expit(-m) / len(y))[:, None] * model.activation_grad(s, H)
    return r, np.einsum("nj,njk->k", G @ S, X)


def descend(
    obj: Callable[[list[np.ndarray]], tuple[float, list[np.ndarray]]], params: list[np.ndarray], eta: float, steps: int
) -> tuple[list[np.ndarray], float, int]:
    """GD with step η, halved (up to 40 times) whenever a step would raise the risk or leave the
    finite range: with the cubic activation a fixed large step can jump to |v| ~ 1e100 in a few
    steps once margins grow, so each step is accepted only if the risk does not increase.
    Stops early when no halving decreases the risk (a numerical stationary point) or the risk is 0.

    ``obj(params)`` → (risk, grads). Returns (params, final risk, steps taken).
    """
    r, grads = obj(params)
    t = 0
    for t in range(1, steps + 1):
        step = eta
        for _ in range(40):
            trial = [p - step * g for p, g in zip(params, grads, strict=False)]
            with np.errstate(over="ignore", invalid="ignore"):
                r2, g2 = obj(trial)
            if np.isfinite(r2) and r2 <= r and all(np.all(np.isfinite(g)) for g in g2):
                break
            step *= 0.5
        else:
            return params, r, t - 1
        params, r, grads = trial, r2, g2
        if r == 0.0:
            break
    return params, r, t


def fit_v(
    s: Setting,
    A: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    omega: float = _D.omega,
    eta: float = _D.eta,
    steps: int = _D.steps_v,
    seed: int = 0,
    method: str = _D.method,
) -> np.ndarray:
    """Train ṽ alone with Â frozen, from ṽ(0) ~ N(0, ω² I_d) (Section 5, fine-tuning (Ẽ)).

    method ``"gd"``: ``steps`` GD steps of size η, safeguarded by :func:`descend`;
    ``"lbfgs"``: scipy L-BFGS with at most ``steps`` iterations. Returns ṽ: (d,).
    """
    S = model.attention(s, A)
    v = np.random.default_rng(seed).normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)
    if method == "lbfgs":
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(
                lambda w: risk_and_grad_v(s, S, w, X, y), v, jac=True, method="L-BFGS-B", options={"maxiter": steps}
            )
        return res.x
    if method != "gd":
        raise ValueError(f"method must be 'gd' or 'lbfgs', got {method!r}")

    def obj(p):
        r, g = risk_and_grad_v(s, S, p[0], X, y)
        return r, [g]

    return descend(obj, [v], eta, steps)[0][0]


def fit_scratch(
    s: Setting,
    X: np.ndarray,
    y: np.ndarray,
    omega: float = _D.omega,
    eta: float = _D.eta,
    steps: int = _D.steps_scratch,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Train A (off-diagonal) and v together on the Ñ samples from the realistic initialisation
    (the upstream algorithm with only the downstream data), by the safeguarded GD of
    :func:`descend`.  → (A, v)."""
    rng = np.random.default_rng(seed)
    A = init_attention(s, omega, rng)
    v = rng.normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)

    def obj(p):
        r, gA, gv = model.risk_and_grad(s, p[0], p[1], X, y)
        return r, [gA, gv]

    A, v = descend(obj, [A, v], eta, steps)[0]
    return A, v


# ---- a generic learner without patch-association knowledge: kernel ridge on the feature values ----


def onehot(z: np.ndarray) -> np.ndarray:
    """φ(z): (N, 2D) indicators [z_j = +1] then [z_j = −1] of the feature values z: (N, D) ∈ {−1, 0, 1}
    (rounded: z_j = ⟨w̃, X_j⟩ up to rounding, the noise being ⟂ w̃)."""
    z = np.asarray(z, dtype=np.float64)
    return np.concatenate([z > 0.5, z < -0.5], axis=1).astype(np.float64)


def kernel_matrix(Pa: np.ndarray, Pb: np.ndarray, degree: int = KERNEL_DEGREE) -> np.ndarray:
    """k(a, b) = (1 + ⟨φ_a, φ_b⟩)^degree for one-hot rows Pa: (n, 2D), Pb: (m, 2D).  → (n, m).

    Invariant under any permutation of the positions applied to both arguments: the learner treats
    every partition of [D] alike (no patch-association knowledge)."""
    return (1.0 + Pa @ Pb.T) ** degree


def fit_kernel(
    z: np.ndarray, y: np.ndarray, degree: int = KERNEL_DEGREE, ridge: float = KERNEL_RIDGE
) -> tuple[np.ndarray, np.ndarray]:
    """Kernel ridge regression of the labels y: (N,) ∈ {±1} on the feature values z: (N, D) with
    :func:`kernel_matrix`: α = (K + λ I)⁻¹ y, λ = ``ridge`` · tr(K)/N. The learner is told the
    downstream feature w̃ (it sees z_j = ⟨w̃, X_j⟩), never the sets: a stronger learner than one that
    sees X, so its sample need is a conservative reading of Theorem 5.2.  → (φ(z): (N, 2D), α: (N,))."""
    P = onehot(z)
    K = kernel_matrix(P, P, degree)
    lam = ridge * float(np.trace(K)) / len(K)
    K[np.diag_indices_from(K)] += lam
    alpha = np.linalg.solve(K, np.asarray(y, dtype=np.float64))
    return P, alpha


def kernel_outputs(
    P: np.ndarray, alpha: np.ndarray, z_test: np.ndarray, degree: int = KERNEL_DEGREE, chunk: int = 4096
) -> np.ndarray:
    """F(z) = Σ_n α_n k(z_n, z) on the test feature values z_test: (M, D), in chunks of rows.  → (M,)."""
    out = np.empty(len(z_test))
    for a in range(0, len(z_test), chunk):
        out[a : a + chunk] = kernel_matrix(onehot(z_test[a : a + chunk]), P, degree) @ alpha
    return out
