"""Intervals over seeds that respect the quantity's range (theorydyn.core.stats), each checked against
an independent route: scipy's one-sample t-test interval and geometric mean, and simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from theorydyn.core.stats import MIN_SEEDS_FOR_CI, bounded_mean_ci, format_ci, log_mean_ci, mean_ci


def _scipy_t_interval(x, level=0.95):
    ci = stats.ttest_1samp(np.asarray(x, float), 0.0).confidence_interval(level)
    return float(ci.low), float(ci.high)


@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_log_interval_is_scipys_t_interval_of_the_logs_exponentiated(level):
    x = np.array([5366.0, 5851.0, 6463.0, 4900.0])
    c, lo, hi = log_mean_ci(x, level)
    slo, shi = _scipy_t_interval(np.log(x), level)
    assert c == pytest.approx(stats.gmean(x), rel=1e-12)
    assert (lo, hi) == pytest.approx((math.exp(slo), math.exp(shi)), rel=1e-12)


def test_bounded_interval_is_scipys_t_interval_cut_to_the_range():
    x = [0.0004, 0.0001, 0.0009]  # the issue's final_err_f: its t-interval goes below 0
    m, lo, hi = bounded_mean_ci(x)
    slo, shi = _scipy_t_interval(x)
    assert slo < 0 and lo == 0.0 and hi == pytest.approx(shi, rel=1e-12) and m == pytest.approx(np.mean(x))
    y = [0.97, 0.99, 1.0]
    m, lo, hi = bounded_mean_ci(y)
    slo, shi = _scipy_t_interval(y)
    assert shi > 1 and hi == 1.0 and lo == pytest.approx(slo, rel=1e-12)


def test_the_issue_two_seed_example_is_reported_as_too_few_seeds():
    # two seeds whose t-interval is the issue's T1_mass 1.672e+05 [-1.178e+04, 3.461e+05]
    x = [1.672e5 - 14088.0, 1.672e5 + 14088.0]
    assert mean_ci(x)[1] < 0  # the old interval: negative phase time
    c, lo, hi = log_mean_ci(x)
    assert math.isnan(lo) and math.isnan(hi) and c == pytest.approx(stats.gmean(x))
    text = format_ci(x, "positive")
    assert text.endswith(" (n=2)") and len(text) <= 20 and "-" not in text.replace("e-", "")  # short: 100 columns
    assert format_ci([0.5], "probability") == "0.5 (n=1)"
    assert MIN_SEEDS_FOR_CI == 3
    assert not math.isnan(log_mean_ci(x, min_n=2)[1])  # asked for, two seeds do give an interval


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(1e-3, 1e7), min_size=3, max_size=8))
def test_log_interval_stays_positive_and_holds_its_centre(x):
    c, lo, hi = log_mean_ci(x)
    assert 0 < lo <= c * (1 + 1e-12) and c <= hi * (1 + 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=8))
def test_bounded_interval_stays_in_the_unit_interval(x):
    m, lo, hi = bounded_mean_ci(x)
    assert 0.0 <= lo <= m + 1e-15 and m - 1e-15 <= hi <= 1.0
    assert "-" not in format_ci(x, "probability").replace("e-", "")


def test_coverage_by_simulation():
    """The log interval covers the log-normal's median at its level; cutting the t-interval to [0, 1]
    changes no coverage (the cut-off part never holds the mean)."""
    rng = np.random.default_rng(0)
    reps, n = 4000, 4
    x = rng.lognormal(mean=np.log(5000.0), sigma=0.4, size=(reps, n))
    cov = np.mean([lo <= 5000.0 <= hi for lo, hi in (log_mean_ci(r)[1:] for r in x)])
    assert 0.935 < cov < 0.965
    a, b = 0.3, 6.0  # a skewed law near 0, mean a / (a + b)
    y = rng.beta(a, b, size=(reps, n))
    mu = a / (a + b)
    cut = np.array([lo <= mu <= hi for lo, hi in (bounded_mean_ci(r)[1:] for r in y)])
    raw = np.array([lo <= mu <= hi for lo, hi in (mean_ci(r)[1:] for r in y)])
    assert (cut == raw).all()
    assert np.mean([mean_ci(r)[1] < 0 for r in y]) > 0.2  # the raw intervals do leave the range here


def test_bad_input_raises():
    with pytest.raises(ValueError, match="positive"):
        log_mean_ci([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="outside"):
        bounded_mean_ci([0.5, 1.2, 0.3])
    with pytest.raises(ValueError, match="non-finite"):
        log_mean_ci([1.0, float("nan"), 2.0])
    with pytest.raises(ValueError, match="at least one"):
        bounded_mean_ci([])
    with pytest.raises(ValueError, match="kind"):
        format_ci([1.0, 2.0, 3.0], "real")


def test_a_ledger_row_of_a_probability_keeps_its_interval_in_the_unit_range():
    """Check.over_seeds(bounds=UNIT): the t-interval of [0, 0, 0.15] reaches below 0; the row's is cut
    at 0 with the same upper end, and without bounds the row keeps the plain t-interval."""
    from theorydyn.claims.check import UNIT, Check, Verdict
    from theorydyn.core.stats import mean_ci

    vals = [0.0, 0.0, 0.15]
    m, lo, hi = mean_ci(vals)
    assert lo < 0 < hi < 1
    plain = Check.over_seeds("c", "q", vals, "t", Verdict.INFO)
    cut = Check.over_seeds("c", "q", vals, "t", Verdict.INFO, bounds=UNIT)
    assert (plain.ci_low, plain.ci_high) == (lo, hi)
    assert cut.measured == m and cut.ci_low == 0.0 and cut.ci_high == hi
    two = Check.over_seeds("c", "q", [0.9, 1.0], "t", Verdict.INFO, bounds=UNIT)  # two seeds: an interval, as before
    assert two.ci_high == 1.0 and two.ci_low < 0.9
