"""Monte Carlo draws of the reduced solver (count types by inversion of 32-bit uniforms), the bank
built from them in Numba, and the streaming evaluation of population_risk — each against a
direct route."""

import numpy as np
import pytest

from theorydyn import Setting
from theorydyn.core import data
from theorydyn.reduced import _kernels as rk
from theorydyn.reduced import bank as B
from theorydyn.reduced import population_risk


@pytest.mark.parametrize("C,q", [(4, 0.25), (3, 0.6), (2, 0.0), (2, 1.0)])
def test_drawn_types_follow_the_multinomial_type_law(C, q):
    s = Setting(D=8 * C, C=C, q=q)
    types, counts = B._draw_types(s, 20_000, seed=1)
    prob = rk.type_probabilities(C, q)
    n = types.size
    freq = np.bincount(types.ravel(), minlength=len(prob)) / n
    sd = np.sqrt(prob * (1 - prob) / n)
    assert np.all(np.abs(freq - prob) <= 5 * sd + 1e-12)
    assert np.all(freq[prob == 0] == 0)  # a type of probability 0 is never drawn
    # the histograms are those of the types, plus the signal set (type 0)
    hist = np.stack([np.bincount(row, minlength=len(prob)) for row in types[:200]])
    hist[:, 0] += 1
    np.testing.assert_array_equal(counts[:200], hist)


def test_set_counts_and_type_counts_are_the_same_samples():
    s = Setting(D=24, C=4, q=0.5)
    nc = B.mc_set_counts(s, 500, seed=4)
    assert nc.shape == (500, s.L, 3) and np.all(nc.sum(axis=2) == s.C) and np.all(nc[:, 0] == (s.C, 0, 0))
    a = B.bank_from_set_counts(s, nc, merge=False)
    b = B.bank_from_type_counts(s, B.mc_type_counts(s, 500, seed=4), merge=False)
    np.testing.assert_array_equal(a.counts, b.counts)


def test_bank_arrays_match_numpy():
    s = Setting(D=40, C=4)
    counts = B.mc_type_counts(s, 300, seed=2)
    plus, minus, _ = rk.count_types(s.C)
    sm = plus - minus
    thr = data.threshold(s, sm)
    tidx, Tvals, f, row_ptr, nz_type, nz_count = rk.bank_arrays(counts, sm, thr, s.L * s.C)
    T = counts.astype(np.int64) @ sm
    np.testing.assert_array_equal(Tvals, np.unique(T))
    np.testing.assert_array_equal(Tvals[tidx], T)
    np.testing.assert_allclose(f, counts @ thr)
    rows, cols = np.nonzero(counts)
    np.testing.assert_array_equal(nz_type, cols)
    np.testing.assert_array_equal(nz_count, counts[rows, cols])
    np.testing.assert_array_equal(np.diff(row_ptr), np.count_nonzero(counts, axis=1))


@pytest.mark.parametrize("kw", [dict(D=64, C=4), dict(D=12, C=3, q=0.5), dict(D=16, C=4, p=5, tau=2.0)])
def test_streaming_population_risk_equals_the_bank_of_the_same_samples(kw):
    s = Setting(**kw)
    n = 5001  # odd: the last chunk ends on half a raw word
    a = population_risk(s, 3.9, 0.5, -0.05, method="mc", n_samples=n, seed=3)
    b = population_risk(s, 3.9, 0.5, -0.05, bank=B.make_bank(s, "mc", n, seed=3, merge=False))
    assert a.risk == b.risk and np.array_equal(a.grad, b.grad) and a.err_y == b.err_y
    assert a.risk_stderr == b.risk_stderr and np.array_equal(a.grad_stderr, b.grad_stderr)
    assert a.err_f == pytest.approx(b.err_f, abs=1e-14) and a.amb_f == pytest.approx(b.amb_f, abs=1e-14)
    c = population_risk(s, 3.9, 0.5, -0.05, bank=B.make_bank(s, "mc", n, seed=3, merge=True))
    assert c.risk == pytest.approx(a.risk, rel=1e-12)
    np.testing.assert_allclose(c.grad, a.grad, rtol=1e-10, atol=1e-15)
