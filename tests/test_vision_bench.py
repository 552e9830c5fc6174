"""The throughput benchmark runs and prints its table and ratio (no timing is asserted); its measurements
(theorydyn.vision.throughput) print nothing."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from theorydyn.vision.bench import main  # noqa: E402

#: the tiny ViT of every benchmark test here
TINY_VIT = ["--width", "16", "--depth", "1", "--heads", "2"]


def test_bench_prints_table_and_ratio(tmp_path, capsys):
    csv = tmp_path / "bench.csv"
    argv = [
        "--device",
        "cpu",
        "--batches",
        "4",
        "8",
        *TINY_VIT,
        "--steps",
        "1",
        "--warmup",
        "0",
        "--repeats",
        "1",
        "--out",
        str(csv),
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "batch 4: positional/vanilla images per second = " in out and "batch 8:" in out
    import pandas as pd

    df = pd.read_csv(csv)
    assert len(df) == 4 and (df.images_per_s > 0).all()
    assert df[df.attention == "vanilla"].ratio_vs_vanilla.eq(1.0).all()


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--batches", "12,x"], "--batches"),
        (["--width", "10", "--heads", "3"], "--heads"),
        (["--patch", "5"], "--patch"),
    ],
)
def test_bench_bad_input_exits_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--device", "cpu", *argv])
    assert e.value.code == 2 and needle in capsys.readouterr().err


def test_smoke_runs_the_accelerated_training_path_on_cpu(tmp_path, capsys):
    """--smoke goes through train() with bf16 autocast on (the CUDA switch) and writes its CSV."""
    torch.set_num_threads(1)
    csv = tmp_path / "smoke.csv"
    argv = [
        "--smoke",
        "--device",
        "cpu",
        *TINY_VIT,
        "--batches",
        "32",
        "--smoke-images",
        "64",
        "--out",
        str(csv),
    ]
    assert main(argv) == 0
    import pandas as pd

    df = pd.read_csv(csv)
    assert df.attention.tolist() == ["positional", "vanilla"]
    assert (df.images_per_s > 0).all() and (df.peak_memory_mb > 0).all() and (df.amp == "bf16").all()
    assert df.train_loss.between(0, 10).all() and df.test_acc.between(0, 1).all()
    assert list(tmp_path.iterdir()) == [csv]  # the run folders were temporary


def test_smoke_without_batches_trains_at_its_one_default_batch(tmp_path):
    """The README's `--smoke --device cuda` line names no --batches: the smoke default is one batch (128)."""
    torch.set_num_threads(1)
    csv = tmp_path / "smoke.csv"
    argv = ["--smoke", "--device", "cpu", *TINY_VIT, "--smoke-images", "256"]
    assert main([*argv, "--out", str(csv)]) == 0
    import pandas as pd

    assert pd.read_csv(csv).batch.tolist() == [128, 128]


def test_smoke_refuses_a_batch_larger_than_the_images(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--smoke", "--device", "cpu", "--batches", "64", "--smoke-images", "32"])
    assert e.value.code == 2 and "--batches" in capsys.readouterr().err


def test_ensemble_table_compares_members_with_the_single_network(tmp_path, capsys):
    """--ensemble: one row per network and member count, ratios against K = 1 (no timing asserted)."""
    torch.set_num_threads(1)
    csv = tmp_path / "ens.csv"
    assert (
        main(["--ensemble", "--device", "cpu", "--members", "2", "--repeats", "1", "--epochs", "1", "--out", str(csv)])
        == 0
    )
    import pandas as pd

    df = pd.read_csv(csv)
    assert sorted(set(df.members)) == [1, 2] and len(df) == 8
    assert (df.images_per_s > 0).all() and df[df.members == 1].ratio_vs_single.eq(1.0).all()
    # the floor columns follow from their parts, and a network's work per image does not depend on K
    assert np.allclose(df.of_floor, df.images_per_s / df.floor_images_per_s)
    assert np.allclose(df.floor_images_per_s * df.matmul_MFLOP_per_image * 1e6, df.gemm_peak_GFLOP_per_s * 1e9)
    assert (df.groupby("model").matmul_MFLOP_per_image.nunique() == 1).all()
    text = capsys.readouterr().out
    assert "load average" in text and "floor: the matrix products alone" in text


def test_matmul_flops_per_image_counts_a_two_layer_perceptron_by_hand():
    """Against a hand count: x (B, a) → Linear(a, h) → ReLU → Linear(h, c). Forward 2(ah + hc) per image;
    backward: both weight gradients (2ah + 2hc) and the hidden activation's gradient (2hc), not the
    input's (x needs none); biases are additions, not products. An ensemble of K such networks, as one
    batched product, counts the same per image and member."""
    from theorydyn.vision.throughput import matmul_flops_per_image

    a, h, c, B = 12, 7, 5, 9
    net = torch.nn.Sequential(torch.nn.Linear(a, h), torch.nn.ReLU(), torch.nn.Linear(h, c))
    x, y = torch.randn(B, a), torch.randint(0, c, (B,))
    hand = 2 * (a * h + h * c) + (2 * a * h + 2 * h * c) + 2 * h * c
    assert matmul_flops_per_image(net, x, y) == hand

    class Batched(torch.nn.Module):  # K networks at once: (K, B, a) @ (K, a, h) …
        def __init__(self, K):
            super().__init__()
            self.w1 = torch.nn.Parameter(torch.randn(K, a, h))
            self.w2 = torch.nn.Parameter(torch.randn(K, h, c))

        def forward(self, x):
            return torch.relu(x @ self.w1) @ self.w2

    K = 4
    assert matmul_flops_per_image(Batched(K), x.expand(K, B, a), y) == hand
    assert all(p.grad is None for p in net.parameters())  # the count leaves no gradient behind


def test_gemm_peak_is_a_positive_rate():
    from theorydyn.vision.throughput import gemm_peak_flops

    r = gemm_peak_flops(torch.device("cpu"), n=64, repeats=2)
    assert np.isfinite(r) and r > 0


@pytest.mark.parametrize(
    "argv,needle", [(["--ensemble", "--width", "8"], "--width"), (["--members", "3"], "--members")]
)
def test_ensemble_flags_are_refused_where_they_do_nothing(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--device", "cpu", *argv])
    assert e.value.code == 2 and needle in capsys.readouterr().err


def test_the_measurement_prints_nothing_and_reports_through_a_callback(capfd):
    """The library never prints (issue 29): attention_rates returns its table, silent by default; its
    progress goes to ``report(text, final)``, the last timing of each batch size final."""
    from theorydyn.vision.throughput import attention_rates

    torch.set_num_threads(1)
    kw = dict(width=16, depth=1, heads=2, patch=8, steps=1, warmup=0, repeats=2)
    df = attention_rates(torch.device("cpu"), [4, 8], **kw)
    assert capfd.readouterr() == ("", "")
    assert df.batch.tolist() == [4, 4, 8, 8] and (df.images_per_s > 0).all()
    said: list[tuple[str, bool]] = []
    attention_rates(torch.device("cpu"), [4], **kw, report=lambda text, final: said.append((text, final)))
    assert capfd.readouterr() == ("", "")
    assert [final for _, final in said] == [False, False, False, True]
    assert said[-1][0].startswith("batch 4 repeat 2/2 vanilla: ")


def test_the_shared_flags_reach_the_command(capsys):
    """The command is a runner Command: the flags of every command (runner.GLOBAL_ARGUMENTS) are its own."""
    from theorydyn import __version__

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and __version__ in capsys.readouterr().out


def test_best_of_alternates_the_keys_and_keeps_each_ones_best():
    """best_of measures every key once per repeat, in order, keeps each key's maximum (not its last
    rate) and marks only the very last measurement final (none when ``final`` is False)."""
    from theorydyn.vision.throughput import best_of

    rates = {("a", 0): 3.0, ("b", 0): 1.0, ("a", 1): 2.0, ("b", 1): 5.0}
    calls: list[tuple[str, int]] = []

    def measure(r, key):
        calls.append((key, r))
        return rates[key, r]

    said: list[tuple[str, bool]] = []
    best = best_of(2, ["a", "b"], measure, lambda r, k, b: f"{k}{r}:{b:g}", lambda t, f: said.append((t, f)))
    assert calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    assert best == {"a": 3.0, "b": 5.0}, best
    assert said == [("a0:3", False), ("b0:1", False), ("a1:3", False), ("b1:5", True)]
    said.clear()
    best_of(2, ["a", "b"], lambda r, k: rates[k, r], lambda r, k, b: "", lambda t, f: said.append((t, f)), final=False)
    assert not any(f for _, f in said)
