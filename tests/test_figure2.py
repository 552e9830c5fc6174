"""Figure 2 (theorydyn/positional, theorydyn/claims/figure2.py): the positional-attention ViT and model (T) in torch,
checked against independent routes (numpy loops, theorydyn.core.model, finite differences), the
reference levels of patch association, and verdicts that flip with their inputs."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from theorydyn import positional as f2  # noqa: E402
from theorydyn.claims import figure2 as claim  # noqa: E402
from theorydyn.claims.check import Verdict  # noqa: E402
from theorydyn.core import model  # noqa: E402
from theorydyn.core.setting import Setting  # noqa: E402
from theorydyn.experiments import figure2 as xf2  # noqa: E402
from theorydyn.positional.plot import make_figure  # noqa: E402

torch.set_num_threads(1)  # tiny models; the CI box is shared

S16 = f2.figure2_setting()
TINY = Setting(D=4, C=2, d=3, partition="blocks")


def _loop_positional_logits(P, WQ, WK):
    """Definition 3.2 entry by entry: A_ij = ⟨W_Qᵀ p_i, W_Kᵀ p_j⟩ / √d_h."""
    D, dh = P.shape[1], WQ.shape[1]
    A = np.zeros((D, D))
    for i in range(D):
        for j in range(D):
            A[i, j] = (WQ.T @ P[:, i]) @ (WK.T @ P[:, j]) / math.sqrt(dh)
    return A


def _loop_forward(s, S, v, X):
    """F(X) = Σ_i σ(Σ_j S_ij ⟨v, X_j⟩) with explicit loops."""
    N, D, _ = X.shape
    F = np.zeros(N)
    for n in range(N):
        for i in range(D):
            h = sum(S[i, j] * (v @ X[n, j]) for j in range(D))
            F[n] += h**s.p + s.nu * h
    return F


def test_train_shapes_and_same_seed_same_numbers():
    for kind in f2.KINDS:
        a = f2.train(S16, kind, N=128, steps=5, seed=3, N_test=128, record_every=2)
        b = f2.train(S16, kind, N=128, steps=5, seed=3, N_test=128, record_every=2)
        c = f2.train(S16, kind, N=128, steps=5, seed=4, N_test=128, record_every=2)
        assert a.steps.tolist() == [0, 2, 4, 5]
        for arr in (a.test_err, a.train_loss, a.assoc_curve, a.contrast_curve):
            assert arr.shape == (4,)
        assert a.gram.shape == a.gram_init.shape == a.logits.shape == (16, 16)
        assert a.final_err == a.test_err[-1]
        np.testing.assert_array_equal(a.test_err, b.test_err)
        np.testing.assert_array_equal(a.train_loss, b.train_loss)
        np.testing.assert_array_equal(a.gram, b.gram)
        assert not np.array_equal(a.gram, c.gram)
        assert 0 <= a.assoc <= 1 and 0 <= a.linear_err <= 1
        # training moved the parameters: the loss recorded at step 5 is not the one at step 0
        assert a.train_loss[-1] != a.train_loss[0]


def test_positional_logits_match_definition_3_2_and_ignore_X():
    prm = f2.init_torch_params(S16, "positional", seed=1)
    t = {k: v.detach().numpy() for k, v in prm.tensors.items()}
    A = prm.logits(S16).detach().numpy()
    np.testing.assert_allclose(A, _loop_positional_logits(t["P"], t["WQ"], t["WK"]), rtol=1e-12, atol=1e-12)
    S = prm.scores(S16).detach().numpy()
    assert np.all(S > 0)
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # One X-independent S explains the output on any batch, also a changed or permuted one.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 16, 16))
    for Z in (X, rng.standard_normal((5, 16, 16)), X[:, rng.permutation(16)], 3 * X[::-1]):
        F = prm.forward(S16, torch.from_numpy(np.ascontiguousarray(Z))).detach().numpy()
        np.testing.assert_allclose(F, _loop_forward(S16, S, t["v"], Z), rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(prm.scores(S16).detach().numpy(), S)


def test_model_T_matches_theorydyn_model_forward_and_gradient():
    s = Setting(D=8, C=4, d=5, beta=0.7, tau=1.5)
    prm = f2.init_torch_params(s, "T", seed=2, omega=0.8)
    rng = np.random.default_rng(1)
    X = rng.standard_normal((7, 8, 5))
    y = np.where(rng.random(7) < 0.5, -1.0, 1.0)
    A = prm.tensors["A"].detach().numpy().copy()
    np.fill_diagonal(A, s.beta)  # the torch model ignores A's diagonal and uses β
    v = prm.tensors["v"].detach().numpy()
    Xt = torch.from_numpy(X)
    F = prm.forward(s, Xt)
    np.testing.assert_allclose(F.detach().numpy(), model.forward(s, A, v, X), rtol=1e-10)
    loss = torch.nn.functional.softplus(-torch.from_numpy(y) * F).mean()
    loss.backward()
    r, gA, gv = model.risk_and_grad(s, A, v, X, y)
    assert float(loss.detach()) == pytest.approx(r, rel=1e-12)
    gA_t = prm.tensors["A"].grad.numpy()
    np.testing.assert_allclose(np.diag(gA_t), 0.0, atol=0)  # the diagonal is fixed
    np.testing.assert_allclose(gA_t, gA, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(prm.tensors["v"].grad.numpy(), gv, rtol=1e-8, atol=1e-12)


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(5)
    X = torch.from_numpy(rng.standard_normal((3, TINY.D, TINY.d)))
    y = torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)
    for kind in f2.KINDS:
        prm = f2.init_torch_params(TINY, kind, seed=0, omega=0.7)
        names = list(prm.tensors)

        def loss(*tensors, kind=kind, names=names):
            p = f2.TorchParams(kind, dict(zip(names, tensors, strict=True)))
            return torch.nn.functional.softplus(-y * p.forward(TINY, X)).mean()

        assert torch.autograd.gradcheck(loss, tuple(prm.tensors.values()), eps=1e-6, atol=1e-7, rtol=1e-5)


def test_chance_association_matches_random_grams():
    s = Setting(D=16, C=4, d=64, partition="grid")  # d ≫ 1: the diagonal of PᵀP dominates
    assert f2.chance_association(s) == pytest.approx(1 / 455)
    rng = np.random.default_rng(0)
    n = 3000
    hits = sum(model.association_rows(s, P.T @ P).sum() for P in rng.standard_normal((n, s.d, s.D)))
    rows = n * s.D
    p = f2.chance_association(s)
    assert abs(hits - rows * p) < 5 * math.sqrt(rows * p)  # binomial: 5 standard deviations


def test_block_contrast():
    s = S16
    blocks = s.same_set.astype(float)
    assert f2.block_contrast(s, blocks) == pytest.approx(2.5)  # in 1, cross 0, std √(0.2·0.8)
    assert f2.block_contrast(s, 7 * blocks + 3) == pytest.approx(2.5)  # scale and shift free
    assert f2.block_contrast(s, -blocks) == pytest.approx(-2.5)
    assert f2.block_contrast(s, np.eye(16)) == 0.0  # diagonal excluded
    M = np.random.default_rng(2).standard_normal((16, 16))
    ins = [M[i, j] for i in range(16) for j in range(16) if i != j and s.set_of[i] == s.set_of[j]]
    cross = [M[i, j] for i in range(16) for j in range(16) if s.set_of[i] != s.set_of[j]]
    off = ins + cross
    assert f2.block_contrast(s, M) == pytest.approx((np.mean(ins) - np.mean(cross)) / np.std(off))
    with pytest.raises(ValueError, match="shape"):
        f2.block_contrast(s, np.zeros((4, 4)))


def test_set_rows_accepts_any_set_and_association_only_the_own():
    s = S16
    own = s.same_set.astype(float) + 0.1 * np.eye(16)
    assert f2.set_rows(s, own).all() and model.association(s, own) == 1.0
    # row i attends uniformly to the set after its own (a cyclic shift of the sets)
    shifted = np.zeros((16, 16))
    for i in range(16):
        shifted[i, s.sets[(s.set_of[i] + 1) % s.L]] = 1.0
    assert f2.set_rows(s, shifted).all() and model.association(s, shifted) == 0.0
    # Top-C spread over two sets, and a tie at the C-th place: no set
    mixed = shifted.copy()
    mixed[0, s.sets[(s.set_of[0] + 1) % s.L][0]] = 0.0
    mixed[0, s.sets[(s.set_of[0] + 2) % s.L][0]] = 1.0
    tie = shifted.copy()
    tie[1, s.sets[(s.set_of[1] + 2) % s.L][0]] = 1.0
    rows = f2.set_rows(s, mixed)
    assert not rows[0] and rows[1:].all()
    assert not f2.set_rows(s, tie)[1]


def _verdicts(err, assoc, gain):
    return [c.verdict for c in claim.verdict_rows(S16, err, assoc, gain)]


def test_verdicts_flip_with_inputs():
    low, high = [0.01, 0.012, 0.011, 0.009, 0.013], [0.3, 0.28, 0.31, 0.29, 0.3]
    zero, one = [0.0] * 5, [1.0] * 5
    assert _verdicts(low, zero, zero) == [Verdict.PASS, Verdict.PASS, Verdict.PASS]
    assert _verdicts(low, one, zero)[1] is Verdict.DEVIATES
    assert _verdicts(low, zero, [2.0, 1.9, 2.1, 2.0, 2.2])[2] is Verdict.DEVIATES
    assert _verdicts(low, zero, [0.3, -0.2, 0.1, -0.1, 0.0])[2] is Verdict.PASS
    assert _verdicts(high, one, [2.0] * 5) == [Verdict.FAIL, Verdict.OUT_OF_SCOPE, Verdict.OUT_OF_SCOPE]
    rows = claim.verdict_rows(S16, low, [0.0, 0.5, 0.0, 0.5, 0.0], zero)  # straddles 0.25
    assert rows[1].verdict is Verdict.DEVIATES and "not excluded" in rows[1].note
    with pytest.raises(ValueError, match="one value per seed"):
        claim.verdict_rows(S16, low, zero[:3], zero)


def test_setting_summary_decides_and_names_the_dissent():
    """Issue 39 item 9: the summary of a setting PASSes only if the association and the block contrast both say
    "no set structure"; one dissenting row makes it DEVIATE and it names that row; a high error makes it
    OUT_OF_SCOPE. It carries decides=True, so the ledger's per-claim summary takes it as the deciding row."""
    low, high = [0.01, 0.012, 0.011, 0.009, 0.013], [0.3, 0.28, 0.31, 0.29, 0.3]
    zero, one, gain = [0.0] * 5, [1.0] * 5, [1.0, 0.9, 1.1, 1.0, 0.95]
    label = " [D=16, C=4, P ~ N(0, 1), omega = 0.1, 1000 steps]"

    def summary(err, assoc, contrast):
        return claim.setting_summary(claim.verdict_rows(S16, err, assoc, contrast), label, {"D": 16})

    ok = summary(low, zero, zero)
    assert ok.verdict is Verdict.PASS and ok.measured == 2 and ok.params["decides"] is True
    assert label in ok.quantity and ok.params["seeds"] == 5
    # the audit's case: no association (PASS) while the block contrast at the same setting DEVIATES
    split = summary(low, [0.0, 0.1, 0.0, 0.05, 0.0], gain)
    assert split.verdict is Verdict.DEVIATES and split.measured == 1
    assert (
        "dissenting: block-contrast gain DEVIATES 0.99" in split.note
        and "association (Definition 2.2) PASS" in split.note
    )
    other = summary(low, one, zero)
    assert other.verdict is Verdict.DEVIATES and "dissenting: association (Definition 2.2) DEVIATES" in other.note
    assert summary(high, zero, zero).verdict is Verdict.OUT_OF_SCOPE


def test_train_rejects_bad_arguments():
    with pytest.raises(ValueError, match="kind"):
        f2.train(S16, "vanilla", N=8, steps=1, seed=0)
    with pytest.raises(ValueError, match="N must"):
        f2.train(S16, "T", N=0, steps=1, seed=0)
    with pytest.raises(ValueError, match="dtype"):
        f2.train(S16, "T", N=8, steps=1, seed=0, dtype="float16")


def test_checks_and_figure_from_tiny_results():
    res = f2.run(S16, seeds=range(2), N=64, N_test=64, steps=4, record_every=2)
    rows = claim.checks(Setting(D=64, C=4), at=S16, seeds=range(2), results=res)
    assert [r.claim for r in rows][:3] == ["Figure 2", "Figure 2 / Definition 2.2", "Figure 2"]
    assert all(r.params["seeds"] == 2 for r in rows)
    assert rows[0].params["D"] == 16  # measured at Figure 2's own setting, not at the ledger's D = 64
    # 4 steps cannot reach low error: the two structure rows are then out of scope, not PASS
    assert rows[0].verdict is Verdict.FAIL and rows[1].verdict is rows[2].verdict is Verdict.OUT_OF_SCOPE
    fig = make_figure(res, S16)
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert "cos(p_i, p_j)" in labels and any(lab.startswith("Â_ij") for lab in labels)
    assert len(fig.axes) == 6 + 3  # six panels and three colorbars


def test_paper_init_draws_p_at_scale_one_over_sqrt_d():
    """Parametrization 3.1's scale: each p_i ~ N(0, I/D), i.e. entries of std 1/sqrt(D) (1/4 at D = 16),
    and v at omega = 1e-3; the earlier init N(0, 1) is kept as the default of init_torch_params."""
    init = xf2.paper_init(S16)
    assert init == {"p_std": 0.25, "omega": 1e-3}
    small = f2.init_torch_params(Setting(D=16, C=4, d=256), "positional", seed=0, **init).tensors
    unit = f2.init_torch_params(Setting(D=16, C=4, d=256), "positional", seed=0).tensors
    assert float(small["P"].detach().std()) == pytest.approx(0.25, rel=0.05)
    assert float(unit["P"].detach().std()) == pytest.approx(1.0, rel=0.05)
    assert float(small["v"].detach().norm()) == pytest.approx(1e-3, rel=0.2)
    with pytest.raises(ValueError, match="p_std"):
        f2.init_torch_params(S16, "positional", seed=0, p_std=0.0)


def test_main_rows_follow_the_paper_init_and_n01_is_a_sensitivity_row(monkeypatch):
    """checks() trains the main runs at paper_init and the sensitivity runs at N(0, 1); the association
    verdict follows the main runs: associated at the paper's scale -> DEVIATES even when the N(0, 1) runs
    are not associated (and PASS in the opposite case); the sensitivity row is INFO with both numbers."""
    from dataclasses import replace

    calls = []

    def fake_run(s, seeds, quick=True, kinds=f2.KINDS, progress=None, **over):
        calls.append((tuple(kinds), over))
        return f2.run(s, seeds, kinds=kinds, **dict(over, N=64, N_test=64, record_every=2, steps=2))

    monkeypatch.setattr(xf2, "run", fake_run)

    def low(runs, a):
        return [replace(r, final_err=0.01 + 0.001 * i, assoc=a + 0.01 * i) for i, r in enumerate(runs)]

    original = claim.verdict_rows
    for main_assoc, unit_assoc, verdict in ((0.8, 0.0, Verdict.DEVIATES), (0.0, 0.8, Verdict.PASS)):
        calls.clear()
        monkeypatch.setattr(claim, "verdict_rows", _planted(original, main_assoc, unit_assoc))
        rows = claim.checks(Setting(D=64, C=4), at=S16, seeds=range(3))
        longest = claim.SIZES.quick.train()  # the quick sizes, run to the longest length (2000 steps)
        assert longest == dict(N=4096, N_test=8192, steps=2000, lr=0.01, record_every=10)
        assert calls[0] == (f2.KINDS, {**xf2.paper_init(S16), **longest})
        assert calls[1] == (("positional",), {**xf2.UNIT_INIT, **longest})
        assoc = [r for r in rows if r.quantity.startswith("patch association of the learned P^T P (fraction")]
        assert assoc[0].verdict is verdict and assoc[0].params["p_std"] == 0.25 and assoc[0].params["omega"] == 1e-3
        assert "[D=16, C=4, p_i ~ N(0, I/D)" in assoc[0].quantity and assoc[0].params["steps"] == 2
        unit = [r for r in assoc if "P ~ N(0, 1)" in r.quantity]
        assert len(unit) == 1 and unit[0].params["p_std"] == 1.0 and unit[0].params["omega"] == 0.1
        summary = next(r for r in rows if r.quantity.startswith("settings under which"))
        assert summary.verdict is Verdict.INFO and summary.measured == (2.0 if verdict is Verdict.PASS else 0.0)
    # the sensitivity row itself, from runs with planted associations
    res = f2.run(
        S16, seeds=range(3), kinds=("positional",), N=64, N_test=64, steps=2, record_every=2, **xf2.paper_init(S16)
    )["positional"]
    row = claim.sensitivity_row(S16, low(res, 0.3), low(res, 0.0), {"D": 16})
    assert row.measured == pytest.approx(0.01) and "mean 0.3100" in row.note and "at N(0, 1): mean 0.0100" in row.note


def _planted(verdict_rows, main_assoc, unit_assoc):
    """verdict_rows fed low errors and the planted association of the main runs (the sensitivity row is
    checked on its own in the test above)."""

    def rows(s, err, assoc, gain, *a, **k):
        return verdict_rows(s, [0.01, 0.011, 0.012], [main_assoc] * 3, [0.0, 0.1, -0.1], *a, **k)

    return rows


def test_rows_are_read_at_each_training_length_and_flip_with_the_curve():
    """Planted: the association curve is 0 at step 2 and 1 at step 4 of the same runs: the row at 2
    steps PASSes (no association), the row at 4 steps DEVIATES; the summary names which holds."""
    from dataclasses import replace

    res = f2.run(S16, seeds=range(3), kinds=("positional",), N=64, N_test=64, steps=4, record_every=2)["positional"]
    planted = [
        replace(r, test_err=np.array([0.5, 0.01, 0.01]), assoc_curve=np.array([0.0, 0.0, 1.0]), final_err=0.01)
        for r in res
    ]
    assert claim.lengths(planted, (2, 1000)) == [2, 4]
    rows = claim.checks(Setting(D=64, C=4), at=S16, seeds=range(3), results={"positional": planted})
    assoc = {r.params["steps"]: r for r in rows if r.quantity.startswith("patch association of the learned P^T P (f")}
    assert set(assoc) == {4}  # the quick lengths' 1000 is past these runs: only their last step
    rows2 = []
    for L in (2, 4):
        err, a, g = claim.at_step(planted, L)
        rows2.append(claim.verdict_rows(S16, err, a, g, label=f" [{L}]")[1])
    assert [r.verdict for r in rows2] == [Verdict.PASS, Verdict.DEVIATES]
    summ = claim.summary_row([("x", 2, rows2[0].verdict, 0.0), ("x", 4, rows2[1].verdict, 1.0)], 0.25, {})
    assert summ.measured == 1 and "holds under x, 2 steps" in summ.note and "not under x, 4 steps" in summ.note


def test_the_named_runs_are_instances_of_the_one_config():
    """QUICK_RUN and FULL_RUN are PositionalConfig instances (issue 40), QUICK_RUN the library's defaults;
    the dictionaries QUICK and FULL, kept for their readers, hold the same five sizes."""
    from theorydyn.positional.config import FULL, FULL_RUN, QUICK, QUICK_RUN, PositionalConfig

    assert QUICK_RUN == PositionalConfig() and FULL_RUN.steps == 4000 and FULL_RUN.N == 8192
    assert f2.QUICK is QUICK and f2.FULL is FULL
    for named, old in ((QUICK_RUN, QUICK), (FULL_RUN, FULL)):
        assert set(old) == {"N", "N_test", "steps", "lr", "record_every"}
        assert all(getattr(named, k) == v for k, v in old.items())
    with pytest.raises(ValueError, match="^lr must"):
        QUICK_RUN.replace(lr=0.0)
    with pytest.raises(TypeError):  # run's overrides are fields of the config, no other keyword
        f2.run(f2.figure2_setting(), seeds=[0], N=8, steps=0, learning_rate=0.1)
