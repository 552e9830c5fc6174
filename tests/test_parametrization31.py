"""Parametrization 3.1's scales (theorydyn.claims.parametrization31) against exact Gaussian facts,
and its verdicts coming out otherwise where the claim is false."""

import numpy as np
import pytest
from scipy.stats import chi2

from theorydyn import Setting, claims
from theorydyn.claims import parametrization31 as p31
from theorydyn.experiments import parametrization31 as p31_exp


def test_off_diagonal_second_moment_is_sigma_squared_over_D():
    # E[<p_i, p_j>^2] = D (sigma_A / D)^2 = sigma_A^2 / D exactly; 400 draws at D = 32
    D, sA = 32, 1.7
    rng = np.random.default_rng(0)
    m2 = [np.mean(p31_exp.initial_attention(D, sA, rng)[~np.eye(D, dtype=bool)] ** 2) for _ in range(400)]
    se = np.std(m2) / np.sqrt(len(m2))
    assert abs(np.mean(m2) - sA**2 / D) < 4 * se


def test_diagonal_law_is_chi2_over_D():
    D, sA = 16, 0.5
    rng = np.random.default_rng(1)
    r = np.concatenate([np.diag(p31_exp.initial_attention(D, sA, rng)) / sA for _ in range(500)])
    # Kolmogorov distance to chi2_D / D
    x = np.sort(r) * D
    F = chi2.cdf(x, D)
    ks = np.max(np.abs(F - np.arange(1, x.size + 1) / x.size))
    assert ks < 1.63 / np.sqrt(x.size)  # the 1% critical value


def test_top_c_fraction_of_a_planted_block_matrix():
    s = Setting(D=16, C=4)
    A = np.zeros((16, 16))
    for S in s.sets:
        A[np.ix_(S, S)] = 1.0
    assert p31_exp.scales(A, s)["top_c_fraction"] == 1.0
    assert p31_exp.scales(-A + 2 * np.eye(16), s)["top_c_fraction"] == 0.0


def rows(s, **kw):
    return {c.quantity.split(" ")[0]: c for c in claims.judge(p31, s, quick=True, **kw)}


def test_rows_pass_at_the_ledger_setting():
    # the Gaussian-identity rows are INFO (no run draws P P^T); their numbers still meet the claim
    r = rows(Setting(D=64, C=4))
    assert str(r["exponent"].verdict) == "INFO" and "contains -1/2" in r["exponent"].note
    assert r["exponent"].ci_low <= -0.5 <= r["exponent"].ci_high
    assert str(r["fraction"].verdict) == "INFO" and r["fraction"].note.startswith(">=")


@pytest.mark.parametrize("scale", ["sigma_A I", "sigma_A I / D^2"])
def test_exponent_row_fails_for_another_scale(monkeypatch, scale):
    def wrong(D, sigma_A, rng):
        c = sigma_A if scale == "sigma_A I" else sigma_A / D**2
        P = rng.standard_normal((D, D)) * np.sqrt(c)
        return P @ P.T

    monkeypatch.setattr(p31_exp, "initial_attention", wrong)
    r = rows(Setting(D=64, C=4))
    assert "excludes -1/2" in r["exponent"].note


def test_diagonal_row_fails_where_D_is_not_large():
    # D = 16: Pr[8 <= chi2_16 <= 32] = 0.947 < 0.99, the claim's "D >> 1" does not hold
    r = rows(Setting(D=16, C=4))
    assert r["fraction"].note.startswith("<")
    assert r["fraction"].measured < 0.99
