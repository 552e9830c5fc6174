"""The throughput benchmark runs and prints its table and ratio (no timing is asserted)."""

import pytest

torch = pytest.importorskip("torch")

from theorydyn.vision.bench import main  # noqa: E402


def test_bench_prints_table_and_ratio(tmp_path, capsys):
    csv = tmp_path / "bench.csv"
    argv = ["--device", "cpu", "--batches", "4,8", "--width", "16", "--depth", "1", "--heads", "2",
            "--steps", "1", "--warmup", "0", "--repeats", "1", "--out", str(csv)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "batch 4: positional/vanilla images per second = " in out and "batch 8:" in out
    import pandas as pd

    df = pd.read_csv(csv)
    assert len(df) == 4 and (df.images_per_s > 0).all()
    assert df[df.attention == "vanilla"].ratio_vs_vanilla.eq(1.0).all()


@pytest.mark.parametrize("argv,needle", [(["--batches", "12,x"], "--batches"), (["--width", "10", "--heads", "3"], "--heads"),
                                         (["--patch", "5"], "--patch")])
def test_bench_bad_input_exits_2(argv, needle, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--device", "cpu", *argv])
    assert e.value.code == 2 and needle in capsys.readouterr().err
