"""The benchmark plumbing runs and checks its two implementations agree (no timing is asserted)."""

from theorydyn.bench.__main__ import main


def test_reduced_benchmark_runs_small(capsys):
    assert main(["reduced", "--n-samples", "3000", "--repeats", "1", "--no-flow"]) == 0
    out = capsys.readouterr().out
    assert "speed-up over NumPy" in out and "numpy reference" in out


def test_unknown_benchmark_is_named(capsys):
    assert main(["nope"]) == 2
    assert "benchmark must be one of" in capsys.readouterr().err
