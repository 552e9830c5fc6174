"""Transfer (Theorems 5.1, 5.2; docs/theory.md §5) and the logistic-regression baseline."""

import numpy as np
import pandas as pd
import pytest

from theorydyn import Setting, data, model
from theorydyn.transfer import run as tr
from theorydyn.transfer.logreg import fit_logreg, fit_logreg_cv, objective


def test_logreg_gradient_matches_central_differences():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 7))
    y = np.where(rng.random(30) < 0.5, -1, 1)
    wb = rng.normal(size=8)
    for lam in (0.0, 0.3):
        J, g = objective(wb, Z, y, lam)
        h = 1e-6
        num = np.array([(objective(wb + h * e, Z, y, lam)[0] - objective(wb - h * e, Z, y, lam)[0]) / (2 * h)
                        for e in np.eye(8)])
        np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-9)
        # and the value against a plain loop
        ref = np.mean([np.log1p(np.exp(-y[n] * (Z[n] @ wb[:-1] + wb[-1]))) for n in range(30)]) + 0.5 * lam * wb[:-1] @ wb[:-1]
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


def test_oracle_block_attention_transfers_better_than_attention_at_init():
    """Theorem 5.1 vs 5.2 at small Ñ: the block Â needs few samples, Â at init does not."""
    s = Setting(D=32, C=4)
    attn = {"oracle": tr.oracle_attention(s), "init": tr.init_attention(s, 1e-3, np.random.default_rng(7))}
    opts = tr.TransferOptions(Ns=(16,), seeds=3, N_test=2048, steps_v=150)
    raw = tr.transfer_curves(s, attn, opts, baselines=(), progress=None)
    acc = raw.groupby("method")["acc_f"].agg(["mean", "min", "max"])
    assert acc.loc["oracle", "min"] > 0.95
    assert acc.loc["oracle", "min"] > acc.loc["init", "max"] + 0.05


def test_transfer_curves_are_reproducible_and_tidy():
    s = Setting(D=16, C=4, q=0.25)
    opts = tr.TransferOptions(Ns=(8, 16), seeds=2, N_test=256, steps_v=30, steps_scratch=30)
    kw = dict(baselines=("scratch", "logreg"), progress=None)
    a = tr.transfer_curves(s, {"oracle": tr.oracle_attention(s)}, opts, **kw)
    b = tr.transfer_curves(s, {"oracle": tr.oracle_attention(s)}, opts, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["method"]) == {"oracle", "scratch", "logreg"}
    assert len(a) == 3 * 2 * 2 and a["acc_f"].between(0, 1).all()


def test_samples_to_target_interpolates_in_log_n_and_slopes_recover_a_power_law():
    rows = []
    for D in (16, 32, 64):
        for N in (8, 16, 32, 64, 128, 256):
            # accuracy crosses 0.9 exactly at N* = D (linear in log N between grid points)
            rows.append(dict(D=D, method="power", N_tilde=N, acc_f_mean=0.9 + 0.1 * np.log2(N / D)))
            rows.append(dict(D=D, method="flat", N_tilde=N, acc_f_mean=0.95))
            rows.append(dict(D=D, method="never", N_tilde=N, acc_f_mean=0.5))
    t = tr.samples_to_target(pd.DataFrame(rows), 0.9)
    p = t[t.method == "power"].sort_values("D")
    np.testing.assert_allclose(p["N_target"], [16, 32, 64], rtol=1e-12)
    assert (t[t.method == "flat"]["N_target"] == 8).all() and t[t.method == "flat"]["at_smallest"].all()
    assert t[t.method == "never"]["N_target"].isna().all() and not t[t.method == "never"]["reached"].any()
    sl = tr.loglog_slopes(t).set_index("method")
    assert sl.loc["never", "n_unreached"] == 3
    assert sl.loc["power", "slope"] == pytest.approx(1.0)
    assert sl.loc["flat", "slope"] == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(sl.loc["never", "slope"])


def test_plots_write_pngs(tmp_path):
    rows = [dict(D=D, method=m, N_tilde=N, seed=k, acc_f=0.6 + 0.01 * k + (0.3 if m == "a" else 0.0), acc_y=0.6)
            for D in (16, 32) for m in ("a", "b") for N in (8, 16) for k in range(2)]
    summ = tr.summarize(pd.DataFrame(rows))
    assert tr.plot_curves(summ, tmp_path / "c.png").stat().st_size > 1000
    assert tr.plot_samples_to_target(tr.samples_to_target(summ), tmp_path / "t.png").stat().st_size > 1000


@pytest.mark.parametrize("argv, word", [
    (["--Ds", "30"], "--Ds"),
    (["--methods", "pretrained,bogus"], "--methods"),
    (["--target", "1.5"], "--target"),
    (["--C", "5"], "C must divide D"),
    (["--seeds", "0"], "--seeds"),
])
def test_cli_rejects_bad_input_with_exit_2(argv, word, capsys):
    with pytest.raises(SystemExit) as e:
        tr.main(argv)
    assert e.value.code == 2
    assert word in capsys.readouterr().err


def test_run_end_to_end_writes_tables_and_reuses_the_cached_upstream_attention(tmp_path):
    s = Setting(D=16, C=4, q=0.25, nu=1 / 64)
    opts = tr.TransferOptions(Ns=(8, 16), seeds=1, N_test=256, steps_v=20, steps_scratch=10)
    kw = dict(Ds=(8, 16), opts=opts, upstream_N=256, upstream_steps=5, methods=("pretrained", "init", "other-partition"),
              out=tmp_path, progress=None)
    raw, summary, tgt, slopes, up = tr.run(Setting(D=8, C=2, q=0.25, nu=1 / 64), **kw)
    assert not up["cached"].any() and (up["status"] == "ok").all()
    for name in ("raw", "summary", "target", "slopes", "upstream"):
        assert (tmp_path / f"transfer_{name}.csv").exists()
    assert (tmp_path / "transfer_curves.png").exists() and (tmp_path / "transfer_target.png").exists()
    assert set(raw["D"]) == {8, 16} and set(raw["method"]) == {"pretrained", "init", "other-partition"}
    raw2, *_, up2 = tr.run(Setting(D=8, C=2, q=0.25, nu=1 / 64), **kw)
    assert up2["cached"].all()
    pd.testing.assert_frame_equal(raw, raw2)
    assert s.q == tr.setting_at(Setting(D=8, C=2, q=0.25, nu=1 / 64), 16).q  # q, ν kept across D
