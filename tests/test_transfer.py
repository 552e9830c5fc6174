"""Transfer (Theorems 5.1, 5.2; docs/theory.md §5) and the logistic-regression baseline."""

import itertools
import json
import math
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from conftest import link_to_precious

import theorydyn.transfer as tr
from theorydyn import Setting
from theorydyn.claims.transfer import checks_from
from theorydyn.core import data, model
from theorydyn.core.logreg import fit_logreg, fit_logreg_cv, objective
from theorydyn.transfer import cache as cache_mod
from theorydyn.transfer.__main__ import main as transfer_main


def test_logreg_gradient_matches_central_differences():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 7))
    y = np.where(rng.random(30) < 0.5, -1, 1)
    wb = rng.normal(size=8)
    for lam in (0.0, 0.3):
        J, g = objective(wb, Z, y, lam)
        h = 1e-6
        num = np.array(
            [(objective(wb + h * e, Z, y, lam)[0] - objective(wb - h * e, Z, y, lam)[0]) / (2 * h) for e in np.eye(8)]
        )
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)
        # and the value against a plain loop
        ref = (
            np.mean([np.log1p(np.exp(-y[n] * (Z[n] @ wb[:-1] + wb[-1]))) for n in range(30)])
            + 0.5 * lam * wb[:-1] @ wb[:-1]
        )
        assert J == pytest.approx(ref, rel=1e-12)


def test_logreg_optimum_is_stationary_and_cv_recovers_a_linear_rule():
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(200, 5))
    y = np.where(Z @ np.array([1.0, -2.0, 0.5, 0, 0]) + 0.3 * rng.normal(size=200) > 0, 1, -1)
    m = fit_logreg(Z, y, lam=0.1)
    _, g = objective(np.append(m.w, m.b), Z, y, 0.1)
    assert np.abs(g).max() < 1e-6
    mc = fit_logreg_cv(Z, y)
    Zt = rng.normal(size=(2000, 5))
    yt = np.where(Zt @ np.array([1.0, -2.0, 0.5, 0, 0]) > 0, 1, -1)
    assert np.mean(np.sign(mc.decision(Zt)) == yt) > 0.9
    one = fit_logreg_cv(Z[:1], y[:1])  # one sample: no fold to hold out, the largest penalty
    assert one.lam == 100.0 and np.isfinite(one.w).all() and np.sign(one.decision(Z[:1]))[0] == y[0]


def test_v_gradient_with_frozen_attention_matches_model():
    s = Setting(D=8, C=2, d=6)
    b = data.sample(s, 25, seed=3)
    rng = np.random.default_rng(4)
    A = tr.init_attention(s, 0.5, rng)
    v = rng.normal(scale=0.7, size=s.d)
    r, g = tr.risk_and_grad_v(s, model.attention(s, A), v, b.X, b.y)
    r2, _, g2 = model.risk_and_grad(s, A, v, b.X, b.y)
    assert r == pytest.approx(r2, rel=1e-12)
    np.testing.assert_allclose(g, g2, rtol=1e-10, atol=1e-14)


def test_downstream_feature_is_orthogonal_and_keeps_the_sets():
    for s in (Setting(D=16, C=4), Setting(D=16, C=4, feature=15), Setting(D=8, C=2, feature=np.ones(8))):
        sd = tr.downstream_setting(s)
        assert abs(sd.w_star @ s.w_star) < 1e-12
        assert np.linalg.norm(sd.w_star) == pytest.approx(1.0)
        np.testing.assert_array_equal(sd.sets, s.sets)


@pytest.mark.parametrize("method", ["gd", "lbfgs"])
def test_fitting_v_with_frozen_attention_reduces_the_risk(method):
    s = tr.downstream_setting(Setting(D=16, C=4, q=0.25))
    b = data.sample(s, 64, seed=0)
    A = tr.oracle_attention(s)
    v0 = np.random.default_rng(0).normal(0.0, 1e-3, size=s.d)  # fit_v's own ṽ(0) for seed 0
    v = tr.fit_v(s, A, b.X, b.y, omega=1e-3, eta=10.0, steps=100, seed=0, method=method)
    r0, r1 = model.risk(s, A, v0, b.X, b.y), model.risk(s, A, v, b.X, b.y)
    assert r0 == pytest.approx(np.log(2), abs=1e-3)
    assert r1 < 0.1 * r0


# ---- the setting across D and the population ceilings ---------------------------------------------
def test_setting_at_count_rule_keeps_the_number_of_spurious_patches():
    s = tr.with_count(Setting(D=64, C=4, nu=1 / 64), 8.0)
    for D in (16, 32, 128, 256):
        sD = tr.setting_at(s, D, "count")
        assert sD.q * (D - 4) == pytest.approx(8.0) and sD.d == D and sD.nu == 1 / 64
        assert tr.setting_at(s, D, "keep").q == s.q
    with pytest.raises(ValueError, match="q_rule"):
        tr.setting_at(s, 32, "bogus")
    with pytest.raises(ValueError, match="q would be"):
        tr.setting_at(tr.with_count(s, 20.0), 16, "count")


@pytest.mark.slow
def test_block_ceiling_matches_a_direct_forward_pass_on_feature_values():
    """The reduced-model ceiling against model.forward on noiseless X (v ∥ w: the noise drops out)."""
    s = tr.with_count(Setting(D=16, C=4, nu=1 / 64), 4.0)
    acc, alpha = tr.ceiling(s, s.beta, s.beta - 10.0, n_samples=40000, seed=1)
    rng = np.random.default_rng(5)
    y, _, z = data.sample_z(s, 40000, rng)
    X = data.embed(s, z)  # ξ = 0
    f = data.labelling_from_z(s, z)

    def direct(A, a):
        F = model.forward(s, A, a * s.w_star, X)[f != 0]
        return np.mean(np.where(np.abs(F) <= tr.tie_tolerance(s, a), False, np.sign(F) == np.sign(f[f != 0])))

    assert acc == pytest.approx(direct(tr.oracle_attention(s), alpha), abs=0.004)
    init_acc, a0 = tr.ceiling(s, 0.0, 0.0, n_samples=40000, seed=1)
    assert acc > 0.99 and init_acc < acc - 0.01
    # at init F = 0 exactly when Σ z = 0: the tie rule, checked on the full model with a direct pass
    A0 = tr.init_attention(s, 0.0, rng)
    assert init_acc == pytest.approx(direct(A0, a0), abs=0.004)
    assert init_acc >= max(direct(A0, a) for a in tr.ALPHAS[::8]) - 0.004


# ---- the projected test set is exact ---------------------------------------------------------------
def _explicit_noise(s, g, dirs):
    """Noise ξ (N, D, d) ⟂ w whose component along the unit vectors dirs (D, d) is σ g, plus an
    independent part orthogonal to both: ⟨dir_j, ξ_nj⟩ = σ g_nj exactly."""
    rng = np.random.default_rng(9)
    xi = rng.normal(size=g.shape + (s.d,)) * np.sqrt(s.sigma2)
    w = s.w_star
    xi -= (xi @ w)[..., None] * w
    xi -= np.einsum("njk,jk->nj", xi, dirs)[..., None] * dirs[None]
    return xi + np.sqrt(s.sigma2) * g[..., None] * dirs[None]


def test_projected_test_outputs_equal_model_forward_on_explicit_patches():
    s = tr.downstream_setting(Setting(D=16, C=4, q=0.3))
    test = tr.TestSet.draw(s, 200, seed=3)
    rng = np.random.default_rng(4)
    v = rng.normal(size=s.d)
    A = tr.init_attention(s, 0.7, rng)
    u = v - (v @ s.w_star) * s.w_star
    X = data.embed(s, test.z.astype(np.int8)) + _explicit_noise(s, test.g, np.tile(u / np.linalg.norm(u), (s.D, 1)))
    np.testing.assert_allclose(
        tr.outputs_v(s, model.attention(s, A), v, test), model.forward(s, A, v, X), rtol=1e-9, atol=1e-9
    )
    # the linear rule: only the first normal column carries the noise, along P⊥W / ‖P⊥W‖_F
    W = rng.normal(size=(s.D, s.d))
    P = W - np.outer(W @ s.w_star, s.w_star)
    g1 = np.zeros_like(test.g)
    g1[:, 0] = test.g[:, 0]
    dirs = P / np.linalg.norm(P)
    Xl = data.embed(s, test.z.astype(np.int8))
    xi = np.sqrt(s.sigma2) * test.g[:, 0, None, None] * dirs[None]
    direct = np.einsum("njk,jk->n", Xl + xi, W) + 0.3
    np.testing.assert_allclose(tr.outputs_linear(s, W, 0.3, test), direct, rtol=1e-9, atol=1e-9)


def test_projected_noise_has_the_law_of_explicit_noise():
    """⟨v, ξ_j⟩ over explicit Gaussian patches has variance σ²‖P⊥v‖², the projected form's."""
    s = tr.downstream_setting(Setting(D=16, C=4, q=0.3))
    b = data.sample(s, 4000, seed=11)
    v = np.random.default_rng(2).normal(size=s.d)
    a = v @ s.w_star
    resid = (b.X @ v - a * b.z).ravel()
    sd = np.sqrt(s.sigma2) * np.linalg.norm(v - a * s.w_star)
    assert resid.std() == pytest.approx(sd, rel=0.02) and abs(resid.mean()) < 0.02 * sd


# ---- crossings, bounds, slopes ---------------------------------------------------------------------
def test_crossing_interpolates_in_log_n_and_marks_censored_values_as_bounds():
    N = np.array([1, 2, 4, 8, 16])
    lo, hi, kind = tr.crossing(N, np.array([0.5, 0.6, 0.8, 0.9, 0.95]), 0.85)
    assert kind == "value" and lo == hi == pytest.approx(4 * 2**0.5)  # halfway in log between 4 and 8
    assert tr.crossing(N, np.full(5, 0.7), 0.85) == (16.0, math.inf, "lower")  # never: need > 16
    assert tr.crossing(N, np.full(5, 0.9), 0.85) == (1.0, 1.0, "value")  # at Ñ = 1: exactly one sample
    assert tr.crossing(N[2:], np.full(3, 0.9), 0.85) == (1.0, 4.0, "upper")  # at Ñ_min = 4: need ≤ 4
    # a dip after the first crossing does not move it
    assert tr.crossing(N, np.array([0.5, 0.9, 0.7, 0.9, 0.9]), 0.85)[2] == "value"
    with pytest.raises(ValueError):
        tr.crossing(np.array([2, 1]), np.array([0.5, 0.6]), 0.8)


def test_slope_bounds_are_the_extremes_over_the_censoring_box():
    rng = np.random.default_rng(0)
    x = np.log([16.0, 32, 64, 128, 256])
    lo = rng.normal(size=5)
    hi = lo + rng.uniform(0, 2, size=5)
    smin, smax = tr.slope_bounds(x, lo, hi)
    corners = [np.polyfit(x, np.where(c, hi, lo), 1)[0] for c in itertools.product([0, 1], repeat=5)]
    assert smin == pytest.approx(min(corners)) and smax == pytest.approx(max(corners))
    # an open upper end at the largest D: the slope is only bounded below
    hi2 = hi.copy()
    hi2[-1] = math.inf
    smin2, smax2 = tr.slope_bounds(x, lo, hi2)
    assert smin2 == pytest.approx(smin) and smax2 == math.inf


def _synthetic_raw(need, Ds=(16, 32, 64, 128, 256), Ns=tuple(2**k for k in range(12)), seeds=6, noise=0.01, method="m"):
    """Per-seed curves acc = 0.9 + 0.1·log2(Ñ/Ñ*(D)), clipped to [0.5, 1], plus seed noise: the
    seed-mean crosses 0.9 at Ñ*(D) = need(D)."""
    rng = np.random.default_rng(1)
    rows = []
    for D in Ds:
        for k in range(seeds):
            shift = noise * rng.normal()
            for N in Ns:
                acc = float(np.clip(0.9 + 0.1 * np.log2(N / need(D)) + shift, 0.5, 1.0))
                rows.append(dict(D=D, method=method, N_tilde=N, seed=k, acc_f=acc, acc_y=acc))
    levels = pd.DataFrame(dict(D=list(Ds), target=0.9))
    return pd.DataFrame(rows), levels


def test_growth_fit_recovers_a_power_law_exponent_with_a_ci():
    raw, levels = _synthetic_raw(lambda D: 0.5 * D**0.75)
    reps = {}
    tgt = tr.target_table(raw, levels, B=400, _reps=reps)
    np.testing.assert_allclose(
        tgt.sort_values("D")["N_target"], [0.5 * D**0.75 for D in (16, 32, 64, 128, 256)], rtol=0.15
    )
    fit = tr.growth_fits(tgt, reps).set_index("x").loc["log D"]
    assert fit["slope_low"] == fit["slope_high"] == pytest.approx(0.75, abs=0.03)
    assert fit["ci_low"] < 0.75 < fit["ci_high"] and fit["ci_high"] - fit["ci_low"] < 0.3
    assert fit["censored"] == 0


def test_growth_fit_of_a_polylog_is_linear_in_log_log_d():
    raw, levels = _synthetic_raw(lambda D: np.log(D) ** 2, noise=0.005)
    reps = {}
    fits = tr.growth_fits(tr.target_table(raw, levels, B=300, _reps=reps), reps).set_index("x")
    assert fits.loc["log log D", "slope_low"] == pytest.approx(2.0, abs=0.1)
    assert fits.loc["log log D", "rms"] < fits.loc["log D", "rms"]  # the straighter of the two fits
    assert fits.loc["log D", "slope_low"] == pytest.approx(2 / np.log(64), abs=0.1)  # local slope k/ln D


def test_growth_fit_reports_a_bound_when_censored():
    # need D^1 but the grid stops at 64: D = 128, 256 are never reached → the slope is only bounded below
    raw, levels = _synthetic_raw(lambda D: D, Ns=tuple(2**k for k in range(7)))
    reps = {}
    tgt = tr.target_table(raw, levels, B=200, _reps=reps)
    kinds = tgt.set_index("D")["kind"]
    assert (kinds.loc[[128, 256]] == "lower").all() and (kinds.loc[[16, 32]] == "value").all()
    assert tgt.set_index("D").loc[256, "ci_high"] == math.inf and np.isnan(tgt.set_index("D").loc[256, "N_target"])
    fit = tr.growth_fits(tgt, reps).set_index("x").loc["log D"]
    assert fit["slope_high"] == math.inf and fit["ci_high"] == math.inf
    assert 0.3 < fit["slope_low"] < 1.0 and fit["censored"] == 3
    assert tr.describe_slope(fit).startswith("≥")
    # reached at the smallest Ñ > 1 everywhere: an upper bound only
    raw2, levels2 = _synthetic_raw(lambda D: 1.0, Ns=(4, 8, 16))
    t2 = tr.target_table(raw2, levels2, B=50)
    assert (t2["kind"] == "upper").all() and (t2["hi"] == 4).all() and (t2["lo"] == 1).all()


# ---- the experiment: determinism and resumability ----------------------------------------------------
def test_downstream_training_is_deterministic():
    s = tr.downstream_setting(tr.setting_at(tr.base_setting(), 16, "count"))
    opts = tr.TransferOptions(seeds=1, steps_v=40, steps_scratch=20)
    test = tr.TestSet.draw(s, 512, seed=1)
    A = tr.oracle_attention(s)
    for method in ("oracle", "scratch", "logreg"):
        a = tr.compute_row(s, method, A, 8, 2, opts, test)
        b = tr.compute_row(s, method, A, 8, 2, opts, test)
        assert (a["acc_f"], a["acc_y"]) == (b["acc_f"], b["acc_y"])
        assert 0 <= a["acc_f"] <= 1


class _Interrupt(Exception):
    pass


def _fake_compute(calls, fail_at=None):
    """Stands in for compute_row: cheap deterministic accuracies rising with Ñ; raises on call fail_at."""

    def compute(sd, method, A, N, seed, opts, test):
        calls.append((sd.D, method, N, seed))
        if fail_at is not None and len(calls) == fail_at:
            raise _Interrupt
        acc = min(1.0, 0.6 + 0.1 * np.log2(N) + 0.01 * seed + (0.2 if method == "oracle" else 0.0))
        return dict(acc_f=acc, acc_y=acc, wall_s=0.0)

    return compute


def test_run_is_resumable_and_keys_rows_by_their_parameters(tmp_path):
    s = tr.base_setting()
    opts = tr.TransferOptions(Ns=(1, 2, 4, 8), seeds=2, N_test=64, extra=1, ceiling_samples=1000)
    kw = dict(Ds=(16, 32), opts=opts, methods=("oracle", "init"), out=tmp_path, progress=None, B=20)
    full_calls = []
    ref = tr.run(s, compute=_fake_compute(full_calls), **dict(kw, out=tmp_path / "ref"))[0]
    calls = []
    with pytest.raises(_Interrupt):
        tr.run(s, compute=_fake_compute(calls, fail_at=7), **kw)
    stored = pd.read_csv(tmp_path / "transfer_rows.csv")
    assert len(stored) == 6  # every finished row is on disk
    more = []
    raw = tr.run(s, compute=_fake_compute(more), **kw)[0]
    pd.testing.assert_frame_equal(raw, ref)
    assert len(more) == len(full_calls) - 6  # nothing recomputed
    assert not set(more) & set(calls[:6])
    again = []
    tr.run(s, compute=_fake_compute(again), **kw)
    assert again == []
    # recompute: every row again, the same rows stored once each
    redo = []
    raw_redo = tr.run(s, compute=_fake_compute(redo), recompute=True, **kw)[0]
    assert len(redo) == len(full_calls)
    pd.testing.assert_frame_equal(raw_redo, ref)
    assert len(pd.read_csv(tmp_path / "transfer_rows.csv")) == len(full_calls)
    # a changed option is a different row
    changed = []
    changed_opts = tr.TransferOptions(Ns=(1, 2, 4, 8), seeds=2, N_test=64, extra=1, steps_v=7, ceiling_samples=1000)
    tr.run(s, compute=_fake_compute(changed), **dict(kw, opts=changed_opts))
    assert len(changed) > 0


def test_stop_rule_and_caps_bound_the_grid():
    s = tr.setting_at(tr.base_setting(), 256, "count")
    opts = tr.TransferOptions(Ns=tuple(2**k for k in range(10)), budget=1 << 20, baseline_max_N=64)
    assert opts.max_N("pretrained", s) == 16 and opts.max_N("init", s) == 16
    assert opts.max_N("init", tr.setting_at(tr.base_setting(), 16, "count")) == 64
    with pytest.raises(ValueError, match="Ns"):
        tr.TransferOptions(Ns=(4, 2))


def test_grid_goes_on_to_the_highest_target_each_method_is_judged_at():
    """A baseline stops ``extra`` points after the common target (0.75); the pre-trained Â goes on to
    the theorem level a*(D) − ε. Fake accuracies 0.605 + 0.1·log2 Ñ (seed mean): 0.75 first at Ñ = 3,
    0.95 first at Ñ = 11 (a* = 1 at D = 16)."""
    s = tr.base_setting()
    opts = tr.TransferOptions(
        Ns=tr.fine_grid(64), seeds=2, N_test=64, extra=1, ceiling_samples=1000, flow_n_samples=200
    )
    calls: list = []
    raw = tr.run(s, (16,), opts, methods=("pretrained", "init"), compute=_fake_compute(calls), progress=None, B=20)[0]
    top = raw.groupby("method")["N_tilde"].max()
    assert top["init"] == 4 and top["pretrained"] == 16


def test_oracle_block_attention_transfers_better_than_attention_at_init(tmp_path):
    """Theorem 5.1 against 5.2 at small Ñ: the block Â needs few samples, Â at init does not."""
    s = tr.base_setting()
    opts = tr.TransferOptions(Ns=(2, 4), seeds=3, N_test=2048, steps_v=150, baseline_max_N=4, ceiling_samples=2000)
    raw = tr.run(s, (32,), opts, methods=("oracle", "init"), out=None, progress=None)[0]
    acc = raw[raw.N_tilde == 4].groupby("method")["acc_f"].agg(["min", "max"])
    assert acc.loc["oracle", "min"] > 0.97
    assert acc.loc["oracle", "min"] > acc.loc["init", "max"] + 0.03


def test_plots_write_pngs(tmp_path):
    raw, levels = _synthetic_raw(lambda D: D**0.5, Ds=(16, 32), Ns=(1, 2, 4, 8, 16), seeds=2)
    raw2, _ = _synthetic_raw(lambda D: 100.0, Ds=(16, 32), Ns=(1, 2, 4, 8, 16), seeds=2, method="never")
    levels["a_star"], levels["q"] = 0.95, 0.5
    summ, tgt, sl = tr.report(pd.concat([raw, raw2]), levels, tmp_path, B=50)
    for name in ("transfer_curves.png", "transfer_target.png"):
        assert (tmp_path / name).stat().st_size > 1000
    assert set(tgt["kind"]) == {"value", "lower"}


@pytest.mark.parametrize(
    "argv, word",
    [
        (["--Ds", "30"], "--Ds"),
        (["--methods", "pretrained", "bogus"], "--methods"),
        (["--Ds", "16,32"], "--Ds"),  # lists are space-separated in every CLI (issue 20)
        (["--eps", "0.7"], "--eps"),
        (["--C", "5"], "C must divide D"),
        (["--seeds", "0"], "--seeds"),
        (["--Ds", "8"], "--Ds"),
    ],
)
def test_cli_rejects_bad_input_with_exit_2(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        transfer_main(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


def _verdicts(needs, theorem_needs=None, up=None):
    """Ledger rows from planted Ñ_target(D) = need(D) per method (common target 0.9); ``theorem_needs``
    plants the pre-trained Â's need at the theorem level (target 0.95) instead of the common one."""
    raws = []
    for method, need in needs.items():
        raw, levels = _synthetic_raw(need, method=method, Ns=tuple(2**k for k in range(11)), seeds=5)
        raws.append(raw)
    levels = levels.assign(a_star=0.95, init_ceiling=0.9, linear_reference=0.88)
    if theorem_needs is not None:
        # the theorem level sits 0.05 above the common one: a curve 0.9 + 0.1·log2(Ñ/m) reaches 0.95 at
        # m·√2, so m = need/√2 plants the theorem-level need (the common-level need is then need/√2)
        levels = levels.assign(target_theorem=0.95)
        raws = [r for r in raws if r["method"].iloc[0] not in theorem_needs]
        for method, need in theorem_needs.items():
            raws.append(
                _synthetic_raw(
                    lambda D, f=need: f(D) / math.sqrt(2), method=method, Ns=tuple(2**k for k in range(11)), seeds=5
                )[0]
            )
    summary, tgt, slopes = tr.report(pd.concat(raws, ignore_index=True), levels, None, B=200)
    up = pd.DataFrame() if up is None else up
    rows = checks_from(summary, tgt, slopes, levels, up, tr.TransferOptions(), {})
    return {(r.claim, r.quantity.split("(")[-1].rstrip(")")): r for r in rows}


def test_checks_pass_on_the_papers_picture_and_can_fail():
    flat = lambda D: 1.5 + 0.0 * D  # noqa: E731
    v = _verdicts({"pretrained": lambda D: 6.0 + 0.0 * D, "init": lambda D: 1e6, "scratch": lambda D: 2.0 * D})
    assert v[("Theorem 5.1", "pre-trained Â, ṽ by GD")].verdict == "PASS"
    # never reached at any D: a lower bound everywhere shows no growth with D, so it is INFO, never PASS
    assert v[("Theorem 5.2", "init")].verdict == "INFO"
    init = v[("Theorem 5.2", "init")]
    assert math.isnan(init.ci_high) and "ci_high = +∞" in init.note and "not a PASS" in init.note
    # at the common accuracy (not the theorem's o(1) error) every Theorem 5.2 row is INFO, its slope measured
    s52 = v[("Theorem 5.2", "scratch")]
    assert s52.verdict == "INFO" and s52.ci_low > 0.5 and s52.measured == pytest.approx(1.0, abs=0.1)
    # a pre-trained Â that needs D samples fails Theorem 5.1; the common-level baseline row stays INFO
    bad = _verdicts({"pretrained": lambda D: 0.5 * D, "scratch": flat})
    assert bad[("Theorem 5.1", "pre-trained Â, ṽ by GD")].verdict == "FAIL"
    assert bad[("Theorem 5.2", "scratch")].verdict == "INFO"
    # a need at the floor (1.5 samples at every D): the exponent measures the floor, INFO and said so
    floor = _verdicts({"pretrained": flat})[("Theorem 5.1", "pre-trained Â, ṽ by GD")]
    assert floor.verdict == "INFO" and "at the floor" in floor.note, floor.note


def test_theorem_51_is_judged_at_the_theorem_level_and_can_fail_there():
    """Planted: the pre-trained Â is cheap at the common target but needs ∝ D samples at a*(D) − ε (tables
    without the vanishing level: the theorem level is the judged one): Theorem 5.1 FAILs; with a flat need
    above the floor there it PASSes."""
    flat = lambda D: 1.5 + 0.0 * D  # noqa: E731
    bad = _verdicts({"pretrained": flat, "scratch": lambda D: 2.0 * D}, theorem_needs={"pretrained": lambda D: D})
    row = bad[("Theorem 5.1", "pre-trained Â, ṽ by GD")]
    assert row.verdict == "FAIL" and row.measured == pytest.approx(1.0, abs=0.1)
    good = _verdicts(
        {"pretrained": flat, "scratch": lambda D: 2.0 * D}, theorem_needs={"pretrained": lambda D: 6.0 + 0.0 * D}
    )
    assert good[("Theorem 5.1", "pre-trained Â, ṽ by GD")].verdict == "PASS"


def test_a_failed_finite_sample_pretraining_is_a_row_never_dropped():
    up = pd.DataFrame(
        [
            dict(
                D=16,
                method="pretrained-sim",
                err_f=0.064,
                association=0.0,
                status="diverged",
                message="diverged (non-finite risk or gradient) at step 170",
                steps=170,
                N=4096,
                eta=10.0,
            ),
            dict(
                D=32,
                method="pretrained-sim",
                err_f=0.011,
                association=0.8125,
                status="ok",
                message="",
                steps=2000,
                N=4096,
                eta=10.0,
            ),
        ]
    )
    flat = lambda D: 1.5 + 0.0 * D  # noqa: E731
    v = _verdicts({"pretrained": flat}, up=up)
    r16 = v[("Theorem 5.1 (finite-sample Â)", "association of the finite-sample pre-trained Â at D=16")]
    r32 = v[("Theorem 5.1 (finite-sample Â)", "association of the finite-sample pre-trained Â at D=32")]
    assert r16.verdict == "INFO" and "at step 170" in r16.note and "no Â to transfer" in r16.note
    assert r32.measured == 0.8125 and "< 1" in r32.note


def test_fine_grid_steps_by_at_most_1_5_from_2_on_and_about_sqrt2_from_8_on():
    g = np.array(tr.fine_grid(1024))
    assert g[0] == 1 and g[-1] == 1024 and list(g[:4]) == [1, 2, 3, 4]
    assert np.all(np.diff(g) > 0) and np.max(g[2:] / g[1:-1]) <= 1.5 and np.max(g[6:] / g[5:-1]) <= 1.46
    assert tr.fine_grid(5) == (1, 2, 3, 4, 5)
    with pytest.raises(ValueError, match="n_max"):
        tr.fine_grid(0)


def test_logreg_in_the_row_span_equals_the_full_fit():
    from theorydyn.core.logreg import fit_logreg_cv
    from theorydyn.transfer.experiment import fit_logreg_span

    sd = tr.downstream_setting(tr.setting_at(tr.base_setting(), 16, "count"))
    tr_ = data.sample(sd, 23, seed=3)
    full = fit_logreg_cv(tr_.X, tr_.y, seed=1)
    w, b = fit_logreg_span(tr_.X, tr_.y, seed=1)
    Z = data.sample(sd, 300, seed=9).X.reshape(300, -1)
    scale = np.abs(Z @ full.w).max()
    assert np.max(np.abs((Z @ w + b) - (Z @ full.w + full.b))) < 1e-6 * scale


def test_slope_difference_ci_separates_a_growing_need_from_a_flat_one():
    raw_a, levels = _synthetic_raw(lambda D: 0.5 * D, method="b")
    raw_p, _ = _synthetic_raw(lambda D: 6.0 + 0.0 * D, method="pretrained")  # above the floor (Ñ = 2)
    reps: dict = {}
    tgt = tr.target_table(pd.concat([raw_a, raw_p]), levels, B=300, _reps=reps)
    f = tr.growth_fits(tgt, reps).set_index(["method", "x"]).loc[("b", "log D")]
    assert f["diff_low"] == pytest.approx(1.0, abs=0.1) and 0 < f["diff_ci_low"] < 1 < f["diff_ci_high"]


def test_a_diverged_pretraining_is_reported_with_its_step_and_not_transferred():
    s = tr.setting_at(tr.base_setting(), 16, "count")
    opts = tr.TransferOptions(upstream_N=64, upstream_steps=30, eta=1e6, sim_max_D=16)
    attn, _, ups = tr.attentions_at(s, 16, ("pretrained-sim",), opts, None)
    assert "pretrained-sim" not in attn
    (u,) = ups
    assert u["status"].startswith("diverged") and "at step" in u["message"] and u["steps"] < 30


# ---- caches: atomic, self-describing, checked -----------------------------------------------------------
_SMALL = tr.setting_at(tr.base_setting(), 16, "count")
_SIM_KW = dict(N=64, steps=5, eta=10.0, omega=1e-3, seed=0)


def _flow(cache):
    return tr.flow_attention(_SMALL, s_max=200.0, n_samples=100, cache=cache)


def _only(path_glob):
    files = sorted(path_glob)
    assert len(files) == 1, files
    return files[0]


def _bad_cache(path, how):
    """Damage a cache file the ways the issue found: torn, empty, copied from another setting, γ = NaN, A = 0."""
    if how == "torn":
        path.write_bytes(path.read_bytes()[:195])
    elif how == "empty":
        path.write_bytes(b"")
    else:
        with np.load(path) as z:
            arrays = {k: np.array(z[k]) for k in z.files}
        params = json.loads(str(arrays.pop("params")))
        arrays.pop("sha256")
        if how == "other-setting":
            params["setting"]["q"] = 0.5
        elif how == "nan":
            arrays["gamma"] = np.asarray(np.nan)
        elif how == "zero":
            arrays["A"] = np.zeros_like(arrays["A"])
        elif how == "edited":  # a valid-looking cache with another content: the hash no longer matches
            with np.load(path) as z:
                good_hash = str(z["sha256"])
            key = "A" if "A" in arrays else "gamma"
            arrays[key] = arrays[key] * 2
            path.unlink()
            np.savez(
                path,
                **arrays,
                params=np.asarray(json.dumps(params, sort_keys=True, separators=(",", ":"))),
                sha256=np.asarray(good_hash),
            )
            return
        path.unlink()
        cache_mod.write_cache(path, arrays, params)  # a self-consistent file: only the checks can refuse it


@pytest.mark.parametrize(
    "how,why",
    [
        ("torn", "cannot be read"),
        ("empty", "cannot be read"),
        ("other-setting", "other parameters"),
        ("nan", "gamma = nan"),
        ("edited", "content hash"),
    ],
)
def test_a_bad_flow_cache_is_moved_aside_with_a_warning_and_recomputed(tmp_path, how, why):
    fresh = _flow(None)
    assert _flow(tmp_path)[:2] == fresh[:2]
    path = _only(tmp_path.glob("flow_*.npz"))
    assert _flow(tmp_path)[2]["cached"] and _flow(tmp_path)[2]["cache_sha256"] == fresh[2]["cache_sha256"]
    _bad_cache(path, how)
    with pytest.warns(cache_mod.CacheWarning, match=why):
        g, r, info = _flow(tmp_path)
    assert (g, r) == fresh[:2] and not info["cached"] and info["cache_sha256"] == fresh[2]["cache_sha256"]
    assert len(list(tmp_path.glob("flow_*.npz.rejected-*"))) == 1  # kept aside, not deleted
    assert _flow(tmp_path)[2]["cached"]  # the repaired cache is used again


@pytest.mark.parametrize(
    "how,why",
    [("torn", "cannot be read"), ("zero", "A = 0"), ("other-setting", "other parameters"), ("edited", "content hash")],
)
def test_a_bad_pretrained_cache_is_moved_aside_and_recomputed(tmp_path, how, why):
    A0, info0 = tr.pretrained_attention(_SMALL, **_SIM_KW, cache=tmp_path)
    path = _only(tmp_path.glob("upstream_*.npz"))
    _bad_cache(path, how)
    with pytest.warns(cache_mod.CacheWarning, match=why):
        A, info = tr.pretrained_attention(_SMALL, **_SIM_KW, cache=tmp_path)
    np.testing.assert_array_equal(A, A0)
    assert info["cache_sha256"] == info0["cache_sha256"] and not info["cached"]


def test_rows_made_from_a_cache_carry_its_hash_and_are_recomputed_when_it_changes(tmp_path):
    opts = tr.TransferOptions(
        Ns=(1, 2),
        seeds=1,
        N_test=64,
        extra=1,
        ceiling_samples=500,
        upstream_N=64,
        upstream_steps=5,
        sim_max_D=16,
        baseline_max_N=2,
    )
    kw = dict(Ds=(16,), opts=opts, methods=("pretrained-sim",), out=tmp_path, progress=None, B=10)
    first: list = []
    tr.run(tr.base_setting(), compute=_fake_compute(first), **kw)
    again: list = []
    tr.run(tr.base_setting(), compute=_fake_compute(again), **kw)
    assert first and again == []  # the same cache: the rows are reused
    path = _only((tmp_path / "upstream_cache").glob("upstream_*.npz"))
    with np.load(path) as z:
        arrays = {k: np.array(z[k]) for k in z.files}
    params = json.loads(str(arrays.pop("params")))
    arrays.pop("sha256")
    arrays["A"] = arrays["A"] + 0.5  # another valid pre-trained Â (e.g. a repaired cache)
    path.unlink()
    cache_mod.write_cache(path, arrays, params)
    after: list = []
    tr.run(tr.base_setting(), compute=_fake_compute(after), **kw)
    assert len(after) == len(first)  # rows of the old Â are not reused


# ---- transfer rows: the store, not the CSV --------------------------------------------------------------
def _small_run(out, calls, **extra):
    opts = tr.TransferOptions(Ns=(1, 2, 4), seeds=2, N_test=64, extra=1, ceiling_samples=500)
    return tr.run(
        tr.base_setting(),
        (16,),
        opts,
        methods=("oracle", "init"),
        out=out,
        progress=None,
        B=10,
        compute=_fake_compute(calls),
        **extra,
    )


@pytest.mark.parametrize("garbage", ["abc", "0.1234"])
def test_transfer_rows_csv_is_an_export_never_read_back(tmp_path, garbage):
    calls: list = []
    ref = _small_run(tmp_path, calls)[0]
    csv_path = tmp_path / "transfer_rows.csv"
    rows = pd.read_csv(csv_path)
    assert len(rows) == len(calls) and rows["key"].str.fullmatch("[0-9a-f]{64}").all()
    assert rows["prov_numerics_version"].notna().all() and "prov_git_commit" in rows
    rows["acc_f"] = garbage  # the edits: text, or a plausible number
    rows.to_csv(csv_path, index=False)
    more: list = []
    raw = _small_run(tmp_path, more)[0]  # no traceback, and the CSV's values are not used
    assert more == []
    pd.testing.assert_frame_equal(raw, ref)
    assert pd.read_csv(csv_path)["acc_f"].tolist() == ref["acc_f"].tolist()  # the export is rewritten


def test_a_transfer_rows_csv_without_a_store_is_moved_aside_and_recomputed(tmp_path):
    calls: list = []
    ref = _small_run(tmp_path / "ref", calls)[0]
    out = tmp_path / "old"
    out.mkdir()
    (out / "transfer_rows.csv").write_text("key,D,method,N_tilde,seed,acc_f,acc_y,wall_s\nabc,16,init,1,0,abc,0.5,0\n")
    with pytest.warns(UserWarning, match="moved to"):
        raw = _small_run(out, [])[0]
    pd.testing.assert_frame_equal(raw, ref)
    assert (out / "transfer_rows.legacy.csv").exists()


def test_a_tampered_stored_row_is_moved_aside_and_recomputed(tmp_path):
    import sqlite3

    calls: list = []
    ref = _small_run(tmp_path, calls)[0]
    con = sqlite3.connect(tmp_path / "results.sqlite")
    key, data = con.execute("SELECT key, data FROM rows WHERE scope = 'transfer_rows' LIMIT 1").fetchone()
    row = json.loads(data)
    con.execute("UPDATE rows SET data = ? WHERE key = ?", (json.dumps({**row, "acc_f": "abc"}), key))
    con.commit()
    con.close()
    more: list = []
    with pytest.warns(UserWarning, match="1 invalid"):
        raw = _small_run(tmp_path, more)[0]
    assert len(more) == 1
    pd.testing.assert_frame_equal(raw, ref)


def test_every_transfer_table_carries_provenance(tmp_path):
    _small_run(tmp_path, [])
    for name in ("rows", "raw", "summary", "target", "slopes", "upstream", "levels"):
        df = pd.read_csv(tmp_path / f"transfer_{name}.csv")
        assert {"prov_git_commit", "prov_numerics_version", "prov_created_utc"} <= set(df.columns), name


def test_checks_flag_names_the_verify_command(capsys):
    with pytest.raises(SystemExit) as e:
        transfer_main(["--checks"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "python -m theorydyn.verify --only transfer --quick" in err


def test_importing_transfer_loads_neither_the_scan_nor_the_claims():
    code = (
        "import sys, theorydyn.transfer, theorydyn.transfer.__main__; "
        "print(sorted(m for m in sys.modules if m.startswith(('theorydyn.scan', 'theorydyn.claims'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# ---- kill -9 at random moments of a transfer run ---------------------------------------------------------
def _transfer_quietly(out):
    """A small transfer run; its two figures are stubbed (one atomic write each): matplotlib's layout
    would take most of the time, and the figures are not rows."""
    import warnings

    from theorydyn.infra.atomic import write_text
    from theorydyn.transfer import analysis

    real = analysis.save_figure
    analysis.save_figure = lambda draw, path, panels=1, format="png": write_text(path, "figure")

    opts = tr.TransferOptions(
        Ns=(1, 2, 4),
        seeds=2,
        N_test=128,
        extra=1,
        ceiling_samples=300,
        steps_v=10,
        upstream_N=64,
        upstream_steps=3,
        sim_max_D=16,
        flow_n_samples=100,
        baseline_max_N=4,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return tr.run(
                tr.base_setting(),
                (16,),
                opts,
                methods=("pretrained", "other-partition", "init"),
                out=out,
                progress=None,
                B=10,
            )
    finally:
        analysis.save_figure = real


@pytest.mark.slow
def test_kill_9_at_20_random_moments_of_a_transfer_run_then_a_rerun_gives_the_uninterrupted_tables(tmp_path):
    from conftest import kill_at_random_moments

    ref = _transfer_quietly(tmp_path / "ref")
    t0 = time.perf_counter()
    _transfer_quietly(tmp_path / "timing")
    full = time.perf_counter() - t0
    # forked children: the run uses no OpenMP (the simulator's parallel kernels, method pretrained-sim, would
    # abort a child forked from a process that used them; its cache is checked by the tests above)
    hits = kill_at_random_moments(_transfer_quietly, lambda i: (tmp_path / f"k{i}",), 20, duration=full)
    assert len(hits) == 20, hits
    for i in hits:
        got = _transfer_quietly(tmp_path / f"k{i}")
        for a, b in zip(ref[:4], got[:4], strict=True):  # raw, summary, target, slopes
            pd.testing.assert_frame_equal(
                a.drop(columns=["wall_s"], errors="ignore"), b.drop(columns=["wall_s"], errors="ignore")
            )
        up = ["gamma", "rho", "alpha", "err_f", "T2", "status"]
        pd.testing.assert_frame_equal(ref[4][up], got[4][up])
        assert len(pd.read_csv(tmp_path / f"k{i}" / "transfer_rows.csv")) == len(ref[0])


def test_a_symlinked_rows_csv_is_never_written_through(tmp_path):
    out = tmp_path / "out"
    target = link_to_precious(out / "transfer_rows.csv", tmp_path / "elsewhere.csv", "mine\n")
    with pytest.warns(RuntimeWarning, match="could not be written"):
        raw = _small_run(out, [])[0]
    assert target.read_text() == "mine\n" and len(raw) > 0  # the rows are computed and stored, the link untouched


def test_run_shows_one_overall_bar_over_the_d_method_pairs(tmp_path, capsys):
    s = tr.base_setting()
    opts = tr.TransferOptions(Ns=(1, 2), seeds=1, N_test=64, extra=0, ceiling_samples=1000)
    kw = dict(Ds=(16, 32), opts=opts, methods=("oracle", "init"), out=tmp_path, progress=None, B=20)
    tr.run(s, compute=_fake_compute([]), bar=True, **kw)
    err = capsys.readouterr().err
    assert "transfer:" in err and "/4 [" in err  # 2 D x 2 methods, one bar (redrawn at most every 0.5 s)
    tr.run(s, compute=_fake_compute([]), bar=False, **dict(kw, out=tmp_path / "quiet"))
    assert capsys.readouterr().err == ""


def test_the_named_runs_are_instances_of_the_one_config():
    """QUICK_RUN and FULL_RUN are TransferConfig instances (issue 40); the dictionaries QUICK and FULL, kept
    for the callers that read them, say the same sizes, and options_from turns them back into the instances."""
    from theorydyn.transfer.config import FULL_RUN, QUICK_RUN, TransferConfig

    assert isinstance(QUICK_RUN, TransferConfig) and isinstance(FULL_RUN, TransferConfig)
    assert tr.TransferOptions is TransferConfig  # the former name
    for named, old in ((QUICK_RUN, tr.QUICK), (FULL_RUN, tr.FULL)):
        assert all(getattr(named, k) == v for k, v in old.items())
        assert tr.options_from(old) == named
    with pytest.raises(ValueError, match="^eps must"):
        TransferConfig(eps=0.5)
    with pytest.raises(ValueError, match="^Ds must"):
        TransferConfig(Ds=(32, 32))
    with pytest.raises(ValueError, match="^method must be one of"):
        QUICK_RUN.replace(method="sgd")


def test_the_cli_flags_are_the_config_fields():
    """Each option's default, help and range live in TransferConfig: the flags show the field's help and
    the named runs' values, and a flag's converter refuses what the field's rule refuses."""
    import argparse

    from theorydyn.transfer.__main__ import build_parser
    from theorydyn.transfer.config import FULL_RUN, QUICK_RUN, TransferConfig

    acts = {a.dest: a for a in build_parser()._actions if a.help != argparse.SUPPRESS}  # not the old spellings
    for name in ("eta", "omega", "eps", "N_test", "upstream_N", "steps_v", "method", "target", "count", "Ds"):
        assert acts[name].help.startswith(TransferConfig.help_of(name)), name
    assert acts["eta"].default == TransferConfig.default("eta") and acts["omega"].default == QUICK_RUN.omega
    assert f"default {QUICK_RUN.N_test}; --full: {FULL_RUN.N_test}" in acts["N_test"].help
    with pytest.raises(argparse.ArgumentTypeError):
        acts["target"].type("1")
    assert acts["target"].type("None") is None and acts["target"].type("0.6") == 0.6


def test_the_upstream_base_names_the_field():
    from theorydyn.transfer.config import QUICK_RUN, idle_option

    s = Setting(D=64, C=4, nu=1 / 64)
    base, rule = QUICK_RUN.upstream_base(s)
    assert rule == "count" and base == tr.with_count(s, QUICK_RUN.count)
    assert QUICK_RUN.replace(count=None).upstream_base(s) == (s, "keep")
    with pytest.raises(ValueError, match="^Ds: each D must be a multiple of C=4"):
        QUICK_RUN.replace(Ds=(30,)).upstream_base(s)
    with pytest.raises(ValueError, match="^count: K = 100"):
        QUICK_RUN.replace(count=100.0).upstream_base(s)
    assert idle_option({"eta"}, ("logreg",), False).startswith("--eta: not used by logreg")
    assert idle_option({"eta", "count"}, ("pretrained",), False) is None
