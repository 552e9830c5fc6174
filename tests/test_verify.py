"""The ledger: its columns, verdicts with intervals, absent and broken sources, exit status, Markdown, bad input."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from theorydyn import Setting, verify
from theorydyn.verify.__main__ import main as verify_main
from theorydyn.claims.check import LEDGER_COLUMNS, Check, Verdict


@pytest.mark.slow
def test_verify_reduced_ledger_has_intervals_over_seeds(tmp_path, capsys):
    out = tmp_path / "v.csv"
    # D = 32 in docs/theory.md §9's family (q = 1/4, nu = 1/64). (At the default q = C^2/D = 1/2 the exact
    # initial ratio d gamma / |d rho| is 1.008, and Monte Carlo banks of 1500 samples straddle 1.)
    code = verify_main(["--D", "32", "--C", "4", "--q", "0.25", "--nu", "0.015625", "--quick", "--only", "reduced",
                        "--out", str(out)])
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.strip().startswith("claim"))
    assert header.split()[:3] == ["claim", "quantity", "measured"]
    df = pd.read_csv(out)
    # the ledger's columns, then where it came from (theorydyn version, commit, libraries, time)
    assert list(df.columns[:len(LEDGER_COLUMNS)]) == LEDGER_COLUMNS
    assert {"prov_theorydyn_version", "prov_git_commit", "prov_numpy", "prov_created_utc"} <= set(df.columns)
    lemma = df[df["claim"] == "Lemma 4.3"]
    assert len(lemma) == 3 and set(lemma["verdict"]) <= {"PASS", "FAIL", "INFO"}
    # every random row: a mean over 5 seeds with a proper interval around it
    random_rows = df[df["params"].str.contains("seeds=5")]
    assert len(random_rows) >= 9
    assert (random_rows["ci_low"] <= random_rows["measured"]).all()
    assert (random_rows["measured"] <= random_rows["ci_high"]).all()
    inc = lemma[lemma["quantity"].str.contains("every increment")].iloc[0]
    assert inc["verdict"] == "PASS" and inc["measured"] > 1
    # GD vs flow is solver consistency: INFO, exact expectation
    assert set(df[df["claim"].str.contains("GD vs flow")]["verdict"]) == {"INFO"}
    assert {"Section 4.1, Event III", "Theorem 4.1 (2)"} <= set(df["claim"])
    # Event III's "alpha increases again": measured from T1 to the end; here it decreases (DEVIATES)
    a3 = df[df["quantity"].str.startswith("relative change of alpha")].iloc[0]
    assert a3["verdict"] == ("DEVIATES" if a3["ci_high"] < 0 else "PASS" if a3["ci_low"] > 0 else "INFO")
    assert code == (1 if (df["verdict"] == "FAIL").any() else 0)


def test_missing_and_broken_sources_become_rows(monkeypatch):
    def missing(s, quick=False):
        raise ImportError("No module named 'theorydyn.future'")

    def broken(s, quick=False):
        raise RuntimeError("kaboom")

    def fine(s, quick=False):
        return [Check.over_seeds("Theorem 9.9", "x", [1.0, 2.0, 3.0], "> 0", True, params={"D": s.D})]

    monkeypatch.setattr(verify, "SOURCES", {"a": ("m.a", missing), "b": ("m.b", broken), "c": ("m.c", fine)})
    df = verify.collect(Setting(D=8, C=2), progress=False)
    assert list(df.columns) == LEDGER_COLUMNS
    assert list(df["verdict"]) == ["SKIP", "FAIL", "PASS"]  # a check that raised is not a pass
    assert "kaboom" in df["note"][1] and df["params"][2] == "D=8, seeds=3"
    assert df["ci_low"][2] < 2.0 < df["ci_high"][2]
    table = verify.format_table(df)
    assert "SKIP" in table and "Theorem 9.9" in table and "2 [" in table


def test_external_sources_are_called_when_present(monkeypatch):
    import sys

    calls = []
    with_s = SimpleNamespace(checks=lambda s, quick=False: calls.append(("s", s.D, quick)) or [])
    without_s = SimpleNamespace(checks=lambda quick=True, seeds=range(5), s=None: calls.append(("q", quick, s)) or [])
    monkeypatch.setitem(sys.modules, "fake_with_s", with_s)
    monkeypatch.setitem(sys.modules, "fake_without_s", without_s)
    monkeypatch.setitem(sys.modules, "fake_no_checks", SimpleNamespace())
    s = Setting(D=8, C=2)
    assert verify._external("fake_with_s")(s, quick=True) == [] and calls[-1] == ("s", 8, True)
    # quick first and an optional s (the Figure 2 source's signature): the source keeps its own sizes
    assert verify._external("fake_without_s")(s, quick=False) == [] and calls[-1] == ("q", False, None)
    with pytest.raises(ImportError, match="no checks"):
        verify._external("fake_no_checks")(s)
    with pytest.raises(ImportError, match="not installed"):
        verify._external("theorydyn.no_such_module")(s)
    assert {"transfer", "figure2", "vision"} <= set(verify.SOURCES)


def _checks(verdicts):
    return [Check.exact("Theorem 1", f"q {v}", 0.5, ">= 0.1", Verdict(v),
                        note="why" if v in ("DEVIATES", "OUT_OF_SCOPE") else "") for v in verdicts]


@pytest.mark.parametrize("verdicts, code", [(["PASS", "DEVIATES", "OUT_OF_SCOPE", "INFO"], 0), (["PASS", "FAIL"], 1)])
def test_exit_status_is_one_only_for_a_fail(monkeypatch, tmp_path, capsys, verdicts, code):
    monkeypatch.setattr(verify, "SOURCES", {"x": ("m.x", lambda s, quick=False: _checks(verdicts))})
    out = tmp_path / "l.csv"
    assert verify_main(["--D", "8", "--C", "2", "--out", str(out)]) == code
    assert list(pd.read_csv(out)["verdict"]) == verdicts
    # the README table, rendered from the CSV alone
    assert verify_main(["--D", "8", "--C", "2", "--markdown", str(out)]) == 0
    md = capsys.readouterr().out.split("| claim |", 1)[1]
    assert md.startswith(" the paper says | measured (CI) | verdict |")
    assert md.count("\n| Theorem 1: q ") == len(verdicts) and "0.5 (exact)" in md


def test_format_markdown_intervals_notes_and_pipes():
    df = pd.DataFrame([
        Check.over_seeds("Lemma 4.3", "a | b", [1.0, 1.2, 1.1, 0.9, 1.3], "> 1", True).row(),
        Check.exact("Theorem 3.1", "err", 0.05, ">= 0.125", Verdict.DEVIATES, note="fails for q(D-C) < 0.75 C^2").row(),
        Check.over_seeds("Theorem 4.2 (1)", "assoc", [1.0] * 5, "== 1", True).row(),
    ])
    md = verify.format_markdown(df).splitlines()
    assert md[0] == "| claim | the paper says | measured (CI) | verdict |" and len(md) == 5
    assert "a \\| b" in md[2] and "1.1 [" in md[2] and "**PASS**" in md[2]
    assert "0.05 (exact)" in md[3] and "**DEVIATES**: fails for q(D-C) < 0.75 C^2" in md[3]
    assert "1 [1, 1]" in md[4]  # five equal seeds: an interval of zero width, not "exact"


def test_phase_helper_reads_the_phases_of_a_result():
    from theorydyn.phases import Phases
    from theorydyn.result import Result

    res = Result("reduced", Setting(D=8, C=2), pd.DataFrame({"s": [0.0]}), Phases(T0=3.0))
    assert verify.phase(res, "T0") == 3.0 and math.isnan(verify.phase(res, "T2"))


def test_bad_setting_and_missing_markdown_ledger_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        verify_main(["--D", "10", "--C", "4"])
    assert e.value.code == 2 and "C must divide D" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        verify_main(["--markdown", str(tmp_path / "none.csv")])
    assert e.value.code == 2 and "--markdown" in capsys.readouterr().err
