"""The verdict rules of the claims' logical forms (theorydyn.claims.forms) and the statistics they read
(theorydyn.core.stats.trend_slope_ci, bracket_power_law): each rule flips on a planted counter-case, and
each statistic is checked against an independent route (explicit formulas, brute force, coverage)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from theorydyn.claims import forms
from theorydyn.claims.check import Verdict
from theorydyn.core.stats import bracket_power_law, trend_slope_ci


# ---- achievable with enough samples (Theorem 4.2) ----------------------------------------------------------
@pytest.mark.parametrize(
    "where, complete, slope, inside, verdict",
    [
        ("in", True, (0.1, 0.3), True, Verdict.PASS),  # in regime and complete
        ("in", False, (0.1, 0.3), True, Verdict.FAIL),  # in regime, loses association: the claim fails
        ("below", False, (0.1, 0.3), True, Verdict.OUT_OF_SCOPE),  # below, more samples approach it
        ("below", False, (-0.2, -0.05), True, Verdict.FAIL),  # below, the margin flat in N: never out of scope
        ("below", False, (-0.2, 0.0), False, Verdict.DEVIATES),  # the same at a step size outside the rule
        ("below", False, (-0.1, 0.2), True, Verdict.INFO),  # unresolved
        ("below", True, (-0.1, 0.2), True, Verdict.PASS),  # complete below the bracket: its own evidence
        ("unknown", False, None, True, Verdict.INFO),  # no grid at all
    ],
)
def test_achievable_is_judged_in_regime_and_a_flat_margin_is_a_fail(where, complete, slope, inside, verdict):
    """A run below N_50 is out of regime (OUT_OF_SCOPE, never FAIL) only while the association margin grows with
    N; a margin that does not grow FAILs "N = poly(d) suffices" at a step size inside the rule, and DEVIATES,
    naming the step size, outside it; an in-regime run that loses association FAILs."""
    v, why = forms.achievable(where=where, complete=complete, margin_slope=slope, eta=4.0, eta_inside=inside)
    assert v is verdict, (v, why)
    if v is Verdict.DEVIATES:
        assert "eta = 4" in why


def test_regime_reads_the_upper_end_of_the_bracket():
    assert forms.regime(16384, 4096, 8192)[0] == "in"
    assert forms.regime(16384, 8192, 16384)[0] == "in"  # N_50 <= 16384 in every resample
    assert forms.regime(16384, 8192, 32768)[0] == "below"  # N_50 may lie above N
    assert forms.regime(16384, 16384, math.inf)[0] == "below"  # censored above the grid
    assert forms.regime(16384, math.nan, math.nan)[0] == "unknown"
    assert forms.regime(1024, 8192, 16384, own_completion=True)[0] == "in"


# ---- a lower bound over all learners (Theorem 5.2) ----------------------------------------------------------
def test_lower_bound_never_passes_and_a_flat_learner_fails():
    assert forms.lower_bound(-0.05, 0.04, 0.125, reached=True)[0] is Verdict.FAIL  # flat: contradicts the bound
    v, why = forms.lower_bound(0.9, 1.1, 0.125, reached=True)
    assert v is Verdict.INFO and "consistent" in why  # growing: consistent, never PASS
    assert forms.lower_bound(-0.3, 0.6, 0.125, reached=True)[0] is Verdict.INFO
    assert forms.lower_bound(-0.05, 0.04, 0.125, reached=False)[0] is Verdict.INFO  # censored: a bound only


# ---- vanishing with d, a rate across D ---------------------------------------------------------------------
def test_vanishing_reads_the_slope_across_d():
    assert forms.vanishing(-2.5, -1.1)[0] is Verdict.PASS
    assert forms.vanishing(0.0, 0.4)[0] is Verdict.FAIL
    assert forms.vanishing(-0.5, 0.3)[0] is Verdict.INFO


def test_rate_needs_three_uncensored_sizes_and_fails_only_acceleration():
    assert forms.rate("power law", True, 3)[0] is Verdict.PASS
    assert forms.rate("accelerating", False, 3)[0] is Verdict.FAIL
    assert forms.rate("power law", True, 2)[0] is Verdict.INFO
    assert forms.rate("decelerating", False, 4)[0] is Verdict.INFO


# ---- the statistics ----------------------------------------------------------------------------------------
def test_trend_slope_interval_is_the_regression_interval_when_seeds_agree():
    """With identical seeds the bootstrap has no width and the interval is the sizes' Student-t interval,
    computed here from its textbook formula: b ± t_{n-2} · sqrt(SSE / (n − 2) / Sxx)."""
    from scipy import stats

    x = np.array([16.0, 32.0, 64.0, 128.0, 256.0])
    y = 0.3 * np.log(x) + np.array([0.05, -0.04, 0.02, -0.06, 0.03])
    r = trend_slope_ci(x, [[v] * 3 for v in np.exp(y)])
    lx = np.log(x)
    b = np.sum((lx - lx.mean()) * (y - y.mean())) / np.sum((lx - lx.mean()) ** 2)
    resid = y - (y.mean() + b * (lx - lx.mean()))
    se = math.sqrt(np.sum(resid**2) / (len(x) - 2) / np.sum((lx - lx.mean()) ** 2))
    half = stats.t.ppf(0.975, len(x) - 2) * se
    assert abs(r["b"] - b) < 1e-12, r["b"] - b
    assert abs(r["b_low"] - (b - half)) < 1e-12 and abs(r["b_high"] - (b + half)) < 1e-12, (r, b - half, b + half)
    assert r["seeds"][0] == r["seeds"][1] == pytest.approx(b)
    two = trend_slope_ci([32, 64], [[1.0, 1.2], [2.0, 2.1]])
    assert two["b_low"] == -math.inf and two["b_high"] == math.inf  # two sizes: no interval around a trend


def test_trend_slope_interval_covers_the_true_slope():
    """Coverage on planted data (4 sizes, 3 seeds, noise within and between sizes): the 95% interval holds
    the true exponent in at least 90% of 300 draws (the seed bootstrap alone covers far less when the sizes
    scatter around the line)."""
    rng = np.random.default_rng(7)
    x = np.array([32.0, 64.0, 128.0, 256.0])
    hits, boot_hits = 0, 0
    for _ in range(300):
        size_off = rng.normal(0, 0.15, size=4)
        vals = [np.exp(0.5 * math.log(xi) + o + rng.normal(0, 0.05, 3)) for xi, o in zip(x, size_off, strict=True)]
        r = trend_slope_ci(x, vals, n_boot=200)
        hits += r["b_low"] <= 0.5 <= r["b_high"]
        boot_hits += r["seeds"][0] <= 0.5 <= r["seeds"][1]
    assert hits / 300 >= 0.9, hits / 300
    assert boot_hits / 300 < 0.75, boot_hits / 300  # why the sizes' interval is needed


def test_bracket_power_law_matches_a_brute_force_search_of_lines():
    """The feasible exponents of lines through every bracket, against a dense grid of (a, b)."""
    rng = np.random.default_rng(1)
    x = np.array([32.0, 48.0, 64.0, 80.0])
    for _ in range(12):
        b_true = rng.uniform(0.5, 3)
        centre = 3.0 * x**b_true * np.exp(rng.normal(0, 0.2, 4))
        lo, hi = centre / 2 ** rng.uniform(0.3, 1, 4), centre * 2 ** rng.uniform(0.3, 1, 4)
        r = bracket_power_law(x, lo, hi)
        bs = np.linspace(-2, 6, 801)
        ok = []
        for b in bs:  # a feasible a exists iff max lower <= min upper over the sizes
            amin = np.max(np.log(lo) - b * np.log(x))
            amax = np.min(np.log(hi) - b * np.log(x))
            ok.append(amin <= amax)
        ok = np.array(ok)
        assert r["feasible"] == ok.any()
        if ok.any():
            assert abs(r["b_min"] - bs[ok].min()) <= 0.011 and abs(r["b_max"] - bs[ok].max()) <= 0.011, r


def test_bracket_power_law_shapes_and_one_sided_brackets():
    x = [32, 48, 64]
    up = bracket_power_law(x, [1e3, 4e3, 2e6], [2e3, 8e3, 4e6])
    assert not up["feasible"] and up["shape"] == "accelerating"
    down = bracket_power_law(x, [1e3, 1e6, 2e6], [2e3, 2e6, 4e6])
    assert not down["feasible"] and down["shape"] == "decelerating"
    cens = bracket_power_law(x, [1e3, 4e3, 16384], [2e3, 8e3, math.inf])
    assert cens["feasible"] and math.isfinite(cens["b_max"])  # the two finite brackets bound b
    open_top = bracket_power_law([32, 64], [1e3, 16384], [2e3, math.inf])
    assert (
        open_top["feasible"]
        and open_top["b_max"] == math.inf
        and open_top["b_min"] == pytest.approx(math.log2(16384 / 2e3))
    )


def test_the_forms_column_reaches_the_ledger():
    """Every row of a claim declares its form; the ledger CSV carries it as a column."""
    from theorydyn.claims.check import LEDGER_COLUMNS, Check, Form

    row = Check("Theorem 4.2", "x", 1.0, "t", Verdict.PASS, form=Form.ACHIEVABLE).row()
    assert list(row) == LEDGER_COLUMNS and row["form"] == "achievable"
    assert pd.DataFrame([row])["form"].iloc[0] == "achievable"


def test_every_pair_of_rules_has_distinct_outcomes():
    """No rule is a constant: each can give at least two verdicts on planted inputs (a PASS or FAIL that no
    input flips would be INFO)."""
    outs = {
        "achievable": {
            forms.achievable(where=w, complete=c, margin_slope=s, eta=1.0, eta_inside=i)[0]
            for w, c, s, i in itertools.product(
                ("in", "below"), (True, False), ((0.1, 0.2), (-0.2, -0.1)), (True, False)
            )
        },
        "vanishing": {forms.vanishing(a, b)[0] for a, b in ((-2, -1), (0.1, 1), (-1, 1))},
        "lower_bound": {forms.lower_bound(a, b, 0.1, reached=True)[0] for a, b in ((-0.1, 0.05), (0.5, 1))},
    }
    for name, vs in outs.items():
        assert len(vs) >= 2, (name, vs)
