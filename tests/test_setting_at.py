"""Setting.at re-derives the D-dependent defaults (d, q, σ², ν) unless they were set explicitly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn.core.setting import DERIVED, Setting


def test_at_rederives_defaults() -> None:
    s = Setting(D=64).at(D=128)
    assert (s.d, s.q, s.sigma2, s.nu) == (128, 16 / 128, 1 / 128, 1 / 128)


def test_at_keeps_explicit_fields() -> None:
    s = Setting(D=64, q=0.3).at(D=128)
    assert s.q == 0.3 and s.d == 128 and s.sigma2 == 1 / 128
    s = Setting(D=64, d=32, nu=0.5).at(D=128)
    assert (s.d, s.nu, s.sigma2, s.q) == (32, 0.5, 1 / 32, 16 / 128)


def test_replace_is_a_literal_edit_and_remembers_explicitness() -> None:
    s = Setting(D=64).replace(D=128)
    assert (s.d, s.q) == (64, 0.25) and s.explicit == frozenset()
    s = Setting(D=64).replace(q=0.2).at(D=128)
    assert s.q == 0.2 and s.d == 128


def test_at_moves_an_explicit_partition_to_blocks() -> None:
    part = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11], [12, 13, 14, 15]]
    s = Setting(D=16, C=4, partition=part).at(D=32)
    assert s.partition == "blocks" and s.D == 32
    with pytest.raises(ValueError, match="partition"):
        Setting(D=16, C=4, partition=part).replace(D=32)


@settings(max_examples=60, deadline=None)
@given(
    C=st.sampled_from([2, 4]), L=st.integers(2, 16), L2=st.integers(2, 16), explicit=st.sets(st.sampled_from(DERIVED))
)
def test_at_equals_a_fresh_setting(C: int, L: int, L2: int, explicit: set[str]) -> None:
    """s.at(D=D2) equals a Setting built from scratch at D2 with the explicit fields copied."""
    vals = {"d": 8, "q": 0.3, "sigma2": 0.2, "nu": 0.05}
    kw = {k: vals[k] for k in explicit}
    s = Setting(D=C * L, C=C, **kw)
    assert s.explicit == frozenset(explicit)
    assert s.at(D=C * L2) == Setting(D=C * L2, C=C, **kw)
