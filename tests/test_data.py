"""The sampler of Assumption 1, the labelling function f and docs/theory.md §7's data."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting
from theorydyn.core import data

small_settings = st.builds(
    lambda L, C, q, part, seed: Setting(D=L * C, C=C, q=q, partition=part, partition_seed=seed),
    L=st.integers(2, 5),
    C=st.integers(2, 4),
    q=st.floats(0.0, 1.0),
    part=st.sampled_from(["blocks", "random"]),
    seed=st.integers(0, 1000),
)


@settings(max_examples=40, deadline=None)
@given(s=small_settings, seed=st.integers(0, 2**31))
def test_samples_obey_assumption_1(s, seed):
    b = data.sample(s, 64, seed=seed)
    assert b.X.shape == (64, s.D, s.d)
    w = s.w_star
    proj = b.X @ w
    np.testing.assert_allclose(proj, b.z, atol=1e-12)  # ⟨w*, X_j⟩ = z_j: noise is ⟂ w*
    noise = b.X - proj[..., None] * w
    assert np.abs(noise @ w).max() < 1e-12
    for n in range(64):
        S = s.sets[b.signal[n]]
        assert (b.z[n, S] == b.y[n]).all()  # the signal set is all y·w*
    assert set(np.unique(b.y)) <= {-1, 1} and set(np.unique(b.z)) <= {-1, 0, 1}


@settings(max_examples=40, deadline=None)
@given(s=small_settings, seed=st.integers(0, 2**31))
def test_labels_consistent_with_f(s, seed):
    """y·f > 0 except when some random set is entirely −y (then f can vanish or flip)."""
    b = data.sample(s, 128, seed=seed)
    f = data.labelling(s, b.X)
    np.testing.assert_array_equal(f, data.labelling_from_z(s, b.z))
    sums = b.z[:, s.sets].sum(axis=2)  # (N, L)
    rare = (sums == -b.y[:, None] * s.C).any(axis=1)
    assert (b.y * f > 0)[~rare].all()


def test_noise_statistics_and_rates():
    s = Setting(D=16, C=4, q=0.3)
    b = data.sample(s, 20000, seed=3)
    off = s.set_of[None, :] != b.signal[:, None]
    z = b.z[off]
    assert abs((z == 1).mean() - 0.15) < 0.01 and abs((z == -1).mean() - 0.15) < 0.01
    noise = b.X - b.z[..., None] * s.w_star
    var = noise[..., 1:].var()
    assert var == pytest.approx(s.sigma2, rel=0.02)
    assert abs(b.y.mean()) < 0.03
    assert np.bincount(b.signal, minlength=s.L).min() > 20000 / s.L * 0.9
    # the rare all-(−y) case has probability ≈ (L−1)(q/2)^C per data point (docs/theory.md §1)
    f = data.labelling_from_z(s, b.z)
    expect = (s.L - 1) * (s.q / 2) ** s.C
    assert abs((b.y * f <= 0).mean() - expect) < 4 * np.sqrt(expect / 20000) + 1e-3


def test_same_seed_same_numbers_and_float32():
    s = Setting(D=8, C=2, d=6)
    a, b = data.sample(s, 100, seed=7), data.sample(s, 100, seed=7)
    np.testing.assert_array_equal(a.X, b.X)
    c = data.sample(s, 100, seed=7, dtype=np.float32)
    assert c.X.dtype == np.float32
    np.testing.assert_allclose(c.X, a.X, rtol=1e-6, atol=1e-7)
    assert not np.array_equal(data.sample(s, 100, seed=8).X, a.X)


def test_chunked_generation_equals_one_block(monkeypatch):
    s = Setting(D=4, C=2, d=3)
    full = data.sample(s, 50, seed=1).X
    monkeypatch.setattr(data, "_CHUNK_ELEMS", 12 * 7)  # 7 samples a chunk
    np.testing.assert_array_equal(data.sample(s, 50, seed=1).X, full)


def test_threshold_and_errors_convention():
    s = Setting(D=8, C=2)
    np.testing.assert_array_equal(data.threshold(s, [2, -2, 1, 0, -1]), [2, -2, 0, 0, 0])
    e = data.errors(F=np.array([1.0, -1.0, 2.0, -3.0]), y=np.array([1, 1, -1, -1]), f=np.array([2.0, 0.0, -2.0, 2.0]))
    assert e["err_y"] == 0.5 and e["amb_f"] == 0.25
    assert e["err_f"] == pytest.approx(2 / 3)  # of the three decisive points, F·f ≤ 0 on the last two


def test_bad_sample_arguments():
    with pytest.raises(ValueError, match="N must be"):
        data.sample(Setting(D=4, C=2), 0)
    with pytest.raises(ValueError, match="dtype"):
        data.sample(Setting(D=4, C=2), 3, dtype=np.int32)


def test_gaussian_cnn_data():
    s = Setting(D=8, C=2, d=4)
    X, y = data.sample_gaussian_cnn(s, 500, seed=0)
    assert X.shape == (500, 8, 4)
    f = sum(sum(X[:, i, 0] for i in S) ** 3 for S in s.sets)  # the CNN written out by hand
    np.testing.assert_array_equal(y, np.where(f >= 0, 1, -1))
    assert 0.4 < (y == 1).mean() < 0.6


@pytest.mark.parametrize("kw", [dict(D=6, C=2, q=0.4), dict(D=6, C=3, q=1.0), dict(D=4, C=2, q=0.0)])
def test_enumerate_population_against_itertools(kw):
    import itertools
    import math

    s = Setting(**kw)
    pz = {1: s.q / 2, -1: s.q / 2, 0: 1 - s.q}
    expect = {}
    for y in (1, -1):
        for l in range(s.L):
            others = [j for j in range(s.D) if s.set_of[j] != l]
            for deltas in itertools.product((1, -1, 0), repeat=len(others)):
                w = 0.5 / s.L * math.prod(pz[d] for d in deltas)
                if w > 0:
                    z = [y] * s.D
                    for j, d in zip(others, deltas, strict=True):
                        z[j] = d
                    expect[(y, tuple(z))] = expect.get((y, tuple(z)), 0.0) + w
    z, y, w = data.enumerate_population(s)
    got = {}
    for zi, yi, wi in zip(z.tolist(), y.tolist(), w.tolist(), strict=True):
        got[(yi, tuple(zi))] = got.get((yi, tuple(zi)), 0.0) + wi
    assert got.keys() == expect.keys()
    assert all(abs(got[k] - expect[k]) < 1e-15 for k in got)
    assert w.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="max_points"):
        data.enumerate_population(Setting(D=16, C=2), max_points=1000)
