"""Definition 2.1 judged by its trend across D: the noise along Assumption 2 (C ~ log₂ D) falls faster
than any power of D (PASS); the same rule at a fixed C (the planted counter-case) finds a power law
with exponent −(C − 1) (FAIL)."""

import numpy as np
import pytest

from theorydyn import claims
from theorydyn.claims import definition21 as d21
from theorydyn.core.setting import Setting
from theorydyn.experiments import labels


def test_noise_is_the_complement_of_agreement_and_stays_accurate_when_tiny():
    s = Setting(D=64, C=4, q=0.25)
    p = labels.label_agreement(s)
    assert labels.noise(s) == pytest.approx(1 - p["agree"], abs=1e-14)
    # far below float64 rounding of 1: the direct sum of the small terms, against the leading term
    # (L − 1)·2·(q/2)^C·(1/2) of one random set fully aligned against y (signs ±, one of two)
    s2 = Setting(D=4092, C=12, q=144 / 4092)
    lead = (s2.L - 1) * (s2.q / 2) ** s2.C
    assert 0 < labels.noise(s2) and labels.noise(s2) == pytest.approx(lead, rel=0.05)


def test_fixed_c_exponent_settles_at_one_minus_c_and_the_rule_fails_it():
    """Planted counter-case of the Definition 2.1 verdict: at fixed C the noise ∝ D^{1−C}."""
    for C in (3, 4):
        t = labels.trend(d21.fixed_c_grid(C))
        assert t["local"][-1] == pytest.approx(1 - C, abs=0.05), t["local"]
        assert not d21.trend_falls(t["local"])


def test_polylog_c_exponent_keeps_falling_and_the_rule_passes_it():
    t = labels.trend(d21.POLYLOG_GRID)
    assert np.all(np.diff(t["local"]) < 0) and d21.trend_falls(t["local"])
    assert all(C * C / D <= 0.5 for C, D in d21.POLYLOG_GRID)  # inside the scope rule's q <= 1/2


def test_definition_21_rows_pass_along_assumption_2_and_the_fixed_c_reading_is_info():
    rows = claims.judge(d21, Setting(D=64, C=4), quick=True)
    assert [r.verdict for r in rows] == ["PASS", "INFO", "INFO"]
    assert rows[0].ci_low <= rows[0].measured <= rows[0].ci_high
    assert "fixed C = 4" in rows[1].claim and "FAIL" not in rows[1].verdict
