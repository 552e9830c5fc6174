"""Common random numbers across N (theorydyn.simulate.training_data): one training set per seed drawn at
the largest N; the run at n trains on its first n samples."""

from __future__ import annotations

import numpy as np
import pytest

from theorydyn.core import model
from theorydyn.core.setting import Setting
from theorydyn.simulate import heldout_data, simulate, training_data

S16 = Setting(D=16, C=4, q=0.5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_training_data_is_what_simulate_draws(dtype):
    """simulate on training_data(s, N, seed) with the same seed is bit-identical to simulate(N=N, seed)."""
    b = training_data(S16, 300, seed=4, dtype=dtype)
    assert b.X.dtype == np.dtype(dtype) and b.X.shape == (300, 16, S16.d)
    kw = dict(steps=6, eta=5.0, seed=4, dtype=dtype, n_test=64, record_every=2)
    r0 = simulate(S16, N=300, **kw)
    r1 = simulate(S16, train=(b.X, b.y), **kw)
    assert np.array_equal(r0.A, r1.A) and np.array_equal(r0.v, r1.v)
    assert r0.trajectory.equals(r1.trajectory)


def test_the_run_at_n_sees_the_first_n_samples():
    """A prefix is a view (no copy), and the run on it takes the GD step of model.risk_and_grad on exactly
    those n samples (float64: agreement to 1e-12 relative, the kernel's rounding)."""
    n, N = 128, 512
    b = training_data(S16, N, seed=2)
    Xn, yn = b.X[:n], b.y[:n]
    assert np.shares_memory(Xn, b.X) and Xn.flags.c_contiguous
    rng = np.random.default_rng(0)
    A0 = rng.normal(0, 0.2, (16, 16))
    np.fill_diagonal(A0, S16.beta)
    v0 = rng.normal(0, 0.5, S16.d)
    r = simulate(S16, train=(Xn, yn), A0=A0, v0=v0, steps=1, eta=3.0, seed=2, n_test=64)
    assert r.options["N"] == n
    _, gA, gv = model.risk_and_grad(S16, A0, v0, Xn, yn)
    for got, want in ((r.A - A0, -3.0 * gA), (r.v - v0, -3.0 * gv)):
        rel = float(np.linalg.norm(got - want) / np.linalg.norm(want))
        assert rel <= 1e-12, f"step on the prefix vs risk_and_grad on the first {n} samples: relative {rel:.3g}"
    # the step on the whole set differs: the prefix is what the run saw
    _, _, gv_all = model.risk_and_grad(S16, A0, v0, b.X, b.y)
    assert np.linalg.norm(r.v - v0 + 3.0 * gv_all) > 1e-6 * np.linalg.norm(gv_all)


def test_training_data_names_a_bad_N():
    with pytest.raises(ValueError, match="N must be"):
        training_data(S16, 0)


def test_a_given_test_batch_is_the_drawn_one():
    """heldout_data(s, n_test, seed) passed back as test= gives the same run, f still defined (err_f recorded)."""
    kw = dict(N=200, steps=4, eta=5.0, seed=6, n_test=96, record_every=2)
    r0 = simulate(S16, **kw)
    r1 = simulate(S16, test=heldout_data(S16, 96, seed=6), **kw)
    assert np.array_equal(r0.A, r1.A) and np.array_equal(r0.v, r1.v)
    assert r0.trajectory.equals(r1.trajectory) and r1.trajectory["err_f"].notna().all()
    with pytest.raises(ValueError, match="test"):
        simulate(S16, N=8, steps=1, test=heldout_data(Setting(D=8, C=2), 4))
