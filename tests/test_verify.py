"""The verification report: the table's columns, verdicts, skipped and broken sources, bad input."""

from __future__ import annotations

import pandas as pd
import pytest

from theorydyn import Setting, verify
from theorydyn.claims.check import Check


@pytest.mark.slow
def test_verify_prints_the_table_and_writes_csv(tmp_path, capsys):
    out = tmp_path / "v.csv"
    code = verify.main(["--D", "32", "--C", "4", "--quick", "--only", "reduced", "--out", str(out)])
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.strip().startswith("claim"))
    assert header.split() == ["claim", "quantity", "measured", "threshold", "verdict"]
    df = pd.read_csv(out)
    assert list(df.columns) == verify.COLUMNS
    lemma = df[df["claim"] == "Lemma 4.3"]
    assert len(lemma) == 2 and set(lemma["verdict"]) <= {"PASS", "FAIL"}
    # γ ≥ ρ all along at D=32 (docs/theory.md §9's family): a PASS whose measured margin is ≥ 0
    row = lemma[lemma["quantity"].str.startswith("min over t")].iloc[0]
    assert row["verdict"] == "PASS" and row["measured"] >= 0
    assert {"Section 4.1, Event III", "docs/theory.md §3 (discrete GD vs flow)"} <= set(df["claim"])
    assert code == (1 if (df["verdict"] == "FAIL").any() else 0)


def test_missing_and_broken_sources_become_rows(monkeypatch):
    def missing(s, quick=False):
        raise ImportError("No module named 'theorydyn.future'")

    def broken(s, quick=False):
        raise RuntimeError("kaboom")

    def fine(s, quick=False):
        return [Check("Theorem 9.9", "x", 1.0, "> 0", True, {"D": s.D})]

    monkeypatch.setattr(verify, "SOURCES", {"a": ("m.a", missing), "b": ("m.b", broken), "c": ("m.c", fine)})
    df = verify.collect(Setting(D=8, C=2), progress=False)
    assert list(df["verdict"]) == ["SKIP", "ERROR", "PASS"]
    assert "kaboom" in df["note"][1] and df["params"][2] == "D=8"
    table = verify.format_table(df)
    assert "SKIP" in table and "Theorem 9.9" in table


def test_bad_setting_exits_2(capsys):
    with pytest.raises(SystemExit) as e:
        verify.main(["--D", "10", "--C", "4"])
    assert e.value.code == 2 and "C must divide D" in capsys.readouterr().err
