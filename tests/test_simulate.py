"""The finite-sample simulator (Theorem 4.2, docs/theory.md §4): the fused step against independent routes,
reproducibility, divergence, float32 storage, the reduced dynamics as N → ∞, invariances, CLI."""

import functools
import json

import numpy as np
import pandas as pd
import pytest
from _fd import assert_gradient_matches_central_differences, random_problem
from hypothesis import given, settings
from hypothesis import strategies as st

from theorydyn import Setting, reduced
from theorydyn.core import data, model
from theorydyn.core.model import association
from theorydyn.core.phases import detect_phases
from theorydyn.core.result import Result, Status
from theorydyn.simulate import (
    attention_stats,
    init_params,
    plot_comparison,
    simulate,
    simulate_replicas,
    symmetry_breaking,
)
from theorydyn.simulate.__main__ import main
from theorydyn.simulate._kernel import FusedModel, risk_and_grad

_problem = functools.partial(random_problem, D=6, C=2, d=4, N=50, a_scale=0.5, v_scale=0.7)


def enumeration(s: Setting):
    """Every noiseless data point of Assumption 1 with its probability (X_j = z_j w*)."""
    z, y, w = data.enumerate_population(s)
    return data.embed(s, z), y, w


# ---- the fused step ---------------------------------------------------------------------------
@pytest.mark.parametrize("tau", [1.0, 1.7])
def test_fused_gradient_matches_central_differences(tau):
    s, b, A, v = _problem(tau=tau)
    assert_gradient_matches_central_differences(
        risk_and_grad, s, A, v, b, weights_seed=3, risk_rel=1e-13, atol=1e-9, rtol=1e-6
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fused_step_matches_model_risk_and_grad_for_every_replica(dtype):
    s, b, _, _ = _problem(D=8, C=4, d=5, N=333, seed=4, dtype=dtype)  # N not a multiple of the block
    rng = np.random.default_rng(9)
    R = 3
    A = rng.normal(scale=0.6, size=(R, s.D, s.D))
    V = rng.normal(scale=0.8, size=(s.d, R))
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    risk, err, gA, gV = fm.risk_grad(A, V)
    F = fm.forward(A, V)
    X64 = b.X.astype(np.float64)  # the same (rounded) data in float64 math
    for r in range(R):
        r0, gA0, gv0 = model.risk_and_grad(s, A[r], V[:, r], X64, b.y)
        F0 = model.forward(s, A[r], V[:, r], X64)
        if dtype == np.float64:
            assert risk[r] == pytest.approx(r0, rel=1e-12)
            assert err[r] == pytest.approx(np.mean(b.y * F0 <= 0), abs=1e-12)
            np.testing.assert_allclose(gA[r], gA0, rtol=1e-9, atol=1e-15)
            np.testing.assert_allclose(gV[:, r], gv0, rtol=1e-9, atol=1e-15)
        else:
            # float32 X is stepped in float32 arithmetic with float64 accumulation over samples: held
            # to float32 rounding, 1e-5 norm-wise on the gradients (≈ 200 roundings of 2⁻²⁴ at worst;
            # measured ≤ 3e-7; see tests/test_gdkernel.py, which also shows this tolerance rejects a
            # gradient missing one sample) and 1e-6 on the risk
            assert risk[r] == pytest.approx(r0, rel=1e-6)
            near0 = np.abs(b.y * F0) <= 1e-4 * np.abs(F0).max()  # margins whose sign float32 may flip
            assert abs(err[r] - np.mean(b.y * F0 <= 0)) <= np.mean(near0) + 1e-12
            assert np.linalg.norm(gA[r] - gA0) <= 1e-5 * np.linalg.norm(gA0)
            assert np.linalg.norm(gV[:, r] - gv0) <= 1e-5 * np.linalg.norm(gv0)
        np.testing.assert_allclose(F[:, r], F0, rtol=1e-10, atol=1e-13)  # forward: float64 arithmetic
    # one replica alone takes the R = 1 path of the kernel: same numbers
    r1, _, gA1, gV1 = fm.risk_grad(A[1:2], V[:, 1:2])
    np.testing.assert_allclose(gA1[0], gA[1], rtol=1e-12, atol=1e-16)
    np.testing.assert_allclose(gV1[:, 0], gV[:, 1], rtol=1e-12, atol=1e-16)


def test_fused_model_never_copies_x_and_rejects_strided_x():
    s, b, _, _ = _problem(N=20)
    fm = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    assert fm.X is b.X or np.shares_memory(fm.X, b.X)
    with pytest.raises(ValueError, match="C-contiguous"):
        FusedModel(b.X[::2], b.y[::2], s.p, s.nu, s.tau)


# ---- measurements ------------------------------------------------------------------------------
def test_association_on_hand_built_attention():
    s = Setting(D=6, C=2)  # sets {0,1}, {2,3}, {4,5}
    A = model.symmetric_attention(s, 0.5, -0.1)
    assert association(s, A) == 1.0
    A[0, 1] = -0.2  # row 0: its partner is now below the cross entries
    assert association(s, A) == pytest.approx(5 / 6)
    A[2, 5] = 0.5  # row 2: a cross entry ties with the in-set one → not determined → not associated
    assert association(s, A) == pytest.approx(4 / 6)
    A[4, 4] = -5.0  # the diagonal counts (Definition 2.2): row 4's own entry falls out of its top C
    assert association(s, A) == pytest.approx(3 / 6)
    assert association(s, np.zeros((6, 6))) == 0.0
    # against an explicit top-C computation on random matrices
    rng = np.random.default_rng(0)
    for _ in range(20):
        A = rng.normal(size=(6, 6))
        top = np.argsort(-A, axis=1)[:, : s.C]
        expect = np.mean([set(top[i]) == set(s.sets[s.set_of[i]]) for i in range(6)])
        assert association(s, A) == pytest.approx(expect)


def test_attention_stats_and_symmetry_breaking():
    s = Setting(D=8, C=4, d=3)
    A = model.symmetric_attention(s, 0.3, -0.05)
    st_ = attention_stats(s, A, np.array([2.0, 0.0, 0.0]))
    assert st_["gamma"] == pytest.approx(0.3) and st_["in_std"] == pytest.approx(0, abs=1e-15)
    assert st_["rho"] == pytest.approx(-0.05) and st_["cross_absmax"] == pytest.approx(0.05)
    assert st_["row_spread_max"] == 0 and st_["association"] == 1 and st_["cos_v"] == 1 and st_["alpha"] == 2
    lam, gam, _ = model.softmax_values(s, 0.3, -0.05)  # the three-value form: in_mass = Λ + (C−1)Γ
    assert st_["in_mass"] == pytest.approx(lam + (s.C - 1) * gam, rel=1e-12)
    sb = symmetry_breaking(s, A)
    assert sb["ratio_max_to_median_row"] == pytest.approx(1) and sb["top_row_share"] == pytest.approx(0.25)
    A[0, 1:4] = 3.0  # one query row per set takes large in-set logits
    A[4, 5:8] = 3.0
    st_ = attention_stats(s, A, np.array([1.0, 1.0, 0.0]))
    assert st_["row_spread_max"] == 0 and st_["row_in_max"] == pytest.approx(3.0)
    assert st_["cos_v"] == pytest.approx(2**-0.5)
    sb = symmetry_breaking(s, A)
    assert sb["set_top_over_rest_median"] == pytest.approx(10.0)
    assert sb["frac_sets_top_gt_2x_rest"] == 1.0
    A[1, 0] = 1.0  # row 1's in-set entries now differ by 1 − 0.3
    assert attention_stats(s, A, np.ones(3))["row_spread_max"] == pytest.approx(0.7)


# ---- the run -------------------------------------------------------------------------------------
SMALL = dict(N=1024, eta=1.0, steps=60, record_every=10, n_test=512, dense_until=0)


def test_same_seed_is_bit_identical_and_seeds_differ():
    s = Setting(D=8, C=2)
    a, b = simulate(s, seed=3, **SMALL), simulate(s, seed=3, **SMALL)
    pd.testing.assert_frame_equal(a.trajectory, b.trajectory, check_exact=True)
    assert np.array_equal(a.A, b.A) and np.array_equal(a.v, b.v)
    assert a.ok and list(a.trajectory["step"]) == [0, 10, 20, 30, 40, 50, 60]
    c = simulate(s, seed=4, **SMALL)
    assert not np.array_equal(a.v, c.v)
    ra = simulate_replicas(s, seed=3, replicas=2, **SMALL)
    rb = simulate_replicas(s, seed=3, replicas=2, **SMALL)
    for x, y in zip(ra, rb, strict=True):
        pd.testing.assert_frame_equal(x.trajectory, y.trajectory, check_exact=True)


def test_shared_vocabulary_horizon_init_and_one_return_type():
    """``s_max`` (the horizon in s = η·t) and ``init`` = (α, γ, ρ) mean what they mean in
    reduced.integrate; ``simulate`` returns one Result, ``simulate_replicas`` a list."""
    s = Setting(D=8, C=2)
    kw = {k: v for k, v in SMALL.items() if k not in ("eta", "steps")}
    by_steps = simulate(s, seed=2, eta=0.5, steps=60, **kw)
    by_horizon = simulate(s, seed=2, eta=0.5, s_max=30.0, **kw)
    assert isinstance(by_horizon, Result) and by_horizon.options["steps"] == 60
    pd.testing.assert_frame_equal(by_steps.trajectory, by_horizon.trajectory, check_exact=True)
    assert by_horizon.trajectory["s"].iloc[-1] == 30.0
    assert simulate(s, seed=2, eta=0.5, s_max=30.0, steps=4, **kw).options["steps"] == 4  # steps wins, as in reduced
    assert simulate(s, seed=2, eta=0.7, s_max=1.0, **kw).options["steps"] == 2  # ⌈s_max/η⌉
    with pytest.raises(ValueError, match="s_max"):
        simulate_replicas(s, eta=[0.5, 1.0], s_max=10.0, **kw)
    with pytest.raises(ValueError, match="s_max"):
        simulate(s, s_max=-1.0, **kw)

    a, g, r = 0.4, 0.02, -0.01
    by_init = simulate(s, seed=2, init=(a, g, r), **SMALL)
    by_arrays = simulate(s, seed=2, A0=model.symmetric_attention(s, g, r), v0=a * s.w_star, **SMALL)
    pd.testing.assert_frame_equal(by_init.trajectory, by_arrays.trajectory, check_exact=True)
    assert by_init.trajectory["alpha"].iloc[0] == pytest.approx(a, rel=1e-15)
    assert by_init.trajectory["gamma"].iloc[0] == pytest.approx(g)
    assert by_init.trajectory["rho"].iloc[0] == pytest.approx(r)
    with pytest.raises(ValueError, match="either init"):
        simulate(s, init=(a, g, r), v0=s.w_star, **SMALL)
    with pytest.raises(ValueError, match="init must be"):
        simulate(s, init=(a, g), **SMALL)
    with pytest.raises(TypeError):
        simulate(s, replicas=2, **SMALL)  # several runs: simulate_replicas
    assert all(isinstance(x, Result) for x in simulate_replicas(s, replicas=2, **dict(SMALL, steps=2)))


def test_replicas_equal_separate_runs():
    """R initialisations and learning rates sharing one X in one pass = R separate runs."""
    s = Setting(D=8, C=2)
    reps = simulate_replicas(
        s, seed=1, eta=[0.5, 1.0, 2.0], init_seeds=[1, 7, 9], **{k: v for k, v in SMALL.items() if k != "eta"}
    )
    for r, (eta, iseed) in enumerate(zip([0.5, 1.0, 2.0], [1, 7, 9], strict=True)):
        rng = np.random.default_rng(np.random.SeedSequence(iseed).spawn(3)[2])
        A0, v0 = init_params(s, 1e-3, rng)
        one = simulate(s, seed=1, A0=A0, v0=v0, **dict(SMALL, eta=eta))
        assert reps[r].trajectory["eta"].iloc[0] == eta
        np.testing.assert_allclose(reps[r].A, one.A, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(reps[r].v, one.v, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(reps[r].trajectory["risk"], one.trajectory["risk"], rtol=1e-10)


def test_float32_storage_tracks_float64():
    """Stated tolerance: with X stored in float32 (the step in float32 arithmetic, accumulated over
    samples in float64) the recorded trajectory agrees with float64 storage to 1e-5 relative
    (1e-7 absolute) over a phase-II run."""
    s = Setting(D=16, C=4)
    kw = dict(N=2048, eta=1.0, steps=300, record_every=50, n_test=1024, seed=2)
    r64, r32 = simulate(s, dtype="float64", **kw), simulate(s, dtype="float32", **kw)
    assert r64.options["dtype"] == "float64" and r32.options["dtype"] == "float32"
    for col in ("alpha", "cos_v", "gamma", "rho", "risk"):
        np.testing.assert_allclose(r32.trajectory[col], r64.trajectory[col], rtol=1e-5, atol=1e-7, err_msg=col)
    assert np.abs(r32.trajectory["err_y"] - r64.trajectory["err_y"]).max() <= 2 / 1024
    assert not np.array_equal(r32.v, r64.v)  # the storage really differed


def test_divergence_stops_at_its_step_and_keeps_the_trajectory():
    s = Setting(D=8, C=2)
    kw = dict(N=256, eta=300.0, record_every=1, n_test=128, seed=0)
    res = simulate(s, steps=100, **kw)
    k = res.stopped_step
    assert k is not None and 0 < k < 100
    assert res.status is Status.DIVERGED and res.message.endswith(f"at step {k}") and res.stopped_step == k
    assert list(res.trajectory["step"]) == list(range(k))  # every step before k, none after
    assert np.all(np.isfinite(res.A)) and np.all(np.isfinite(res.v))
    assert np.all(np.isfinite(res.trajectory["risk"]))
    # the same run stopped just before is healthy and ends where the diverged run kept its parameters
    ok = simulate(s, steps=k - 1, **kw)
    assert ok.status is Status.OK
    np.testing.assert_array_equal(ok.v, res.v)


def test_explicit_gaussian_data_has_no_f():
    s = Setting(D=8, C=2, d=4)
    X, y = data.sample_gaussian_cnn(s, 256, seed=0)
    Xt, yt = data.sample_gaussian_cnn(s, 128, seed=1)
    res = simulate(s, eta=0.5, steps=20, record_every=10, train=(X, y), test=(Xt, yt))
    t = res.trajectory
    assert t["err_f"].isna().all() and t["err_y"].notna().all()
    F = model.forward(s, res.A, res.v, Xt)
    assert t["err_y"].iloc[-1] == pytest.approx(np.mean(yt * F <= 0))
    assert res.options["N"] == 256 and res.options["n_test"] == 128


def test_bad_options_are_named():
    s = Setting(D=8, C=2)
    for kw, word in (
        (dict(N=0), "N"),
        (dict(eta=-1.0), "eta"),
        (dict(steps=-1), "steps"),
        (dict(omega=float("nan")), "omega"),
        (dict(record_every=0), "record_every"),
        (dict(dtype="float16"), "dtype"),
    ):
        with pytest.raises(ValueError, match=word):
            simulate(s, **kw)


# ---- against the population dynamics --------------------------------------------------------------
def test_population_gd_by_enumeration_is_the_reduced_recursion():
    """GD on the exhaustive enumeration (sample weights = probabilities) from the idealized init is
    population GD; by Lemmas 4.1-4.2 it equals the reduced (α, γ, ρ) recursion exactly."""
    s = Setting(D=6, C=2, q=0.5)
    X, y, w = enumeration(s)
    eta, steps = 2.0, 40
    start = (s.alpha0, 0.0, 0.0)  # the idealized init, in the solvers' shared vocabulary
    res = simulate(s, eta=eta, steps=steps, record_every=1, train=(X, y, w), test=(X, y), init=start)
    red = reduced.integrate(
        s, method="gd", eta=eta, steps=steps, expectation="exact", n_points=steps + 1, init=start
    ).trajectory
    t = res.trajectory.set_index("step")
    for _, row in red.iterrows():
        k = int(round(row["step"]))
        assert t.loc[k, "alpha"] == pytest.approx(row["alpha"], rel=1e-9)
        assert t.loc[k, "gamma"] == pytest.approx(row["gamma"], rel=1e-8, abs=1e-13)
        assert t.loc[k, "rho"] == pytest.approx(row["rho"], rel=1e-8, abs=1e-13)
        assert t.loc[k, "risk"] == pytest.approx(row["risk"], rel=1e-10)
        assert t.loc[k, "in_mass"] == pytest.approx(row["in_mass"], rel=1e-8)  # same schema, same meaning
    assert t["gamma"].iloc[-1] > 1e-3  # γ really moved


@settings(max_examples=6, deadline=None)
@given(alpha=st.floats(0.2, 1.5), gamma=st.floats(-0.5, 0.5), rho=st.floats(-0.5, 0.5))
def test_population_gd_keeps_the_three_value_form(alpha, gamma, rho):
    """Lemma 4.1: from any symmetric point, population GD stays symmetric (in-set entries equal,
    cross-set entries equal, v ∥ w*) — on the exact enumeration, not an approximation."""
    s = Setting(D=6, C=2, q=0.5)
    X, y, w = enumeration(s)
    res = simulate(
        s, eta=1.0, steps=25, record_every=25, train=(X, y, w), test=(X[:4], y[:4]), init=(alpha, gamma, rho)
    )
    scale = 1 + np.abs(res.A).max()
    assert np.ptp(res.A[s.in_set_mask]) < 1e-12 * scale
    assert np.ptp(res.A[s.cross_set_mask]) < 1e-12 * scale
    assert np.all(np.diag(res.A) == s.beta)
    assert np.linalg.norm(res.v - (res.v @ s.w_star) * s.w_star) < 1e-12 * np.linalg.norm(res.v)
    assert abs(res.A[s.in_set_mask][0] - gamma) > 1e-8  # it moved


@pytest.mark.slow
def test_large_N_tracks_the_reduced_dynamics(tmp_path):
    """Semi-realistic comparison (docs/theory.md §4): with the idealized init, the simulator's (α, γ, ρ) tend
    to the reduced trajectory as N grows (finite-sample error ~ N^{-1/2})."""
    from theorydyn.experiments.semirealistic import compare_with_reduced

    s = Setting(D=8, C=2)
    tab, curves = compare_with_reduced(s, Ns=(256, 16384), eta=2.0, steps=60, seeds=(0, 1), n_test=2048, record_every=5)
    fig = plot_comparison(tab, curves)
    assert len(fig.axes) == 4 and fig.axes[0].get_xscale() == "log"
    assert set(curves) == {"reduced", "N=256", "N=16384"}
    g = tab.groupby("N").mean(numeric_only=True)
    for col in ("gap_alpha", "gap_gamma", "gap_rho"):
        assert g.loc[16384, col] < 0.5 * g.loc[256, col], col
    assert g.loc[16384, "gap_alpha"] < 0.03 * curves["reduced"]["alpha"].max()
    assert curves["reduced"]["gamma"].iloc[-1] > 5 * g.loc[16384, "gap_gamma"]  # the signal is larger than the gap


# ---- invariance ---------------------------------------------------------------------------------------
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_gd_is_equivariant_under_a_permutation_of_the_patches(seed):
    """Permuting the patches, A's rows/columns and the sets together permutes the whole GD run."""
    s = Setting(D=8, C=2, d=4)
    rng = np.random.default_rng(seed)
    b = data.sample(s, 64, seed=seed % 997)
    bt = data.sample(s, 32, seed=seed % 991 + 1)
    perm = rng.permutation(s.D)
    inv = np.argsort(perm)
    sp = s.replace(partition=[[int(inv[i]) for i in S] for S in s.sets])
    A0 = rng.normal(scale=0.3, size=(s.D, s.D))
    v0 = rng.normal(scale=0.5, size=s.d)
    kw = dict(eta=0.5, steps=15, record_every=5)
    r = simulate(s, train=(b.X, b.y), test=(bt.X, bt.y), A0=A0, v0=v0, **kw)
    rp = simulate(
        sp,
        train=(np.ascontiguousarray(b.X[:, perm]), b.y),
        test=(np.ascontiguousarray(bt.X[:, perm]), bt.y),
        A0=A0[np.ix_(perm, perm)],
        v0=v0,
        **kw,
    )
    np.testing.assert_allclose(rp.A, r.A[np.ix_(perm, perm)], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(rp.v, r.v, rtol=1e-9, atol=1e-12)
    for col in ("gamma", "rho", "association", "risk", "err_y"):
        np.testing.assert_allclose(rp.trajectory[col], r.trajectory[col], rtol=1e-9, atol=1e-12, err_msg=col)


# ---- CLI ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, word",
    [
        (["--N", "0"], "N"),
        (["--eta", "-1"], "eta"),
        (["--dtype", "float16"], "dtype"),
        (["--record-every", "0"], "record-every"),
        (["--D", "7", "--C", "2"], "C"),
        (["--omega", "nan"], "omega"),
    ],
)
def test_cli_bad_values_exit_2_naming_the_rule(argv, word, capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        main(argv + ["--out", str(tmp_path)])
    assert e.value.code == 2
    assert word in capsys.readouterr().err


def test_cli_writes_trajectory_summary_and_figure(tmp_path):
    rc = main(
        [
            "--D",
            "8",
            "--C",
            "2",
            "--N",
            "256",
            "--eta",
            "1",
            "--steps",
            "12",
            "--record-every",
            "4",
            "--n-test",
            "128",
            "--dense-until",
            "2",
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert rc == 0
    stem = "simulate_D8_C2_N256_eta1_steps12_record-every4_n-test128_dense-until2"  # named by what made it
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{stem}.csv", f"{stem}.json", f"{stem}.png"]
    t = pd.read_csv(tmp_path / f"{stem}.csv")
    assert list(t["step"]) == [0, 1, 2, 4, 8, 12]
    for col in (
        "s",
        "alpha",
        "cos_v",
        "gamma",
        "in_std",
        "rho",
        "cross_std",
        "cross_absmax",
        "in_mass",
        "row_spread_max",
        "association",
        "risk",
        "err_y",
        "err_f",
        "amb_f",
        "rho",
        "err_y",
        "err_f",
    ):
        assert col in t
    summ = json.loads((tmp_path / f"{stem}.json").read_text())
    assert summ["status"] == "ok" and "phases" in summ and "symmetry_breaking_final" in summ
    png = (tmp_path / f"{stem}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_simulator_phases_on_a_hand_built_trajectory():
    """The one phase detector on a simulator-shaped trajectory whose crossings are known by hand."""
    t = pd.DataFrame(
        dict(
            step=np.arange(0, 100, 10),
            s=np.arange(0, 100, 10) * 2.0,
            alpha=[0.0, 3.0, 3.7, 4.0, 3.9, 3.5, 3.0, 2.8, 2.7, 2.7],
            cos_v=[0.1, 0.99, 0.95, 0.9, 0.85, 0.9, 0.95, 0.97, 0.96, 0.96],
            gamma=[0.0, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 1.2, 1.3, 1.4],
            rho=[0.0, -0.01, -0.02, -0.04, -0.06, -0.08, -0.1, -0.1, -0.1, -0.1],
            cross_absmax=[0.003, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.5, 0.5],
            association=[0.0, 0.1, 0.2, 0.4, 0.8, 0.95, 1.0, 0.9, 0.9, 0.9],
            err_y=[0.5, 0.15, 0.15, 0.14, 0.12, 0.08, 0.04, 0.025, 0.019, 0.01],
            err_f=[0.5, 0.15, 0.15, 0.14, 0.12, 0.08, 0.03, 0.019, 0.015, 0.01],
        )
    )
    ph = detect_phases(t)
    # T1: γ crosses max_t |ρ| = 0.1 at the record s = 60 exactly (γ = 0.1 there is not > 0.1):
    # interpolated between s = 60 (0.1) and s = 80 (0.2)
    assert ph.T1 == pytest.approx(60.0) and ph.plateau_alpha == 4.0
    assert ph.T0 == pytest.approx(20 + 20 * (3.6 - 3.0) / 0.7)  # α crosses 0.9·4 between s = 20 and 40
    # γ − cross_absmax: −0.1 at s = 80, +0.1 at s = 100 → crossing at 90
    assert ph.T1_entrywise == pytest.approx(90.0)
    assert ph.T_assoc == pytest.approx(80 + 20 * (0.9 - 0.8) / 0.15) and ph.assoc_peak == 1.0 and ph.assoc_peak_s == 120
    assert ph.T2 == pytest.approx(120 + 20 * (0.03 - 0.02) / 0.011)  # err_f crosses 2% between s = 120 and 140
    assert ph.cos_v_min == 0.85 and ph.cos_v_min_s == 80.0
    assert ph.cos_v_peak_before_min == 0.99 and ph.cos_v_max_after_min_s == 140.0
    assert ph.in_steps(2.0)["T1"] == pytest.approx(30.0)


def test_s_grid_records_the_times_reduced_gd_records():
    """``s_grid`` means in simulate what it means in reduced.integrate(method="gd"): the times s
    rounded to whole steps, the run ending at the last; the numbers are those of the default recording."""
    s = Setting(D=8, C=2)
    kw = dict(N=512, n_test=256, seed=5)
    full = simulate(s, eta=0.5, steps=20, record_every=1, dense_until=0, **kw)
    grid = [0.0, 1.2, 3.0, 7.4, 10.0]
    res = simulate(s, eta=0.5, s_grid=grid, **kw)
    red = reduced.integrate(s, method="gd", eta=0.5, s_grid=grid, n_samples=100).trajectory
    assert list(res.trajectory["step"]) == list(red["step"].astype(int)) == [0, 2, 6, 15, 20]
    assert res.options["steps"] == 20 and res.options["s_grid"] == grid
    chosen = full.trajectory.set_index("step").loc[[0, 2, 6, 15, 20]].reset_index()
    pd.testing.assert_frame_equal(res.trajectory, chosen[res.trajectory.columns], check_exact=True)
    reps = simulate_replicas(s, eta=[0.5, 1.0], s_grid=[0.0, 2.0, 4.0], steps=8, **kw)
    assert [list(r.trajectory["step"]) for r in reps] == [[0, 4, 8], [0, 2, 4]]
    with pytest.raises(ValueError, match="s_grid"):
        simulate(s, s_grid=[-1.0, 2.0], **kw)
