"""Setting: defaults of docs/theory.md §1, derived quantities, and validation messages that name the rule."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting


def test_defaults_follow_spec():
    s = Setting()
    assert (s.D, s.C, s.d, s.L, s.p) == (64, 4, 64, 16, 3)
    assert s.q == pytest.approx(16 / 64) and s.nu == pytest.approx(1 / 64) and s.sigma2 == pytest.approx(1 / 64)
    assert s.alpha0 == pytest.approx(0.125)  # ν^{1/(p−1)} = (1/64)^{1/2}
    assert s.n_in == 64 * 3 and s.n_cross == 64 * 60
    assert s.in_set_mask.sum() == s.n_in and s.cross_set_mask.sum() == s.n_cross
    np.testing.assert_array_equal(s.w_star, np.eye(64)[0])


def test_grid_partition_matches_figure_1b():
    s = Setting(D=16, C=4, partition="grid")
    assert [list(S) for S in s.sets] == [[0, 1, 4, 5], [2, 3, 6, 7], [8, 9, 12, 13], [10, 11, 14, 15]]


@pytest.mark.parametrize(
    "kw, words",
    [
        (dict(D=10, C=4), "C must divide D"),
        (dict(D=8, C=8), "C must satisfy"),
        (dict(D=8, C=1), "C must satisfy"),
        (dict(p=4), "p must be odd"),
        (dict(p=1), "p must be odd and >= 3"),
        (dict(q=1.5), "q must lie in [0, 1]"),
        (dict(q=-0.1), "q must lie in [0, 1]"),
        (dict(tau=0.0), "tau must be >= 1e-12"),
        (dict(tau=5e-324), "tau must be >= 1e-12"),  # > 0, but 1/τ overflows: refused (issue 42)
        (dict(sigma2=-1.0), "sigma2 must be > 0"),
        (dict(nu=0.0), "nu must be > 0"),
        (dict(beta=float("nan")), "beta must be finite"),
        (dict(D=4, C=2, partition=[[0, 1], [1, 2]]), "cover each patch"),
        (dict(D=4, C=2, partition=[[0, 1, 2], [3]]), "sets of size C"),
        (dict(D=8, C=2, partition="grid"), "partition='grid'"),
        (dict(partition="spiral"), "partition must be one of"),
        (dict(feature=64), "feature must be a basis index"),
        (dict(D=4, C=2, feature=[0, 0, 0, 0]), "nonzero"),
        (dict(D=4.5), "D must be an integer"),
    ],
)
def test_validation_names_the_rule(kw, words):
    with pytest.raises(ValueError) as e:
        Setting(**kw)
    assert words in str(e.value)


@settings(max_examples=40, deadline=None)
@given(L=st.integers(2, 6), C=st.integers(2, 5), seed=st.integers(0, 10**6))
def test_random_partition_is_a_partition(L, C, seed):
    s = Setting(D=L * C, C=C, partition="random", partition_seed=seed)
    assert sorted(s.sets.ravel().tolist()) == list(range(L * C))
    assert s.sets.shape == (L, C)
    # set_of inverts sets; same_set is an equivalence with blocks of size C
    for l, S in enumerate(s.sets):
        assert (s.set_of[S] == l).all()
    assert (s.same_set.sum(axis=1) == C).all()
    assert Setting(D=L * C, C=C, partition=s.sets.tolist()).same_set.tolist() == s.same_set.tolist()


def test_frozen_and_hashable():
    s = Setting(D=8, C=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.D = 4  # type: ignore[misc]
    assert hash(s) == hash(Setting(D=8, C=2)) and s == Setting(D=8, C=2)
    assert s.replace(q=0.3).q == 0.3 and s.replace(q=0.3).D == 8


def test_explicit_feature_is_normalised():
    s = Setting(D=4, C=2, feature=[3.0, 4.0, 0.0, 0.0])
    assert np.linalg.norm(s.w_star) == pytest.approx(1.0)
    np.testing.assert_allclose(s.w_star, [0.6, 0.8, 0, 0])
