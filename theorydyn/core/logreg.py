"""L2-regularised logistic regression on flattened patches, written with scipy's L-BFGS.

The linear baseline of Theorem 3.1 (a generalized linear model's learned projection) and of
Theorem 5.2 / docs/theory.md §5 (a classifier without patch-association knowledge). No scikit-learn in
the core package, so the objective and its gradient are written out:

    J(w, b) = (1/N) Σ_n log(1 + exp(−y_n (⟨w, x_n⟩ + b))) + (λ/2) ‖w‖²,
    ∇_w J   = (1/N) Σ_n c_n x_n + λ w,   ∂_b J = (1/N) Σ_n c_n,   c_n = −y_n expit(−m_n),

with x_n = vec(X_n) ∈ R^{D·d} (``X: (N, D, d)`` is flattened to ``(N, D·d)``) and the bias b
unpenalised. λ is chosen by K-fold cross-validation on the training samples only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ..infra.blas import single_threaded_blas

#: Penalties tried by :func:`fit_logreg_cv` (λ of the objective above).
DEFAULT_LAMBDAS = tuple(10.0**k for k in range(-4, 3))


def flatten(X: np.ndarray) -> np.ndarray:
    """(N, D, d) → (N, D·d) (a view when X is contiguous)."""
    X = np.asarray(X)
    return X.reshape(len(X), -1)


def objective(wb: np.ndarray, Z: np.ndarray, y: np.ndarray, lam: float) -> tuple[float, np.ndarray]:
    """J(w, b) and its gradient (module docstring).  wb: (k+1,) = (w, b); Z: (N, k); y: (N,) in {−1, +1}."""
    w, b = wb[:-1], wb[-1]
    y = np.asarray(y, dtype=np.float64)
    m = y * (Z @ w.astype(Z.dtype, copy=False) + b)
    J = float(np.mean(np.logaddexp(0.0, -m)) + 0.5 * lam * (w @ w))
    c = -y * expit(-m) / len(y)
    g = np.empty_like(wb)
    g[:-1] = (c.astype(Z.dtype, copy=False) @ Z) + lam * w
    g[-1] = c.sum()
    return J, g


@dataclass(frozen=True)
class LogReg:
    """A fitted model: weights w (k,), bias b, penalty λ, and whether L-BFGS converged."""

    w: np.ndarray
    b: float
    lam: float
    converged: bool

    def decision(self, X: np.ndarray) -> np.ndarray:
        """⟨w, vec(X_n)⟩ + b for X: (N, D, d) or (N, k) → (N,)."""
        Z = flatten(X) if np.ndim(X) == 3 else np.asarray(X)
        return Z @ self.w.astype(Z.dtype, copy=False) + self.b


def fit_logreg(X: np.ndarray, y: np.ndarray, lam: float, maxiter: int = 500, tol: float = 1e-9) -> LogReg:
    """Minimise J with L-BFGS from w = 0.  X: (N, D, d) or (N, k); y: (N,) in {−1, +1}."""
    if not lam >= 0:
        raise ValueError(f"lam must be >= 0, got {lam}")
    Z = flatten(X) if np.ndim(X) == 3 else np.asarray(X)
    res = minimize(
        objective,
        np.zeros(Z.shape[1] + 1),
        args=(Z, y, lam),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter, "gtol": tol, "ftol": 1e-12},
    )
    return LogReg(w=res.x[:-1], b=float(res.x[-1]), lam=float(lam), converged=bool(res.success))


def fit_logreg_cv(X: np.ndarray, y: np.ndarray, lambdas=DEFAULT_LAMBDAS, folds: int = 4, seed: int = 0) -> LogReg:
    """Choose λ by K-fold cross-validation on (X, y) alone (held-out accuracy, ties → larger λ),
    then refit on all of (X, y). The test set is never seen here.

    With fewer than 2 samples of each class per fold the split is too small to rank penalties;
    then the folds shrink to leave-one-out-like splits (``folds = min(folds, N)``). With N = 1
    there is nothing to hold out: the largest λ is used (the tie rule's choice).
    """
    Z = flatten(X) if np.ndim(X) == 3 else np.asarray(X)
    y = np.asarray(y)
    # dozens of small fits: BLAS threads would spin on each tiny product (2.4 s a CV against 0.02 s single-
    # threaded on a loaded 2-core machine); the large single fits of glm.py keep their threads
    with single_threaded_blas():
        return _fit_cv(Z, y, lambdas, folds, seed)


def _fit_cv(Z: np.ndarray, y: np.ndarray, lambdas, folds: int, seed: int) -> LogReg:
    N = len(y)
    if N < 2:
        return fit_logreg(Z, y, max(lambdas))
    folds = max(2, min(folds, N))
    order = np.random.default_rng(seed).permutation(N)
    parts = np.array_split(order, folds)
    score_list: list[float] = []
    for lam in lambdas:
        correct = 0
        for k in range(folds):
            held = parts[k]
            keep = np.concatenate([parts[j] for j in range(folds) if j != k])
            m = fit_logreg(Z[keep], y[keep], lam, maxiter=200)
            correct += int(np.sum(np.sign(m.decision(Z[held])) == y[held]))
        score_list.append(correct / N)
    scores = np.asarray(score_list)
    # Largest λ among the best: the simplest model that is as good on held-out data.
    best = max(i for i in range(len(lambdas)) if scores[i] == scores.max())
    return fit_logreg(Z, y, lambdas[best])
