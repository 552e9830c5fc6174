"""Ensembles: K networks trained as one by the one training loop, member k = the single run of seed k."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from vision_tiny import ATOL, RTOL, SEEDS, TINY, single  # noqa: E402
from vision_tiny import small_digits as _small_digits  # noqa: E402

from theorydyn.vision.grid import grid_permutation  # noqa: E402
from theorydyn.vision.model import ViTConfig, build_model, ensemble, member_state  # noqa: E402
from theorydyn.vision.train import Diverged, TrainConfig, train  # noqa: E402

torch.set_num_threads(1)

#: except the key half of the attention's qk bias: it adds the same q·b_k to every score of a row,
#: which the softmax ignores, so its gradient is rounding noise that Adam scales up to steps of size
#: ~lr; member and single run drift apart there by up to 1.5e-4 (measured) with no effect on the
#: function (the logits are compared as well)
KEY_BIAS = 2e-3


def _named(key):
    """assert_close's message (the largest absolute and relative mismatch, and how many elements) under
    the parameter's name."""
    return lambda message: f"{key}: {message}"


@pytest.fixture(scope="module")
def small_digits():
    return _small_digits()


CASES = {
    "vit-positional": ("vit", ViTConfig(**TINY)),
    "vit-vanilla": ("vit", ViTConfig(**TINY, attention="vanilla")),
    "cnn": ("cnn", None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_members_start_as_the_single_networks_of_their_seeds(case):
    name, vit = CASES[case]
    e = ensemble(name, SEEDS, channels=1, classes=10, vit=vit)
    for k, seed in enumerate(SEEDS):
        ref = single(name, seed, vit).state_dict()
        got = member_state(e, k)
        assert list(got) == list(ref)
        for key in ref:
            assert torch.equal(got[key], ref[key]), key


def test_a_one_member_ensemble_is_the_single_run_bit_for_bit(small_digits, tmp_path):
    cfg = TrainConfig(epochs=2, batch_size=32, lr=2e-3, warmup_epochs=1, seed=4, shuffle_grid=4)
    perm = grid_permutation(8, 4, 0)
    a = single("vit", 4)
    ha = train(a, small_digits, cfg, tmp_path / "a", perm=perm, progress=False)
    b = ensemble("vit", [4], channels=1, classes=10, vit=ViTConfig(**TINY))
    [hb] = train(
        b, small_digits, dataclasses.replace(cfg, seed=0), [tmp_path / "b"], perm=perm, progress=False, seeds=[4]
    )
    cols = ["epoch", "train_loss", "test_acc", "lr"]
    pd.testing.assert_frame_equal(ha[cols], hb[cols], check_exact=True)
    for (k, va), vb in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(va, vb), k
    assert (tmp_path / "a" / "run.json").read_text() == (tmp_path / "b" / "run.json").read_text()


#: Member k against the single run of seed k, both in float64. In float32 the two differ by the
#: kernels, not by the logic: the ensemble's grouped convolution and batched matmuls and the single
#: network's convolution and addmm are different kernels, and which ones torch picks depends on the
#: CPU's instruction set. With AVX-512 (AMD EPYC family 25) the CNN's weights agreed to 6e-8 after 3
#: epochs; with AVX2 only (family 23, or ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 here) they
#: differ by 2.5e-4, 0.06 of how far the weights moved, with the same test accuracies. In float64
#: both paths agree to ~1e-15 of the weights' scale on either instruction set (measured), and the
#: tolerance follows from the arithmetic: unit roundoff 2^-53, a gradient's longest sum (a 3×3
#: convolution weight sums batch × 8 × 8 = 2048 products) and 18 Adam steps (3 epochs of 192/32
#: batches) give a first-order bound 18 · 2048 · 2^-53 = 4.1e-12 of the parameter's scale per
#: parameter; Adam's division by √v̂ and BatchNorm's feedback between steps get a factor 100 on top.
STEPS = 3 * 192 // 32
TOL64 = 100 * STEPS * (32 * 8 * 8) * 2.0**-53


@pytest.fixture
def float64():
    """Every tensor the test makes (weights, the normalised images, the optimiser's state) in float64."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize("case", list(CASES))
def test_member_k_is_the_single_run_of_seed_k(small_digits, tmp_path, case, float64):
    name, vit = CASES[case]
    cfg = TrainConfig(epochs=3, batch_size=32, lr=2e-3, warmup_epochs=1, shuffle_grid=4)
    assert STEPS == cfg.epochs * len(small_digits.x_train) // cfg.batch_size
    perm = grid_permutation(8, 4, 0)
    e = ensemble(name, SEEDS, channels=1, classes=10, vit=vit)
    hs = train(e, small_digits, cfg, [tmp_path / f"e{s}" for s in SEEDS], perm=perm, progress=False, seeds=SEEDS)
    for k, seed in enumerate(SEEDS):
        m = single(name, seed, vit)
        h = train(
            m, small_digits, dataclasses.replace(cfg, seed=seed), tmp_path / f"s{seed}", perm=perm, progress=False
        )
        assert hs[k].epoch.tolist() == h.epoch.tolist()
        loss_gap = float(
            np.max(np.abs(hs[k].train_loss.to_numpy() - h.train_loss.to_numpy()) / h.train_loss.to_numpy())
        )
        assert loss_gap <= TOL64, f"seed {seed}: train losses differ by {loss_gap:.3g} relative (allowed {TOL64:.2g})"
        assert hs[k].test_acc.tolist() == h.test_acc.tolist()
        assert hs[k].lr.tolist() == h.lr.tolist()
        ref, got = m.state_dict(), torch.load(tmp_path / f"e{seed}" / "checkpoint.pt", weights_only=False)["model"]
        for key in ref:
            g, r = got[key], ref[key]
            assert g.dtype == r.dtype and (not r.is_floating_point() or r.dtype == torch.float64), key
            if key.endswith("attn.qk.bias"):  # the key bias: see KEY_BIAS
                torch.testing.assert_close(g[len(g) // 2 :], r[len(r) // 2 :], rtol=0, atol=KEY_BIAS, msg=_named(key))
                g, r = g[: len(g) // 2], r[: len(r) // 2]
            atol = TOL64 * max(1.0, float(r.abs().max())) if r.is_floating_point() else 0
            torch.testing.assert_close(g, r, rtol=0, atol=atol, msg=_named(key))
        if name == "vit":  # the trained functions agree, key bias included
            e1 = single(name, 99, vit)
            e1.load_state_dict(got)
            x = small_digits.normalize(small_digits.x_test)
            with torch.no_grad():
                a, b = e1.eval()(x), m.eval()(x)
            torch.testing.assert_close(a, b, rtol=0, atol=TOL64 * max(1.0, float(b.abs().max())), msg=_named("logits"))
        run_e = (tmp_path / f"e{seed}" / "run.json").read_text()
        assert run_e == (tmp_path / f"s{seed}" / "run.json").read_text()
    # the members differ (the comparison above could not pass by accident)
    assert not hs[0].train_loss.equals(hs[1].train_loss)


def test_an_ensemble_resumes_from_its_members_checkpoints_exactly(small_digits, tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=32, lr=2e-3, warmup_epochs=1)
    outs = lambda d: [tmp_path / d / str(s) for s in SEEDS]  # noqa: E731

    def run(d, init_seeds=SEEDS, **kw):
        e = ensemble("vit", init_seeds, channels=1, classes=10, vit=ViTConfig(**TINY))
        return train(e, small_digits, cfg, outs(d), progress=False, seeds=SEEDS, **kw)

    ha = run("a")
    run("b", stop_after=1)
    hb = run("b", (9, 9, 9), resume=True)
    for a, b in zip(ha, hb, strict=True):
        pd.testing.assert_frame_equal(
            a.drop(columns=["images_per_s", "seconds"]), b.drop(columns=["images_per_s", "seconds"]), check_exact=True
        )
    # a member's checkpoint resumes as a single run
    m = single("vit", 9)
    h = train(m, small_digits, dataclasses.replace(cfg, seed=SEEDS[1]), outs("b")[1], progress=False, resume=True)
    pd.testing.assert_frame_equal(h, hb[1], check_exact=True)


def test_ensemble_arguments_are_checked(small_digits, tmp_path):
    e = ensemble("vit", (0, 1), channels=1, classes=10, vit=ViTConfig(**TINY))
    with pytest.raises(ValueError, match="2 seed"):
        train(e, small_digits, TrainConfig(epochs=1), [tmp_path / "a"], seeds=[0], progress=False)
    with pytest.raises(ValueError, match="ensembles"):
        build_model("resnet18", channels=1, classes=10, members=2)


def test_a_diverging_member_stops_alone(small_digits, tmp_path):
    e = ensemble("vit", (0, 1), channels=1, classes=10, vit=ViTConfig(**TINY))
    with torch.no_grad():
        e.head.weight[1] = float("nan")  # member 1 diverges at once, member 0 is untouched
    cfg = TrainConfig(epochs=2, batch_size=64)
    with pytest.raises(Diverged, match="not finite"):
        train(e, small_digits, cfg, [tmp_path / "0", tmp_path / "1"], seeds=[0, 1], progress=False)
    h0 = pd.read_csv(tmp_path / "0" / "history.csv")
    h1 = pd.read_csv(tmp_path / "1" / "history.csv")
    assert len(h0) == 2 and h0.train_loss.notna().all()
    assert len(h1) == 1 and h1.train_loss.isna().all()
    ref = train(single("vit", 0), small_digits, cfg, tmp_path / "ref", progress=False)
    assert h0.train_loss.to_numpy() == pytest.approx(ref.train_loss.to_numpy(), rel=RTOL, abs=ATOL)


def test_cached_runs_train_seeds_together_into_per_seed_cache_folders(small_digits, tmp_path):
    from theorydyn.vision.experiments import RunSpec, cache_folder, cached_run, cached_runs

    vit = ViTConfig(**TINY)
    tcfg = TrainConfig(epochs=1, batch_size=64)
    specs = [RunSpec("vit", "positional", None, seed, 2) for seed in (0, 1)]
    rows = cached_runs(specs, small_digits, vit, tcfg, tmp_path)
    folders = [cache_folder(sp, small_digits, vit, tcfg, tmp_path) for sp in specs]
    assert [r["folder"] for r in rows] == [str(f) for f in folders]
    stamp = [(f / "checkpoint.pt").stat().st_mtime_ns for f in folders]
    # a single request of a seed trained in the ensemble reads it back and trains nothing
    r1 = cached_run(specs[1], small_digits, vit, tcfg, tmp_path)
    assert r1["final_test_acc"] == rows[1]["final_test_acc"]
    assert [(f / "checkpoint.pt").stat().st_mtime_ns for f in folders] == stamp
    # and member 1 is the single run of seed 1 (trained here in a fresh cache)
    alone = cached_run(specs[1], small_digits, vit, tcfg, tmp_path / "alone")
    assert alone["final_train_loss"] == pytest.approx(rows[1]["final_train_loss"], rel=RTOL, abs=ATOL)


def test_robustness_shows_one_bar_over_every_member_epoch(small_digits, tmp_path):
    from theorydyn.vision.experiments import overall_bar, robustness

    vit = ViTConfig(**TINY)
    tcfg = TrainConfig(epochs=2, batch_size=64)
    seen = []

    class Bar:  # the tqdm calls train() makes on an overall bar
        def update(self, n):
            seen.append(n)

        def set_postfix_str(self, text, refresh=True):
            pass

    # 2 seeds × (ViT, CNN) × (original, permuted) = 8 runs of 2 epochs; ensembles of 2 members
    robustness(small_digits, vit, tcfg, tmp_path, seeds=(0, 1), s=2, patch=2, progress=Bar())
    assert sum(seen) == 8 * 2 and set(seen) == {2}
    # the bar's total is the member-epochs still to train: all of them cold, none once cached
    folders = [tmp_path / f.name for f in tmp_path.iterdir() if f.is_dir()]
    with overall_bar(True, folders, tcfg.epochs, "again") as bar:
        assert bar.total == 0
    with overall_bar(True, folders, tcfg.epochs, "cold", resume=False) as bar:
        assert bar.total == 8 * 2
