"""The fused step's code paths that the D = 8 tests of test_simulate.py do not reach: a D that is
not a multiple of the 4-row unrolling, a sub-block tail (N not a multiple of the sub-block), p ≠ 3 (the
generic power), sample weights, several replicas — each against model.risk_and_grad (float64
math, an independent NumPy route)."""

import numpy as np
import pytest

from theorydyn import Setting, data, model
from theorydyn.simulate._kernel import FusedModel, sub_block


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
            assert risk[r] == pytest.approx(r0, rel=1e-12)
            assert err[r] == pytest.approx(wn @ (b.y * F0 <= 0), abs=1e-12)
            np.testing.assert_allclose(gA[r], gA0, rtol=1e-9, atol=1e-14 * np.abs(gA0).max())
            np.testing.assert_allclose(gV[:, r], gv0, rtol=1e-9, atol=1e-14 * np.abs(gv0).max())
            np.testing.assert_allclose(F[:, r], F0, rtol=1e-10, atol=1e-13)
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
