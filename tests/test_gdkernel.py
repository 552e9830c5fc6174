"""The fused step's code paths that the D = 8 tests of test_simulate.py do not reach: a D that is
not a multiple of the 4-row unrolling, a sub-block tail (N not a multiple of the sub-block), p ≠ 3 (the
generic power), sample weights, several replicas — each against model.risk_and_grad (float64
math, an independent NumPy route): to 1e-9 for float64 X, to float32 rounding for float32 X (whose
step runs in float32 arithmetic with float64 accumulation)."""

import numba
import numpy as np
import pytest

from theorydyn import Setting
from theorydyn.core import data, model
from theorydyn.simulate._kernel import FusedModel, sub_block

#: Float32 X is stepped in float32 arithmetic (float64 accumulation over samples), so it is held to
#: float32 rounding, not 1e-9: each gradient term passes through about five float32 roundings and
#: sums of at most d + 2D + 64 terms (U = X v, H = U Sᵀ, dU = G S, xᵀ dU, Gᵀ U over a sub-block),
#: a worst-case relative error ≈ 200 · 2⁻²⁴ ≈ 1.2e-5 of Σ|terms| and, as rounding errors add like a
#: random walk, ~1e-6 in practice (measured: ≤ 3e-7). So: 1e-5 norm-wise on each gradient and 1e-6
#: on the risk (its per-sample F sums D float32 h's in float64).
F32_GRAD_RTOL = 1e-5
F32_RISK_RTOL = 1e-6


def close_f32(g, g0):
    """‖g − g0‖ ≤ F32_GRAD_RTOL ‖g0‖ (norm-wise: entries near 0 carry the absolute error of the others)."""
    return np.linalg.norm(g - g0) <= F32_GRAD_RTOL * np.linalg.norm(g0)


def f32_error_slack(F0, y, wn):
    """Weight of the samples whose margin y F is within float32 rounding of 0 (their sign may flip)."""
    return wn @ (np.abs(y * F0) <= 1e-4 * np.abs(F0).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("D,C,d,p", [(9, 3, 3, 5), (10, 2, 6, 3)])
def test_fused_kernel_paths_match_model(dtype, D, C, d, p):
    s = Setting(D=D, C=C, d=d, p=p, nu=0.3)
    N = 3 * sub_block(D, d, np.dtype(dtype).itemsize) + 5
    b = data.sample(s, N, seed=2, dtype=dtype)
    rng = np.random.default_rng(5)
    R = 2
    A = rng.normal(scale=0.4, size=(R, D, D))
    V = rng.normal(scale=0.3, size=(d, R))
    w = rng.random(N)
    for weights in (None, w):
        fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau, weights=weights)
        risk, err, gA, gV = fm.risk_grad(A, V)
        F = fm.forward(A, V)
        X64 = b.X.astype(np.float64)
        for r in range(R):
            r0, gA0, gv0 = model.risk_and_grad(s, A[r], V[:, r], X64, b.y, weights)
            F0 = model.forward(s, A[r], V[:, r], X64)
            wn = np.full(N, 1.0 / N) if weights is None else weights / weights.sum()
            if dtype == np.float64:
                assert risk[r] == pytest.approx(r0, rel=1e-12)
                assert err[r] == pytest.approx(wn @ (b.y * F0 <= 0), abs=1e-12)
                np.testing.assert_allclose(gA[r], gA0, rtol=1e-9, atol=1e-14 * np.abs(gA0).max())
                np.testing.assert_allclose(gV[:, r], gv0, rtol=1e-9, atol=1e-14 * np.abs(gv0).max())
            else:
                assert risk[r] == pytest.approx(r0, rel=F32_RISK_RTOL)
                assert abs(err[r] - wn @ (b.y * F0 <= 0)) <= f32_error_slack(F0, b.y, wn) + 1e-12
                assert close_f32(gA[r], gA0) and close_f32(gV[:, r], gv0)
            np.testing.assert_allclose(F[:, r], F0, rtol=1e-10, atol=1e-13)  # forward: float64 arithmetic
            assert np.all(np.diag(gA[r]) == 0)


def test_non_finite_values_are_reported_not_hidden():
    """fastmath must not assume finite values: an overflowing F gives a non-finite gradient or
    risk (the simulator's divergence test) and counts as a training error."""
    s = Setting(D=8, C=2)
    b = data.sample(s, 40, seed=1)
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    A = np.zeros((1, 8, 8))
    V = np.full((s.d, 1), 1e120)
    risk, err, gA, gV = fm.risk_grad(A, V)
    assert not (np.isfinite(risk[0]) and np.all(np.isfinite(gA)) and np.all(np.isfinite(gV)))
    V = np.full((s.d, 1), np.nan)
    risk, err, gA, gV = fm.risk_grad(A, V)
    assert np.isnan(risk[0]) and err[0] == pytest.approx(1.0)


def test_float32_tolerance_rejects_wrong_gradients():
    """The float32 tolerance can fail: a gradient missing one of N = 200 samples, or off by 1e-4 of
    its norm in one entry, is rejected; the float32 step's own gradient is accepted."""
    s = Setting(D=10, C=2, d=6, nu=0.3)
    b = data.sample(s, 200, seed=3, dtype=np.float32)
    rng = np.random.default_rng(1)
    A = rng.normal(scale=0.4, size=(s.D, s.D))
    v = rng.normal(scale=0.3, size=s.d)
    X64 = b.X.astype(np.float64)
    _, gA0, gv0 = model.risk_and_grad(s, A, v, X64, b.y)
    _, _, gA, gV = FusedModel(b.X, b.y, s.p, s.nu, s.tau).risk_grad(A[None], v[:, None])
    assert close_f32(gA[0], gA0) and close_f32(gV[:, 0], gv0)
    _, gA_drop, gv_drop = model.risk_and_grad(s, A, v, X64[1:], b.y[1:])
    assert not close_f32(gA_drop, gA0) and not close_f32(gv_drop, gv0)
    bump = np.zeros_like(gA0)
    bump[0, 1] = 1e-4 * np.linalg.norm(gA0)
    assert not close_f32(gA0 + bump, gA0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_step_is_bit_identical_across_thread_counts(dtype):
    """Each block sums into its own partials, reduced in block order: 1 thread and all threads give
    the same bits (N spans many blocks, so the threads really split the work where there are two)."""
    s = Setting(D=8, C=2, d=8)
    N = 40 * sub_block(8, 8, np.dtype(dtype).itemsize) + 3
    b = data.sample(s, N, seed=1, dtype=dtype)
    rng = np.random.default_rng(2)
    A = rng.normal(scale=0.4, size=(2, 8, 8))
    V = rng.normal(scale=0.5, size=(8, 2))
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    assert fm.nb > 1
    before = numba.get_num_threads()
    try:
        outs = []
        for n in (1, numba.config.NUMBA_NUM_THREADS):
            numba.set_num_threads(n)
            outs.append(fm.risk_grad(A, V))
    finally:
        numba.set_num_threads(before)
    for x, y in zip(*outs, strict=True):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_non_finite_values_are_reported_in_both_dtypes(dtype):
    """Divergence detection for either storage: a huge v (1e30, overflowing the float32 products)
    gives a non-finite risk or gradient, and a NaN v a NaN risk counted as an error."""
    s = Setting(D=8, C=2)
    b = data.sample(s, 40, seed=1, dtype=dtype)
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    A = np.zeros((1, 8, 8))
    risk, err, gA, gV = fm.risk_grad(A, np.full((s.d, 1), 1e30 if dtype == np.float32 else 1e120))
    assert not (np.isfinite(risk[0]) and np.all(np.isfinite(gA)) and np.all(np.isfinite(gV)))
    risk, err, gA, gV = fm.risk_grad(A, np.full((s.d, 1), np.nan))
    assert np.isnan(risk[0]) and err[0] == pytest.approx(1.0)
