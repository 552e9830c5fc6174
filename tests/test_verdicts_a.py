"""Planted counter-cases for the verdicts of issue 30 (Theorem 4.2 along the run, N*(D), Lemma 4.2's
semi-realistic closeness, Lemma 4.3 across D): each verdict procedure is run on planted data on which
it must give PASS, and on planted data on which the same procedure must give FAIL."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorydyn.claims import persistence as pe
from theorydyn.claims import semirealistic as sr
from theorydyn.experiments import measure as me
from theorydyn.experiments import semirealistic as xsr


def _gaps(Ns, law, seeds=3, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(seeds):
        for N in Ns:
            g = law(N) * float(np.exp(0.05 * rng.standard_normal()))
            rows.append(dict(N=N, seed=k, gap_rel=g, rel_alpha=g, rel_gamma=g / 2, rel_rho=g / 3))
    return pd.DataFrame(rows)


def test_closeness_verdict_flips_on_a_gap_that_does_not_shrink():
    """A gap ∝ N^-1/2 PASSes (the exponent's interval below 0, the fit recovers -1/2 to 0.05); a gap
    constant in N, and one growing as N^0.2, FAIL under the same procedure."""
    Ns = (2048, 4096, 8192, 16384)
    rows = sr.closeness_rows(_gaps(Ns, lambda N: 3 * N**-0.5), {}, "[planted]")
    assert str(rows[0].verdict) == "PASS" and abs(rows[0].measured + 0.5) < 0.05, rows[0]
    assert all(str(c.verdict) == "INFO" for c in rows[1:])
    for law in (lambda N: 0.05 + 0 * N, lambda N: 0.01 * N**0.2):
        r = sr.closeness_rows(_gaps(Ns, law), {}, "[planted]")[0]
        assert str(r.verdict) == "FAIL", r


def test_relative_gaps_scale_by_the_reduced_trajectory():
    """gap_alpha is divided by max|alpha_inf|, gap_gamma and gap_rho by max|gamma_inf - rho_inf|."""
    red = pd.DataFrame(dict(s=[0, 1, 2], alpha=[0.1, 0.5, -0.2], gamma=[0, 1.0, 2.0], rho=[0, -0.5, -1.0]))
    tab = pd.DataFrame(dict(N=[4], seed=[0], gap_alpha=[0.05], gap_gamma=[0.3], gap_rho=[0.6]))
    out = xsr.relative_gaps(tab, red).iloc[0]
    assert out["rel_alpha"] == pytest.approx(0.1) and out["rel_gamma"] == pytest.approx(0.1)
    assert out["gap_rel"] == pytest.approx(0.2)


def _traj(assoc, ds=10.0):
    a = np.asarray(assoc, float)
    return pd.DataFrame(dict(s=np.arange(len(a)) * ds, association=a))


def test_window_summary_reads_first_last_peak_and_fraction():
    """Records every 10 in s; T_a = 30, k = 2: the window is s = 30..60 (4 records)."""
    t = _traj([0.2, 0.8, 1.0, 1.0, 0.9, 1.0, 1.0, 0.95])
    w = me.window_summary(t, 30.0, 2.0)
    assert (w["first_s"], w["last_s"], w["peak"], w["frac"], w["covered"]) == (20.0, 60.0, 1.0, 0.75, 1.0)
    # a run that stops at s = 40 covers a third of 30..60: its frac is scaled by it
    assert me.window_summary(_traj([0, 0, 0, 1, 1]), 30.0, 2.0)["frac"] == pytest.approx(1 / 3)


def _window_rows(trajs, T_a, eta, ks, claim, params, **kw):
    """Theorem 4.2's window rows of these trajectories, as the claim makes them: each run read by
    experiments.measure.window_summary, judged by claims.persistence.windows_rows."""
    windows = {k: [me.window_summary(t, T_a, k) for t in trajs] for k in ks}
    return pe.windows_rows(windows, T_a, eta, claim, params, **kw)


def test_window_rows_flip_when_association_comes_and_goes():
    """Theorem 4.2 along the run: association complete over [T_a, 3 T_a] in every seed PASSes; one
    seed losing it at 2 T_a (the audit's peak-then-fall) FAILs the longest window while the shorter
    [T_a, 1.5 T_a] stays INFO; out of scope stays OUT_OF_SCOPE; the peak is INFO."""
    T_a, eta = 100.0, 10.0
    n = 40  # records at s = 0, 10, ..., 390
    hold = [0.5] * 9 + [1.0] * (n - 9)
    comes_goes = [0.5] * 9 + [1.0] * 10 + [0.9] * (n - 19)  # lost from s = 190 on
    good = _window_rows([_traj(hold)] * 3, T_a, eta, (1.5, 3.0), "T", {})
    assert [str(c.verdict) for c in good[:2]] == ["INFO", "PASS"]
    assert "steps 10..30" in good[1].quantity and good[1].params["k"] == 3.0
    bad = _window_rows([_traj(hold), _traj(hold), _traj(comes_goes)], T_a, eta, (1.5, 3.0), "T", {})
    assert [str(c.verdict) for c in bad[:2]] == ["INFO", "FAIL"]
    assert bad[1].measured < 1 and "0.429" in bad[1].note  # 9 of the 21 records of s = 100..300 hold in seed 3
    assert [c.quantity.split(" ")[0] for c in bad[2:]] == ["first", "last", "peak"]
    assert all(str(c.verdict) == "INFO" for c in bad[2:])
    assert bad[3].note.startswith("per seed (steps): 39, 39, 18")
    oos = _window_rows([_traj(hold)] * 3, T_a, eta, (1.5, 3.0), "T", {}, scope="q too small")
    assert {str(c.verdict) for c in oos[:2]} == {"OUT_OF_SCOPE"}


@pytest.mark.parametrize(
    "regime, holds, verdict",
    [
        (("in", None), True, "PASS"),  # N >= N_50's bracket, association kept over the window
        (("in", None), False, "FAIL"),  # in regime, association lost: the claim fails
        (("below", (0.2, 0.4)), False, "OUT_OF_SCOPE"),  # below N_50, the margin grows with N
        (("below", (-0.3, -0.1)), False, "FAIL"),  # below N_50, the margin flat in N: not approaching
        (("below", (-0.3, -0.1)), True, "PASS"),  # kept anyway: the run's own evidence
    ],
)
def test_theorem_42_window_row_is_judged_in_its_regime(regime, holds, verdict):
    """The same window procedure as Theorem 4.2's (persistence.windows_rows with the claim's judge,
    forms.achievable): a run below N_50 is out of regime while more samples approach association, a FAIL
    when they do not, and an in-regime run that loses association FAILs."""
    from theorydyn.claims import forms

    T_a, eta = 100.0, 10.0
    hold = [0.5] * 9 + [1.0] * 31
    lose = [0.5] * 9 + [1.0] * 10 + [0.9] * 21
    where, slope = regime

    def judge(complete):
        return forms.achievable(where=where, complete=complete, margin_slope=slope, eta=eta, eta_inside=True)

    rows = _window_rows([_traj(hold), _traj(hold), _traj(hold if holds else lose)], T_a, eta, (1.5, 3.0), "T", {},
                          judge=judge)  # fmt: skip
    assert str(rows[1].verdict) == verdict and str(rows[1].form) == "achievable", rows[1]


def test_window_ks_drop_the_long_window_only_where_it_does_not_fit():
    from theorydyn.claims import theorem4 as t4

    quick, full = t4.SIZES.quick.ks, t4.SIZES.full.ks
    assert quick == full == (1.5, 3.0)  # N*(D)'s windows: one footing
    long = (1.5, 3.0, 10.0)
    assert me.window_ks(3000.0, 10.0, quick, 250) == (1.5, 3.0)
    assert me.window_ks(3000.0, 10.0, long, 1200) == (1.5, 3.0, 10.0)  # 3000 steps <= 6000
    assert me.window_ks(9000.0, 10.0, long, 1200) == (1.5, 3.0)  # 9000 steps > 6000
    assert me.window_ks(None, 10.0, long, 1200) == ()
    assert math.isnan(_window_rows([_traj([1.0])], 1.0, 1.0, (), "T", {})[0].measured)


@pytest.mark.parametrize(
    "law, verdict",
    [
        (lambda D: D / 20, "PASS"),  # order D
        (lambda D: D**0.3, "DEVIATES"),  # grows, slower than D/ln(d)^2 (exponent 0.548 over 32..256)
        (lambda D: 2.0 + 0 * D, "FAIL"),  # constant in D: does not grow (the audit's case)
        (lambda D: 50.0 / D, "FAIL"),  # falls with D
    ],
)
def test_lemma43_exponent_row_fails_a_ratio_that_does_not_grow(law, verdict):
    """Lemma 4.3 across D: the same fit PASSes a ratio of order D and FAILs one constant in D."""
    from theorydyn.claims import dynamics

    rng = np.random.default_rng(1)
    per_D = {D: [law(D) * (1 + 0.01 * rng.standard_normal()) for _ in range(5)] for D in (32, 64, 128, 256)}
    row = dynamics.lemma43_exponent_row(per_D, "q = C^2/D", {})
    assert str(row.verdict) == verdict, row


def test_lemma43_across_d_gives_both_readings_labelled(monkeypatch):
    """Two rows: q = C^2/D (the verdict) and the ledger's fixed q (INFO, naming what the rule would give)."""
    from theorydyn.claims import dynamics
    from theorydyn.core.setting import Setting
    from theorydyn.experiments import lemma43 as lemma43_exp

    qs = []

    def ratio(s, n, seed=0):
        qs.append((s.D, s.q))
        return s.D / 20 if s.q * s.D == 16 else 2.0  # order D at q = C^2/D, constant at fixed q

    monkeypatch.setattr(lemma43_exp, "lemma43_rate_ratio", ratio)
    a, b = dynamics.lemma43_across_D(Setting(D=64, C=4, q=0.25), n_samples=10, seeds=(0, 1, 2))
    assert "q = C^2/D" in a.quantity and str(a.verdict) == "PASS"
    assert "fixed q = 0.25" in b.quantity and str(b.verdict) == "INFO" and "would give FAIL" in b.note
    assert (256, 0.25) in qs and (256, 16 / 256) in qs


def test_exact_lemma_4_1_fails_on_a_population_that_is_not_exchangeable(monkeypatch):
    """Lemma 4.1 on (P), exact at D = 6: PASS on the true population; the same procedure on a population
    whose probabilities favour patch 0 (not exchangeable within sets) FAILs (the form breaks at O(1))."""
    from theorydyn.claims import lemma41 as l41
    from theorydyn.core import data
    from theorydyn.core.setting import Setting

    (ok,) = l41.check_lemma_4_1_population(Setting(), steps=60)
    assert str(ok.verdict) == "PASS" and "[D = 6, C = 2, q = 0.4, 60 steps" in ok.claim
    real = data.enumerate_population

    def skewed(sp):
        z, y, w = real(sp)
        w = w * (1.0 + 0.9 * (np.asarray(z)[:, 0] != 0))
        return z, y, w / w.sum()

    monkeypatch.setattr(data, "enumerate_population", skewed)
    (bad,) = l41.check_lemma_4_1_population(Setting(), steps=60)
    assert str(bad.verdict) == "FAIL" and bad.measured > 1e-3, bad.measured


# ---- N*(D) -----------------------------------------------------------------------------------
def test_isotonic_matches_brute_force_on_small_grids():
    """PAVA against an exhaustive search over non-decreasing sequences on a grid of levels."""
    import itertools

    from theorydyn.experiments import nstar as xns

    rng = np.random.default_rng(3)
    levels = np.linspace(0, 1, 21)
    for _ in range(20):
        y = rng.choice([0.0, 1 / 3, 2 / 3, 1.0], size=4)
        fit = xns.isotonic(y)
        assert np.all(np.diff(fit) >= -1e-12)
        best = min(
            (np.sum((np.array(c) - y) ** 2) for c in itertools.combinations_with_replacement(levels, 4)),
        )
        assert np.sum((fit - y) ** 2) <= best + 1e-12, (y, fit)


def test_n50_is_a_bracket_censored_at_the_grid_edges():
    """N_50 is a bracket (lo, hi] between two grid points, never a point, at any seed count: the first grid
    point where the isotonic success rate reaches 1/2 (checked against a direct reading of the rates); one never
    at 1/2 is censored above (N_50 > N_max); one at 1/2 from the start, below; a diverged run (nan) is left out
    and counted; a 0 -> 1 jump (the audit's D = 48) is (8192, 16384], not its geometric midpoint."""
    from theorydyn.experiments import nstar as xns

    Ns = (256, 1024, 4096, 16384)
    inside = np.array([[0, 0, 1, 1], [0, 1, 1, 1], [0, 0, 0, 1], [0, 0, 1, 1], [0, 0, 1, 1]], float)
    r = xns.n50(Ns, inside)
    rate = inside.mean(axis=0)  # already non-decreasing: the fit is the rates themselves
    j = int(np.argmax(rate >= 0.5))
    assert (r["lo"], r["hi"]) == (Ns[j - 1], Ns[j]) == (1024, 4096) and r["censored"] is None
    assert r["boot_lo"] <= r["lo"] and r["hi"] <= r["boot_hi"] and "N_50 in (1024, 4096]" in r["text"]
    jump = xns.n50((2048, 4096, 8192, 16384), np.array([[0, 0, 0, 1]] * 3, float))
    assert (jump["lo"], jump["hi"], jump["boot_lo"], jump["boot_hi"]) == (8192, 16384, 8192, 16384)
    above = xns.n50(Ns, np.zeros((5, 4)))
    assert above["censored"] == "above" and above["hi"] == math.inf and above["text"].startswith("N_50 > 16384")
    below = xns.n50(Ns, np.ones((5, 4)))
    assert below["censored"] == "below" and below["lo"] == 0.0 and below["text"].startswith("N_50 <= 256")
    odd = np.array([[1, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1]], float)
    r = xns.n50(Ns, odd)
    assert (r["lo"], r["hi"]) == (4096, 16384)
    div = inside.copy()
    div[:, 0] = np.nan  # every run at N = 256 diverged: the fit reads the converged ones, and counts the rest
    r = xns.n50(Ns, div)
    assert r["diverged"] == 5 and (r["lo"], r["hi"]) == (1024, 4096)


def _bracket(lo, hi, censored=None):
    return dict(lo=lo, hi=hi, boot_lo=lo, boot_hi=hi, censored=censored, text=f"N_50 in ({lo:g}, {hi:g}]")


def test_nstar_rate_passes_a_power_law_and_fails_acceleration():
    """The exponent row on brackets: N_50 = 4 D^2 read as its grid bracket at 4 D PASSes (a power law passes
    through every bracket, b = 2 among them); the same with the last D 4x higher (off the line by more than a
    bracket) FAILs as accelerating; exponential growth 2^(D/4) FAILs; fewer than 3 uncensored D: INFO."""
    from theorydyn.claims import nstar as ns

    def grid(v):  # the bracket of the doubling grid 2^k holding v
        k = math.ceil(math.log2(v))
        return _bracket(2.0 ** (k - 1), 2.0**k)

    Ds = (32, 48, 64, 80)
    row = ns.exponent_row({D: grid(4.0 * D**2) for D in Ds}, "q = C^2/D", {"k": 3.0})
    assert str(row.verdict) == "PASS" and row.ci_low <= 2.0 <= row.ci_high and math.isnan(row.measured), row
    off = {D: grid(4.0 * D**2 * (4.0 if D == 80 else 1.0)) for D in Ds}
    row = ns.exponent_row(off, "q = C^2/D", {"k": 3.0})
    assert str(row.verdict) == "FAIL" and "faster than every power law" in row.note, row
    row = ns.exponent_row({D: grid(2.0 ** (D / 4)) for D in Ds}, "q = C^2/D", {"k": 3.0})
    assert str(row.verdict) == "FAIL", row
    cens = _bracket(16384.0, math.inf, "above")
    row = ns.exponent_row({32: grid(1000.0), 48: grid(3000.0), 64: cens}, "q = C^2/D", {"k": 3.0})
    assert str(row.verdict) == "INFO" and "2 uncensored" in row.note and "D=64: N_50 in (16384" in row.note


def test_association_margin_sign_is_association():
    """The margin is > 0 exactly in the rows Definition 2.2 calls associated (random A, ties impossible),
    and it does not change when A is scaled."""
    from theorydyn.core import model
    from theorydyn.core.setting import Setting

    s = Setting(D=16, C=4, q=0.5)
    rng = np.random.default_rng(0)
    for _ in range(20):
        A = rng.standard_normal((16, 16)) + 2.5 * rng.random() * s.same_set
        m = model.association_margin(s, A)
        assert np.mean(m > 0) == pytest.approx(model.association(s, A))
        assert np.allclose(model.association_margin(s, 7.0 * A), m)


def _nstar_table(success, margin=lambda N: 0.5 * math.log2(N / 1024), diverged=()):
    rows = []
    for N in (256, 1024, 4096):
        for seed in range(3):
            st = "diverged" if (N, seed) in diverged else "ok"
            ok = float(success(N)) if st == "ok" else math.nan
            rows.append(
                dict(
                    D=32, q=0.5, N=N, seed=seed, eta=1.3, eta_rule=1.3, edge=2.6, status=st, message="",
                    **{"success_k1.5": ok, "success_k3": ok, "frac_k1.5": ok, "frac_k3": ok},
                    **{"records_k1.5": 25, "records_k3": 99},
                    margin_Ta=margin(N) if st == "ok" else math.nan, margin_end=math.nan, s_end=20000.0,
                    T_a=6685.0, steps=15428, record_every=107, source="computed",
                )
            )  # fmt: skip
    return pd.DataFrame(rows)


def test_check_n_star_names_setting_step_size_censoring_and_divergence():
    from theorydyn.claims import nstar as ns
    from theorydyn.core.setting import Setting

    runs = _nstar_table(lambda N: N >= 1024, diverged=((256, 2),))
    out = ns.check_n_star(Setting(D=64, C=4), runs, "q = C^2/D", (1.5, 3.0))
    head = out[0]
    assert "[D = 32, q = 0.5 (q = C^2/D), eta = 1.3 (the rule), 15428 steps, window [T_a, 1.5 T_a]" in head.claim
    assert "diverged 1 of 9 runs" in head.note and "N=256 seed 3" in head.note and str(head.verdict) == "INFO"
    assert math.isnan(head.measured) and "N_50 in (256, 1024]" in head.note
    assert head.params["records_in_window"] == int(0.5 * 6685.0 / 1.3 // 107) >= 24
    margin = [c for c in out if "margin" in c.quantity][0]
    assert margin.ci_low > 0, margin  # the planted margin rises with N
    assert str(out[-1].verdict) == "INFO" and "1 size(s) measured" in out[-1].note
    # the ledger's store takes no infinities: an interval end beyond the grid is nan, the note gives the bound
    from theorydyn.verify.ledger import _rows_json

    _rows_json([c.row() for c in out])
    cens = ns.check_n_star(Setting(D=64, C=4), _nstar_table(lambda N: False), "q = C^2/D", (1.5, 3.0))
    assert math.isnan(cens[0].measured) and "N_50 > 4096" in cens[0].note
    _rows_json([c.row() for c in cens])


def test_association_window_figure_draws_the_window_and_its_numbers():
    """The figure draws one curve per N and shades [T_a, 3 T_a]; its numbers read the window."""
    import matplotlib

    matplotlib.use("Agg")
    from theorydyn.figures import REGISTRY

    fig = REGISTRY["association_window"]
    st = fig.setting(True)
    curves = {N: _traj([0.3] * 5 + [1.0] * 30) for N in st["Ns"]}
    data = dict(setting=st, T_a=100.0, curves=curves)
    f = fig.draw(data)
    ax = f.axes[0]
    assert len(ax.lines) == len(st["Ns"]) + 1 and len(ax.patches) == 1  # curves + the 1.5 T_a line; window
    nums = fig.numbers(data)
    assert nums["T_a"] == 100.0 and nums[f"N{st['Ns'][-1]}"]["frac"] == 1.0


def test_nstar_runs_use_common_random_numbers_and_stop_at_the_budget(monkeypatch, tmp_path):
    """The run at N trains on the first N samples of one N_max set per (D, seed) with the seed's init,
    every N of the grid in one pass (simulate_replicas(n_train=Ns)), stopped at T_a where association is lost;
    a D whose estimated cost passes the budget is not run and becomes a NOT_RUN row naming where it stopped;
    a rerun reads every pass back from the store."""
    from types import SimpleNamespace

    from theorydyn.claims import nstar as ns
    from theorydyn.core.setting import Setting
    from theorydyn.experiments import nstar as xns

    seen = []

    def fake_sim(sd, seed, train, init_seeds, n_train, device, stop_after, **opts):
        seen.append((sd.D, seed, train[0].shape[0], list(n_train), list(init_seeds), stop_after, opts["eta"]))
        out = []
        for n in n_train:
            assoc = 1.0 if n >= 512 else 0.5
            tr = pd.DataFrame(dict(s=np.arange(0, 400, 10.0), association=assoc, margin_min=assoc - 0.75))
            out.append(SimpleNamespace(trajectory=tr, status="ok", message=""))
        return out

    monkeypatch.setattr(xns, "simulate_replicas", fake_sim)
    monkeypatch.setattr(xns, "steps_for", lambda sd, preset, eta: (20, 100.0))
    monkeypatch.setattr(xns, "curvature_along_flow", lambda sd, horizon: dict(lam=0.2, s_at=50.0, eta=5.0, edge=10.0))
    s = Setting(D=64, C=4, q=0.25)
    Ns = (256, 512, 1024)
    budget = xns.estimated_seconds(32, Ns, 2, 250) * 1.5  # D = 32 fits, D = 48 does not
    runs = xns.nstar_runs(s, (32, 48), lambda D: 16 / D, Ns, (0, 1), (1.5, 3.0), budget_s=budget, out=tmp_path)
    ran = runs[runs["N"] > 0]
    assert set(ran["D"]) == {32} and len(ran) == 6
    # one pass per (D, seed): the N_max draw, every N of the grid a prefix of it, all from the seed's init, at
    # the rule's step size, stopped at T_a
    assert [(D, seed) for D, seed, *_ in seen] == [(32, 39), (32, 1039)]
    assert all(
        n_all == 1024 and n_train == [256, 512, 1024] and inits == [seed] * 3 and stop == 100.0 and eta == 5.0
        for _, seed, n_all, n_train, inits, stop, eta in seen
    )
    assert list(ran["N"]) == [256, 512, 1024] * 2 and list(ran["success_k3"]) == [0.0, 1.0, 1.0] * 2
    rows = ns.check_n_star(s, runs, "q = C^2/D", (1.5, 3.0))
    nr = [c for c in rows if str(c.verdict) == "NOT_RUN"]
    assert len(nr) == 1 and "[D = 48" in nr[0].claim and "ran up to D = 32" in nr[0].note
    again = xns.nstar_runs(s, (32,), lambda D: 16 / D, Ns, (0, 1), (1.5, 3.0), out=tmp_path)
    assert len(seen) == 2 and set(again["source"]) == {"stored"}
    pd.testing.assert_frame_equal(
        again.drop(columns="source"), ran.drop(columns="source").reset_index(drop=True), check_dtype=False
    )


def test_nstar_claim_only_judges_the_runs_of_its_experiment(monkeypatch, run_home):
    """verify's one call of N*(D) (claims.judge) runs experiments.nstar.run at the claim's config (both q
    readings, in order, at the quick sizes, no budget) and judges its results: the rows are check_n_star's of
    each reading's runs; a second call reads every pass back from the store."""
    from types import SimpleNamespace

    from theorydyn import claims
    from theorydyn.claims import nstar as ns
    from theorydyn.claims.sizes import Sizes
    from theorydyn.core.setting import Setting
    from theorydyn.experiments import nstar as xns

    seen = []

    def fake_sim(sd, seed, train, init_seeds, n_train, device, stop_after, **opts):
        seen.append((sd.D, sd.q, seed))
        tr = pd.DataFrame(dict(s=np.arange(0, 400, 10.0), association=1.0, margin_min=0.25))
        return [SimpleNamespace(trajectory=tr, status="ok", message="") for _ in n_train]

    monkeypatch.setattr(xns, "simulate_replicas", fake_sim)
    monkeypatch.setattr(xns, "steps_for", lambda sd, preset, eta: (20, 100.0))
    monkeypatch.setattr(xns, "curvature_along_flow", lambda sd, horizon: dict(lam=0.2, s_at=50.0, eta=5.0, edge=10.0))
    tiny = ns.NStarSizes(Ns=(256, 512), seeds=(0, 1), n_D=1, min_steps=20)
    monkeypatch.setattr(ns, "SIZES", Sizes(quick=tiny, full=tiny))
    s = Setting(D=64, C=4, q=0.25)
    assert ns.EXPERIMENT is xns.run and ns.config(s, True) == xns.NStarConfig(tiny, None)
    assert ns.config(s, False).budget_s == tiny.budget_s
    res = xns.run(s, ns.config(s, True))
    assert [r.label for r in res.readings] == [label for label, _ in xns.q_readings(s)] and res.ks == (1.5, 3.0)
    assert [(D, q) for D, q, _ in seen] == [(32, 0.5), (32, 0.5), (32, 0.25), (32, 0.25)]
    expected = [c for r in res.readings for c in ns.check_n_star(s, r.runs, r.label, res.ks)]
    rows = claims.judge(ns, s, quick=True)
    assert len(seen) == 4  # the second run read every pass back
    assert [repr(c.row()) for c in rows] == [repr(c.row()) for c in expected]
    assert len(rows) == 2 * (3 + 2) and all("(q = C^2/D)" in c.claim for c in rows[:3])


def test_nstar_figure_draws_brackets_arrows_and_the_power_law_band():
    """The N*(D) figure from planted runs: N_50 in (4096, 16384] at D = 32 and (16384, 65536] at D = 48, censored
    above at D = 64 (an arrow); the band of power laws through every bracket is drawn, its exponent range in the
    legend."""
    import matplotlib

    matplotlib.use("Agg")
    from theorydyn.figures import REGISTRY
    from theorydyn.figures.nstar_figs import nstar_readings

    def table(D, n50):
        t = _nstar_table(lambda N: N >= n50)
        return t.assign(D=D, N=t["N"] * 16)  # N = 4096 .. 65536

    runs = pd.concat([table(32, 1000), table(48, 3000), table(64, math.inf)])  # success from N = 16384 / 65536
    fig = REGISTRY["nstar"]
    st = dict(D=64, C=4, q=0.25, Ds=[32, 48, 64], Ns=[4096, 16384, 65536], seeds=3, ks=[1.5, 3.0])
    data = dict(setting=st, **nstar_readings({"q = C^2/D": runs, "fixed q = 0.25": runs}, st["ks"]))
    r64 = data["readings"]["q = C^2/D"]["3.0"]["64"]
    assert r64["censored"] == "above" and r64["lo"] == 65536
    assert data["fits"]["q = C^2/D"]["3.0"]["feasible"] and data["bands"]["q = C^2/D"]["3.0"] is not None
    f = fig.draw(data)
    ax = f.axes[1]
    assert len(ax.texts) == 2  # one arrow per q reading at the censored D
    assert len(ax.collections) == 2  # one band per q reading
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lab.startswith("q = C^2/D: b ") for lab in labels), labels
    assert fig.numbers(data)["C2_D_k3"]["b_min"] is not None
    from theorydyn.figures.core import claim_text

    assert "q = C²/D" in claim_text(fig, fig.numbers(data))  # the manifest's text names its numbers' keys
