"""Numba kernels of the reduced risk ℓ_red(α, γ, ρ) (docs/theory.md §3, Lemmas 4.1–4.2) and a NumPy reference.

At the symmetric point A_ii = β, A_ij = γ (same set), A_ij = ρ (different sets), v = α w*,
the noise drops out of model (T) and, with y = +1 (σ is odd), a patch with feature value
z ∈ {+1, −1, 0} in set m sees

    h = α u,   u = (Λ − Γ) z + (Γ − Ξ) s_m + Ξ T,   s_m = n⁺_m − n⁻_m,  T = Σ_m s_m,
    F = Σ_m Σ_z n^z_m σ(h),   σ(x) = x^p + ν x,

with the row-softmax values Λ, Γ, Ξ of logits b = β/τ, c = γ/τ, r = ρ/τ (docs/theory.md §3).

**Count types.** A set is summarised by its count vector (n⁺, n⁻, n⁰), one of
K = (C+1)(C+2)/2 *types*. The contribution of a set of type k to F — and to ∂F/∂α, ∂F/∂c,
∂F/∂r — depends on the sample only through (k, T), both integers. So for each (α, γ, ρ)
:func:`build_table` fills a (K, n_T, 4) table once, and a sample (stored as its histogram of
types, ``counts`` (M, K), signal set included, passed to the kernel in compressed rows so that
only the types present are visited) costs a handful of lookups:

    F = Σ_k counts_k · tab[k, T, 0],    ∂F/∂θ = Σ_k counts_k · tab[k, T, 1..3].

Derivatives (docs/theory.md §3): ∂h/∂α = u;
∂h/∂c = α[(Λ_c − Γ_c) z + (Γ_c − Ξ_c) s_m + Ξ_c T] with
(Λ_c, Γ_c, Ξ_c) = (−Λ(C−1)Γ, Γ − (C−1)Γ², −Ξ(C−1)Γ), and likewise for r with
(Λ_r, Γ_r, Ξ_r) = (−Λ(D−C)Ξ, −Γ(D−C)Ξ, Ξ − (D−C)Ξ²); ∂/∂γ = (1/τ)∂/∂c, ∂/∂ρ = (1/τ)∂/∂r.
The risk is ℓ(F) = log(1 + e^{−F}) with ℓ'(F) = −1/(1 + e^{F}).

Every kernel is ``@njit(cache=True)`` and single-threaded, so the same bank gives bit-identical
numbers on every run.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core.model import sigma, sigma_grad
from ..core.numba_activation import sigma_and_grad

#: |F| ≤ TIE_RTOL · Σ|terms| counts as F = 0 in the errors (a tie, not a sign): far above rounding,
#: far below any real F.
TIE_RTOL = 1e-12

#: Number of accumulated outputs of :func:`accumulate` (see its docstring).
N_OUT = 11


def count_types(C: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All count vectors (n⁺, n⁻, n⁰) of a set of size C.

    Returns:
        plus, minus, zero: (K,) int64 arrays, K = (C+1)(C+2)/2; the type (C, 0, 0) is index 0.
    """
    rows = [(a, b, C - a - b) for a in range(C, -1, -1) for b in range(C - a + 1)]
    arr = np.array(rows, dtype=np.int64)
    return arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy()


def type_probabilities(C: int, q: float) -> np.ndarray:
    """(K,) Pr[a random set has type k] = Multinomial(C; q/2, q/2, 1−q) (Assumption 1)."""
    plus, minus, zero = count_types(C)
    # Python's 0.0 ** 0 == 1.0 keeps q = 0 and q = 1 exact
    return np.array(
        [
            math.comb(C, a) * math.comb(C - a, b) * (q / 2) ** (a + b) * (1 - q) ** c
            for a, b, c in zip(plus.tolist(), minus.tolist(), zero.tolist(), strict=True)
        ]
    )


@njit(cache=True)
def softmax3(b: float, c: float, r: float, C: int, D: int) -> tuple[float, float, float]:
    """(Λ, Γ, Ξ): one row of softmax over β/τ (once), γ/τ (C−1 times), ρ/τ (D−C times)."""
    mx = max(b, max(c, r))
    eb = math.exp(b - mx)
    ec = math.exp(c - mx)
    er = math.exp(r - mx)
    Z = eb + (C - 1) * ec + (D - C) * er
    return eb / Z, ec / Z, er / Z


@njit(cache=True)
def build_table(alpha, gamma, rho, beta, tau, p, nu, C, D, plus, minus, zero, Tvals, tab):
    """Fill ``tab`` (K, n_T, 4) with one set's contribution to (F, ∂F/∂α, ∂F/∂c, ∂F/∂r).

    Entry [k, t] is Σ_{z: n^z_k > 0} n^z_k · (σ(h), σ'(h) u, σ'(h) α u_c, σ'(h) α u_r) at
    T = Tvals[t], for a set of type k (counts plus[k], minus[k], zero[k]).
    """
    Lam, Gam, Xi = softmax3(beta / tau, gamma / tau, rho / tau, C, D)
    Lc, Gc, Xc = -Lam * (C - 1) * Gam, Gam - (C - 1) * Gam * Gam, -Xi * (C - 1) * Gam
    Lr, Gr, Xr = -Lam * (D - C) * Xi, -Gam * (D - C) * Xi, Xi - (D - C) * Xi * Xi
    K = plus.shape[0]
    for k in range(K):
        sm = float(plus[k] - minus[k])
        for t in range(Tvals.shape[0]):
            T = Tvals[t]
            f0 = 0.0
            f1 = 0.0
            f2 = 0.0
            f3 = 0.0
            for zi in range(3):
                if zi == 0:
                    n, z = plus[k], 1.0
                elif zi == 1:
                    n, z = minus[k], -1.0
                else:
                    n, z = zero[k], 0.0
                if n == 0:
                    continue
                u = (Lam - Gam) * z + (Gam - Xi) * sm + Xi * T
                uc = (Lc - Gc) * z + (Gc - Xc) * sm + Xc * T
                ur = (Lr - Gr) * z + (Gr - Xr) * sm + Xr * T
                sig, dsig = sigma_and_grad(alpha * u, p, nu)
                f0 += n * sig
                f1 += n * dsig * u
                f2 += n * dsig * alpha * uc
                f3 += n * dsig * alpha * ur
            tab[k, t, 0] = f0
            tab[k, t, 1] = f1
            tab[k, t, 2] = f2
            tab[k, t, 3] = f3


@njit(cache=True)
def _logistic(F: float) -> tuple[float, float]:
    """(ℓ(F), ℓ'(F)) = (log(1 + e^{−F}), −1/(1 + e^{F})), stable for any sign of F."""
    if F >= 0:
        e = math.exp(-F)
        return math.log1p(e), -e / (1.0 + e)
    e = math.exp(F)
    return -F + math.log1p(e), -1.0 / (1.0 + e)


@njit(cache=True, inline="always")
def _add_sets(tab, k, t, c, F, Fabs, gA, gC, gR):
    """One sample's running sums (F, Σ|terms|, ∂F/∂(α, c, r)) after adding its ``c`` sets of type k
    at the table's T index t (each sum gains c · tab[k, t, ·], in this order: the same bits in
    :func:`accumulate` and :func:`mc_accumulate`)."""
    v = tab[k, t, 0]
    return F + c * v, Fabs + c * abs(v), gA + c * tab[k, t, 1], gC + c * tab[k, t, 2], gR + c * tab[k, t, 3]


@njit(cache=True)
def accumulate(tab, row_ptr, nz_type, nz_count, tidx, fval, weights, out):
    """Weighted sums over a bank of samples, written to ``out`` (N_OUT,):

    0 Σw ℓ, 1 Σw ℓ², 2–4 Σw ℓ'·∂F/∂(α, c, r), 5–7 Σw (ℓ'·∂F/∂(α, c, r))²,
    8 Σw [F ≤ 0], 9 Σw [f ≠ 0 and f F ≤ 0], 10 Σw [F not finite]
    (in 8–9, |F| ≤ TIE_RTOL·Σ_k counts_k |tab[k, T, 0]| is a tie and counts as F = 0).

    Args:
        tab: (K, n_T, 4) from :func:`build_table`.
        row_ptr, nz_type, nz_count: the (M, K) histogram of set types per sample (signal set
            included) in compressed rows: sample n has ``nz_count[j]`` sets of type ``nz_type[j]``
            for j in [row_ptr[n], row_ptr[n+1]) (only the types present: a few of the K).
        tidx: (M,) index of each sample's T into the table's T axis.
        fval: (M,) labelling function f of each sample (y = +1).
        weights: (M,) sample weights summing to 1.
    """
    for j in range(N_OUT):
        out[j] = 0.0
    M = tidx.shape[0]
    for n in range(M):
        t = tidx[n]
        F = 0.0
        Fabs = 0.0
        gA = 0.0
        gC = 0.0
        gR = 0.0
        for j in range(row_ptr[n], row_ptr[n + 1]):
            F, Fabs, gA, gC, gR = _add_sets(tab, nz_type[j], t, nz_count[j], F, Fabs, gA, gC, gR)
        _add_sample(out, weights[n], F, Fabs, gA, gC, gR, fval[n])


@njit(cache=True)
def _add_sample(out, w, F, Fabs, gA, gC, gR, f):
    """Add one sample of weight w (output F, Σ|terms| Fabs, ∂F/∂(α, c, r), label f) to ``out``."""
    if not math.isfinite(F):
        out[10] += w
        return
    loss, dl = _logistic(F)
    out[0] += w * loss
    out[1] += w * loss * loss
    a = dl * gA
    b = dl * gC
    r = dl * gR
    out[2] += w * a
    out[3] += w * b
    out[4] += w * r
    out[5] += w * a * a
    out[6] += w * b * b
    out[7] += w * r * r
    # A configuration that mirrors the signal set (T = 0, types in ± pairs) has F = 0 exactly;
    # the sum above may leave a rounding residue of either sign, so such ties count as F = 0.
    Fs = 0.0 if abs(F) <= TIE_RTOL * Fabs else F
    if Fs <= 0.0:
        out[8] += w
    if f != 0.0 and f * Fs <= 0.0:
        out[9] += w


@njit(cache=True)
def evaluate(alpha, gamma, rho, setting, bank, tab, out):
    """Table + accumulate; ``out`` as in :func:`accumulate` with 2–7 already in (α, γ, ρ):
    the c- and r-derivatives are divided by τ (∂/∂γ = (1/τ)∂/∂c).

    Args:
        setting: the tuple (β, τ, p, ν, C, D) (:func:`theorydyn.reduced.risk.kernel_setting`).
        bank: the tuple (plus, minus, zero, Tvals, row_ptr, nz_type, nz_count, tidx, fval, weights):
            the count types of :func:`build_table` and the compressed rows of :func:`accumulate`.
        tab, out: the buffers of :func:`build_table` and :func:`accumulate`.
    """
    beta, tau, p, nu, C, D = setting
    plus, minus, zero, Tvals, row_ptr, nz_type, nz_count, tidx, fval, weights = bank
    build_table(alpha, gamma, rho, beta, tau, p, nu, C, D, plus, minus, zero, Tvals, tab)
    accumulate(tab, row_ptr, nz_type, nz_count, tidx, fval, weights, out)
    out[3] /= tau
    out[4] /= tau
    out[6] /= tau * tau
    out[7] /= tau * tau


@njit(cache=True)
def gd_run(theta, eta, n_in, n_cross, n_steps, setting, bank, tab, out):
    """``n_steps`` steps of the paper's recursion (docs/theory.md §3), updating ``theta`` = (α, γ, ρ) in place:

        α ← α − η ∂ℓ_red/∂α,  γ ← γ − η ∂ℓ_red/∂γ / (D(C−1)),  ρ ← ρ − η ∂ℓ_red/∂ρ / (D(D−C)).

    ``setting``, ``bank``, ``tab``, ``out``: as in :func:`evaluate`; ``out`` holds the evaluation at
    the state *before* the last step taken. Returns the number of steps completed; fewer than
    ``n_steps`` means the evaluation at the state after that many steps was not finite (divergence)
    and ``theta`` is left at that state.
    """
    for i in range(n_steps):
        evaluate(theta[0], theta[1], theta[2], setting, bank, tab, out)
        if not (
            out[10] == 0.0
            and math.isfinite(out[0])
            and math.isfinite(out[2])
            and math.isfinite(out[3])
            and math.isfinite(out[4])
        ):
            return i
        theta[0] -= eta * out[2]
        theta[1] -= eta * out[3] / n_in
        theta[2] -= eta * out[4] / n_cross
    return n_steps


@njit(cache=True)
def n_compositions(n: int, k: int) -> float:
    """Number of weak compositions of n into k parts, C(n + k − 1, k − 1) (as a float: no overflow)."""
    return math.exp(math.lgamma(n + k) - math.lgamma(n + 1) - math.lgamma(k))


@njit(cache=True)
def enumerate_multisets(n: int, logp, out_counts, out_logw):
    """All multisets of n i.i.d. draws over k = len(logp) types, with their multinomial log-probability.

    Fills ``out_counts`` (M, k) with every weak composition of n into k parts (reverse lexicographic
    order) and ``out_logw`` (M,) with log[n!/Π c_j! · Π p_j^{c_j}]. Returns the number written.
    """
    k = logp.shape[0]
    a = np.zeros(k, dtype=np.int64)
    a[0] = n
    m = 0
    lfn = math.lgamma(n + 1)
    while True:
        lw = lfn
        for j in range(k):
            out_counts[m, j] = a[j]
            if a[j] > 0:
                lw += a[j] * logp[j] - math.lgamma(a[j] + 1)
        out_logw[m] = lw
        m += 1
        if a[k - 1] == n:
            break
        # successor: move one unit from the rightmost nonzero part before the last to its right
        j = k - 2
        while a[j] == 0:
            j -= 1
        a[j] -= 1
        tail = a[k - 1]
        a[k - 1] = 0
        a[j + 1] = tail + 1
    return m


# ---- plain NumPy reference (for tests and the benchmark: the same formula, no tables) -----------


def reference_numpy(alpha, gamma, rho, beta, tau, p, nu, C, D, set_counts, weights=None):
    """The reduced risk and gradient evaluated directly per sample and per set, vectorised in NumPy.

    Args:
        set_counts: (N, L, 3) int counts (n⁺, n⁻, n⁰) of every set of every sample (y = +1,
            signal set included).
        weights: (N,) summing to 1, or ``None`` for the plain mean.

    Returns:
        risk, grad (3,) = ∂ℓ_red/∂(α, γ, ρ), F (N,), Fabs (N,) = Σ over patches of |σ(h)| (the
        scale for deciding ties F = 0 in the errors).
    """
    nc = np.asarray(set_counts, dtype=np.float64)
    N = nc.shape[0]
    w = np.full(N, 1.0 / N) if weights is None else np.asarray(weights, dtype=np.float64)
    b, c, r = beta / tau, gamma / tau, rho / tau
    mx = max(b, c, r)
    eb, ec, er = np.exp(b - mx), np.exp(c - mx), np.exp(r - mx)
    Z = eb + (C - 1) * ec + (D - C) * er
    Lam, Gam, Xi = eb / Z, ec / Z, er / Z
    Lc, Gc, Xc = -Lam * (C - 1) * Gam, Gam - (C - 1) * Gam**2, -Xi * (C - 1) * Gam
    Lr, Gr, Xr = -Lam * (D - C) * Xi, -Gam * (D - C) * Xi, Xi - (D - C) * Xi**2
    sm = nc[:, :, 0] - nc[:, :, 1]  # (N, L)
    T = sm.sum(axis=1, keepdims=True)  # (N, 1)
    F = np.zeros(N)
    dA = np.zeros(N)
    dC = np.zeros(N)
    dR = np.zeros(N)
    Fabs = np.zeros(N)
    for col, z in ((0, 1.0), (1, -1.0), (2, 0.0)):
        n = nc[:, :, col]
        u = (Lam - Gam) * z + (Gam - Xi) * sm + Xi * T
        uc = (Lc - Gc) * z + (Gc - Xc) * sm + Xc * T
        ur = (Lr - Gr) * z + (Gr - Xr) * sm + Xr * T
        h = alpha * u
        ds = sigma_grad(h, p, nu)
        sig = n * sigma(h, p, nu)
        F += sig.sum(axis=1)
        Fabs += np.abs(sig).sum(axis=1)
        nd = n * ds
        dA += (nd * u).sum(axis=1)
        dC += (nd * alpha * uc).sum(axis=1)
        dR += (nd * alpha * ur).sum(axis=1)
    loss = np.logaddexp(0.0, -F)
    dl = -np.exp(-np.logaddexp(0.0, F))  # −1/(1+e^F)
    grad = np.array([w @ (dl * dA), w @ (dl * dC) / tau, w @ (dl * dR) / tau])
    return float(w @ loss), grad, F, Fabs


# ---- Monte Carlo draws and bank construction (docs/theory.md §3: counts are drawn, never D-length vectors) ----


def type_sampler(C: int, q: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The law of one random set's count type, prepared for inverting 32-bit uniforms.

    A uniform is an integer b in [0, 2³²) (u = b · 2⁻³²); the type drawn is ``order[k]`` for the
    first k with b < cut[k].

    Returns:
        order: (K,) the types by decreasing probability (ties by index);
        cut: (K,) uint64, ⌈2³² · cdf_k⌉ with cdf_k the cumulative probability along ``order``
            (b < cut[k] ⟺ u < cdf_k exactly), and 2³³ from the last type of positive probability
            on (rounding can never select a type of probability 0). Each type's probability is thus
            rounded to a multiple of 2⁻³² (≤ 2.4e-10 off: far below any Monte Carlo error);
        start: (4096,) for b in bucket b >> 20, the first k that can satisfy b < cut[k] (a guide
            table: the search starts there and, except in the K − 1 buckets holding a cut, stops
            at once — the result of a search from 0, without its unpredictable branches).
    """
    prob = type_probabilities(C, q)
    order = np.argsort(-prob, kind="stable")
    cdf = np.cumsum(prob[order])
    cut = np.ceil(np.minimum(cdf, 1.0) * 2.0**32).astype(np.uint64)
    last = int(np.flatnonzero(prob[order] > 0)[-1])
    cut[last:] = np.uint64(2**33)
    lows = np.arange(4096, dtype=np.uint64) << np.uint64(20)
    start = np.searchsorted(cut, lows, side="right")
    return order.astype(np.int64), cut, start.astype(np.int64)


@njit(cache=True, inline="always")
def _draw_position(raw, i, cut, start):
    """Position along ``order`` of the type drawn by uniform number i (half i & 1 of word i >> 1)."""
    wd = raw[i >> 1]
    b = (wd >> np.uint64(32)) if (i & 1) == 0 else (wd & np.uint64(0xFFFFFFFF))
    k = start[b >> np.uint64(20)]
    while b >= cut[k]:
        k += 1
    return k


@njit(cache=True)
def draw_type_counts(raw, n_sets, order, cut, start, types_out, counts_out):
    """Invert uniforms into set types and histogram them per sample.

    Args:
        raw: (⌈N(L−1)/2⌉,) uint64 raw outputs of the bit generator; each gives two uniforms
            u = (32-bit half) · 2⁻³² on [0, 1) (high half first), one per random set, in row-major
            order of (sample, set).
        n_sets: L − 1, the random sets per sample.
        order, cut, start: from :func:`type_sampler`.
        types_out: (N, L−1) int16 or an empty array (types not kept), filled with each random set's
            type (the Multinomial(C; q/2, q/2, 1−q) type law, see :func:`type_sampler`).
        counts_out: (N, K) int16, filled with the histogram of types, the signal set (type 0,
            (C, 0, 0)) included.
    """
    N, K = counts_out.shape
    keep_types = types_out.shape[0] == N and N > 0
    i = 0
    for n in range(N):
        for k in range(K):
            counts_out[n, k] = 0
        counts_out[n, 0] = 1
        for m in range(n_sets):
            t = order[_draw_position(raw, i, cut, start)]
            i += 1
            if keep_types:
                types_out[n, m] = t
            counts_out[n, t] += 1


@njit(cache=True)
def bank_arrays(counts, sm, thr, Tmax):
    """Per-sample T = Σ_k counts_k s_k and f = Σ_k counts_k Thr(s_k), the distinct T, and ``counts``
    in compressed rows, in two passes over (M, K) ``counts`` (|T| ≤ Tmax). Branch-free inner loops:
    a row's zero counts are written and then overwritten (the write position advances only on a
    non-zero count).

    Returns:
        tidx (M,) int64, Tvals (n_T,) float64 sorted, fval (M,), row_ptr (M+1,), nz_type and nz_count
        (int16: a bank is read once per evaluation, so its size is its cost).
    """
    M, K = counts.shape
    T = np.empty(M, dtype=np.int64)
    fval = np.empty(M)
    row_ptr = np.empty(M + 1, dtype=np.int64)
    present = np.zeros(2 * Tmax + 1, dtype=np.int64)
    nnz = 0
    row_ptr[0] = 0
    for n in range(M):
        t = 0
        f = 0.0
        for k in range(K):
            c = counts[n, k]
            t += c * sm[k]
            f += c * thr[k]
            nnz += c != 0
        T[n] = t
        fval[n] = f
        present[t + Tmax] = 1
        row_ptr[n + 1] = nnz
    nz_type = np.empty(nnz + K, dtype=np.int16)  # + K: room for the overwritten tail of the last row
    nz_count = np.empty(nnz + K, dtype=np.int16)
    j = 0
    for n in range(M):
        for k in range(K):
            c = counts[n, k]
            nz_type[j] = k
            nz_count[j] = c
            j += c != 0
    n_T = 0
    for i in range(present.shape[0]):
        if present[i]:
            present[i] = n_T  # now the index of T = i − Tmax in Tvals
            n_T += 1
        else:
            present[i] = -1
    Tvals = np.empty(n_T)
    for i in range(present.shape[0]):
        if present[i] >= 0:
            Tvals[present[i]] = i - Tmax
    tidx = np.empty(M, dtype=np.int64)
    for n in range(M):
        tidx[n] = present[T[n] + Tmax]
    return tidx, Tvals, fval, row_ptr, nz_type[:nnz], nz_count[:nnz]


def reference_draw_numpy(C: int, L: int, q: float, n_samples: int, seed: int = 0) -> np.ndarray:
    """Plain NumPy draw of the count vectors (N, L, 3) (n⁺, n⁻, n⁰): set 0 the signal set (C, 0, 0),
    sets 1..L−1 i.i.d. Multinomial(C; q/2, q/2, 1−q) — the reference route of the benchmark (and
    theorydyn's own draw before it sampled types by inversion)."""
    rng = np.random.default_rng(seed)
    out = np.empty((n_samples, L, 3), dtype=np.int64)
    out[:, 0] = (C, 0, 0)
    out[:, 1:] = rng.multinomial(C, [q / 2, q / 2, 1.0 - q], size=(n_samples, L - 1))
    return out


@njit(cache=True)
def mc_accumulate(raw, n_samples, n_sets, order, cut, start, tab, Tmax, sm, thr, w, hist, out):
    """Draw ``n_samples`` samples and add them to ``out`` without storing them (one evaluation).

    The draws are those of :func:`draw_type_counts` on the same ``raw`` words (two 32-bit
    uniforms per word, one per random set; ``n_samples · n_sets`` must be even unless this is the
    last chunk); each sample's histogram of types (in ``hist`` (K,), signal set included) is
    evaluated as in :func:`accumulate` with ``tab`` (K, 2·Tmax + 1, 4) built on every
    T ∈ [−Tmax, Tmax], in the same order of types — so the sums equal those of a bank of the
    same samples (``merge=False``) bit for bit. ``out`` (N_OUT + 1,): as in :func:`accumulate`,
    and ``out[N_OUT]`` += Σw [f = 0].
    """
    K = hist.shape[0]
    i = 0
    for _ in range(n_samples):
        for k in range(K):
            hist[k] = 0
        hist[0] = 1
        for _ in range(n_sets):
            hist[order[_draw_position(raw, i, cut, start)]] += 1
            i += 1
        T = 0
        f = 0.0
        for k in range(K):
            c = hist[k]
            T += c * sm[k]
            f += c * thr[k]
        t = T + Tmax
        F = 0.0
        Fabs = 0.0
        gA = 0.0
        gC = 0.0
        gR = 0.0
        for k in range(K):
            c = hist[k]
            if c != 0:
                F, Fabs, gA, gC, gR = _add_sets(tab, k, t, c, F, Fabs, gA, gC, gR)
        _add_sample(out, w, F, Fabs, gA, gC, gR, f)
        if f == 0.0:
            out[N_OUT] += w
