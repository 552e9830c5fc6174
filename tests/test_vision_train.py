"""Training loop: a step lowers the loss, the schedule, exact resume, divergence handling."""

import dataclasses
import math

import pandas as pd
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
import vision_tiny  # noqa: E402

from theorydyn.vision.grid import grid_permutation  # noqa: E402
from theorydyn.vision.model import ViT, ViTConfig, build_model  # noqa: E402
from theorydyn.vision.train import Diverged, TrainConfig, lr_at, make_optimizer, train  # noqa: E402

torch.set_num_threads(1)

TINY = dict(image_size=8, patch=2, channels=1, classes=10, width=16, depth=1, heads=2, mlp=16)


@pytest.fixture(scope="module")
def small_digits():
    return vision_tiny.small_digits()


@pytest.mark.parametrize("name", ["vit-positional", "vit-vanilla", "cnn", "resnet18"])
def test_one_training_step_lowers_the_loss(small_digits, name):
    torch.manual_seed(0)
    model, _, att = name.partition("-")
    m = build_model(model, channels=1, classes=10, vit=ViTConfig(**TINY, attention=att or "positional"))
    opt = make_optimizer(m, TrainConfig(lr=1e-3))
    x, y = small_digits.normalize(small_digits.x_train[:64]), small_digits.y_train[:64]
    m.eval()  # fixed batch-norm statistics: compare the same function before and after the step
    before = F.cross_entropy(m(x), y)
    opt.zero_grad()
    before.backward()
    opt.step()
    with torch.no_grad():
        after = F.cross_entropy(m(x), y)
    assert after < before - 1e-4


def test_learning_rate_schedule():
    assert lr_at(0, 100, 10, 1.0) == pytest.approx(0.1)
    assert lr_at(9, 100, 10, 1.0) == pytest.approx(1.0)
    assert lr_at(10, 100, 10, 1.0) == pytest.approx(1.0)
    assert lr_at(55, 100, 10, 1.0) == pytest.approx(0.5)
    assert lr_at(99, 100, 10, 1.0) == pytest.approx(0.5 * (1 + math.cos(math.pi * 89 / 90)))


def fresh(seed=0):
    torch.manual_seed(seed)
    return ViT(ViTConfig(**TINY, attention="positional"))


def test_resume_reproduces_an_uninterrupted_run_exactly(small_digits, tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=32, lr=2e-3, warmup_epochs=1, seed=4, shuffle_grid=4)
    perm = grid_permutation(8, 4, 0)
    a = fresh()
    ha = train(a, small_digits, cfg, tmp_path / "a", perm=perm, progress=False)
    b = fresh()
    hb1 = train(b, small_digits, cfg, tmp_path / "b", perm=perm, progress=False, stop_after=1)
    assert len(hb1) == 1
    c = fresh(seed=123)  # different initial weights: everything must come from the checkpoint
    hb = train(c, small_digits, cfg, tmp_path / "b", perm=perm, progress=False, resume=True)
    timing = ["images_per_s", "seconds"]
    pd.testing.assert_frame_equal(ha.drop(columns=timing), hb.drop(columns=timing), check_exact=True)
    for (k, va), vb in zip(a.state_dict().items(), c.state_dict().values(), strict=True):
        assert torch.equal(va, vb), k
    csv = pd.read_csv(tmp_path / "b" / "history.csv")
    assert list(csv.columns) == ["epoch", "train_loss", "test_acc", "lr", "images_per_s", "seconds"]
    assert csv.epoch.tolist() == [1, 2, 3] and (csv.images_per_s > 0).all()
    assert ha.lr.iloc[-1] < ha.lr.iloc[0]
    # a second seed changes the numbers (the check above could not pass by accident)
    hd = train(fresh(), small_digits, dataclasses.replace(cfg, seed=5), tmp_path / "d", perm=perm, progress=False)
    assert not hd.train_loss.equals(ha.train_loss)


def test_resume_refuses_a_different_configuration(small_digits, tmp_path):
    cfg = TrainConfig(epochs=1, batch_size=64, seed=0)
    train(fresh(), small_digits, cfg, tmp_path, progress=False)
    with pytest.raises(ValueError, match="different configuration"):
        train(fresh(), small_digits, dataclasses.replace(cfg, lr=0.5), tmp_path, progress=False, resume=True)


def test_divergence_stops_at_the_step_and_keeps_the_history(small_digits, tmp_path):
    bad = dataclasses.replace(small_digits, std=(0.0,))  # x/0: inf inputs, NaN loss at once
    with pytest.raises(Diverged, match="step 1 "):
        train(fresh(), bad, TrainConfig(epochs=2, batch_size=64), tmp_path, progress=False)
    assert len(pd.read_csv(tmp_path / "history.csv")) == 1


def test_amp_switch_runs_bf16_autocast_on_cpu_and_matches_fp32_loosely(small_digits, tmp_path):
    """The accelerated path (amp=True) is the CUDA one minus the device: it must train on a CPU too."""
    cfg = TrainConfig(epochs=1, batch_size=64, seed=0)
    h32 = train(fresh(), small_digits, cfg, tmp_path / "fp32", progress=False)
    h16 = train(fresh(), small_digits, dataclasses.replace(cfg, amp=True), tmp_path / "bf16", progress=False)
    assert h32.train_loss.iloc[0] != h16.train_loss.iloc[0]  # the switch did something
    assert abs(h32.train_loss.iloc[0] - h16.train_loss.iloc[0]) < 0.05


def test_augmentation_switches_change_the_batches(small_digits, tmp_path):
    cfg = TrainConfig(epochs=1, batch_size=64, seed=0, pad=0, label_smoothing=0.0)
    base = train(fresh(), small_digits, cfg, tmp_path / "a", progress=False).train_loss.iloc[0]
    same = train(fresh(), small_digits, cfg, tmp_path / "b", progress=False).train_loss.iloc[0]
    aff = train(
        fresh(), small_digits, dataclasses.replace(cfg, affine=(0.5, 10.0, 0.1)), tmp_path / "c", progress=False
    ).train_loss.iloc[0]
    assert base == same and aff != base


def test_training_prints_nothing_and_reports_its_status_through_a_callback(small_digits, tmp_path, capfd):
    """The library never prints (issue 29): by default train() is silent; given a status function it
    gets the status line, the epoch's end marked final (with its test accuracy), and the numbers are
    the silent run's, bit for bit."""
    cfg = TrainConfig(epochs=2, batch_size=64, lr=1e-3, warmup_epochs=0, seed=1)
    quiet = train(fresh(), small_digits, cfg, tmp_path / "a")
    assert capfd.readouterr() == ("", "")
    said: list[tuple[str, bool]] = []
    loud = train(
        fresh(), small_digits, cfg, tmp_path / "b", tag="t", progress=lambda text, final: said.append((text, final))
    )
    assert capfd.readouterr() == ("", "")
    finals = [text for text, final in said if final]
    assert len(finals) == cfg.epochs and all(" test acc " in t and t.startswith("t epoch ") for t in finals)
    assert finals[-1].startswith("t epoch 2/2 step 3/3 ") and any(not final for _, final in said)
    timing = ["images_per_s", "seconds"]
    pd.testing.assert_frame_equal(quiet.drop(columns=timing), loud.drop(columns=timing), check_exact=True)
