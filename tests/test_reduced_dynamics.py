"""The reduced dynamics (docs/theory.md §3): GD recursion vs flow, against the full model's GD, Lemma 4.3's
γ ≥ ρ along the recursion, divergence handling, phase detection, the docs/theory.md §9 regime and the CLI."""

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_reduced import _enumerate_full  # noqa: E402  (tests/ is on sys.path under pytest)

from theorydyn import Setting
from theorydyn.core import model
from theorydyn.core.phases import Phases, detect_phases
from theorydyn.core.result import CORE_COLUMNS, Result, Status
from theorydyn.reduced import COLUMNS, integrate, make_bank, population_risk
from theorydyn.reduced.__main__ import main


def test_gd_recursion_equals_full_model_population_gd():
    """Three steps of population GD on the full D×D model (exhaustive enumeration, D=6, C=2) land on
    the reduced recursion's (α, γ, ρ), and A keeps its three-value form, v ∈ span(w*) (Lemmas 4.1–4.2)."""
    s = Setting(D=6, C=2, q=0.5, nu=0.1)
    z, y, w = _enumerate_full(s)
    from theorydyn.core import data

    X = data.embed(s, z)
    eta = 3.0
    res = integrate(s, method="gd", eta=eta, steps=3, expectation="exact", n_points=4)
    traj = res.trajectory
    A = model.symmetric_attention(s, 0.0, 0.0)
    v = s.alpha0 * s.w_star
    for k in range(1, 4):
        _, gA, gv = model.risk_and_grad(s, A, v, X, y, weights=w)
        A = A - eta * gA
        v = v - eta * gv
        row = traj[traj.step == k].iloc[0]
        np.testing.assert_allclose(A[s.in_set_mask], row.gamma, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(A[s.cross_set_mask], row.rho, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(v, row.alpha * s.w_star, rtol=1e-10, atol=1e-14)
        assert np.all(np.diag(A) == s.beta)
    assert res.status is Status.OK
    np.testing.assert_allclose(res.A, A, rtol=1e-10, atol=1e-14)  # the Result's final A is the full model's


def test_trajectory_format():
    s = Setting(D=8, C=2, q=0.4, p=3, nu=0.125)
    for method, kw in (("flow", dict(s_max=50.0)), ("gd", dict(eta=0.5, steps=100))):
        res = integrate(s, method=method, expectation="exact", n_points=30, **kw)
        tr = res.trajectory
        assert list(tr.columns) == COLUMNS and tuple(COLUMNS[: len(CORE_COLUMNS)]) == CORE_COLUMNS
        assert tr.s.iloc[0] == 0 and tr.s.is_monotonic_increasing and tr.s.iloc[-1] == pytest.approx(50.0)
        ls = np.log(tr.s.iloc[1:].to_numpy())
        assert np.ptp(np.diff(ls)) < 0.5 * np.mean(np.diff(ls)) + (0.7 if method == "gd" else 0)  # log-spaced
        assert isinstance(res, Result) and res.ok and res.setting == s and res.solver == "reduced"
        assert res.options["method"] == method
        np.testing.assert_allclose(tr.step, tr.s / res.options["eta"])
        assert isinstance(res.phases, Phases)
        np.testing.assert_allclose(tr.in_mass, tr.Lambda + (s.C - 1) * tr.Gamma, rtol=1e-14)
        # the recorded risk is the reduced risk at the recorded point
        r = tr.iloc[-1]
        assert population_risk(s, r.alpha, r.gamma, r.rho).risk == pytest.approx(r.risk, rel=1e-12)


def test_gd_small_eta_converges_to_flow():
    """GD with step η differs from the flow by O(η): halving η halves the gap."""
    s = Setting(D=8, C=2, q=0.4, p=3, nu=0.125)
    bank = make_bank(s, "exact")
    fl = integrate(s, method="flow", s_max=40.0, bank=bank, rtol=1e-10, atol=1e-13, n_points=20).trajectory
    gaps = []
    for eta in (0.04, 0.02, 0.01):
        gd = integrate(s, method="gd", eta=eta, steps=int(round(40.0 / eta)), bank=bank, n_points=20).trajectory
        end = gd.iloc[-1]
        flow_end = fl.iloc[-1][["alpha", "gamma", "rho"]].to_numpy(float)
        gaps.append(np.abs(np.array([end.alpha, end.gamma, end.rho]) - flow_end))
    gaps = np.array(gaps)
    assert gaps[-1, 0] < 2e-3 * abs(fl.iloc[-1].alpha - s.alpha0)  # close, relative to how far α moved
    np.testing.assert_allclose(gaps[:-1, 0] / gaps[1:, 0], 2.0, rtol=0.15)  # first order in η


@settings(max_examples=10, deadline=None)
@given(
    DC=st.sampled_from([(12, 2), (16, 2), (16, 4), (32, 2)]),
    qf=st.floats(0.05, 0.5),
    nuD=st.floats(0.5, 2.0),
    beta=st.floats(0.5, 2.0),
    eta=st.floats(0.1, 2.0),
    tau=st.floats(1.0, 2.0),
)
def test_gamma_stays_above_rho_along_the_recursion(DC, qf, nuD, beta, eta, tau):
    """Lemma 4.3: from γ = ρ = 0, γ(t) ≥ ρ(t) at every step of population GD (exact expectation),
    in the paper's regime: q ≤ C²/(2D), ν = Θ(1/D), β > 0.

    Outside it the lemma can fail (test_gamma_below_rho_outside_the_regime); β = γ = ρ is a
    stationary point (test_uniform_attention_is_stationary_in_gamma_rho)."""
    D, C = DC
    s = Setting(D=D, C=C, q=qf * C * C / D, nu=nuD / D, beta=beta, tau=tau)
    res = integrate(s, method="gd", eta=eta, steps=300, expectation="exact", n_points=300)
    tr = res.trajectory
    assert res.ok
    assert res.phases.gamma_ge_rho
    assert np.all(tr.gamma.to_numpy() >= tr.rho.to_numpy())
    assert np.all(np.diff(tr.gamma.to_numpy()) >= 0)  # γ's increment is positive


def test_gamma_below_rho_outside_the_regime():
    """A measured limit of Lemma 4.3: at small D with q = C²/D = 1 (every patch carries ±w*),
    γ decreases and ρ increases from the start, so patch association does not hold."""
    s = Setting(D=16, C=4, q=1.0)
    res = integrate(s, method="gd", eta=1.0, steps=200, expectation="exact", n_points=20)
    tr = res.trajectory
    assert res.phases.gamma_ge_rho is False and res.phases.min_gap_after_start < 0
    assert tr.gamma.iloc[-1] < 0 < tr.rho.iloc[-1]


def test_uniform_attention_is_stationary_in_gamma_rho():
    """β = γ = ρ makes S uniform: h_i = αT/D for all i and ∂ℓ/∂γ = ∂ℓ/∂ρ = 0 exactly (so with β = 0
    the recursion never leaves γ = ρ = 0 and γ ≥ ρ is decided by rounding)."""
    s = Setting(D=12, C=3, q=0.5, beta=0.4)
    e = population_risk(s, 1.3, 0.4, 0.4)
    assert abs(e.grad[0]) > 1e-3
    assert np.all(np.abs(e.grad[1:]) < 1e-15)
    assert np.all(np.abs(population_risk(s, 1.3, 0.5, 0.4).grad[1:]) > 1e-6)


@settings(max_examples=10, deadline=None)
@given(alpha=st.floats(0.1, 3.0), gamma=st.floats(-1.0, 3.0), rho=st.floats(-1.0, 1.0))
@example(alpha=1.3671875, gamma=-0.44921875, rho=-0.03515625)  # γ nearly still: found by hypothesis
def test_one_small_gd_step_follows_the_flow_direction(alpha, gamma, rho):
    """From any start, 50 GD steps of η = 1e-3 agree with the flow to s = 0.05 up to O(η·s)."""
    s = Setting(D=6, C=2, q=0.5, nu=0.1)
    bank = make_bank(s, "exact")
    init = (alpha, gamma, rho)
    fl = integrate(s, method="flow", s_max=0.05, init=init, bank=bank, rtol=1e-11, atol=1e-14, n_points=3).trajectory
    gd = integrate(s, method="gd", eta=1e-3, steps=50, init=init, bank=bank, n_points=3).trajectory
    a, b = fl.iloc[-1], gd.iloc[-1]
    move = np.abs(np.array([a.alpha - alpha, a.gamma - gamma, a.rho - rho]))
    gap = np.abs(np.array([a.alpha - b.alpha, a.gamma - b.gamma, a.rho - b.rho]))
    # per coordinate, plus a share of the largest move: Euler's O(η·s) error couples the coordinates,
    # so a coordinate whose own gradient nearly vanishes (γ at α=1.367, γ=−0.449, ρ=−0.035 moves
    # 1.5e-7) still inherits a small part of the others' discretisation error
    assert np.all(gap <= 0.05 * move + 1e-3 * move.max() + 1e-12)


def test_divergence_stops_and_keeps_the_trajectory():
    s = Setting(D=8, C=2, q=0.4, nu=0.125)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # divergence is reported in the result, not as numpy warnings
        res = integrate(s, method="gd", eta=1e4, steps=1000, expectation="exact", n_points=100)
    tr = res.trajectory
    assert res.status is Status.DIVERGED and not res.ok
    assert res.message.startswith("diverged (non-finite risk) at step") and "s=" in res.message
    assert 1 <= len(tr) < 100 and np.all(np.isfinite(tr[["alpha", "risk"]].to_numpy()))
    assert tr.step.iloc[-1] < res.stopped_step


def test_bad_options_are_named():
    s = Setting(D=8, C=2)
    for kw, word in (
        (dict(method="euler"), "method"),
        (dict(eta=0.0), "eta"),
        (dict(steps=2.5, method="gd"), "steps"),
        (dict(s_max=-1.0), "s_max"),
        (dict(n_points=1), "n_points"),
        (dict(solver="Euler"), "solver"),
        (dict(expectation="both"), "expectation"),
    ):
        with pytest.raises(ValueError, match=word):
            integrate(s, **kw)


def test_detect_phases_on_a_synthetic_trajectory():
    """The one detector on a hand-built trajectory whose crossings are known in closed form."""
    s = np.concatenate([[0.0], np.geomspace(0.01, 1e4, 400)])
    alpha = 0.1 + 3.0 / (1 + (20.0 / np.maximum(s, 1e-9)) ** 3)  # rises around s = 20, flat after ~100
    gamma = np.where(s > 1000, (s - 1000) / 1000, 0.0) + 1e-5 * s
    rho = -1e-6 * s  # max |ρ| = 0.01 at the end
    err = np.where(s < 3000, 0.12, 0.005)
    traj = pd.DataFrame(dict(s=s, alpha=alpha, gamma=gamma, rho=rho, err_f=err))
    ph = detect_phases(traj, err_tol=0.02)
    plateau = alpha[s <= ph.T1].max()
    assert ph.plateau_alpha == pytest.approx(plateau)
    # T0: α = 0.9·plateau, i.e. 3/(1 + (20/s)³) = 0.9·plateau − 0.1, solved for s (linear interpolation
    # between log-spaced records of spacing 3.5% leaves < 0.1% error)
    x = (0.9 * plateau - 0.1) / 3.0
    assert ph.T0 == pytest.approx(20.0 / (1 / x - 1) ** (1 / 3), rel=1e-3)
    # T1: γ reaches max|ρ| = 0.01 at s = 1000 exactly, at a kink of γ: linear interpolation puts it
    # between the two records around it, within one record spacing (3.5%)
    j = np.argmax(gamma > 0.01)
    assert s[j - 1] <= ph.T1 <= s[j] and ph.T1 == pytest.approx(1000.0, rel=0.035)
    i = np.argmax(s >= 3000)
    assert s[i - 1] < ph.T2 <= s[i]  # a step function: the crossing lies between the records around it
    assert ph.T1_mass is None and ph.plateau_risk is None and ph.T_assoc is None  # no such columns
    assert ph.gamma_ge_rho is True and ph.min_gap_after_start > 0
    assert ph.lemma43_ratio == pytest.approx(10.0, rel=1e-6)  # Δγ/|Δρ| = 1e-5/1e-6 in phase II
    traj.loc[5, "gamma"] = -1.0
    assert detect_phases(traj).gamma_ge_rho is False
    with pytest.raises(ValueError, match="err_f"):
        detect_phases(traj.drop(columns="err_f"))
    flat = pd.DataFrame(dict(s=s, alpha=np.full_like(s, 0.5), gamma=0 * s, rho=0 * s, err_f=0.3 + 0 * s))
    assert detect_phases(flat).T0 is None  # α that never grows has no phase I


@pytest.mark.slow
def test_phase_times_do_not_depend_on_the_output_grid():
    """The flow's crossings are refined through its dense output: the phase times agree to < 1%
    between a 60-point and a 400-point output grid (they were read off the grid before: ~4-8%)."""
    s = Setting(D=32, C=4, q=0.25, nu=1 / 64)
    bank = make_bank(s, "mc", n_samples=1500, seed=0)
    a = integrate(s, method="flow", s_max=4e3, bank=bank, n_points=60).phases
    b = integrate(s, method="flow", s_max=4e3, bank=bank, n_points=400).phases
    for k in ("T0", "T1", "T1_mass", "T2"):
        assert getattr(a, k) is not None and getattr(a, k) == pytest.approx(getattr(b, k), rel=0.01), k


@pytest.mark.slow
def test_spec9_regime_shows_three_phases():
    """docs/theory.md §9: α plateaus (risk ≈ 0.39, error ≈ 12%), then γ grows and the error falls below 2%."""
    s = Setting(D=64, C=4, q=0.25, p=3, nu=1 / 64, beta=1.0, tau=1.0)
    res = integrate(s, method="flow", s_max=2e4, n_samples=4000, seed=0, n_points=120)
    tr, ph = res.trajectory, res.phases
    assert res.ok
    assert 10 < ph.T0 < 200 and 3.5 < ph.plateau_alpha < 4.1
    assert ph.plateau_risk == pytest.approx(0.39, abs=0.02) and ph.plateau_err == pytest.approx(0.12, abs=0.02)
    assert ph.T0 < ph.T1 <= ph.T1_mass and ph.T1 < ph.T2 < 2e4
    assert ph.gamma_ge_rho and ph.lemma43_ratio > 1
    assert ph.final_err_f < 0.01 and ph.final_risk < 0.05
    mid = tr[(tr.s > 2 * ph.T0) & (tr.s < ph.T1 / 5)]
    assert np.ptp(mid.alpha) < 0.05 * ph.plateau_alpha  # α nearly frozen in phase II


def test_cli_runs_and_rejects_bad_values(tmp_path, capsys):
    assert (
        main(
            [
                "--D",
                "8",
                "--C",
                "2",
                "--q",
                "0.4",
                "--expectation",
                "exact",
                "--s-max",
                "30",
                "--n-points",
                "40",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "T0" in out and "status: ok" in out
    stem = "reduced_flow_D8_C2_q0.4_expectationexact_n-points40_s-max30"  # named by what made it (issue 20)
    csv = tmp_path / f"{stem}.csv"
    assert list(pd.read_csv(csv).columns) == COLUMNS
    assert (tmp_path / f"{stem}.png").stat().st_size > 10_000
    for argv, word in (
        (["--D", "10", "--C", "4"], "C must divide D"),
        (["--eta", "-1"], "--eta"),
        (["--n-samples", "1"], "--n-samples"),
        (["--expectation", "exact"], "--expectation exact"),
        (["--q", "2"], "q must lie"),
    ):
        with pytest.raises(SystemExit) as e:
            main(argv + ["--out", str(tmp_path), "--no-plot"])
        assert e.value.code == 2
        assert word in capsys.readouterr().err


def test_explicit_time_grid_for_comparisons():
    """``s_grid`` records gd and flow at the same times (gd rounds to whole steps)."""
    s = Setting(D=8, C=2, q=0.4, nu=0.125)
    grid = [0.0, 0.5, 2.0, 7.5, 20.0]
    gd = integrate(s, method="gd", eta=0.5, s_grid=grid, expectation="exact").trajectory
    fl = integrate(s, method="flow", s_grid=gd.s.to_numpy(), expectation="exact").trajectory
    np.testing.assert_array_equal(gd.s, grid)
    np.testing.assert_array_equal(fl.s, grid)
    np.testing.assert_array_equal(gd.step, [0, 1, 4, 15, 40])
    assert np.max(np.abs(gd.alpha - fl.alpha)) < 0.05 * np.ptp(fl.alpha)


def test_dynamics_horizon_grows_until_every_seed_ends_phase_three(monkeypatch):
    """A default horizon too short for T2 doubles (at most HORIZON_GROWTH_MAX times) and the rows say
    so; a horizon given by the user is kept."""
    from theorydyn import Setting, claims
    from theorydyn.claims import dynamics
    from theorydyn.reduced import HORIZON_GROWTH_MAX, solve

    s = Setting(D=16, C=4, q=0.5)
    monkeypatch.setattr(solve, "default_horizon", lambda D: 50.0)
    rows = claims.judge(dynamics, s, quick=True, seeds=2)
    grown = rows[0].params["s_max"]
    assert grown > 50.0 and "default_horizon" in rows[0].params["horizon"]
    assert grown <= 50.0 * HORIZON_GROWTH_MAX
    kept = claims.judge(dynamics, s, quick=True, seeds=2, s_max=50.0)
    assert kept[0].params["s_max"] == 50.0 and "horizon" not in kept[0].params
