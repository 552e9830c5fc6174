"""Fitting on the Ñ downstream samples: ṽ with Â frozen (the fine-tuning problem (Ẽ)), or A and v
from scratch, by GD safeguarded against overflow (docs/theory.md §5)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .. import model
from ..setting import Setting
from .task import init_attention


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
    omega: float = 1e-3,
    eta: float = 10.0,
    steps: int = 300,
    seed: int = 0,
    method: str = "gd",
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
    s: Setting, X: np.ndarray, y: np.ndarray, omega: float = 1e-3, eta: float = 10.0, steps: int = 1200, seed: int = 0
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
