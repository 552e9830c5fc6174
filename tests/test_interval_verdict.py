"""claims.check.interval_verdict, the ledger's one interval-to-verdict ladder: every branch on planted
intervals, the threshold itself on each side (``edge``), the two-sided band, NaN ends, bad calls."""

import math

import pytest

from theorydyn.claims.check import Verdict, interval_verdict

PASS, FAIL, INFO, DEVIATES = Verdict.PASS, Verdict.FAIL, Verdict.INFO, Verdict.DEVIATES


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (1.2, 1.5, PASS),  # wholly above 1
        (0.2, 0.9, FAIL),  # wholly below 1
        (0.8, 1.3, INFO),  # straddles 1
        (1.0, 1.3, INFO),  # touches 1 from above: open by default, unresolved
        (0.7, 1.0, INFO),  # touches 1 from below
        (1.0, 1.0, INFO),  # the threshold itself
        (math.nan, math.nan, INFO),  # no interval (one seed)
    ],
)
def test_one_threshold_open_edges(lo, hi, want):
    assert interval_verdict(lo, hi, above=1.0, below=1.0) is want


def test_edge_counts_the_threshold_on_one_side():
    # edge="below": hi <= t is below (the Theorem 5.2 rule: FAIL at or below 0), lo > t still strict
    assert interval_verdict(-0.3, 0.0, above=0.0, below=0.0, edge="below") is FAIL
    assert interval_verdict(0.0, 0.4, above=0.0, below=0.0, edge="below") is INFO
    assert interval_verdict(1e-12, 0.4, above=0.0, below=0.0, edge="below") is PASS
    # edge="above": lo >= t is above, hi < t still strict
    assert interval_verdict(0.0, 0.4, above=0.0, below=0.0, edge="above") is PASS
    assert interval_verdict(-0.3, 0.0, above=0.0, below=0.0, edge="above") is INFO
    assert interval_verdict(-0.3, -1e-12, above=0.0, below=0.0, edge="above") is FAIL


def test_custom_verdicts_and_two_thresholds():
    # Theorem 5.1's slope: below 0.5 passes, above fails
    kw = dict(above=0.5, below=0.5, if_above=FAIL, if_below=PASS)
    assert interval_verdict(0.1, 0.4, **kw) is PASS
    assert interval_verdict(0.6, 0.9, **kw) is FAIL
    assert interval_verdict(0.4, 0.6, **kw) is INFO
    # Figure 1a's decay: above max(0, init) passes, below min(0, init) deviates, otherwise fails
    kw = dict(above=0.2, below=0.0, if_below=DEVIATES, otherwise=FAIL)
    assert interval_verdict(0.21, 0.5, **kw) is PASS
    assert interval_verdict(0.1, 0.3, **kw) is FAIL  # above 0 but not above the initialisation's 0.2
    assert interval_verdict(0.2, 0.3, **kw) is FAIL  # equality is not above
    assert interval_verdict(-0.5, -0.01, **kw) is DEVIATES
    assert interval_verdict(-0.5, 0.0, **kw) is FAIL  # equality is not below


def test_one_sided_only():
    assert interval_verdict(2.0, 3.0, above=1.0) is PASS
    assert interval_verdict(-3.0, -2.0, above=1.0) is INFO  # no lower threshold: never if_below
    assert interval_verdict(-3.0, -2.0, below=1.0) is FAIL
    assert interval_verdict(2.0, 3.0, below=1.0) is INFO


@pytest.mark.parametrize(
    ("lo", "hi", "want"),
    [
        (-0.01, 0.015, PASS),  # inside ±0.02
        (-0.02, 0.02, PASS),  # the band is closed: its ends are inside
        (0.021, 0.05, FAIL),  # wholly above the band
        (-0.05, -0.021, FAIL),  # wholly below it
        (0.02, 0.05, INFO),  # touches the band's end from outside: not disjoint, not inside
        (-0.05, 0.05, INFO),  # wider than the band
        (math.nan, math.nan, INFO),
    ],
)
def test_inside_band(lo, hi, want):
    assert interval_verdict(lo, hi, inside=(-0.02, 0.02)) is want


def test_bad_calls_are_refused():
    with pytest.raises(ValueError, match="above=, below= or inside="):
        interval_verdict(0.0, 1.0)
    with pytest.raises(ValueError, match="edge"):
        interval_verdict(0.0, 1.0, above=0.5, edge="left")
    with pytest.raises(ValueError, match="inside="):
        interval_verdict(0.0, 1.0, inside=(0.0, 1.0), above=0.5)
