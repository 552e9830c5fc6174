"""The reduced risk ℓ_red(α, γ, ρ) against independent routes (docs/theory.md §3, Lemmas 4.1–4.2).

Routes: central finite differences of the reduced risk; exhaustive enumeration of the full
D×D model (T) at tiny sizes (theorydyn.core.model on explicit X = z w*, weights = probabilities);
the full model's per-entry gradient; Monte Carlo against exact; the O(L) count-based F against
model.forward on explicit (noisy) X; the plain NumPy reference against the Numba tables.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting
from theorydyn.core import data, model
from theorydyn.core.model import softmax_values
from theorydyn.reduced import _kernels as rk
from theorydyn.reduced import (
    bank_from_set_counts,
    default_horizon,
    forward_counts,
    make_bank,
    mc_set_counts,
    n_exact_terms,
    population_risk,
)

POINTS = [(0.9, 0.3, -0.1), (1.7, -0.4, 0.25), (0.3, 2.0, -1.0)]


def _enumerate_full(s: Setting):
    """Every data point of Assumption 1 without noise: z (M, D), y (M,), probability (M,)."""
    return data.enumerate_population(s)


@pytest.mark.parametrize(
    "kw", [dict(D=6, C=2, q=0.4), dict(D=4, C=2, q=0.5, p=5, tau=0.7, beta=0.3), dict(D=6, C=3, q=0.9, nu=0.3, tau=2.0)]
)
def test_exact_reduced_matches_exhaustive_full_model(kw):
    """ℓ_red, its gradient (per entry) and the errors against model (T) summed over every data point."""
    s = Setting(**kw)
    z, y, w = _enumerate_full(s)
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    X = data.embed(s, z)
    f = data.labelling(s, X)
    for alpha, gamma, rho in POINTS:
        A = model.symmetric_attention(s, gamma, rho)
        v = alpha * s.w_star
        r, gA, gv = model.risk_and_grad(s, A, v, X, y, weights=w)
        est = population_risk(s, alpha, gamma, rho, method="exact")
        assert est.risk == pytest.approx(r, rel=1e-11, abs=1e-14)
        assert est.risk_stderr == 0.0
        # per-entry gradient = reduced gradient / number of entries sharing the value (docs/theory.md §3)
        gin, gcr = gA[s.in_set_mask], gA[s.cross_set_mask]
        np.testing.assert_allclose(gin, est.grad[1] / s.n_in, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(gcr, est.grad[2] / s.n_cross, rtol=1e-9, atol=1e-15)
        assert np.ptp(gin) <= 1e-12 * max(1.0, abs(gin).max())  # all in-set entries equal (Lemma 4.1)
        np.testing.assert_allclose(gv, est.grad[0] * s.w_star, rtol=1e-9, atol=1e-14)  # v-gradient ∥ w* (Lemma 4.2)
        F = model.forward(s, A, v, X)
        # exact ties (a random set mirroring the signal set, T = 0) are F = 0 up to rounding: count as F = 0
        scale = np.abs(model.activation(s, X @ v @ model.attention(s, A).T)).sum(axis=1)
        F = np.where(np.abs(F) <= 1e-9 * scale, 0.0, F)
        errs = data.errors(F, y, f, weights=w)
        assert est.err_y == pytest.approx(errs["err_y"], abs=1e-12)
        assert est.err_f == pytest.approx(errs["err_f"], abs=1e-12)
        assert est.amb_f == pytest.approx(errs["amb_f"], abs=1e-12)


@pytest.mark.parametrize("kw", [dict(D=8, C=2, q=0.4, p=3, nu=0.125), dict(D=12, C=3, q=0.5, p=5, tau=1.7, beta=-0.5)])
def test_gradient_matches_central_differences(kw):
    s = Setting(**kw)
    bank = make_bank(s, "exact")
    for th in POINTS:
        est = population_risk(s, *th, bank=bank)
        h = 1e-6
        num = []
        for i in range(3):
            tp, tm = np.array(th), np.array(th)
            tp[i] += h
            tm[i] -= h
            num.append((population_risk(s, *tp, bank=bank).risk - population_risk(s, *tm, bank=bank).risk) / (2 * h))
        np.testing.assert_allclose(est.grad, num, rtol=1e-6, atol=1e-10)


def test_monte_carlo_within_four_standard_errors_of_exact():
    s = Setting(D=8, C=2, q=0.4, p=3, nu=0.125, beta=1.0, tau=1.0)
    for seed, th in enumerate(POINTS):
        ex = population_risk(s, *th, method="exact")
        mc = population_risk(s, *th, method="mc", n_samples=200_000, seed=seed + 1)
        assert 0 < mc.risk_stderr < 0.01 and np.all(mc.grad_stderr > 0)
        assert abs(mc.risk - ex.risk) < 4 * mc.risk_stderr
        assert np.all(np.abs(mc.grad - ex.grad) < 4 * mc.grad_stderr)
        # errors: binomial standard error of the MC frequency
        assert abs(mc.err_y - ex.err_y) < 4 * math.sqrt(ex.err_y * (1 - ex.err_y) / 200_000) + 1e-12
        assert abs(mc.amb_f - ex.amb_f) < 4 * math.sqrt(ex.amb_f * (1 - ex.amb_f) / 200_000) + 1e-12


def test_standard_error_is_the_spread_over_independent_banks():
    """The reported stderr predicts the seed-to-seed spread of the Monte Carlo estimate."""
    s = Setting(D=16, C=2, q=0.3)
    ests = [population_risk(s, 2.0, 0.5, -0.1, method="mc", n_samples=2000, seed=k) for k in range(40)]
    spread = np.std([e.risk for e in ests], ddof=1)
    se = np.mean([e.risk_stderr for e in ests])
    assert 0.6 < spread / se < 1.5


def test_count_based_forward_matches_model_on_noisy_data():
    """F from count vectors (O(L) per sample, no noise) equals model (T) on full noisy X (noise ⟂ w*)."""
    for kw in (dict(D=12, C=3, q=0.5), dict(D=16, C=4, p=5, tau=2.0, feature=3)):
        s = Setting(**kw)
        b = data.sample(s, 300, seed=4)
        for alpha, gamma, rho in POINTS:
            A = model.symmetric_attention(s, gamma, rho)
            F_model = model.forward(s, A, alpha * s.w_star, b.X)
            F_counts = forward_counts(s, alpha, gamma, rho, b.z)
            np.testing.assert_allclose(F_counts, F_model, rtol=1e-9, atol=1e-9)


def test_numpy_reference_matches_numba_tables():
    s = Setting(D=64, C=4, q=0.25, p=3, nu=1 / 64)
    nc = mc_set_counts(s, 3000, seed=3)
    for merge in (False, True):
        bank = bank_from_set_counts(s, nc, merge=merge)
        for th in [(3.9, 0.5, -0.05), (0.125, 0.0, 0.0), (1.6, 4.2, -0.3)]:
            ref_risk, ref_grad, F, Fabs = rk.reference_numpy(*th, s.beta, s.tau, s.p, s.nu, s.C, s.D, nc)
            F = np.where(np.abs(F) <= 1e-9 * Fabs, 0.0, F)  # exact ties (e.g. T = 0 at γ = ρ = 0) are F = 0
            est = population_risk(s, *th, bank=bank)
            assert est.risk == pytest.approx(ref_risk, rel=1e-12)
            np.testing.assert_allclose(est.grad, ref_grad, rtol=1e-10, atol=1e-15)
            assert est.err_y == pytest.approx(np.mean(F <= 0), abs=1e-12)
    assert len(bank_from_set_counts(s, nc, merge=True)) < len(nc)  # identical samples were merged


def test_same_seed_same_numbers_and_seed_matters():
    s = Setting(D=32, C=4)
    a = population_risk(s, 2.0, 0.3, -0.1, method="mc", n_samples=5000, seed=7)
    b = population_risk(s, 2.0, 0.3, -0.1, method="mc", n_samples=5000, seed=7)
    c = population_risk(s, 2.0, 0.3, -0.1, method="mc", n_samples=5000, seed=8)
    assert a.risk == b.risk and np.array_equal(a.grad, b.grad)
    assert a.risk != c.risk


def test_exact_enumeration_counts_and_probabilities():
    for D, C, q in [(8, 2, 0.4), (12, 3, 0.25), (24, 4, 0.6), (12, 2, 0.0), (12, 2, 1.0)]:
        s = Setting(D=D, C=C, q=q)
        bank = make_bank(s, "exact")
        K = int(np.count_nonzero(rk.type_probabilities(C, q) > 0))
        assert len(bank) == n_exact_terms(s) == math.comb(s.L - 1 + K - 1, K - 1)
        assert len(np.unique(bank.counts, axis=0)) == len(bank)  # multisets, each once
        assert np.all(bank.counts.sum(axis=1) == s.L)
        # the random sets have mean zero: E[T] = C (the signal set)
        assert bank.weights @ bank.Tvals[bank.tidx] == pytest.approx(C, abs=1e-10)
        # raw multinomial weights already sum to one
        prob = rk.type_probabilities(C, q)
        pos = np.flatnonzero(prob > 0)
        sub = np.zeros((len(bank), len(pos)), dtype=np.int16)
        logw = np.empty(len(bank))
        rk.enumerate_multisets(s.L - 1, np.log(prob[pos]), sub, logw)
        assert np.exp(logw).sum() == pytest.approx(1.0, rel=1e-10)


def test_exact_refuses_beyond_limit_naming_it():
    s = Setting(D=64, C=4)
    with pytest.raises(ValueError, match="max_terms"):
        population_risk(s, 1.0, 0.0, 0.0, method="exact")
    with pytest.raises(ValueError, match="method"):
        population_risk(s, 1.0, 0.0, 0.0, method="bogus")
    with pytest.raises(ValueError, match="n_samples"):
        population_risk(s, 1.0, 0.0, 0.0, method="mc", n_samples=1)
    with pytest.raises(ValueError, match="alpha"):
        population_risk(s, float("nan"), 0.0, 0.0, method="mc", n_samples=10)


@settings(max_examples=200, deadline=None)
@given(
    gamma=st.floats(-300, 300),
    rho=st.floats(-300, 300),
    beta=st.floats(-50, 50),
    tau=st.floats(0.05, 20),
    LC=st.sampled_from([(2, 2), (4, 3), (16, 4), (8, 8)]),
)
def test_softmax_values_sum_to_one(gamma, rho, beta, tau, LC):
    L, C = LC
    s = Setting(D=L * C, C=C, beta=beta, tau=tau)
    lam, gam, xi = softmax_values(s, gamma, rho)
    assert min(lam, gam, xi) >= 0
    assert lam + (C - 1) * gam + (s.D - C) * xi == pytest.approx(1.0, rel=1e-12)
    S = model.attention(s, model.symmetric_attention(s, gamma, rho))
    np.testing.assert_allclose(
        [S[0, 0], S[s.in_set_mask][0], S[s.cross_set_mask][0]], [lam, gam, xi], rtol=1e-9, atol=1e-300
    )
    # the Numba kernel's own copy of the formula (it cannot call NumPy code) is the same function
    np.testing.assert_allclose(
        rk.softmax3(s.beta / s.tau, gamma / s.tau, rho / s.tau, C, s.D), [lam, gam, xi], rtol=1e-12, atol=1e-300
    )


def test_default_horizon():
    """2·10⁴·max(1, D/64)^1.5: flat up to D = 64, then ×2^1.5 per doubling of D."""
    assert default_horizon(16) == default_horizon(64) == 20_000.0
    assert default_horizon(256) == 160_000.0  # (256/64)^1.5 = 8
    assert default_horizon(128) == pytest.approx(20_000.0 * 2 * math.sqrt(2), rel=1e-15)
