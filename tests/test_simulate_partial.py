"""GD on one of Â, v̂ with the other frozen, through the fused step (theorydyn.simulate.partial), against
the NumPy routes it replaces: experiments.theorem4.frozen_grad_v (the Â-frozen control's old gradient) and
model.risk_and_grad."""

from __future__ import annotations

import numpy as np
import pytest

from theorydyn.claims import theorem4 as t4
from theorydyn.core import data, model
from theorydyn.core.setting import Setting
from theorydyn.experiments import theorem4 as xt4
from theorydyn.simulate import simulate, simulate_replicas, training_data
from theorydyn.simulate._kernel import FusedModel
from theorydyn.simulate.partial import descend_partial
from theorydyn.simulate.run import init_params

# the experiments' keyed stores (seed runs, N*(D) passes, step-size rules) in a run directory of each test's own
pytestmark = pytest.mark.usefixtures("run_home")

S16 = Setting(D=16, C=4, q=0.5)
#: Norm-wise relative agreement of two routes to one gradient: a float64 sum of N·D·d products whose
#: terms carry c_n (a few units of cancellation) rounds at ~1e-16 · (a few hundred) ≪ 1e-12; float32 X
#: (float32 products in the kernel, float32 X·v in the NumPy route) at ~1e-7 · that, held to 1e-5 as the
#: kernel's other float32 tests.
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def _params(s: Setting, scale: float = 0.3, seed: int = 1):
    rng = np.random.default_rng(seed)
    A = rng.normal(0, scale, (s.D, s.D))
    np.fill_diagonal(A, s.beta)
    return A, rng.normal(0, 0.5, s.d)


def _rel(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(b))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_v_only_step_matches_the_numpy_route(dtype):
    """∇_v with ∂Â skipped equals frozen_grad_v (two NumPy passes over X) to the dtype's rounding, and is
    the same bits as the full step's ∇_v; the risk and error are the same bits; ∂Â comes back zero."""
    b = data.sample(S16, 700, seed=3, dtype=dtype)
    A, v = _params(S16)
    m = FusedModel(b.X, b.y, S16.p, S16.nu, S16.tau)
    r0, e0, gA0, gV0 = m.risk_grad(A[None], v[:, None])
    r1, e1, gA1, gV1 = m.risk_grad(A[None], v[:, None], grad_A=False)
    ref = xt4.frozen_grad_v(S16, model.attention(S16, A), v, b.X, b.y)
    rel = _rel(gV1[:, 0], ref)
    assert rel <= TOL[dtype], f"fused v-only ∇_v vs frozen_grad_v: relative {rel:.3g} > {TOL[dtype]:g}"
    assert np.array_equal(gV1, gV0) and np.array_equal(r1, r0) and np.array_equal(e1, e0)
    assert not gA1.any() and np.abs(gA0).max() > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_A_only_step_skips_the_v_gradient(dtype):
    """∂Â with ∇_v skipped: the same bits as the full step's, ∇_v zero."""
    b = data.sample(S16, 300, seed=4, dtype=dtype)
    A, v = _params(S16, seed=2)
    m = FusedModel(b.X, b.y, S16.p, S16.nu, S16.tau)
    r0, _, gA0, gV0 = m.risk_grad(A[None], v[:, None])
    r1, _, gA1, gV1 = m.risk_grad(A[None], v[:, None], grad_v=False)
    assert np.array_equal(gA1, gA0) and np.array_equal(r1, r0)
    assert not gV1.any() and np.abs(gV0).max() > 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_descend_v_matches_the_numpy_loop(dtype):
    """20 steps of v̂ ← v̂ − η ∇_v at frozen Â: the fused route against the loop on frozen_grad_v. GD at
    η = 10 near the init is a contraction-free map of v̂ over so few steps, so per-step rounding adds up
    at most ~linearly: 20 × the per-step tolerance."""
    s = S16
    b = data.sample(s, 512, seed=5, dtype=dtype)
    A, v0 = init_params(s, 1e-3, np.random.default_rng(6))
    v0 = v0 + 0.3 * s.w_star  # past the flat start, where the gradient is not tiny
    S = model.attention(s, A)
    v = v0.copy()
    for _ in range(20):
        v = v - 10.0 * xt4.frozen_grad_v(s, S, v, b.X, b.y)
    A1, v1 = descend_partial(s, A, v0, b.X, b.y, 10.0, 20, update="v")
    assert np.array_equal(A1, A), "Â moved under update='v'"
    rel = _rel(v1 - v0, v - v0)
    assert rel <= 20 * TOL[dtype], f"20 v-only steps: displacement relative {rel:.3g}"


def test_descend_A_matches_model_risk_and_grad():
    """5 steps of Â ← Â − η ∂Â at frozen v̂ (float64) against model.risk_and_grad's loop."""
    s = S16
    b = data.sample(s, 256, seed=7)
    A0, v = _params(s, seed=8)
    A = A0.copy()
    for _ in range(5):
        _, gA, _ = model.risk_and_grad(s, A, v, b.X, b.y)
        A = A - 10.0 * gA
    A1, v1 = descend_partial(s, A0, v, b.X, b.y, 10.0, 5, update="A")
    assert np.array_equal(v1, v)
    rel = _rel(A1 - A0, A - A0)
    assert rel <= 5e-12, f"5 A-only steps: displacement relative {rel:.3g}"


def test_train_v_frozen_is_the_fused_route():
    """The Â-frozen control of experiments.theorem4: its data and init from one Generator, then the fused
    v-only steps; the same as the NumPy loop it replaced to float32 rounding (30 steps)."""
    s = S16
    A, v = xt4.train_v_frozen(s, 512, 10.0, 30, 1e-3, 5)
    rng = np.random.default_rng(5)
    b = data.sample(s, 512, seed=rng, dtype=np.float32)
    A_ref, v_ref = init_params(s, 1e-3, rng)
    S = model.attention(s, A_ref)
    v0 = v_ref.copy()
    for _ in range(30):
        v_ref = v_ref - 10.0 * xt4.frozen_grad_v(s, S, v_ref, b.X, b.y)
    assert np.array_equal(A, A_ref)
    rel = _rel(v - v0, v_ref - v0)
    assert rel <= 30 * TOL[np.float32], f"train_v_frozen vs the NumPy loop: relative {rel:.3g}"


def test_simulate_update_v_keeps_A_and_matches_descend():
    """simulate(update='v') moves v̂ only, as descend_partial does on the same data and start; a bad
    update names the parameter."""
    s = S16
    b = data.sample(s, 256, seed=9)
    A0, v0 = _params(s, scale=0.1, seed=10)
    r = simulate(s, train=(b.X, b.y), A0=A0, v0=v0, steps=7, eta=5.0, n_test=64, update="v")
    _, v1 = descend_partial(s, A0, v0, b.X, b.y, 5.0, 7, update="v")
    assert np.array_equal(r.A, A0) and np.array_equal(r.v, v1)
    assert r.options["update"] == "v"
    with pytest.raises(ValueError, match="update"):
        simulate(s, N=8, steps=1, update="w")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_per_replica_updates_in_one_pass(dtype):
    """A trained model and its Â-frozen control as two replicas of one pass: each replica's outputs are the
    same bits as its own single-replica call with the same switches."""
    b = data.sample(S16, 400, seed=11, dtype=dtype)
    A1, v1 = _params(S16, seed=12)
    A2, v2 = _params(S16, seed=13)
    A, V = np.stack([A1, A2]), np.stack([v1, v2], axis=1)
    m = FusedModel(b.X, b.y, S16.p, S16.nu, S16.tau)
    r, e, gA, gV = m.risk_grad(A, V, grad_A=[True, False])
    r0, e0, gA0, gV0 = m.risk_grad(A[:1], V[:, :1])
    r1, e1, gA1, gV1 = m.risk_grad(A[1:], V[:, 1:], grad_A=False)
    assert np.array_equal(gA[0], gA0[0]) and not gA[1].any()
    assert np.array_equal(gV[:, 0], gV0[:, 0]) and np.array_equal(gV[:, 1], gV1[:, 0])
    assert np.array_equal(r, np.r_[r0, r1]) and np.array_equal(e, np.r_[e0, e1])
    with pytest.raises(ValueError, match="per-replica"):
        m.risk_grad(A, V, grad_A=[True, False, True])


def test_simulate_replicas_trained_and_frozen_control_together():
    """simulate_replicas(update=['Av', 'v']): replica 0 is simulate() of the same seed, bit for bit; replica 1
    keeps its Â at its start and is simulate(update='v') from that start."""
    s = S16
    kw = dict(N=256, steps=5, eta=5.0, seed=3, n_test=64, record_every=5)
    r0, r1 = simulate_replicas(s, init_seeds=[3, 4], update=["Av", "v"], **kw)
    ref = simulate(s, **kw)
    assert np.array_equal(r0.A, ref.A) and np.array_equal(r0.v, ref.v)
    ref1 = simulate(s, **{**kw, "seed": 3}, update="v", A0=r1.A, v0=_init_v(s, 4))
    assert np.array_equal(r1.v, ref1.v) and np.array_equal(r1.A, ref1.A)
    with pytest.raises(ValueError, match="update"):
        simulate_replicas(s, N=8, steps=1, init_seeds=[0, 1], update=["Av"] * 3)


def _init_v(s, seed):
    """The v̂ simulate's realistic initialisation draws for init seed ``seed``."""
    return init_params(s, 1e-3, np.random.default_rng(np.random.SeedSequence(seed).spawn(3)[2]))[1]


def test_train_paired_is_the_trained_run_and_its_frozen_control():
    """experiments.theorem4.train_paired: replica 0 is train_upstream's run (same data, same init) to the
    float32 step's rounding over 20 steps; replica 1 keeps Â at that init and trains v̂ as
    descend_partial(update="v") does on the same data, to the same rounding."""
    s = S16
    run = t4.RUN.replace(N=512, steps=20, seed=7, record_every=5, dtype="float32")  # the float32 step's rounding
    res, ctl = xt4.train_paired(s, run)
    ref = xt4.train_upstream(s, run)
    assert ctl.options["update"] == "v" and "update" not in res.options
    for a, b, what in ((res.A, ref.A, "A"), (res.v, ref.v, "v")):
        rel = _rel(a, b)
        assert rel <= 20 * TOL[np.float32], f"paired trained {what} vs train_upstream: relative {rel:.3g}"
    rng = np.random.default_rng(np.random.SeedSequence(7).spawn(3)[2])
    A0, v0 = init_params(s, 1e-3, rng)
    assert np.array_equal(ctl.A, A0), "the control's A moved"
    b = training_data(s, 512, seed=7, dtype="float32")
    _, v_ref = descend_partial(s, A0, v0, b.X, b.y, 10.0, 20, update="v")
    rel = _rel(ctl.v - v0, v_ref - v0)
    assert rel <= 20 * TOL[np.float32], f"paired control v vs descend_partial: relative {rel:.3g}"
    assert len(ref.trajectory) == len(res.trajectory) == len(ctl.trajectory)


def test_paired_control_row_follows_the_theorem_4_rows(monkeypatch):
    """run_seeds(control=True): the runs are paired, and the control row (Â frozen) comes
    last, judged by frozen_attention_row on the controls' errors; planted errors flip it PASS/DEVIATES."""
    s = Setting(D=32, C=4, q=0.5)
    run = t4.RUN.replace(N=256, steps=2, n_test=512)
    rows = t4.theorem_4_rows(xt4.run_seeds(s, run, (0, 1), control=True))
    assert rows[-1].claim.startswith("Section 4, without patch association") and rows[-1].params["seeds"] == 2
    assert rows[-1].params["init"] == "realistic, A frozen, paired" and rows[-1].params["steps"] == 2
    assert not any(r.claim.startswith("Section 4") for r in t4.theorem_4_rows(xt4.run_seeds(s, run, (0, 1))))
    for errs, verdict in (([0.15, 0.16, 0.155], "PASS"), ([0.06, 0.065, 0.07], "DEVIATES")):
        (row,) = t4.frozen_attention_row(s, errs, run)
        assert str(row.verdict) == verdict, (errs, row.verdict)
