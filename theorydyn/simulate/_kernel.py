"""The fused gradient step of model (T) on N samples: X is read from memory once per step.

Risk (E) and its gradient (SPEC §2), for R parameter sets (replicas) sharing one X:

    u_nj = ⟨v, X_nj⟩,  h_ni = Σ_j S_ij u_nj,  F_n = Σ_i σ(h_ni),  S = row-softmax(A/τ),
    c_n  = w_n ℓ'(y_n F_n) y_n = −w_n y_n / (1 + e^{y_n F_n}),   g_ni = c_n σ'(h_ni),
    ∂risk/∂S_ij = Σ_n g_ni u_nj,   ∂risk/∂A_ik = (1/τ) S_ik (∂S_ik − Σ_j S_ij ∂S_ij)   (i ≠ k),
    ∇_v = Σ_n Σ_j (Σ_i g_ni S_ij) X_nj.

Shapes: X: (N, D, d) float32 or float64 (never copied); A, S: (R, D, D); V: (d, R).

Why one Numba kernel instead of BLAS passes: the step is bandwidth bound (X holds N·D·d
numbers, everything else N·D). Two BLAS passes (U = X v, then Xᵀ dU) read X from memory twice;
the kernel below walks the samples once and, while the (D, d) block X_n is in L1, computes
u, h, the loss, g, the D×D updates and X_nᵀ du. All arithmetic is float64 (a float32 X is
widened on load), so float32 storage only rounds the data. Samples are cut into fixed
blocks, processed in parallel (``prange``); each block writes its own partial sums, which
are added in block order afterwards, so the result does not depend on the number of threads
or their scheduling: same inputs → bit-identical outputs. ``fastmath`` stays off: it would
reorder sums and measured no faster.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

#: At most this many blocks (partial sums cost blocks × R × D² floats, kept O(N·D)).
MAX_BLOCKS = 64
#: At least this many samples per block (amortises zeroing a block's D×D partial).
MIN_BLOCK = 64


def block_size(N: int) -> int:
    """Samples per block: ≥ MIN_BLOCK, and at most MAX_BLOCKS blocks."""
    return max(MIN_BLOCK, -(-N // MAX_BLOCKS))


@numba.njit(cache=True, fastmath=False)
def softmax_rows(A: np.ndarray, tau: float) -> np.ndarray:
    """S = row-softmax(A/τ), the row maximum subtracted first.  A: (R, D, D) → (R, D, D)."""
    R, D, _ = A.shape
    S = np.empty_like(A)
    for r in range(R):
        for i in range(D):
            m = A[r, i, 0]
            for j in range(1, D):
                if A[r, i, j] > m:
                    m = A[r, i, j]
            tot = 0.0
            for j in range(D):
                e = math.exp((A[r, i, j] - m) / tau)
                S[r, i, j] = e
                tot += e
            for j in range(D):
                S[r, i, j] /= tot
    return S


@numba.njit(cache=True, fastmath=False)
def softmax_backward(S: np.ndarray, dS: np.ndarray, tau: float) -> np.ndarray:
    """∂risk/∂A_ik = (1/τ) S_ik (∂S_ik − Σ_j S_ij ∂S_ij), zero on the diagonal (fixed at β).

    S, dS: (R, D, D) → grad_A: (R, D, D).
    """
    R, D, _ = S.shape
    out = np.empty_like(S)
    for r in range(R):
        for i in range(D):
            dot = 0.0
            for j in range(D):
                dot += S[r, i, j] * dS[r, i, j]
            for k in range(D):
                out[r, i, k] = S[r, i, k] * (dS[r, i, k] - dot) / tau
            out[r, i, i] = 0.0
    return out


@numba.njit(cache=True, fastmath=False, inline="always")
def _pow_int(x, p):
    out = 1.0
    for _ in range(p):
        out *= x
    return out


@numba.njit(cache=True, fastmath=False, inline="always")
def _loss_and_dloss(m, wa):
    """(w ℓ(m), w / (1 + e^m)) with ℓ(m) = log(1 + e^{−m}), stable for either sign of m."""
    if m >= 0:
        e = math.exp(-m)
        return wa * math.log1p(e), wa * e / (1.0 + e)
    e = math.exp(m)
    return wa * (-m + math.log1p(e)), wa / (1.0 + e)


@numba.njit(cache=True, fastmath=False, inline="always")
def _xV(x, V, UT):
    """UT[r, j] = ⟨V[:, r], x_j⟩ for a (D, d) block x; the loop over r is innermost so that
    x is read once for all replicas (R = 1: four partial sums, independent FMA chains)."""
    D, d = x.shape
    R = V.shape[1]
    if R == 1:
        for j in range(D):
            s0 = 0.0
            s1 = 0.0
            s2 = 0.0
            s3 = 0.0
            k = 0
            while k + 4 <= d:
                s0 += x[j, k] * V[k, 0]
                s1 += x[j, k + 1] * V[k + 1, 0]
                s2 += x[j, k + 2] * V[k + 2, 0]
                s3 += x[j, k + 3] * V[k + 3, 0]
                k += 4
            while k < d:
                s0 += x[j, k] * V[k, 0]
                k += 1
            UT[0, j] = (s0 + s1) + (s2 + s3)
    else:
        acc = np.empty(R)
        for j in range(D):
            acc[:] = 0.0
            for k in range(d):
                xjk = x[j, k]
                for r in range(R):
                    acc[r] += xjk * V[k, r]
            for r in range(R):
                UT[r, j] = acc[r]


#: Samples per sub-block in the replica kernel: their U, dU (and X rows) stay in cache while each
#: replica's S, Sᵀ and ∂S partial (3 D² floats) are walked once per sub-block, not once per sample.
SUB = 16


@numba.njit(cache=True, fastmath=False, parallel=True)
def _fused_many(X, y, w, uw, S, ST, V, p, nu, block, out_dS, out_gV, out_lw):
    """R replicas sharing X.  S, ST (R, D, D); V (d, R); partials per block out_dS (nb, R, D, D),
    out_gV (nb, d, R), out_lw (nb, R, 2) = (Σ w ℓ, Σ w [m ≤ 0]).

    For R > 1 the products with X run over all replicas at once (U = X_n V; G_v += X_nᵀ dU), so
    each X_n is loaded from memory once for all of them; the D×D work is done replica by
    replica over a sub-block of SUB samples, so that replica's matrices stay in cache.
    """
    N, D, d = X.shape
    R = V.shape[1]
    nb = out_dS.shape[0]
    for bi in prange(nb):
        a0 = bi * block
        a1 = min(N, a0 + block)
        dS = out_dS[bi]
        gV = out_gV[bi]
        dS[:, :, :] = 0.0
        gV[:, :] = 0.0
        out_lw[bi, :, :] = 0.0
        UT = np.empty((SUB, R, D))
        dUT = np.empty((SUB, R, D))
        dU = np.empty((D, R))
        h = np.empty(D)
        g = np.empty(D)
        for c0 in range(a0, a1, SUB):
            c1 = min(a1, c0 + SUB)
            for a in range(c0, c1):
                _xV(X[a], V, UT[a - c0])
            for r in range(R):
                for a in range(c0, c1):
                    u = UT[a - c0, r]
                    du = dUT[a - c0, r]
                    wa = uw if w.shape[0] == 0 else w[a]
                    h[:] = 0.0
                    for j in range(D):
                        uj = u[j]
                        for i in range(D):
                            h[i] += ST[r, j, i] * uj
                    F = 0.0
                    for i in range(D):
                        F += _pow_int(h[i], p) + nu * h[i]
                    m = y[a] * F
                    lo, sig = _loss_and_dloss(m, wa)
                    out_lw[bi, r, 0] += lo
                    if not m > 0:  # a NaN margin counts as wrong
                        out_lw[bi, r, 1] += wa
                    c = -y[a] * sig
                    for i in range(D):
                        g[i] = c * (p * _pow_int(h[i], p - 1) + nu)
                    du[:] = 0.0
                    for i in range(D):
                        gi = g[i]
                        for j in range(D):
                            dS[r, i, j] += gi * u[j]
                            du[j] += gi * S[r, i, j]
            for a in range(c0, c1):
                x = X[a]
                if R == 1:
                    du = dUT[a - c0, 0]
                    gv = gV.reshape(d)  # (d, 1) → (d,): a contiguous view
                    for j in range(D):
                        duj = du[j]
                        for k in range(d):
                            gv[k] += duj * x[j, k]
                else:
                    for j in range(D):
                        for r in range(R):
                            dU[j, r] = dUT[a - c0, r, j]
                    for j in range(D):
                        for k in range(d):
                            xjk = x[j, k]
                            for r in range(R):
                                gV[k, r] += xjk * dU[j, r]


@numba.njit(cache=True, fastmath=False, parallel=True)
def _forward(X, ST, V, p, nu, block, F):
    """F_nr = Σ_i σ(h_nir) per replica.  X (N, D, d); ST (R, D, D); V (d, R); F (N, R)."""
    N, D, d = X.shape
    R = V.shape[1]
    nb = -(-N // block)
    for bi in prange(nb):
        UT = np.empty((R, D))
        h = np.empty(D)
        for a in range(bi * block, min(N, (bi + 1) * block)):
            _xV(X[a], V, UT)
            for r in range(R):
                h[:] = 0.0
                for j in range(D):
                    uj = UT[r, j]
                    for i in range(D):
                        h[i] += ST[r, j, i] * uj
                acc = 0.0
                for i in range(D):
                    acc += _pow_int(h[i], p) + nu * h[i]
                F[a, r] = acc


class FusedModel:
    """Risk (E), its gradient and the forward map of model (T) on a fixed X, for R replicas.

    Args:
        X: (N, D, d) float32 or float64, C-contiguous (never copied).
        y: (N,) labels in {−1, +1}, or None (then only :meth:`forward` works).
        p, nu, tau: activation degree, its linear part ν, softmax temperature τ.
        weights: optional (N,) non-negative sample weights (normalised to sum 1) — e.g. the
            probabilities of an exhaustive enumeration; ``None`` → the plain mean 1/N.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray | None, p: int, nu: float, tau: float,
                 weights: np.ndarray | None = None):
        X = np.asarray(X)
        if X.ndim != 3:
            raise ValueError(f"X must have shape (N, D, d), got {X.shape}")
        if X.dtype not in (np.float32, np.float64):
            raise ValueError(f"X must be float32 or float64, got {X.dtype}")
        if not X.flags.c_contiguous:
            raise ValueError("X must be C-contiguous (the simulator never copies X)")
        self.X = X
        self.N, self.D, self.d = X.shape
        self.p, self.nu, self.tau = int(p), float(nu), float(tau)
        self.y = None if y is None else np.ascontiguousarray(y, dtype=np.float64)
        if self.y is not None and self.y.shape != (self.N,):
            raise ValueError(f"y must have shape (N,)=({self.N},), got {self.y.shape}")
        if weights is None:
            self.w = np.empty(0)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (self.N,) or np.any(w < 0) or not w.sum() > 0:
                raise ValueError("weights must be a non-negative (N,) array with a positive sum")
            self.w = np.ascontiguousarray(w / w.sum())
        self.block = block_size(self.N)
        self.nb = -(-self.N // self.block)

    def risk_grad(self, A: np.ndarray, V: np.ndarray):
        """Risk (E), training error Pr_w[y F ≤ 0], ∂/∂A (zero diagonal) and ∇_v per replica.

        Args:
            A: (R, D, D) logits; V: (d, R) value vectors.

        Returns:
            risk (R,), err (R,), grad_A (R, D, D), grad_V (d, R) — all float64.
        """
        if self.y is None:
            raise ValueError("risk_grad needs labels y")
        A = np.ascontiguousarray(A, dtype=np.float64)
        V = np.ascontiguousarray(V, dtype=np.float64)
        R, D = A.shape[0], self.D
        S = softmax_rows(A, self.tau)
        ST = np.ascontiguousarray(S.transpose(0, 2, 1))
        with np.errstate(all="ignore"):  # divergence is detected by the caller, not warned about
            dS = np.empty((self.nb, R, D, D))
            gVb = np.empty((self.nb, self.d, R))
            lw = np.empty((self.nb, R, 2))
            _fused_many(self.X, self.y, self.w, 1.0 / self.N, S, ST, V, self.p, self.nu, self.block, dS, gVb, lw)
            # partials added in block order: independent of threads and scheduling
            dS_sum = dS.sum(axis=0)
            gV = gVb.sum(axis=0)
            risk, err = lw[:, :, 0].sum(axis=0), lw[:, :, 1].sum(axis=0)
            gA = softmax_backward(S, dS_sum, self.tau)
        return risk, err, gA, gV

    def forward(self, A: np.ndarray, V: np.ndarray) -> np.ndarray:
        """F_{A,v}(X) per replica.  A: (R, D, D), V: (d, R) → F: (N, R)."""
        A = np.ascontiguousarray(A, dtype=np.float64)
        V = np.ascontiguousarray(V, dtype=np.float64)
        S = softmax_rows(A, self.tau)
        ST = np.ascontiguousarray(S.transpose(0, 2, 1))
        F = np.empty((self.N, A.shape[0]))
        with np.errstate(all="ignore"):
            _forward(self.X, ST, V, self.p, self.nu, self.block, F)
        return F


def risk_and_grad(s, A: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray,
                  weights: np.ndarray | None = None) -> tuple[float, np.ndarray, np.ndarray]:
    """Same contract as :func:`theorydyn.model.risk_and_grad`, through the fused kernel.

    A: (D, D), v: (d,), X: (N, D, d), y: (N,) → (risk, grad_A (D, D) zero diagonal, grad_v (d,)).
    """
    m = FusedModel(np.ascontiguousarray(X), y, s.p, s.nu, s.tau, weights)
    r, _, gA, gV = m.risk_grad(np.asarray(A, float)[None], np.asarray(v, float)[:, None])
    return float(r[0]), gA[0], gV[:, 0]
