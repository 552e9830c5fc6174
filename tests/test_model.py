"""Model (T): gradients against finite differences, softmax, invariances (docs/theory.md §2)."""

import functools
from fractions import Fraction

import numpy as np
import pytest
from _fd import assert_gradient_matches_central_differences, random_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numba import njit

from theorydyn import Setting
from theorydyn.core import data, model
from theorydyn.core.numba_activation import sigma_and_grad

_problem = functools.partial(random_problem, D=8, C=2, d=5, N=40, a_scale=0.4, v_scale=0.6)


@pytest.mark.parametrize("tau", [1.0, 2.5])
def test_gradients_match_central_differences(tau):
    s, b, A, v = _problem(tau=tau)
    assert_gradient_matches_central_differences(
        model.risk_and_grad, s, A, v, b, weights_seed=5, risk_rel=1e-6, atol=1e-8, rtol=1e-5
    )


def test_forward_against_explicit_loops():
    s, b, A, v = _problem(D=6, C=3, d=4, N=5)
    S = model.attention(s, A)
    F = []
    for X in b.X:
        h = [sum(S[i, j] * (v @ X[j]) for j in range(s.D)) for i in range(s.D)]
        F.append(sum(x**3 + s.nu * x for x in h))
    np.testing.assert_allclose(model.forward(s, A, v, b.X), F, rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(M=arrays(np.float64, (5, 5), elements=st.floats(-700, 700)))
def test_softmax_rows_sum_to_one_without_overflow(M):
    S = model.softmax_rows(M)
    assert np.all(np.isfinite(S)) and np.all(S >= 0)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_permutation_equivariance(seed):
    """Permuting the patches, A's rows and columns and the sets together leaves F unchanged,
    and the gradients move with the permutation."""
    s, b, A, v = _problem(D=8, C=2, d=4, N=10, seed=seed % 1000)
    perm = np.random.default_rng(seed).permutation(s.D)
    sp = s.replace(partition=[[int(np.where(perm == i)[0][0]) for i in S] for S in s.sets])
    Xp, Ap = b.X[:, perm], A[np.ix_(perm, perm)]
    np.testing.assert_allclose(model.forward(sp, Ap, v, Xp), model.forward(s, A, v, b.X), rtol=1e-10)
    r, gA, gv = model.risk_and_grad(s, A, v, b.X, b.y)
    rp, gAp, gvp = model.risk_and_grad(sp, Ap, v, Xp, b.y)
    assert rp == pytest.approx(r, rel=1e-12)
    np.testing.assert_allclose(gAp, gA[np.ix_(perm, perm)], atol=1e-14, rtol=1e-9)
    np.testing.assert_allclose(gvp, gv, atol=1e-14, rtol=1e-9)
    # the sets moved with the patches: patch perm[j] of X is patch j of Xp
    inv = np.argsort(perm)
    assert (sp.same_set[np.ix_(inv, inv)] == s.same_set).all()


def test_symmetric_attention_and_odd_symmetry():
    s = Setting(D=8, C=2)
    A = model.symmetric_attention(s, 0.3, -0.1)
    assert np.all(np.diag(A) == s.beta) and np.all(A[s.in_set_mask] == 0.3) and np.all(A[s.cross_set_mask] == -0.1)
    b = data.sample(s, 20, seed=0)
    v = np.random.default_rng(0).normal(size=s.d)
    # σ odd ⇒ F(−X) = −F(X): flipping every sign flips the output (why SPEC takes y = +1)
    np.testing.assert_allclose(model.forward(s, A, v, -b.X), -model.forward(s, A, v, b.X), rtol=1e-12)


def test_float32_storage_matches_float64():
    s, b, A, v = _problem(D=8, C=2, d=8, N=200)
    r64, gA64, gv64 = model.risk_and_grad(s, A, v, b.X, b.y)
    r32, gA32, gv32 = model.risk_and_grad(s, A, v, b.X.astype(np.float32), b.y)
    assert r32 == pytest.approx(r64, rel=1e-5)
    np.testing.assert_allclose(gA32, gA64, atol=1e-6)
    np.testing.assert_allclose(gv32, gv64, atol=1e-5)


def test_logistic_loss_is_stable():
    m = np.array([-1e4, -30.0, 0.0, 30.0, 1e4])
    out = model.logistic_loss(m)
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, [1e4, 30.0 + np.log1p(np.exp(-30.0)), np.log(2), np.log1p(np.exp(-30.0)), 0.0])


def test_bad_weights_rejected():
    s, b, A, v = _problem(N=4)
    with pytest.raises(ValueError, match="weights"):
        model.risk_and_grad(s, A, v, b.X, b.y, weights=np.array([1.0, -1.0, 0.0, 0.0]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), alpha=st.floats(0.05, 2.0), gamma=st.floats(-2, 2), rho=st.floats(-2, 2))
def test_value_gradient_stays_in_span_of_w_star(seed, alpha, gamma, rho):
    """Lemma 4.2's mechanism: at v = α w* the output ignores the noise (ξ ⟂ w*), so the noise enters
    ∇_v only linearly and cancels between a sample and its mirror (ξ → −ξ, same z and y). With every
    sample mirrored, the population-style gradient lies exactly in span(w*); without the mirror it does not."""
    s = Setting(D=8, C=2, d=6, feature=2)
    b = data.sample(s, 30, seed=seed)
    noise = b.X - b.z[..., None] * s.w_star
    X = np.concatenate([b.X, b.z[..., None] * s.w_star - noise])
    y = np.concatenate([b.y, b.y])
    A = model.symmetric_attention(s, gamma, rho)
    v = alpha * s.w_star
    _, _, gv = model.risk_and_grad(s, A, v, X, y)
    off = gv - (gv @ s.w_star) * s.w_star
    assert np.linalg.norm(off) <= 1e-12 * max(1.0, np.linalg.norm(gv))
    _, _, gv_half = model.risk_and_grad(s, A, v, b.X, b.y)
    assert np.linalg.norm(gv_half - (gv_half @ s.w_star) * s.w_star) > 1e-6 * np.linalg.norm(gv_half)


# ---- the activation: one array definition, one Numba definition, equal ---------------------------
@njit
def _sigma_both_nb(x, p, nu):
    """(σ, σ') of every x through the kernels' Numba definition, called per scalar as they do."""
    out = np.empty((2, x.shape[0]))
    for i in range(x.shape[0]):
        out[0, i], out[1, i] = sigma_and_grad(x[i], p, nu)
    return out


@pytest.mark.parametrize("p", [3, 5, 7])
def test_numba_activation_matches_numpy_and_exact_rationals(p):
    nu = 0.1
    x = np.concatenate([np.random.default_rng(p).normal(scale=3.0, size=500), [0.0, -1.0, 1.0, 1e-8, -7.5]])
    nb = _sigma_both_nb(x, p, nu)
    sig, dsig = model.sigma(x, p, nu), model.sigma_grad(x, p, nu)
    np.testing.assert_allclose(nb[0], sig, rtol=1e-14, atol=1e-300)
    np.testing.assert_allclose(nb[1], dsig, rtol=1e-14, atol=1e-300)
    # an independent route: exact rational arithmetic on the same (binary) inputs, σ' by its
    # definition as a derivative (the symmetric difference quotient of the exact polynomial)
    fnu, eps = Fraction(nu), Fraction(1, 10**30)
    for xi, s_nb, g_nb in zip(x[::50], nb[0][::50], nb[1][::50], strict=True):
        fx = Fraction(float(xi))
        exact = fx**p + fnu * fx
        deriv = ((fx + eps) ** p + fnu * (fx + eps) - (fx - eps) ** p - fnu * (fx - eps)) / (2 * eps)
        assert abs(float(exact) - s_nb) <= 1e-14 * max(abs(float(exact)), 1e-300)
        assert abs(float(deriv) - g_nb) <= 1e-14 * abs(float(deriv))


def test_activation_reads_p_and_nu_from_the_setting():
    s = Setting(D=8, C=2, p=5, nu=0.3)
    x = np.linspace(-2, 2, 9)
    np.testing.assert_array_equal(model.activation(s, x), x**5 + 0.3 * x)
    np.testing.assert_array_equal(model.activation_grad(s, x), 5 * x**4 + 0.3)
    assert model.activation(s, 2.0) == 2.0**5 + 0.6  # scalars too (the transfer experiment's use)


def test_activation_is_generic_over_torch_tensors():
    torch = pytest.importorskip("torch")
    s = Setting(D=8, C=2)
    x = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(model.activation(s, torch.from_numpy(x)).numpy(), model.activation(s, x), rtol=1e-15)
    np.testing.assert_allclose(
        model.activation_grad(s, torch.from_numpy(x)).numpy(), model.activation_grad(s, x), rtol=1e-15
    )
