"""GD on one of Â, v̂ with the other frozen, through the fused step (one pass over X per step).

Plain GD on the empirical risk (E) (docs/theory.md §2, §4) in the parameters named by ``update``:

    "v":  v̂ ← v̂ − η ∇_v (E)(Â, v̂),   Â fixed   (the Â-frozen control of Section 4);
    "A":  Â ← Â − η ∂(E)/∂Â (Â, v̂),   v̂ fixed   (off-diagonal entries only; Â_ii stays as given).

The frozen parameter's gradient is not computed (:meth:`FusedModel.risk_grad` with ``grad_A=False``
skips the ∂S GEMM and the softmax backward; ``grad_v=False`` skips dU = G S and the second read of
X). Float32 X is stepped in the kernel's float32 arithmetic with float64 accumulation
(:mod:`theorydyn.simulate._kernel`); Â, v̂ and the update stay float64.

Shapes: A: (D, D), v: (d,), X: (N, D, d) float32 or float64 C-contiguous, y: (N,) in {−1, +1}.
"""

from __future__ import annotations

import numpy as np

from ..core.setting import Setting
from ._kernel import FusedModel
from .config import UPDATES  # the values of ``update`` (SimConfig.update's choices)

__all__ = ["UPDATES", "descend_partial"]


def descend_partial(
    s: Setting,
    A: np.ndarray,
    v: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    eta: float,
    steps: int,
    update: str = "v",
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``steps`` GD steps of size ``eta`` on (E) over (X, y) in the parameters ``update`` names
    (module docstring); returns the new (Â (D, D), v̂ (d,)), float64 copies. A non-finite value is
    not caught: it propagates to the returned parameters (the caller judges divergence).

    Raises:
        ValueError: ``update`` not one of :data:`UPDATES`, ``steps`` < 0, or shapes that do not match ``s``.
    """
    if update not in UPDATES:
        raise ValueError(f"update must be one of {UPDATES}, got {update!r}")
    if not (isinstance(steps, (int, np.integer)) and steps >= 0):
        raise ValueError(f"steps must be an integer >= 0, got {steps!r}")
    A = np.array(A, dtype=np.float64)
    v = np.array(v, dtype=np.float64)
    if A.shape != (s.D, s.D) or v.shape != (s.d,):
        raise ValueError(f"A must be (D, D) = ({s.D}, {s.D}) and v (d,) = ({s.d},), got {A.shape} and {v.shape}")
    m = FusedModel(X, y, s.p, s.nu, s.tau, weights)
    want_A, want_v = "A" in update, "v" in update
    A3, V = A[None], v[:, None]  # views: updated in place
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(int(steps)):
            _, _, gA, gV = m.risk_grad(A3, V, grad_A=want_A, grad_v=want_v)
            if want_A:
                A3 -= eta * gA  # gA has a zero diagonal: Â_ii stays
            if want_v:
                V -= eta * gV
    return A, v
