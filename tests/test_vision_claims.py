"""Ledger rows of Section 6 (theorydyn/claims/vision.py): verdicts flip with their inputs; the
distance profile against a per-pair loop; the whole path on a tiny configuration."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from theorydyn.claims import vision as cv  # noqa: E402
from theorydyn.claims.check import Verdict  # noqa: E402
from theorydyn.experiments.vision import contrast, ring_ink  # noqa: E402
from theorydyn.vision.maps import cosine_similarity, distance_profile, grid_distance  # noqa: E402

torch.set_num_threads(1)


def test_accuracy_verdict_flips_with_the_gap():
    on_par = cv.accuracy_check([0.981, 0.984, 0.979], [0.980, 0.986, 0.978])
    assert on_par.verdict is Verdict.PASS and on_par.ci_low < on_par.measured < on_par.ci_high
    apart = cv.accuracy_check([0.93, 0.94, 0.935], [0.98, 0.985, 0.982])
    assert apart.verdict is Verdict.FAIL and apart.measured == pytest.approx(-0.0473, abs=1e-3)
    noisy = cv.accuracy_check([0.99, 0.95, 0.99], [0.97, 0.99, 0.96])  # CI straddles the tolerance
    assert noisy.verdict is Verdict.INFO and "inconclusive" in noisy.note
    assert on_par.route and "per-image loop" in on_par.route


def test_robustness_verdict_pass_deviates_fail():
    vit = [0.002, -0.002, 0.0]
    assert cv.robustness_check(vit, [0.08, 0.10, 0.09]).verdict is Verdict.PASS
    dev = cv.robustness_check(vit, [0.004, -0.006, 0.001])
    assert dev.verdict is Verdict.DEVIATES and "does not degrade" in dev.note
    assert cv.robustness_check([0.05, 0.06, 0.04], [0.2, 0.2, 0.2]).verdict is Verdict.FAIL  # ViT hurt > 0.02
    assert cv.robustness_check([0.01, 0.012, 0.011], [-0.01, -0.012, -0.011]).verdict is Verdict.FAIL  # ViT < CNN
    # seed-to-seed noise of a point or two: neither part shown, nor contradicted
    noisy = cv.robustness_check([-0.003, -0.011, 0.017], [0.017, 0.017, 0.019])
    assert noisy.verdict is Verdict.INFO and "inconclusive" in noisy.note
    row = cv.robustness_check(vit, [0.08, 0.10, 0.09]).row()
    assert row["measured"] == pytest.approx(np.mean([0.078, 0.102, 0.09]))


def test_decay_verdict_needs_contrast_above_zero_and_init():
    assert cv.decay_check([0.3, 0.35, 0.32], [0.01, -0.02, 0.0]).verdict is Verdict.PASS
    assert cv.decay_check([0.01, -0.03, 0.02], [0.0, 0.0, 0.0]).verdict is Verdict.FAIL
    rising = cv.decay_check([-0.2, -0.25, -0.22], [0.0, 0.01, -0.01])
    assert rising.verdict is Verdict.DEVIATES and "RISES" in rising.note
    # above zero but not above what the untrained encodings already show
    assert cv.decay_check([0.10, 0.11, 0.12], [0.2, 0.2, 0.2]).verdict is Verdict.FAIL
    assert "0.100 of 1 against 0.600" in cv.decay_check([-0.2, -0.25, -0.22], [0.0] * 3, ink=(0.1, 0.6)).note


def test_recovery_verdict_pass_deviates_fail():
    assert cv.recovery_check([0.0, 0.01, -0.01], [0.3, 0.32, 0.31]).verdict is Verdict.PASS
    assert cv.recovery_check([0.0, 0.01, -0.01], [-0.2, -0.22, -0.21]).verdict is Verdict.DEVIATES
    assert cv.recovery_check([0.0, 0.01, -0.01], [0.02, -0.03, 0.01]).verdict is Verdict.FAIL
    # local as learned already (no permutation at work): after − before not above 0, FAIL
    assert cv.recovery_check([0.3, 0.32, 0.31], [0.3, 0.32, 0.31]).verdict is Verdict.FAIL


def test_inverse_permutation_recovers_a_planted_local_encoding():
    """Encodings local on the original 4×4 patch grid, moved to the network's positions by π_2 of an
    8×8 image (tiles of one 2×2 patch): the contrast is low as learned and back after π⁻¹ (Figure 5c's
    bookkeeping, independent of any training)."""
    from theorydyn.vision import grid, maps

    g = 4
    r, c = np.divmod(np.arange(g * g), g)
    centers = np.linspace(0, g - 1, 6)
    P_orig = np.exp(-((r[:, None] - centers[None]) ** 2)[:, :, None] - ((c[:, None] - centers[None]) ** 2)[:, None, :])
    P_orig = P_orig.reshape(g * g, -1)
    sigma = maps.induced_patch_permutation(g, grid.grid_permutation(8, 2, 0), 1)
    assert sorted(sigma.tolist()) == list(range(g * g)) and (sigma != np.arange(g * g)).any()
    P_net = P_orig[sigma]  # position q of the network holds the patch of original position σ(q)
    C = maps.cosine_similarity(P_net)
    after = maps.unpermute_similarity(C, sigma)
    np.testing.assert_allclose(after, maps.cosine_similarity(P_orig), atol=1e-12)
    assert contrast(after) > 0.5 > abs(contrast(C))


def test_ring_ink_against_a_per_pixel_loop():
    x = torch.randint(0, 256, (5, 1, 8, 8), dtype=torch.uint8)
    ring, inner = ring_ink(x, 2)
    xs = x.double().numpy()[:, 0] / 255
    on_ring = [[max(abs(2 * (i // 2) - 3), abs(2 * (j // 2) - 3)) == 3 for j in range(8)] for i in range(8)]
    mask = np.array(on_ring)  # a pixel of a border patch of the 4×4 grid of 2×2 patches
    assert ring == pytest.approx(xs[:, mask].mean()) and inner == pytest.approx(xs[:, ~mask].mean())


def test_distance_profile_matches_a_per_pair_loop():
    rng = np.random.default_rng(0)
    g = 4
    C = rng.normal(size=(g * g, g * g))
    want = np.zeros(g - 1)
    count = np.zeros(g - 1)
    for i in range(g * g):
        for j in range(g * g):
            k = max(abs(i // g - j // g), abs(i % g - j % g))
            if k:
                want[k - 1] += C[i, j]
                count[k - 1] += 1
    assert np.allclose(distance_profile(C), want / count)
    assert grid_distance(3)[0].tolist() == [0, 1, 2, 1, 1, 2, 2, 2, 2]
    # encodings that are a smooth function of position decay with distance; random ones do not
    r, c = np.divmod(np.arange(g * g), g)
    P = np.stack([np.cos(r), np.sin(r), np.cos(c), np.sin(c)], 1) + 0.0
    rho = distance_profile(cosine_similarity(P))
    assert rho[0] > rho[-1]
    assert math.isclose(cosine_similarity(P)[3, 3], 1.0)


@pytest.mark.slow
def test_checks_end_to_end_on_a_tiny_configuration(tmp_path, monkeypatch):
    from theorydyn.vision.data import load

    d = load("digits")
    d.x_train, d.y_train = d.x_train[:128], d.y_train[:128]
    d.x_test, d.y_test = d.x_test[:64], d.y_test[:64]
    from theorydyn.vision import experiments

    monkeypatch.setattr(cv, "QUICK", dict(epochs=1))

    monkeypatch.setitem(
        experiments.PRESETS,
        "digits",
        dict(experiments.PRESETS["digits"], width=16, depth=1, heads=2, mlp=16, batch_size=64, epochs=1),
    )
    said = []
    rows = cv.checks(
        quick=True, seeds=(0, 1), progress=said.append, root=tmp_path, data=d, robustness_seeds=(0, 1), paper=False
    )
    assert [r.claim for r in rows] == [
        f"Section 6, {x} (digits, a proxy for CIFAR)"
        for x in ("Figures 6/7", "Figure 5a", "Figure 5a", "Figure 1a", "Figure 5c")
    ]
    assert {r.verdict for r in rows} == {Verdict.INFO} and all("the rule gives" in r.note for r in rows)
    assert ["π_1, ViT patch 1" in rows[1].quantity, "π_2, ViT patch 2" in rows[2].quantity] == [True, True]
    for r in rows:
        assert isinstance(r.verdict, Verdict) and r.route and r.params["seeds"] == 2
        assert np.isfinite(r.measured) and np.isfinite(r.ci_low)
    assert said
    # the second call reads every run back from the cache: no new folders, the same numbers
    before = sorted(p.name for p in tmp_path.iterdir())
    again = cv.checks(quick=True, seeds=(0, 1), root=tmp_path, data=d, robustness_seeds=(0, 1), paper=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert [r.measured for r in again] == [r.measured for r in rows]


@pytest.mark.slow
def test_the_three_figures_draw_from_the_cache(tmp_path, monkeypatch):
    from theorydyn.core.plotting import save
    from theorydyn.vision import experiments, figs
    from theorydyn.vision.data import load

    monkeypatch.setitem(
        experiments.PRESETS,
        "digits",
        dict(experiments.PRESETS["digits"], width=16, depth=1, heads=2, mlp=16, epochs=1, batch_size=256),
    )
    data, root, seeds = load("digits", download=False), tmp_path / "runs", (0, 1)

    def draw_all():
        for fn, name in (
            (figs.similarity_figure_digits, "vision_pos_similarity.png"),
            (figs.compare_figure_digits, "vision_compare.png"),
            (figs.permuted_figure_digits, "vision_permuted.png"),
        ):
            assert save(fn(data, seeds, root=root), tmp_path / "fig" / name).read_bytes()[:4] == b"\x89PNG"

    draw_all()
    runs = sorted(p.name for p in root.iterdir() if p.is_dir())
    # 2 attentions × 2 seeds, twice (the preset; P at 0.02 for the similarity maps); π_2: the permuted ViT,
    # the CNN on original and permuted images × 2 seeds (the unpermuted patch-2 ViT runs are the positional
    # runs above, from the cache); π_1: the patch-1 ViT on original and permuted images and the CNN on
    # permuted ones (its original runs are π_2's) × 2 seeds
    assert len(runs) == 4 + 4 + 6 + 6
    draw_all()  # everything cached now
    assert sorted(p.name for p in root.iterdir() if p.is_dir()) == runs


def test_digits_rows_are_info_proxies_that_keep_the_rules_verdict():
    """A digits row is a proxy: INFO whatever the rule says, the rule's verdict kept in the note."""
    for acc_pos, rule in (([0.981, 0.984, 0.979], "PASS"), ([0.93, 0.94, 0.935], "FAIL")):
        row = cv.proxy(cv.accuracy_check(acc_pos, [0.980, 0.986, 0.978]))
        assert row.verdict is Verdict.INFO and row.claim == "Section 6, Figures 6/7 (digits, a proxy for CIFAR)"
        assert f"the rule gives {rule} here" in row.note


def test_paper_datasets_not_run_without_their_files_and_run_with_them(tmp_path):
    """No files in the data directory: a NOT_RUN row per dataset with the vision command; the files there:
    the Figures 6/7 row runs (accuracies stubbed) and its verdict is the rule's, PASS or FAIL; ImageNet
    and the CIFAR-10 Figure 5a / 1a rows are NOT_RUN either way."""
    rows = cv.paper_rows(tmp_path, seeds=(0, 1, 2))
    by = {r.claim: r for r in rows}
    for name in ("cifar10", "cifar100", "svhn"):
        r = by[f"Section 6, Figures 6/7 ({name})"]
        assert r.verdict is Verdict.NOT_RUN and np.isnan(r.measured)
        assert f"python -m theorydyn.vision {name} --experiment compare --seeds 3 --data-dir {tmp_path}" in r.note
    assert "cifar-10-python.tar.gz not in" in by["Section 6, Figures 6/7 (cifar10)"].note
    assert "train_32x32.mat, test_32x32.mat not in" in by["Section 6, Figures 6/7 (svhn)"].note
    assert by["Section 6, Figures 6/7 (ImageNet)"].verdict is Verdict.NOT_RUN
    assert "no ImageNet loader" in by["Section 6, Figures 6/7 (ImageNet)"].note
    assert all(r.passed for r in rows)  # NOT_RUN is not a failure (and not a pass: its own verdict)

    (tmp_path / "cifar-10-python.tar.gz").write_bytes(b"")  # present (the loader is stubbed below)
    seen = []

    def stub(acc_pos):
        def accuracies(name, data_dir, **kw):
            seen.append((name, data_dir))
            return acc_pos, [0.80, 0.81, 0.79], dict(epochs=300, seeds=3)

        return accuracies

    for acc_pos, verdict in (([0.801, 0.809, 0.792], Verdict.PASS), ([0.70, 0.71, 0.69], Verdict.FAIL)):
        row = cv.paper_rows(tmp_path, accuracies=stub(acc_pos))[0]
        assert row.claim == "Section 6, Figures 6/7 (cifar10)" and row.verdict is verdict
        assert row.params["dataset"] == "cifar10" and "proxy" not in row.claim
    assert seen == [("cifar10", tmp_path)] * 2
    assert cv.paper_rows(tmp_path, accuracies=stub([0.8] * 3))[1].verdict is Verdict.NOT_RUN  # cifar100 absent


def test_inputs_name_the_paper_files_present(tmp_path):
    assert cv.inputs(None, True, data_dir=tmp_path) == {"data_dir": str(tmp_path), "present": {}}
    (tmp_path / "cifar-10-python.tar.gz").write_bytes(b"x" * 7)
    assert cv.inputs(None, True, data_dir=tmp_path)["present"] == {"cifar-10-python.tar.gz": 7}


def test_ledger_and_figures_train_the_shared_runs_at_the_same_torch_threads(monkeypatch):
    """runs/vision/ledger is cached by configuration, threads aside, and torch rounds differently at
    another thread count: the ledger rows and the vision figures both train at min(threads, 2)
    (the figures trained at 1), and the caller's setting is restored."""
    from theorydyn import figures
    from theorydyn.vision import experiments as ex
    from theorydyn.vision import figs

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        with ex.ledger_threads():
            assert torch.get_num_threads() == ex.LEDGER_THREADS == 2
        assert torch.get_num_threads() == 3
        seen = []
        monkeypatch.setattr(figs, "compare_figure_digits", lambda data, root=None: seen.append(torch.get_num_threads()))
        fig = figures.REGISTRY["vision_compare"]
        fig.draw(fig.compute(True))
        assert seen == [2] and torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
