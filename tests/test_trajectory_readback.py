"""Trajectory CSVs are checked when read back (issue 33 item 10): a torn or altered file is refused,
naming the file, and the scan's figure leaves it out instead of drawing it."""

from __future__ import annotations

import pandas as pd
import pytest

from theorydyn.core.result import CORE_COLUMNS, read_trajectory, trajectory_problem


def _write(path, rows=3, **change):
    df = pd.DataFrame({c: [float(i) for i in range(rows)] for c in CORE_COLUMNS})
    for c, v in change.items():
        df[c] = v
    df.to_csv(path, index=False)
    return path


def test_a_whole_trajectory_reads_back(tmp_path):
    p = _write(tmp_path / "t.csv")
    assert trajectory_problem(p) is None
    assert list(read_trajectory(p).columns[: len(CORE_COLUMNS)]) == list(CORE_COLUMNS)


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda p: p.write_bytes(p.read_bytes()[: int(0.6 * p.stat().st_size)]), "torn"),
        (lambda p: _write(p, s=[2.0, 1.0, 0.0]), "non-decreasing"),
        (lambda p: _write(p, risk=["a", "b", "c"]), "not numeric"),
        (lambda p: p.write_text("t,step\n1,2\n"), "lacks the column"),
        (lambda p: _write(p, rows=0), "no row"),
        (lambda p: _write(p, step=[0.0, float("inf"), 2.0]), "finite"),
    ],
)
def test_a_damaged_trajectory_is_refused_naming_the_file(tmp_path, damage, words):
    p = _write(tmp_path / "t.csv")
    damage(p)
    assert words in (trajectory_problem(p) or "")
    with pytest.raises(ValueError, match="t.csv"):
        read_trajectory(p)
