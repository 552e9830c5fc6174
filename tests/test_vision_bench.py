"""The throughput benchmark runs and prints its table and ratio (no timing is asserted)."""

import pytest

torch = pytest.importorskip("torch")

from theorydyn.vision.bench import main  # noqa: E402


def test_bench_prints_table_and_ratio(tmp_path, capsys):
    csv = tmp_path / "bench.csv"
    argv = [
        "--device",
        "cpu",
        "--batches",
        "4",
        "8",
        "--width",
        "16",
        "--depth",
        "1",
        "--heads",
        "2",
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
        "--width",
        "16",
        "--depth",
        "1",
        "--heads",
        "2",
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
    argv = ["--smoke", "--device", "cpu", "--width", "16", "--depth", "1", "--heads", "2", "--smoke-images", "256"]
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
    assert "load average" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,needle", [(["--ensemble", "--width", "8"], "--width"), (["--members", "3"], "--members")]
)
def test_ensemble_flags_are_refused_where_they_do_nothing(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--device", "cpu", *argv])
    assert e.value.code == 2 and needle in capsys.readouterr().err
