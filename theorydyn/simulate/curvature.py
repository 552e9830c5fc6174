"""The curvature of the simulator's empirical risk (docs/theory.md §15.4): λ_max of the Hessian of (E) on
(X, y) at (Â, v̂) in the trained parameters (:func:`hessian_top`), the number the step-size rule of
:mod:`theorydyn.experiments.stepsize` reads along the idealized flow.

Shapes: A: (D, D), v: (d,), X: (N, D, d), y: (N,); the Hessian acts on vectors of D(D − 1) + d entries.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..core.setting import Setting
from ._kernel import FusedModel

#: LOBPCG's block: the start and fixed random vectors.
BLOCK = 3


def hessian_top(
    s: Setting,
    A: np.ndarray,
    v: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    tol: float = 1e-8,
    model: FusedModel | None = None,
    start: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """λ_max of the Hessian of the empirical risk (E) on (X, y) at (A, v) in the trained parameters
    (Â's off-diagonal entries, then v̂): LOBPCG (:func:`scipy.sparse.linalg.lobpcg`, ``largest=True``: the
    largest algebraic eigenvalue, the one that limits GD's step) on Hessian-vector products by central
    differences of the analytic gradient, step 1e-5 relative: the simulator's fused kernel on (X, y),
    ``model`` (a :class:`~theorydyn.simulate._kernel.FusedModel` of the same X, y; built here when None: pass
    one to read many states on the same samples), the gradient of :func:`theorydyn.core.model.risk_and_grad`
    to float64 rounding (``tests/test_gdkernel.py``). ``start``: the starting vector (the previous
    point's eigenvector along a trajectory converges in a few products). Returns (λ_max, its eigenvector).

    Example:
        >>> from theorydyn.core import data
        >>> from theorydyn.core.model import symmetric_attention
        >>> from theorydyn.core.setting import Setting
        >>> s = Setting(D=4, C=2, q=0.5)
        >>> b = data.sample(s, 64, seed=0)
        >>> lam, _ = hessian_top(s, symmetric_attention(s, 0.0, 0.0), 0.5 * s.w_star, b.X, b.y)
        >>> lam > 0
        True
    """
    from scipy.sparse.linalg import LinearOperator, lobpcg

    fused = model if model is not None else FusedModel(X, y, s.p, s.nu, s.tau)
    D = s.D
    off = ~np.eye(D, dtype=bool)
    n_A = int(off.sum())
    theta = np.concatenate([np.asarray(A, float)[off], np.asarray(v, float)])
    h = 1e-5 * max(1.0, float(np.linalg.norm(theta)))

    def grad(th: np.ndarray) -> np.ndarray:
        Ath = np.array(A, dtype=float)
        Ath[off] = th[:n_A]
        _, _, gAs, gVs = fused.risk_grad(Ath[None], th[n_A:, None])
        gA, gv = gAs[0], gVs[:, 0]
        return np.concatenate([gA[off], gv])

    def hvp(U: np.ndarray) -> np.ndarray:
        U2 = np.asarray(U, float).reshape(theta.size, -1)
        out = np.zeros_like(U2)
        for j in range(U2.shape[1]):
            nu = float(np.linalg.norm(U2[:, j]))
            if nu > 0.0:
                e = h / nu
                out[:, j] = (grad(theta + e * U2[:, j]) - grad(theta - e * U2[:, j])) / (2 * e)
        return out

    n = theta.size
    op = LinearOperator((n, n), matvec=lambda u: hvp(u)[:, 0], matmat=hvp, dtype=np.float64)
    # a block: the start (the previous point's eigenvector) and fixed random vectors, so that a start locked
    # on an eigenvalue that was the top one at the previous point cannot hide a new top one
    x0 = np.random.default_rng(0).normal(size=(n, BLOCK))
    if start is not None:
        x0[:, 0] = np.asarray(start, float).reshape(n, -1)[:, 0]
    with warnings.catch_warnings():  # "not reaching the requested tolerance": the best iterate is returned
        warnings.simplefilter("ignore", UserWarning)
        w, U = lobpcg(op, x0, largest=True, tol=tol, maxiter=200)
    top = int(np.argmax(w))
    return float(w[top]), U[:, top]
