"""The finite-difference check of model (T)'s gradient, shared by tests/test_model.py (the analytic
gradient, :func:`theorydyn.core.model.risk_and_grad`) and tests/test_simulate.py (the fused kernel's):
one random problem and one assertion, each test giving its own sizes and tolerances."""

import numpy as np
import pytest
from conftest import model_risk_central_differences

from theorydyn import Setting
from theorydyn.core import data, model


def random_problem(D, C, d, N, seed=0, tau=1.0, dtype=np.float64, *, a_scale, v_scale):
    """(s, batch, A, v): ``N`` samples of Assumption 1 at (D, C, d, τ) drawn with ``seed``, A: (D, D)
    with off-diagonal N(0, a_scale²) and diagonal β, v: (d,) N(0, v_scale²), both from ``seed + 1``."""
    s = Setting(D=D, C=C, d=d, tau=tau)
    b = data.sample(s, N, seed=seed, dtype=dtype)
    rng = np.random.default_rng(seed + 1)
    A = rng.normal(scale=a_scale, size=(D, D))
    np.fill_diagonal(A, s.beta)
    v = rng.normal(scale=v_scale, size=d)
    return s, b, A, v


def assert_gradient_matches_central_differences(
    risk_and_grad, s, A, v, b, *, weights_seed, risk_rel, atol, rtol
) -> None:
    """``risk_and_grad(s, A, v, X, y, weights)`` against :func:`theorydyn.core.model.risk` (the risk, to
    ``risk_rel``) and against central differences of it (the gradients, to ``atol``/``rtol``), unweighted
    and with uniform random weights from ``weights_seed``; ∂/∂A is 0 on the diagonal (fixed at β)."""
    w = np.random.default_rng(weights_seed).random(len(b.y))
    for weights in (None, w):
        r, gA, gv = risk_and_grad(s, A, v, b.X, b.y, weights)
        assert r == pytest.approx(model.risk(s, A, v, b.X, b.y, weights), rel=risk_rel)
        num_A, num_v = model_risk_central_differences(s, A, v, b.X, b.y, weights)
        np.testing.assert_allclose(gA, num_A, atol=atol, rtol=rtol)
        np.testing.assert_allclose(gv, num_v, atol=atol, rtol=rtol)
        assert np.all(np.diag(gA) == 0)
