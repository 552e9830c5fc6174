"""Vanishing quantities read across D (issue 39, form "vanishing with d"): the rules of claims.forms, the runs of
experiments.vanishing, the rows of claims.dynamics (Theorem 4.1 (2), Event III) and claims.theorem32 (d^-omega(1)),
each verdict flipped by a planted case fed to the same procedure."""

import math

import numpy as np
import pytest

from theorydyn.claims import dynamics, forms
from theorydyn.claims import theorem32 as t32
from theorydyn.claims.check import Form, Verdict
from theorydyn.claims.definition21 import POLYLOG_GRID, fixed_c_grid
from theorydyn.core import data, model
from theorydyn.core.setting import Setting
from theorydyn.experiments import theorem32 as xt32
from theorydyn.experiments import vanishing as ev
from theorydyn.experiments.labels import label_agreement
from theorydyn.reduced import flows_until_t2, integrate

# ---- the rules -------------------------------------------------------------------------------------------------


def test_vanishing_error_needs_the_error_beyond_the_floor_to_fall():
    """A total that falls while the error given f != 0 rises is a FAIL: the fall is the floor's."""
    assert forms.vanishing_error((-3.0, -2.0), (-2.5, -1.5))[0] is Verdict.PASS
    v, why = forms.vanishing_error((-3.0, -2.0), (0.1, 0.9))
    assert v is Verdict.FAIL and "does not fall" in why
    assert forms.vanishing_error((-3.0, 0.5), (-2.5, -1.5))[0] is Verdict.INFO
    assert forms.vanishing_error((0.0, 0.2), (-2.5, -1.5))[0] is Verdict.FAIL


@pytest.mark.parametrize(
    ("law", "expected"),
    [
        (lambda D: np.exp(-0.5 * np.log(D) ** 2), Verdict.PASS),  # local exponent -log D: keeps falling
        (lambda D: D**-3.0, Verdict.FAIL),  # a power law: the exponent settles
        (lambda D: 1e-3 + 0.0 * D, Verdict.FAIL),  # flat: last exponent 0
        (lambda D: D**0.5 * np.exp(-0.3 * np.log(D) ** 2) * 1e9, Verdict.PASS),
    ],
)
def test_faster_than_every_power_on_planted_laws(law, expected):
    Ds = np.array([32.0, 64, 128, 256, 512, 1024])
    k = np.diff(np.log(law(Ds))) / np.diff(np.log(Ds))
    assert forms.faster_than_every_power((k[0], k[0]), (k[-1], k[-1]))[0] is expected, k


def test_faster_than_every_power_is_unresolved_when_the_intervals_reach_both_readings():
    assert forms.faster_than_every_power((-3.0, -1.0), (-3.5, -2.5))[0] is Verdict.INFO
    assert forms.faster_than_every_power((-3.0, -3.0), (-4.5, -3.5))[0] is Verdict.INFO
    assert forms.faster_than_every_power((-3.0, -3.0), (-3.2, 0.5))[0] is Verdict.FAIL  # cannot have fallen by 1


def test_between_envelopes_pass_reads_the_upper_and_fail_the_lower():
    falling, settled = ((-6.0, -6.0), (-13.0, -13.0)), ((-2.9, -2.9), (-3.0, -3.0))
    assert forms.faster_than_every_power_between(falling, falling)[0] is Verdict.PASS
    assert forms.faster_than_every_power_between(settled, settled)[0] is Verdict.FAIL
    # an upper envelope that settles over a lower one that falls: neither decides
    assert forms.faster_than_every_power_between(settled, falling)[0] is Verdict.INFO


# ---- the runs --------------------------------------------------------------------------------------------------


def test_across_d_settings_keep_c_and_the_count_of_spurious_patches():
    s = Setting(D=72, C=6)
    ts = ev.across_D_settings(s, 4)
    assert [t.D for t in ts] == [72, 102, 144, 204] and all(t.C == 6 and t.D % 6 == 0 for t in ts)
    for t in ts:
        assert t.q * (t.D - t.C) == pytest.approx(s.q * (s.D - s.C), rel=1e-12)
        assert t.d == t.D and t.nu == pytest.approx(1 / t.D)  # Simplification 3.1 follows D
    assert ev.bank_size(1500, 72, 144) == 6000
    with pytest.raises(ValueError, match="n_sizes"):
        ev.across_D_settings(s, 1)


def test_the_flow_carried_on_from_a_recorded_state_is_the_flow_to_that_time():
    """The read at 3 T_a continues the flow from its last recorded state: the flow is autonomous, so this is the
    flow from the start (to the solver's tolerance: relative 1e-5 on alpha, gamma, rho)."""
    s = Setting(D=16, C=4, q=0.25)
    first = integrate(s, method="flow", s_max=2000.0, seed=3, n_samples=300)
    for target in (700.0, 3500.0):  # inside the recorded run, and past its end
        theta, bank_risk, status = ev._state_at(s, first, target, seed=3, n_samples=300)
        direct = integrate(s, method="flow", s_max=target, seed=3, n_samples=300).trajectory.iloc[-1]
        ref = direct[["alpha", "gamma", "rho"]].to_numpy(float)
        assert status == "ok"
        np.testing.assert_allclose(theta, ref, rtol=1e-5, atol=1e-9 * np.abs(ref).max())
        assert bank_risk == pytest.approx(float(direct["risk"]), rel=1e-4)


def test_flow_errors_across_d_reads_each_seed_at_three_t_a():
    s = Setting(D=16, C=4, q=0.25)
    runs = ev.flow_errors_across_D(s, (0, 1), n_sizes=2, n_samples=200, n_eval=2000)
    assert runs.err_given.shape == (2, 2) and list(runs.Ds) == [16, 24]
    assert list(runs.n_bank) == [200, 450] and runs.n_eval == 2000
    assert np.all((runs.err_given >= 0) & (runs.err_given <= 1)) and np.all(runs.risk > 0)
    assert np.all(runs.t2_reached == 2)
    first, _, _ = flows_until_t2(s, [0, 1], None, n_samples=200)
    T_a = [max(r.phases.T1, r.phases.T2) for r in first]
    np.testing.assert_allclose(runs.t_read[0], ev.READ_FACTOR * np.array(T_a), rtol=1e-12)


# ---- Theorem 4.1 (2) and Event III across D ----------------------------------------------------------------------


def _planted(given_law, risk_law, *, seeds=5, noise=0.05, zero_at=None) -> ev.VanishingRuns:
    """VanishingRuns with planted errors given f != 0 and risks at D = 64, 92, 128, 180 (C = 4), log-normal scatter."""
    s = Setting(D=64, C=4)
    ts = tuple(ev.across_D_settings(s, 4))
    Ds = np.array([t.D for t in ts], float)
    rng = np.random.default_rng(7)
    scatter = np.exp(noise * rng.standard_normal((len(ts), seeds)))
    given = given_law(Ds)[:, None] * scatter
    if zero_at is not None:
        given[zero_at, 0] = 0.0
    risk = risk_law(Ds)[:, None] * scatter
    n = len(ts)
    return ev.VanishingRuns(
        ts,
        tuple(range(seeds)),
        given,
        np.zeros_like(given),
        risk,
        risk.copy(),
        np.ones(n),
        np.ones(n, int),
        np.ones((n, seeds)),
        np.full(n, seeds),
        tuple(() for _ in ts),
        np.full(n, 100),
        10**5,
        np.zeros(n),
    )


def test_vanishing_rows_pass_on_falling_errors_and_fail_on_rising_ones():
    head, cond, e3 = dynamics.vanishing_rows(_planted(lambda D: 0.3 * D**-1.0, lambda D: 2.0 * D**-1.5))
    assert (head.verdict, cond.verdict, e3.verdict) == (Verdict.PASS, Verdict.INFO, Verdict.PASS)
    assert cond.measured == pytest.approx(-1.0, abs=0.15) and head.ci_low < head.measured < head.ci_high
    assert {head.form, cond.form, e3.form} == {Form.VANISHING}
    assert "D = 64, 92, 128, 180" in head.claim and "C = 4" in head.claim  # the row names its own setting
    assert "floor Pr[f=0] 0.00364" in head.note
    # the planted counter-case: an error given f != 0 that grows with D, a risk that grows: FAIL, although the
    # total Pr[f F <= 0] is pulled down by the floor Pr[f = 0] at the first sizes
    head, cond, e3 = dynamics.vanishing_rows(_planted(lambda D: 1e-4 * D**0.5, lambda D: 1e-3 * D**0.5))
    assert (head.verdict, e3.verdict) == (Verdict.FAIL, Verdict.FAIL) and cond.measured > 0
    assert "given f != 0 it does not fall" in head.note


def test_vanishing_rows_are_info_where_an_error_is_below_the_resolution():
    head, cond, e3 = dynamics.vanishing_rows(_planted(lambda D: 0.3 / D, lambda D: 2.0 / D, zero_at=3))
    assert head.verdict is Verdict.INFO and cond.verdict is Verdict.INFO and math.isnan(cond.measured)
    assert "D=180" in head.note and "below 1/n_eval" in head.note
    assert e3.verdict is Verdict.PASS  # the risk is positive and falls: read


# ---- Theorem 3.2: d^-omega(1) between two exact envelopes --------------------------------------------------------


@pytest.mark.parametrize(
    ("D", "C", "q", "nu", "errs"), [(8, 2, 0.5, None, False), (9, 3, 0.5, 2.0, True), (10, 2, 0.7, 0.5, True)]
)
def test_error_envelope_brackets_the_exact_error_by_enumeration(D, C, q, nu, errs):
    """Every noiseless point of Assumption 1 with its probability: the construction's exact Pr[f = 0] is the floor,
    and its exact Pr[f != 0, f F <= 0] lies below the Chernoff bound; model (T)'s forward of the construction equals
    block_output (the identity row's formula) on every point. A large linear part nu of the activation makes the
    construction err (F tends to nu times a GLM's sum), so the bound is tested where the error is not 0."""
    s = Setting(D=D, C=C, q=q) if nu is None else Setting(D=D, C=C, q=q, nu=nu)
    z, y, w = data.enumerate_population(s)
    f = data.labelling_from_z(s, z)
    Fb = xt32.block_output(s, z)
    M = xt32.construct_theorem_3_2(s, kappa=60.0 * s.tau)
    A = (M.P.T @ M.W_Q) @ (M.P.T @ M.W_K).T
    F = model.forward(s, A, M.v, data.embed(s, z))
    assert np.max(np.abs(F - Fb)) <= t32.BLOCK_RTOL * np.max(np.abs(Fb)), np.max(np.abs(F - Fb))
    err = float(w[(f != 0) & (f * Fb <= 0)].sum())
    assert (err > 0) == errs
    env = xt32.error_envelope(s)
    assert env["floor"] == pytest.approx(float(w[f == 0].sum()), rel=1e-12, abs=1e-15)
    assert err <= env["bound"], (err, env)
    assert env["floor"] <= env["floor"] + err <= env["upper"]


def test_error_envelope_bounds_the_monte_carlo_error_at_the_ledgers_setting():
    """At D = 64, C = 4 the construction errs given f != 0 with probability ~4e-4 (Monte Carlo on 4e5 samples of z,
    through block_output); the Chernoff bound given f != 0, 7.8e-3, lies above it by more than its 5-sigma band."""
    s = Setting(D=64, C=4)
    y, _, z = data.sample_z(s, 400_000, np.random.default_rng(11))
    f = data.labelling_from_z(s, z)
    F = xt32.block_output(s, z)
    dec = f != 0
    mc = float(np.mean(f[dec] * F[dec] <= 0))
    env = xt32.error_envelope(s)
    assert mc + 5 * math.sqrt(mc / dec.sum()) < env["bound_given"], (mc, env)
    assert float(np.mean(~dec)) == pytest.approx(env["floor"], abs=5 * math.sqrt(env["floor"] / len(f)))


def test_chernoff_tail_bounds_the_exact_tail_of_a_sum():
    rng = np.random.default_rng(2)
    r = np.arange(-3.0, 4.0)  # values -3..3, of which -2 and 2 have probability 0
    law = rng.dirichlet(np.ones(7)) * np.array([1, 0, 1, 1, 1, 0, 1])
    law /= law.sum()
    exact = np.array([1.0])
    for _ in range(6):
        exact = np.convolve(exact, law)  # the law of the sum of 6 on -18..18
    values = np.arange(-18, 19)
    for a in (1.0, 5.0, 11.0, 18.0):
        tail = float(exact[values >= a].sum())
        assert tail <= xt32._chernoff_tail(r, law, 6, a) + 1e-15
    assert xt32._chernoff_tail(r, law, 6, 19.0) == 0.0 and xt32._chernoff_tail(r, law, 6, -1.0) == 1.0


def test_theorem_32_across_d_passes_along_assumption_2_and_the_same_procedure_fails_at_fixed_c():
    s = Setting(D=64, C=4)
    along, fixed = t32.across_D_rows(s)
    assert along.verdict is Verdict.PASS and along.form == Form.VANISHING
    assert "C = 7..12, D = 126..4092" in along.claim
    assert fixed.verdict is Verdict.INFO and "would give FAIL" in fixed.note
    # the planted counter-case fed to the verdict procedure itself
    planted = t32.envelope_row("planted", fixed_c_grid(4), True, "")
    assert planted.verdict is Verdict.FAIL
    t = xt32.envelope_trend(POLYLOG_GRID)
    assert np.all(t["floor"] <= t["upper"]) and np.all(np.diff(t["local_upper"])[1:] < 0)
    assert t["floor"][0] == pytest.approx(label_agreement(Setting(D=126, C=7, q=49 / 126))["zero"])
