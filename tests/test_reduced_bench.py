"""The benchmark plumbing runs and checks its implementations agree (no timing is asserted)."""

import pandas as pd

from theorydyn.bench.__main__ import main


def test_reduced_benchmark_runs_small(tmp_path, capsys):
    out = tmp_path / "red.csv"
    assert main(["reduced", "--n-samples", "3000", "--repeats", "1", "--no-flow", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "machine:" in text and "end to end, sampling included" in text and "(goal >= 20x)" in text
    assert "numba tables, one row per sample" in text
    t = pd.read_csv(out)
    assert {"end to end (sampling included)", "kernel on a bank"} <= set(t.part)
    assert (t.seconds > 0).all() and "cpu" in t.columns


def test_reduced_benchmark_scaling_stops_at_the_budget(tmp_path, capsys):
    out = tmp_path / "red.csv"
    assert (
        main(
            ["reduced", "--scaling-only", "--s-max", "10", "--s-max-exponent", "0", "--D-max", "256", "--out", str(out)]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "largest D measured within" in text
    t = pd.read_csv(tmp_path / "red_scaling_D.csv")
    assert list(t.D) == [64, 256] and (t.status == "ok").all()


def test_unknown_benchmark_is_named(capsys):
    assert main(["nope"]) == 2
    assert "benchmark must be one of" in capsys.readouterr().err
