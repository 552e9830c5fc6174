"""The fused gradient step of model (T) on N samples: X is read from memory once per step.

Risk (E) and its gradient (docs/theory.md §2), for R parameter sets (replicas) sharing one X:

    u_nj = ⟨v, X_nj⟩,  h_ni = Σ_j S_ij u_nj,  F_n = Σ_i σ(h_ni),  S = row-softmax(A/τ),
    c_n  = w_n ℓ'(y_n F_n) y_n = −w_n y_n / (1 + e^{y_n F_n}),   g_ni = c_n σ'(h_ni),
    ∂risk/∂S_ij = Σ_n g_ni u_nj,   ∂risk/∂A_ik = (1/τ) S_ik (∂S_ik − Σ_j S_ij ∂S_ij)   (i ≠ k),
    ∇_v = Σ_n Σ_j (Σ_i g_ni S_ij) X_nj.

Shapes: X: (N, D, d) float32 or float64 (never copied); A, S: (R, D, D); V: (d, R).

Why this layout: the step reads X (N·D·d numbers; everything else is N·D), so X is streamed from
memory once per step. Samples are cut into fixed blocks processed in parallel (``prange``), each
block into sub-blocks of about 1 MB of X (:func:`sub_block`), seen as one (sub·D, d) matrix X_sub.
Per sub-block: U = X_sub v (BLAS gemv: the one streaming pass); then the three D×D products are
GEMMs over the sub-block (BLAS through ``np.dot``: H = U Sᵀ, dU = G S, ∂S += Gᵀ U), with the loss
and g = c σ'(H) in between; then ∇_v += X_subᵀ dU (gemv) while X_sub is still in L2. A per-sample
formulation does the same D×D work as matrix-vector products, bound by loads and stores of D×D
operands; as GEMMs with 32–64 rows they run near the FMA peak (measured 3–7× faster per product).
BLAS runs single-threaded inside a kernel (:func:`theorydyn.infra.blas.single_threaded_blas`): the cores
are the ``prange`` blocks'.

Cost. Per sample the step does 5·D·d multiply-adds (U, ∇_v and the three D×D products at D = d)
against one for a pass over X. On the 2-core AMD EPYC (N = 16384, D = d = 64, float32, calls back
to back) the step takes 9.8–10.5 ms where one pass over X (``X.reshape(-1, d) @ v``) takes 6.6–7.1 ms
(5.2–7.5 ms within one hour: the VM's memory bandwidth varies, 38–52 GB/s), and its arithmetic alone
(X resident in cache) 6.7–8.3 ms. Each thread reads a sub-block, then computes on it, so the step
takes well over the larger of the two (the two threads, out of phase, overlap them only in part);
prefetching the next sub-block into L2 during
this one's products was measured 1.1–1.2× slower (``python -m theorydyn.bench simulate`` prints all
three).

Arithmetic. Float64 X: all float64, agreeing with :func:`theorydyn.core.model.risk_and_grad` to 1e-9.
Float32 X (:func:`_fused_many` in float32): float32 arithmetic within a sub-block — U = X_sub v, the three
D×D products as float32 GEMMs (sgemm), ∇_v's X_subᵀ dU — with float64 accumulation of everything
summed over sub-blocks (∂S, ∇_v, the risk, the error) and F, the loss and c σ'(h) formed in float64
per sample. The gradient then agrees with float64 math to float32 rounding (≤ 3e-7 norm-wise
measured; the tests hold it to 1e-5), and GD trajectories with float32 X agree with float64 ones to
~4e-7 relative over 300 steps. Float32 products overflow past ~3e38, so a diverging run shows a
non-finite gradient a little sooner.
``fastmath`` is limited to reassociation and contraction ({"reassoc", "contract", "nsz"}):
SIMD reductions, while NaN and Inf keep their meaning (divergence is detected from them). Each
block writes its own partial sums, added in block order afterwards, and a BLAS product of given
shapes sums in a fixed order. So the result does not depend on the number of threads or their
scheduling: same inputs → bit-identical outputs on one machine (another CPU or BLAS build may
round differently, at the level of the arithmetic's rounding: 1e-16 in float64, 1e-7 in float32).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numba
import numpy as np
from numba import prange

from ..core.numba_activation import sigma_and_grad
from ..infra.blas import single_threaded_blas
from .bfloat16 import is_bfloat16

#: At most this many blocks (partial sums cost blocks × R × D² floats, kept O(N·D)).
MAX_BLOCKS = 64
#: At least this many samples per block (amortises zeroing a block's D×D partial).
MIN_BLOCK = 64


def block_size(N: int, sub: int = 1) -> int:
    """Samples per block: ≥ MIN_BLOCK, at most MAX_BLOCKS blocks, rounded up to whole sub-blocks of
    ``sub`` samples (:func:`sub_block`)."""
    return -(-max(MIN_BLOCK, -(-N // MAX_BLOCKS)) // sub) * sub


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
def _loss_and_dloss(m, wa):
    """(w ℓ(m), w / (1 + e^m)) with ℓ(m) = log(1 + e^{−m}), stable for either sign of m."""
    if m >= 0:
        e = math.exp(-m)
        return wa * math.log1p(e), wa * e / (1.0 + e)
    e = math.exp(m)
    return wa * (-m + math.log1p(e)), wa / (1.0 + e)


#: Bytes of X per sub-block: its samples' X rows stay in L2 (≥ 1 MB per core on current x86) between
#: the first pass (U = X v) and the second (∇_v += Xᵀ dU), and the D×D products are GEMMs with
#: that many rows. Measured at D = d = 64 (interleaved, 2 cores): 1 MB beats 256 KB and 2 MB.
SUB_BYTES = 1 << 20


#: OpenBLAS runs a GEMM on several threads from M·N·K = 2¹⁸ on; inside a ``prange`` block that would
#: oversubscribe the cores, so a sub-block keeps sub · D² below it (possible up to D = 255).
BLAS_SINGLE_THREAD_MNK = 1 << 18


def sub_block(D: int, d: int, itemsize: int) -> int:
    """Samples per sub-block: about SUB_BYTES of X and sub · D² < 2¹⁸, a multiple of 4 in [4, 64]
    (60 for float32 and 32 for float64 at D = d = 64)."""
    sub = min(64, SUB_BYTES // (D * d * itemsize), (BLAS_SINGLE_THREAD_MNK - 1) // (D * D))
    return int(max(4, sub - sub % 4))


#: fastmath on the reductions only: reassociation (SIMD sums) and FMA contraction. NaN and Inf stay
#: honoured ("nnan"/"ninf" are off) because divergence is detected from non-finite values.
_FM = {"reassoc", "contract", "nsz"}


@numba.njit(cache=True, fastmath=_FM)
def _sigma_sum(h, p, nu):
    """F = Σ_i σ(h_i), σ(x) = x^p + ν x (:func:`theorydyn.core.numba_activation.sigma_and_grad`)."""
    F = 0.0
    if p == 3:  # the literal 3 unrolls the power: a straight-line, vectorised loop for the paper's p
        for i in range(h.shape[0]):
            F += sigma_and_grad(h[i], 3, nu)[0]
    else:
        for i in range(h.shape[0]):
            F += sigma_and_grad(h[i], p, nu)[0]
    return F


@numba.njit(cache=True, fastmath=_FM)
def _loss_to_g(h, ya, wa, p, nu):
    """For one sample's h (D,) in X's dtype: F = Σ σ(h_i) and the loss in float64; in place h_i → g_i =
    c σ'(h_i), rounded to h's dtype. Returns (w ℓ(yF), yF)."""
    F = 0.0
    if p == 3:  # a literal p unrolls the power (see _sigma_sum)
        for i in range(h.shape[0]):
            F += sigma_and_grad(np.float64(h[i]), 3, nu)[0]
    else:
        for i in range(h.shape[0]):
            F += sigma_and_grad(np.float64(h[i]), p, nu)[0]
    m = ya * F
    lo, sig = _loss_and_dloss(m, wa)
    c = -ya * sig
    if p == 3:
        for i in range(h.shape[0]):
            h[i] = c * sigma_and_grad(np.float64(h[i]), 3, nu)[1]
    else:
        for i in range(h.shape[0]):
            h[i] = c * sigma_and_grad(np.float64(h[i]), p, nu)[1]
    return lo, m


@numba.njit(cache=True, inline="always")
def _interleaved(i, nb):
    """Block of the i-th iteration: 0, nb − 1, 1, nb − 2, …. The threads take contiguous ranges of i, so each
    gets early and late blocks alike: with replicas on nested prefixes (:meth:`FusedModel.risk_grad`'s
    ``n``) the early blocks carry more replicas. Each block writes its own partials: same bits."""
    return i // 2 if i % 2 == 0 else nb - 1 - i // 2


@numba.njit(cache=True, inline="always")
def _block_start(bi, block, N, out_dS, out_gV, out_lw):
    """Block bi's samples [a0, a1) and its partial sums (∂S, ∇_v, loss/error), zeroed."""
    dS, gV, lw = out_dS[bi], out_gV[bi], out_lw[bi]
    dS[:, :, :] = 0.0
    gV[:, :] = 0.0
    lw[:, :] = 0.0
    return bi * block, min(N, (bi + 1) * block), dS, gV, lw


@numba.njit(cache=True, fastmath=_FM, inline="always")
def _replica_sub(Xs, Ur, ST_r, S_r, y, w, uw, c0, p, nu, dS_r, gV_r, lw_r, want_A, want_v, gs):
    """One replica's work on one sub-block, given U_r = X_sub v_r (nc, D): H = U Sᵀ turned into g in
    place with the loss, then ∂S += Gᵀ U (``want_A``) and dU = G S, ∇_v += X_subᵀ dU (``want_v``).
    Shared by :func:`_fused_many` and :func:`_fused_bf16`: one copy of the step's products."""
    nc, D = Ur.shape
    G = np.dot(Ur, ST_r)  # H = U Sᵀ (nc, D), turned into g in place
    for b in range(nc):
        a = c0 + b
        wa = uw if w.shape[0] == 0 else w[a]
        lo, m = _loss_to_g(G[b], y[a], wa, p, nu)
        lw_r[0] += lo
        if not m > 0:  # a NaN margin counts as wrong
            lw_r[1] += wa
    if want_A:  # ∂S: skipped, not computed, when Â is frozen
        P = np.dot(G.T, Ur)  # Σ_n g_n u_nᵀ (D, D)
        for i in range(D):
            for j in range(D):
                dS_r[i, j] += P[i, j]
    if want_v:  # dU and the second read of X_sub: skipped when v̂ is frozen
        dU = np.dot(G, S_r)  # (nc, D): dU_nj = Σ_i g_ni S_ij
        np.dot(dU.reshape(nc * D), Xs, gs)  # Σ_{n,j} dU_nj x_nj over the sub-block (d,)
        for k in range(gs.shape[0]):
            gV_r[k] += gs[k]


@numba.njit(cache=True, fastmath=_FM, parallel=True)
def _fused_many(X, y, w, uw, nr, S, ST, VT, p, nu, block, sub, out_dS, out_gV, out_lw, want_A, want_v):
    """R replicas sharing X.  S, ST (R, D, D); VT (R, d); replica r's data are the first nr[r] samples,
    each of weight uw[r] = 1/nr[r] (or w, with nr = N); partials per block out_dS (nb, R, D, D),
    out_gV (nb, R, d), out_lw (nb, R, 2) = (Σ w ℓ, Σ w [m ≤ 0]). ``want_A`` / ``want_v`` (R,) uint8, per
    replica: 0 skips the ∂S GEMM, resp. dU = G S and ∇_v's second read of X_sub (the partial stays
    zero); the forward pass, the loss and g are computed either way.

    Per sub-block of ``sub`` samples (:func:`sub_block`), X_sub = its rows as one (sub·D, d) matrix:
    (1) U_r = X_sub v_r (BLAS gemv: X streamed from memory, the one pass); (2) per replica the three
    D×D products as GEMMs over the sub-block, H = U Sᵀ, dU = G S, ∂S += Gᵀ U, with the loss and
    g = c σ'(H) in between; (3) ∇_v += X_subᵀ dU_r (gemv, X_sub now read from L2). Every block is
    single-threaded (BLAS too: :func:`theorydyn.infra.blas.single_threaded_blas`) and its partial sums are
    reduced in block order by the caller: bit-identical results whatever the number of threads.

    X, S, Sᵀ, v share one dtype, and U, G, dU, the gemvs and the three GEMMs are in it: for float32
    X, sgemm/sgemv (twice the SIMD lanes of the float64 routines, half the bytes), while F, the loss
    and c σ'(h) are formed in float64 per sample (:func:`_loss_to_g`) and every sum over more than
    one sub-block (∂S, ∇_v, the risk, the error) accumulates in the float64 partials.

    Tried and dropped (2-core AMD EPYC, N = 16384, D = d = 64, float32): software-pipelining U = X v
    of sub-block k + 1 into the ∇_v loop of sub-block k (so memory and compute overlap), 1.3–1.5×
    slower at sub-blocks of 16–60 samples; prefetching sub-block k + 1 into L2 (``llvm.prefetch``)
    during sub-block k's products, 1.1–1.2× slower at sub-blocks of 16–32; gemv over one or two
    samples at a time (the size at which OpenBLAS stays single-threaded by itself), 1.1–1.15×
    slower than one gemv per sub-block; hand-written four-row dot products and axpys (the kernel
    before this one), 1.15–1.2× slower.
    """
    N, D, d = X.shape
    R = VT.shape[0]
    nb = out_dS.shape[0]
    for i in prange(nb):
        bi = _interleaved(i, nb)
        a0, a1, dS, gV, lw = _block_start(bi, block, N, out_dS, out_gV, out_lw)
        U = np.empty((R, sub * D), dtype=X.dtype)
        gs = np.empty(d, dtype=X.dtype)
        for c0 in range(a0, a1, sub):
            nc = min(a1, c0 + sub) - c0
            Xs = X[c0 : c0 + nc].reshape(nc * D, d)
            for r in range(R):
                m = min(nc, nr[r] - c0)  # replica r's samples in this sub-block (its data: the first nr[r])
                if m <= 0:
                    continue
                Xm = Xs[: m * D]
                np.dot(Xm, VT[r], U[r, : m * D])
                Ur = U[r, : m * D].reshape(m, D)
                _replica_sub(Xm, Ur, ST[r], S[r], y, w, uw[r], c0, p, nu, dS[r], gV[r], lw[r], want_A[r], want_v[r], gs)


@numba.njit(cache=True, fastmath=_FM, parallel=True)
def _fused_bf16(X, y, w, uw, nr, S, ST, V, p, nu, block, sub, out_dS, out_gV, out_lw, want_A, want_v):
    """:func:`_fused_many` for X stored as bfloat16 (X: (N, D, d) uint16, the bits of
    :mod:`theorydyn.simulate.bfloat16`), S, Sᵀ, V (d, R) float32. Per sub-block, X_sub is widened to
    float32 into a buffer that stays in L2 (exact: a bfloat16 is the top half of a float32), and
    U = X_sub V for all R replicas is one GEMM (X_sub read once however many replicas); the rest is
    the float32 kernel's arithmetic (:func:`_replica_sub`). Memory read per step: N·D·d·2 bytes, half
    of float32 storage.

    Why the GEMM: with two replicas (a trained model and its Â-frozen control) at D = 128, float32,
    N = 16384, one GEMM per sub-block took the step from 153 to 117 ms (float32 X) and 143 to 92 ms
    (bfloat16 X) against one gemv per replica (2-core Xeon, load ≤ 1). It would change float32 bits
    for existing runs, so the float32/float64 kernel keeps its gemv.
    """
    N, D, d = X.shape
    R = V.shape[1]
    nb = out_dS.shape[0]
    for i in prange(nb):
        bi = _interleaved(i, nb)
        a0, a1, dS, gV, lw = _block_start(bi, block, N, out_dS, out_gV, out_lw)
        buf = np.empty(sub * D * d, dtype=np.float32)
        bits = buf.view(np.uint32)
        U = np.empty(sub * D, dtype=np.float32)
        gs = np.empty(d, dtype=np.float32)
        for c0 in range(a0, a1, sub):
            nc = min(a1, c0 + sub) - c0
            src = X[c0 : c0 + nc].reshape(nc * D * d)
            for t in range(nc * D * d):
                bits[t] = np.uint32(src[t]) << 16
            Xs = buf[: nc * D * d].reshape(nc * D, d)
            UU = np.dot(Xs, V)  # (nc·D, R): every replica's U in one read of X_sub
            for r in range(R):
                m = min(nc, nr[r] - c0)  # replica r's samples in this sub-block
                if m <= 0:
                    continue
                for t in range(m * D):
                    U[t] = UU[t, r]
                Ur = U[: m * D].reshape(m, D)
                _replica_sub(
                    Xs[: m * D], Ur, ST[r], S[r], y, w, uw[r], c0, p, nu, dS[r], gV[r], lw[r], want_A[r], want_v[r], gs
                )


@numba.njit(cache=True, fastmath=_FM)
def _rows_dot(x, v, u):
    """u[j] = ⟨x_j, v⟩ for the D rows of x (D, d): four rows at a time, so v is loaded once for four
    independent SIMD reductions (a float32 x is widened on load: float64 arithmetic)."""
    D, d = x.shape
    j = 0
    while j + 4 <= D:
        s0 = 0.0
        s1 = 0.0
        s2 = 0.0
        s3 = 0.0
        for k in range(d):
            vk = v[k]
            s0 += x[j, k] * vk
            s1 += x[j + 1, k] * vk
            s2 += x[j + 2, k] * vk
            s3 += x[j + 3, k] * vk
        u[j] = s0
        u[j + 1] = s1
        u[j + 2] = s2
        u[j + 3] = s3
        j += 4
    while j < D:
        s0 = 0.0
        for k in range(d):
            s0 += x[j, k] * v[k]
        u[j] = s0
        j += 1


@numba.njit(cache=True, fastmath=_FM, parallel=True)
def _forward(X, ST, VT, p, nu, block, sub, F):
    """F_nr = Σ_i σ(h_nir) per replica, in float64 arithmetic whatever X's dtype (the recorded test
    error and association are read off F).  X (N, D, d); ST (R, D, D); VT (R, d) float64; F (N, R)."""
    N, D, d = X.shape
    R = VT.shape[0]
    nb = -(-N // block)
    for bi in prange(nb):
        U = np.empty((R, sub, D))
        a1 = min(N, (bi + 1) * block)
        for c0 in range(bi * block, a1, sub):
            nc = min(a1, c0 + sub) - c0
            for b in range(nc):
                x = X[c0 + b]
                for r in range(R):
                    _rows_dot(x, VT[r], U[r, b])
            for r in range(R):
                H = np.dot(U[r, :nc], ST[r])
                for b in range(nc):
                    F[c0 + b, r] = _sigma_sum(H[b], p, nu)


def replica_flags(flag, R: int) -> np.ndarray:
    """A bool or an (R,) sequence of bools → (R,) uint8 (the kernel's per-replica switches)."""
    f = np.asarray(flag, dtype=bool)
    if f.ndim > 1 or (f.ndim == 1 and f.shape != (R,)):
        raise ValueError(f"a per-replica flag must be a bool or have {R} entries, got shape {f.shape}")
    return np.ascontiguousarray(np.broadcast_to(f, (R,)), dtype=np.uint8)


def sample_counts(n: Sequence[int] | None, R: int, N: int, uniform: bool = True) -> np.ndarray:
    """(R,) int64 per-replica sample counts (replica r's data: the first n[r] of N samples), each in
    [1, N]; None → N each. Counts need uniform sample weights. ValueError naming ``n_train`` otherwise."""
    if n is None:
        return np.full(R, N, dtype=np.int64)
    if not uniform:
        raise ValueError("per-replica sample counts (n_train) need uniform weights (no weights given)")
    na = np.asarray(n)
    if na.shape != (R,) or na.dtype.kind not in "iu" or na.min() < 1 or na.max() > N:
        raise ValueError(f"n_train must be {R} integers in [1, N={N}], got {n!r}")
    return np.ascontiguousarray(na, dtype=np.int64)


class FusedModel:
    """Risk (E), its gradient and the forward map of model (T) on a fixed X, for R replicas.

    Args:
        X: (N, D, d) float32 or float64, or bfloat16 bits (``uint16``,
            :mod:`theorydyn.simulate.bfloat16`: stepped in float32 arithmetic, no :meth:`forward`),
            C-contiguous (never copied).
        y: (N,) labels in {−1, +1}, or None (then only :meth:`forward` works).
        p, nu, tau: activation degree, its linear part ν, softmax temperature τ.
        weights: optional (N,) non-negative sample weights (normalised to sum 1) — e.g. the
            probabilities of an exhaustive enumeration; ``None`` → the plain mean 1/N.
    """

    def __init__(
        self, X: np.ndarray, y: np.ndarray | None, p: int, nu: float, tau: float, weights: np.ndarray | None = None
    ):
        X = np.asarray(X)
        if X.ndim != 3:
            raise ValueError(f"X must have shape (N, D, d), got {X.shape}")
        self.bf16 = is_bfloat16(X)
        if X.dtype not in (np.float32, np.float64) and not self.bf16:
            raise ValueError(f"X must be float32, float64 or bfloat16 bits (uint16), got {X.dtype}")
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
        # bfloat16: the sub-block is sized by its float32 buffer, the bytes that stay in L2
        self.sub = sub_block(self.D, self.d, 4 if self.bf16 else X.itemsize)
        self.block = block_size(self.N, self.sub)
        self.nb = -(-self.N // self.block)

    def risk_grad(
        self,
        A: np.ndarray,
        V: np.ndarray,
        grad_A: bool | Sequence[bool] = True,
        grad_v: bool | Sequence[bool] = True,
        n: Sequence[int] | None = None,
    ):
        """Risk (E), training error Pr_w[y F ≤ 0], ∂/∂A (zero diagonal) and ∇_v per replica.

        Args:
            A: (R, D, D) logits; V: (d, R) value vectors.
            grad_A, grad_v: False skips that gradient's computation (Â or v̂ frozen: the ∂S GEMM and
                the softmax backward, resp. dU = G S and the second read of X); it is returned as zeros.
                A bool, or one per replica ((R,) sequence: e.g. a trained model and its Â-frozen control
                in one pass over X). The other outputs are the same bits either way.
            n: optional (R,) sample counts: replica r's risk is the mean over the first n[r] samples of X
                (nested training sets in one pass: runs at several N on one draw). None → all N; not
                with ``weights``. The pass covers the first max(n) samples in the blocks a model on them
                alone would cut: that replica is bit-identical to it, the others agree with a model on
                X[:n[r]] to the float64 rounding of the sums over blocks.

        Returns:
            risk (R,), err (R,), grad_A (R, D, D), grad_V (d, R) — all float64.
        """
        if self.y is None:
            raise ValueError("risk_grad needs labels y")
        A = np.ascontiguousarray(A, dtype=np.float64)
        V = np.ascontiguousarray(V, dtype=np.float64)
        R, D = A.shape[0], self.D
        fA, fv = replica_flags(grad_A, R), replica_flags(grad_v, R)
        nr = self.sample_counts(n, R)
        # the pass covers the first max(nr) samples, in the blocks a run on them alone would cut: the
        # replica with the most samples is that run's bits, and the threads share the samples evenly
        Ne = int(nr.max())
        block = block_size(Ne, self.sub)  # self.block when every replica has all N
        nb = -(-Ne // block)
        S = softmax_rows(A, self.tau)
        ST = np.ascontiguousarray(S.transpose(0, 2, 1))
        with np.errstate(all="ignore"), single_threaded_blas():  # divergence: detected by the caller
            dS = np.empty((nb, R, D, D))
            gVb = np.empty((nb, R, self.d))
            lw = np.empty((nb, R, 2))
            VT = np.ascontiguousarray(V.T)
            # float32 or bfloat16 X: S, Sᵀ and v rounded to float32 (the kernel's arithmetic)
            dt = np.dtype(np.float32) if self.bf16 else self.X.dtype
            kernel, Vk = (_fused_bf16, V) if self.bf16 else (_fused_many, VT)
            kernel(
                self.X[:Ne],
                self.y,
                self.w,
                1.0 / nr,
                nr,
                S.astype(dt, copy=False),
                ST.astype(dt, copy=False),
                np.ascontiguousarray(Vk, dtype=dt),
                self.p,
                self.nu,
                block,
                self.sub,
                dS,
                gVb,
                lw,
                fA,
                fv,
            )
            # partials added in block order: independent of threads and scheduling
            gV = np.ascontiguousarray(gVb.sum(axis=0).T)
            risk, err = lw[:, :, 0].sum(axis=0), lw[:, :, 1].sum(axis=0)
            gA = softmax_backward(S, dS.sum(axis=0), self.tau) if fA.any() else np.zeros_like(S)
            gA[fA == 0] = 0.0  # already zero (∂S = 0): stated, not left to the arithmetic
        return risk, err, gA, gV

    def sample_counts(self, n: Sequence[int] | None, R: int) -> np.ndarray:
        """:func:`sample_counts` for this X (its N, its weights)."""
        return sample_counts(n, R, self.N, uniform=self.w.shape[0] == 0)

    def forward(self, A: np.ndarray, V: np.ndarray) -> np.ndarray:
        """F_{A,v}(X) per replica.  A: (R, D, D), V: (d, R) → F: (N, R)."""
        if self.bf16:
            raise ValueError("forward needs float32 or float64 X: bfloat16 storage is for the training step")
        A = np.ascontiguousarray(A, dtype=np.float64)
        V = np.ascontiguousarray(V, dtype=np.float64)
        S = softmax_rows(A, self.tau)
        ST = np.ascontiguousarray(S.transpose(0, 2, 1))
        F = np.empty((self.N, A.shape[0]))
        with np.errstate(all="ignore"), single_threaded_blas():
            _forward(self.X, ST, np.ascontiguousarray(V.T), self.p, self.nu, self.block, self.sub, F)
        return F


def risk_and_grad(
    s, A: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None
) -> tuple[float, np.ndarray, np.ndarray]:
    """Same contract as :func:`theorydyn.core.model.risk_and_grad`, through the fused kernel.

    A: (D, D), v: (d,), X: (N, D, d), y: (N,) → (risk, grad_A (D, D) zero diagonal, grad_v (d,)).
    """
    m = FusedModel(np.ascontiguousarray(X), y, s.p, s.nu, s.tau, weights)
    r, _, gA, gV = m.risk_grad(np.asarray(A, float)[None], np.asarray(v, float)[:, None])
    return float(r[0]), gA[0], gV[:, 0]
