"""Model (T): the simplified one-layer ViT of Section 3 with positional attention.

    F_{A,v}(X) = Σ_{i=1}^{D} σ(h_i),   h_i = Σ_j S_ij ⟨v, X_j⟩,   S = row-softmax(A / τ),
    σ(x) = x^p + ν x.

The attention logits A (D, D) do not depend on the input (positional attention), so S is
computed once per batch and h = U Sᵀ with U = X v: two BLAS products. Trainable are the
off-diagonal entries of A (the diagonal stays at β) and v (d,).

Loss: logistic, ℓ(m) = log(1 + e^{−m}); empirical risk (E) = mean of ℓ(y F(X)) (docs/theory.md §2).
With c_n = ℓ'(y_n F_n) y_n = −y_n / (1 + e^{y_n F_n}) and u_nj = ⟨v, X_nj⟩:
    ∂/∂A_ik = Σ_n c_n σ'(h_ni) (1/τ) S_ik (u_nk − h_ni)     (i ≠ k; zero on the diagonal)
    ∇_v     = Σ_n c_n Σ_i σ'(h_ni) Σ_j S_ij X_nj
(divided by N, or weighted by sample weights for exact expectations).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit

from .setting import Setting


def sigma(x: Any, p: int, nu: float) -> Any:
    """σ(x) = x^p + ν x, elementwise on a float, a NumPy array or a torch tensor (model (T)'s
    activation, whose linear part ν = 1/d is the default of ``Setting.nu``).

    The one array definition of the activation (:func:`activation` reads p and ν from a Setting);
    the Numba kernels call its scalar twin :func:`theorydyn.core.numba_activation.sigma_and_grad`,
    tested equal to it (tests/test_model.py).
    """
    return _power(x, p) + nu * x


def sigma_grad(x: Any, p: int, nu: float) -> Any:
    """σ'(x) = p x^{p−1} + ν, elementwise like :func:`sigma`."""
    return p * _power(x, p - 1) + nu


def _power(x: Any, n: int) -> Any:
    """x^n for an integer n ≥ 1 as n − 1 products: NumPy's ``x**3`` calls libm's pow per element,
    ~38× slower than ``x*x*x`` on a (16384, 32) array (and within one rounding of it)."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        return x**n
    out = x
    for _ in range(int(n) - 1):
        out = out * x
    return out


def activation(s: Setting, x: Any) -> Any:
    """σ(x) = x^p + ν x with the setting's p and ν (:func:`sigma`)."""
    return sigma(x, s.p, s.nu)


def activation_grad(s: Setting, x: Any) -> Any:
    """σ'(x) = p x^{p−1} + ν with the setting's p and ν (:func:`sigma_grad`)."""
    return sigma_grad(x, s.p, s.nu)


def softmax_rows(M: np.ndarray) -> np.ndarray:
    """Row-wise softmax, the row maximum subtracted first (rows sum to 1).  M: (..., D, D)."""
    E = np.exp(M - M.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


def attention(s: Setting, A: np.ndarray) -> np.ndarray:
    """S = row-softmax(A / τ).  A: (D, D) → S: (D, D)."""
    return softmax_rows(np.asarray(A, dtype=np.float64) / s.tau)


def symmetric_attention(s: Setting, gamma: float, rho: float) -> np.ndarray:
    """The three-value form of Lemma 4.1: A_ii = β, A_ij = γ in-set, A_ij = ρ across sets.  → (D, D)."""
    A = np.where(s.same_set, gamma, rho).astype(np.float64)
    np.fill_diagonal(A, s.beta)
    return A


def softmax_values(s: Setting, gamma: float, rho: float) -> tuple[float, float, float]:
    """(Λ, Γ, Ξ): one row of S = softmax(A/τ) at the three-value form of Lemma 4.1 (docs/theory.md §3).

    With logits b = β/τ (once), c = γ/τ (C−1 times), r = ρ/τ (D−C times) and
    Z = e^b + (C−1)e^c + (D−C)e^r: Λ = e^b/Z, Γ = e^c/Z, Ξ = e^r/Z, so Λ + (C−1)Γ + (D−C)Ξ = 1.
    """
    b, c, r = s.beta / s.tau, gamma / s.tau, rho / s.tau
    mx = max(b, c, r)
    eb, ec, er = np.exp(b - mx), np.exp(c - mx), np.exp(r - mx)
    Z = eb + (s.C - 1) * ec + (s.D - s.C) * er
    return float(eb / Z), float(ec / Z), float(er / Z)


def _hidden(s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray):
    X = np.asarray(X)
    U = (X @ np.asarray(v, dtype=X.dtype)).astype(np.float64, copy=False)  # (N, D): u_nj = ⟨v, X_nj⟩
    S = attention(s, A)
    H = U @ S.T  # h_ni = Σ_j S_ij u_nj
    return U, S, H


def forward(s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray) -> np.ndarray:
    """F_{A,v}(X).  A: (D, D), v: (d,), X: (N, D, d) → F: (N,)."""
    _, _, H = _hidden(s, A, v, X)
    return activation(s, H).sum(axis=1)


def logistic_loss(margin: np.ndarray) -> np.ndarray:
    """ℓ(m) = log(1 + e^{−m}), computed with logaddexp (no overflow for large |m|)."""
    return np.logaddexp(0.0, -np.asarray(margin, dtype=np.float64))


def _weights(N: int, weights: np.ndarray | None) -> np.ndarray:
    if weights is None:
        return np.full(N, 1.0 / N)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (N,) or np.any(w < 0) or not w.sum() > 0:
        raise ValueError("weights must be a non-negative (N,) array with a positive sum")
    return w / w.sum()


def risk(
    s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """Empirical risk (E): the (weighted) mean of ℓ(y F(X)).  y: (N,) in {−1, +1}."""
    F = forward(s, A, v, X)
    return float(_weights(len(F), weights) @ logistic_loss(np.asarray(y, float) * F))


def risk_and_grad(
    s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    """Risk (E) and its analytic gradient in the off-diagonal of A and in v (docs/theory.md §2).

    Args:
        A: (D, D) logits (the diagonal is used as given; its gradient is reported as 0).
        v: (d,) value vector.
        X: (N, D, d) patches (float64 or float32; products with X run in X's dtype).
        y: (N,) labels in {−1, +1}.
        weights: optional (N,) non-negative sample weights (normalised to sum 1), e.g. the
            probabilities of an exhaustive enumeration; ``None`` means the plain mean.

    Returns:
        risk (float), grad_A (D, D) with a zero diagonal, grad_v (d,).
    """
    X = np.asarray(X)
    y = np.asarray(y, dtype=np.float64)
    U, S, H = _hidden(s, A, v, X)
    F = activation(s, H).sum(axis=1)
    margin = y * F
    w = _weights(len(F), weights)
    r = float(w @ logistic_loss(margin))
    c = -w * y * expit(-margin)  # (N,) dℓ/dF, weighted
    G = c[:, None] * activation_grad(s, H)  # (N, D): ∂risk/∂h_ni
    dS = G.T @ U  # ∂risk/∂S_ij = Σ_n G_ni u_nj
    grad_A = S * (dS - (S * dS).sum(axis=1, keepdims=True)) / s.tau  # softmax backward
    np.fill_diagonal(grad_A, 0.0)
    dU = G @ S  # ∂risk/∂u_nj = Σ_i G_ni S_ij
    grad_v = np.tensordot(dU.astype(X.dtype, copy=False), X, axes=([0, 1], [0, 1])).astype(np.float64)
    return r, grad_A, grad_v


def association_rows(s: Setting, M: np.ndarray) -> np.ndarray:
    """Patch association per row (Definition 2.2): row i of M (D, D), diagonal included, has its
    C largest entries exactly on i's set S(i).  → (D,) bool.

    Row i counts iff min_{j∈S(i)} M_ij > max_{j∉S(i)} M_ij: the same as "Top_C = S(i)" without
    ties; a tie across the boundary (where Top_C is not determined) counts as not associated.
    Applies to the attention logits Â and to a positional Gram matrix PᵀP alike.
    """
    M = np.asarray(M, dtype=np.float64)
    inside = np.where(s.same_set, M, np.inf).min(axis=1)
    outside = np.where(s.same_set, -np.inf, M).max(axis=1)
    return inside > outside


def association(s: Setting, M: np.ndarray) -> float:
    """The fraction of rows with patch association (Definition 2.2; see :func:`association_rows`)."""
    return float(np.mean(association_rows(s, M)))


def association_margin(s: Setting, M: np.ndarray) -> np.ndarray:
    """The normalised association margin of each row of M (D, D): (D,) with, for row i,

        (min_{j ∈ S(i)} M_ij − max_{j ∉ S(i)} M_ij) / std_{j ≠ i} M_ij,

    the diagonal counted in S(i) as in Definition 2.2 and the scale the spread of the row's off-diagonal
    entries (so the margin does not depend on the scale of M). Positive iff row i is associated
    (:func:`association_rows`: its C largest entries are its set, no tie); about −3 for a row of i.i.d.
    Gaussian entries; ±inf or nan for a row whose off-diagonal entries are all equal.

    Example:
        >>> from theorydyn.core.setting import Setting
        >>> s = Setting(D=4, C=2, q=0.5)
        >>> M = np.where(s.same_set, 1.0, 0.0)
        >>> bool(np.all(association_margin(s, M) > 0))
        True
    """
    M = np.asarray(M, dtype=np.float64)
    same = np.asarray(s.same_set, bool)
    in_min = np.where(same, M, np.inf).min(axis=1)
    out_max = np.where(same, -np.inf, M).max(axis=1)
    off = ~np.eye(s.D, dtype=bool)
    scale = M[off].reshape(s.D, s.D - 1).std(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (in_min - out_max) / scale
