"""Common random numbers across N (theorydyn.simulate.training_data): one training set per seed drawn at
the largest N; the run at n trains on its first n samples."""

from __future__ import annotations

import numpy as np
import pytest

from theorydyn.core import model
from theorydyn.core.setting import Setting
from theorydyn.simulate import heldout_data, simulate, simulate_replicas, training_data

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


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16"])
def test_the_n_grid_in_one_pass_is_the_separate_runs(dtype):
    """simulate_replicas(n_train=Ns) on the N_max draw: replica r is the run on the first Ns[r] samples.
    N_max = 8192 at D = 16 cuts blocks of 128 samples where the run at 1000 alone cuts 64, so only the
    float64 sums over blocks differ (each ≈ 2⁻⁵³ relative; 60 steps): held to 1e-11 relative. bfloat16
    computes every replica's U in one GEMM, whose float32 rounding depends on R: held to 1e-5 as the
    float32 kernel (tests/test_simulate.py). The recorded association is the same at every record, and
    the largest run, whose blocks the pass uses, is bit-identical to its run alone."""
    Ns = [256, 1000, 8192]
    b = training_data(S16, Ns[-1], seed=5, dtype=dtype)
    kw = dict(steps=60, eta=2.0, seed=5, dtype=dtype, n_test=128, record_every=10)
    reps = simulate_replicas(S16, train=(b.X, b.y), init_seeds=[5] * 3, n_train=Ns, **kw)
    tol = 1e-5 if dtype == "bfloat16" else 1e-11
    for N, rep in zip(Ns, reps, strict=True):
        one = simulate(S16, train=(b.X[:N], b.y[:N]), **kw)
        assert rep.options["N"] == one.options["N"] == N
        for name, a, c in (("A", rep.A, one.A), ("v", rep.v, one.v)):
            rel = np.abs(a - c).max() / np.abs(c).max()
            assert rel <= tol, f"N = {N}: {name} off by {rel:.3g} relative"
        rel = np.abs(rep.trajectory["risk"] - one.trajectory["risk"]).max() / one.trajectory["risk"].abs().max()
        assert rel <= tol, f"N = {N}: risk off by {rel:.3g} relative"
        assert list(rep.trajectory["association"]) == list(one.trajectory["association"])
        assert list(rep.trajectory["train_err"]) == pytest.approx(list(one.trajectory["train_err"]), abs=2 / N)
        if N == Ns[-1] and dtype != "bfloat16":  # the pass is cut in this run's own blocks: its bits
            assert np.array_equal(rep.A, one.A) and np.array_equal(rep.v, one.v)


def test_n_train_is_checked_before_any_work():
    b = training_data(S16, 64, seed=0)
    for bad in ([0, 64], [1, 65], [1.5, 2], [64]):
        with pytest.raises(ValueError, match="n_train"):
            simulate_replicas(S16, train=(b.X, b.y), init_seeds=[0, 0], n_train=bad, steps=1)
    with pytest.raises(ValueError, match="n_train"):
        simulate_replicas(S16, train=(b.X, b.y, np.ones(64)), init_seeds=[0, 0], n_train=[8, 64], steps=1)
