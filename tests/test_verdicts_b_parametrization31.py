"""Parametrization 3.1's verdict row is the runs' own start: the off-diagonal scale of
simulate.run.init_params against the σ_A/√D the paper sets to 0; ω = 1 is the planted counter-case."""

import numpy as np

from theorydyn import claims
from theorydyn.claims import parametrization31 as p31
from theorydyn.core.setting import Setting
from theorydyn.simulate.config import SIM_DEFAULTS


def test_run_omega_is_the_simulators_default():
    # simulate's options are SimConfig's fields, its defaults SIM_DEFAULTS (issue 40: no keyword repeats them)
    assert SIM_DEFAULTS.omega == p31.RUN_OMEGA


def test_start_row_passes_at_the_runs_omega_and_fails_at_omega_one():
    s = Setting(D=64, C=4)
    ok = p31.start_row(s)
    assert ok.verdict == "PASS" and abs(ok.measured - 1e-3) < 1e-4  # RMS of N(0, ω²) over D(D−1) entries
    bad = p31.start_row(s, omega=1.0)  # planted: the off-diagonal as large as the diagonal
    assert bad.verdict == "FAIL" and bad.measured > 1 / np.sqrt(s.D)


def test_gaussian_identity_rows_are_info():
    rows = claims.judge(p31, Setting(D=64, C=4), quick=True)
    assert [str(r.verdict) for r in rows] == ["PASS", "INFO", "INFO", "INFO", "INFO"]
    assert claims.judge(p31, Setting(D=64, C=4), quick=True, omega=1.0)[0].verdict == "FAIL"
