"""The ledger: its columns, verdicts with intervals, absent and broken sources, exit status, Markdown, bad input."""

from __future__ import annotations

import inspect
import math
import re
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from conftest import claim_module, register_claims

from theorydyn import Setting, claims, verify
from theorydyn.claims import dynamics, gpu
from theorydyn.claims.check import LEDGER_COLUMNS, Check, Verdict
from theorydyn.experiments import dynamics as dyn_exp
from theorydyn.experiments import lemma43 as lemma43_exp
from theorydyn.verify.__main__ import main as verify_main


@pytest.mark.slow
def test_verify_reduced_ledger_has_intervals_over_seeds(tmp_path, capsys):
    out = tmp_path / "v.csv"
    # D = 32 at the default q = C^2/D = 1/2, the claim's own setting (issue 17 item 6: not moved to keep a
    # PASS): there the exact initial ratio d gamma / |d rho| is 1.008, and the per-seed rule decides.
    code = verify_main(["--D", "32", "--C", "4", "--quick", "--only", "reduced", "--out", str(out)])
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.strip().startswith("claim"))
    assert header.split()[:4] == ["claim", "verdict", "measured", "[95%"]  # the summary, one line per claim
    assert [line.split()[:2] for line in text.splitlines() if line.startswith("Lemma 4.3 ")] == [["Lemma", "4.3"]]
    df = pd.read_csv(out)
    # the ledger's columns, then where it came from (theorydyn version, commit, libraries, time)
    assert list(df.columns[: len(LEDGER_COLUMNS)]) == LEDGER_COLUMNS
    assert {"prov_theorydyn_version", "prov_git_commit", "prov_numpy", "prov_created_utc"} <= set(df.columns)
    lemma = df[df["claim"] == "Lemma 4.3"]
    assert len(lemma) == 3 and set(lemma["verdict"]) <= {"PASS", "FAIL", "INFO"}
    # every random row: a mean over 5 seeds with a proper interval around it
    random_rows = df[df["params"].str.contains("seeds=5")]
    assert len(random_rows) >= 9
    assert (random_rows["ci_low"] <= random_rows["measured"]).all()
    assert (random_rows["measured"] <= random_rows["ci_high"]).all()
    inc = lemma[lemma["quantity"].str.contains("every increment")].iloc[0]
    per_seed = [float(x) for x in inc["note"].split("Per seed: ")[1].split(";")[0].split(", ")]
    assert len(per_seed) == 5 and inc["verdict"] == ("PASS" if min(per_seed) > 1 else "FAIL")
    assert "departures=eta -> 0" in inc["params"] and "beta=1" in inc["params"]
    rate = lemma[lemma["quantity"].str.contains("rate d gamma / ds")].iloc[0]
    assert rate["verdict"] == "PASS" and rate["measured"] > 0
    across = df[df["claim"] == "Lemma 4.3 (across D)"].iloc[0]
    assert across["verdict"] in {"PASS", "DEVIATES"} and across["ci_low"] < across["measured"] < across["ci_high"]
    t41 = df[df["claim"] == "Theorem 4.1 (2)"]
    assert list(t41["verdict"])[1] == "INFO" and t41["measured"].iloc[0] >= t41["measured"].iloc[1]
    # Pr[f = 0] is the floor of Pr[f F <= 0]: 0.027 here, above 2%: at one D the row is INFO (o(1) is read across D)
    from theorydyn.core.glm import glm_oracle_error_exact

    floor = glm_oracle_error_exact(Setting(D=32, C=4))["amb"]
    assert floor > 0.02 and t41["verdict"].iloc[0] == "INFO" and "at or above 0.02" in t41["note"].iloc[0]
    assert t41["measured"].iloc[0] >= floor
    across = df[df["claim"].str.startswith("Theorem 4.1 (2) (across D) [C = 4, D = 32, 44, 64, 92")]
    assert len(across) == 2 and across["verdict"].iloc[0] in {"PASS", "FAIL", "INFO"}
    assert (across["form"] == "vanishing with d").all() and "floor Pr[f=0] 0.0261" in across["note"].iloc[0]
    # GD vs flow is solver consistency: INFO, exact expectation
    assert set(df[df["claim"].str.contains("GD vs flow")]["verdict"]) == {"INFO"}
    assert {"Section 4.1, Event III", "Theorem 4.1 (2)"} <= set(df["claim"])
    # Event III's "alpha increases again": measured from T1 to the end; here it decreases (DEVIATES)
    a3 = df[df["quantity"].str.startswith("relative change of alpha")].iloc[0]
    assert a3["verdict"] == ("DEVIATES" if a3["ci_high"] < 0 else "PASS" if a3["ci_low"] > 0 else "INFO")
    assert code == (1 if (df["verdict"] == "FAIL").any() else 0)


def test_missing_and_broken_sources_become_rows(monkeypatch):
    def broken(s, *, quick=False, progress=None):
        raise RuntimeError("kaboom")

    def fine(s, *, quick=False, progress=None):
        return [Check.over_seeds("Theorem 9.9", "x", [1.0, 2.0, 3.0], "> 0", True, params={"D": s.D})]

    register_claims(
        monkeypatch, {"a": "theorydyn.future_claim", "b": claim_module("b", broken), "c": claim_module("c", fine)}
    )
    df = verify.collect(Setting(D=8, C=2), progress=False)
    assert list(df.columns) == LEDGER_COLUMNS
    assert list(df["verdict"]) == ["SKIP", "FAIL", "PASS"]  # a check that raised is not a pass
    assert "not installed" in df["note"][0] and "kaboom" in df["note"][1] and df["params"][2] == "D=8, seeds=3"
    assert df["ci_low"][2] < 2.0 < df["ci_high"][2]
    table = verify.format_table(df)
    assert "SKIP" in table and "Theorem 9.9" in table and "2 [" in table


TOY_CLAIM = """
    \"\"\"A toy claim: 1 + 1 = 2, exactly.\"\"\"
    from theorydyn.claims.check import Check, Verdict
    from theorydyn.infra.memory import MemoryEstimate, Term


    def checks(s, *, quick, progress):
        if progress:
            progress("adding")
        return [Check.exact("Toy claim", f"1 + 1 at D = {s.D}", 1 + 1, "== 2", Verdict.PASS, params=dict(D=s.D))]


    def memory(s, quick):
        return MemoryEstimate("toy claim", (Term("two integers", 56, {"D": s.D}),))
"""


def test_a_claim_is_one_module_and_one_registry_line(monkeypatch, tmp_path):
    """docs/adding_a_claim.md: write the module, add its line to the registry, and its row is in the ledger."""
    (tmp_path / "toy_claim.py").write_text(textwrap.dedent(TOY_CLAIM))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "toy_claim", raising=False)
    monkeypatch.setitem(claims.REGISTRY, "toy", "toy_claim")  # the one registry line
    df = verify.collect(Setting(D=8, C=2), only=["toy"], progress=False)
    assert list(df["claim"]) == ["Toy claim"] and df["measured"][0] == 2 and df["verdict"][0] == "PASS"
    assert df["quantity"][0] == "1 + 1 at D = 8"  # called with the ledger's setting
    # and through the command: --only accepts the new name, its memory is guarded, the CSV has the row
    out = tmp_path / "l.csv"
    assert verify_main(["--D", "8", "--C", "2", "--only", "toy", "--out", str(out)]) == 0
    assert list(pd.read_csv(out)["claim"]) == ["Toy claim"]


def test_every_registered_claim_follows_the_protocol():
    """checks(s, *, quick, progress) (or EXPERIMENT(s, config, progress), config(s, quick), rows(results): a
    claim that only judges) and memory(s, quick), and the old names map to the new modules."""
    judging = []
    for name, path in claims.REGISTRY.items():
        mod = __import__(path, fromlist=["checks"])
        if callable(getattr(mod, "EXPERIMENT", None)):
            judging.append(name)
            assert not hasattr(mod, "checks"), name  # one way to be called
            assert list(inspect.signature(mod.EXPERIMENT).parameters)[:3] == ["s", "config", "progress"], name
            assert list(inspect.signature(mod.config).parameters)[:2] == ["s", "quick"], name
            assert len(inspect.signature(mod.rows).parameters) == 1, name
            assert mod.EXPERIMENT.__module__.startswith("theorydyn.experiments."), name  # the claim runs nothing
            continue
        sig = inspect.signature(mod.checks).parameters
        assert list(sig)[0] == "s", name
        for kw in ("quick", "progress"):
            assert sig[kw].kind is inspect.Parameter.KEYWORD_ONLY, (name, kw)
        assert all(p.default is not p.empty for k, p in sig.items() if k != "s" and p.kind is not p.VAR_KEYWORD), name
        assert list(inspect.signature(mod.memory).parameters)[:2] == ["s", "quick"], name
        # gpu: without a CUDA device (CI) nothing runs, its rows are NOT_RUN and its estimate is 0
        assert mod.memory(Setting(D=32, C=4), True).total > 0 or (name == "gpu" and gpu.cuda_device() is None), name
    # the claims whose experiment verify runs (the others compute their rows in checks: data files, devices)
    expected = [
        "definition21",
        "assumption1",
        "parametrization31",
        "dynamics",
        "theorem31",
        "theorem32",
        "lemma41",
        "theorem4",
        "nstar",
    ]
    assert judging == expected, judging


def test_judge_runs_a_declared_experiment_and_the_claim_only_judges_its_results():
    """theorydyn.claims.judge: ``rows(EXPERIMENT(s, config(s, quick, **options), progress))`` for a claim that
    declares its experiment, ``checks(s, quick=…, progress=…, **options)`` otherwise; a module declaring an
    experiment without its rows cannot be loaded (a SKIP row, not a silent nothing)."""
    import types

    seen = []

    def run(s, config, progress=None):
        seen.append((s.D, config))
        if progress:
            progress("ran")
        return config["n"] + s.D

    mod = types.ModuleType("judging")
    mod.EXPERIMENT = run
    mod.config = lambda s, quick, **options: dict(n=1 if quick else 2, **options)
    mod.rows = lambda res: [Check.exact("Toy", "n + D", res, "== 9", Verdict.PASS if res == 9 else Verdict.FAIL)]
    said = []
    rows = claims.judge(mod, Setting(D=8, C=2), quick=True, progress=said.append)
    assert [(c.measured, str(c.verdict)) for c in rows] == [(9, "PASS")] and said == ["ran"]
    rows = claims.judge(mod, Setting(D=8, C=2), quick=False, extra=3)  # options reach the config
    assert [(c.measured, str(c.verdict)) for c in rows] == [(10, "FAIL")], rows
    assert seen == [(8, {"n": 1}), (8, {"n": 2, "extra": 3})], seen
    plain = claim_module("plain", lambda s, *, quick, progress, k=0: [Check.exact("P", "k", k, "== k", Verdict.PASS)])
    assert claims.judge(plain, Setting(D=8, C=2), quick=True, k=4)[0].measured == 4
    del mod.rows
    sys.modules["judging_broken"] = mod
    mod.memory = lambda s, quick: None
    try:
        with pytest.raises(ImportError, match="has no rows"):
            claims.load_path("judging_broken")
    finally:
        del sys.modules["judging_broken"]


def _checks(verdicts):
    return [
        Check.exact(
            "Theorem 1",
            f"q {v}",
            0.5,
            ">= 0.1",
            Verdict(v),
            note="why" if v in ("DEVIATES", "OUT_OF_SCOPE", "NOT_RUN") else "",
        )
        for v in verdicts
    ]


@pytest.mark.parametrize(
    "verdicts, code",
    [(["PASS", "DEVIATES", "OUT_OF_SCOPE", "INFO", "NOT_RUN"], 0), (["NOT_RUN", "FAIL"], 1), (["PASS", "FAIL"], 1)],
)
def test_exit_status_is_one_only_for_a_fail(monkeypatch, tmp_path, capsys, verdicts, code):
    register_claims(monkeypatch, {"x": claim_module("x", lambda s, quick=False, progress=None: _checks(verdicts))})
    out = tmp_path / "l.csv"
    assert verify_main(["--D", "8", "--C", "2", "--out", str(out)]) == code
    assert list(pd.read_csv(out)["verdict"]) == verdicts
    # the README table, rendered from the CSV alone
    assert verify_main(["--D", "8", "--C", "2", "--markdown", str(out)]) == 0
    summary, md = capsys.readouterr().out.split("| # | claim |", 1)  # the summary, then every row
    assert md.startswith(" the paper says | measured (CI) | verdict |")
    assert len(re.findall(r"^\| \d+ \| Theorem 1: q ", md, flags=re.M)) == len(verdicts) and "0.5 (exact)" in md
    # one claim, one summary line: the first row of the highest verdict decides it
    top = min(verdicts, key=["FAIL", "DEVIATES", "PASS", "OUT_OF_SCOPE", "NOT_RUN", "INFO"].index)
    assert re.findall(r"^\| Theorem 1 \| \*\*(\w+)\*\* \|", summary, flags=re.M) == [top]


def test_format_markdown_intervals_notes_and_pipes():
    df = pd.DataFrame(
        [
            Check.over_seeds("Lemma 4.3", "a | b", [1.0, 1.2, 1.1, 0.9, 1.3], "> 1", True).row(),
            Check.exact(
                "Theorem 3.1", "err", 0.05, ">= 0.125", Verdict.DEVIATES, note="fails for q(D-C) < 0.75 C^2"
            ).row(),
            Check.over_seeds("Theorem 4.2 (1)", "assoc", [1.0] * 5, "== 1", True).row(),
        ]
    )
    md = verify.format_markdown(df).splitlines()
    assert md[0] == "| # | claim | the paper says | measured (CI) | verdict |" and len(md) == 5
    assert [line.split(" | ")[0] for line in md[2:]] == ["| 1", "| 2", "| 3"]  # numbered as the CSV's rows
    assert "a \\| b" in md[2] and "1.1 [" in md[2] and "**PASS**" in md[2]
    assert "0.05 (exact)" in md[3] and "**DEVIATES**: fails for q(D-C) < 0.75 C^2" in md[3]
    assert "1 [1, 1]" in md[4]  # five equal seeds: an interval of zero width, not "exact"


def test_not_run_needs_its_command_prints_it_and_never_fails_the_ledger(monkeypatch, tmp_path, capsys):
    """NOT_RUN is not a pass and not a failure: the note carries the command, the exit status stays 0,
    the summary line says how many rows did not run; a NOT_RUN row without a note is refused."""
    with pytest.raises(ValueError, match="needs a note"):
        Check("Figure 6", "acc", math.nan, "on par", Verdict.NOT_RUN)
    row = Check.not_run(
        "Section 6, Figure 6 (cifar10)",
        "accuracy, positional - vanilla",
        "on par",
        "cifar-10-python.tar.gz not in data/",
        "python -m theorydyn.vision cifar10 --experiment compare",
    )
    assert row.verdict is Verdict.NOT_RUN and row.passed and math.isnan(row.measured)
    assert row.note.endswith("run it with: python -m theorydyn.vision cifar10 --experiment compare")
    register_claims(monkeypatch, {"x": claim_module("x", lambda s, quick=False, progress=None: [row])})
    out = tmp_path / "l.csv"
    assert verify_main(["--D", "8", "--C", "2", "--out", str(out)]) == 0
    assert "NOT_RUN: 1 rows did not run here (not a pass)" in capsys.readouterr().out
    md = verify.format_markdown(pd.read_csv(out))
    assert "**NOT_RUN**: cifar-10-python.tar.gz not in data/; run it with: python -m theorydyn.vision cifar10" in md


def test_phase_helper_reads_the_phases_of_a_result():
    from theorydyn.core.phases import Phases
    from theorydyn.core.result import Result

    res = Result("reduced", Setting(D=8, C=2), pd.DataFrame({"s": [0.0]}), Phases(T0=3.0))
    assert dyn_exp.phase(res, "T0") == 3.0 and math.isnan(dyn_exp.phase(res, "T2"))


def test_bad_setting_and_missing_markdown_ledger_exit_2(capsys, tmp_path):
    with pytest.raises(SystemExit) as e:
        verify_main(["--D", "10", "--C", "4"])
    assert e.value.code == 2 and "C must divide D" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        verify_main(["--markdown", str(tmp_path / "none.csv")])
    assert e.value.code == 2 and "--markdown" in capsys.readouterr().err


# ---- Lemma 4.3 as a lower bound ---------------------------------------------------------------------
def test_lemma43_rate_ratio_matches_the_full_model():
    """The start rate ratio from the reduced gradient (exact expectation) against the full D x D model's
    population gradient on the exhaustive enumeration: per-entry rates of the in-set and cross-set entries."""
    from theorydyn.core import data, model

    s = Setting(D=8, C=2, q=0.5)
    z, y, w = data.enumerate_population(s)
    X = data.embed(s, z)
    a0 = s.nu ** (1 / (s.p - 1))
    _, gA, _ = model.risk_and_grad(
        s, model.symmetric_attention(s, 0.0, 0.0), a0 * s.w_star, X, y.astype(float), weights=w
    )
    off = ~np.eye(s.D, dtype=bool)
    rate_in, rate_cross = -gA[s.same_set & off], -gA[~s.same_set]
    assert np.ptp(rate_in) < 1e-9 * np.abs(rate_in).max()  # one value per class (Lemma 4.1)
    full = rate_in.mean() / abs(rate_cross.mean())
    assert lemma43_exp.lemma43_rate_ratio(s, method="exact") == pytest.approx(full, rel=1e-9)


def test_polylog_reading_and_its_local_exponent():
    Ds = np.array(dynamics.lemma43_Ds(4), float)
    assert list(Ds) == [32, 64, 128, 256]
    b = np.polyfit(np.log(Ds), np.log(Ds / np.log(Ds) ** 2), 1)[0]
    assert b == pytest.approx(dynamics.local_exponent(32, 256), abs=0.02)
    assert dynamics.local_exponent(32, 256) == pytest.approx(0.548, abs=1e-3)
    assert dynamics.polylog_reading(Setting(D=64, C=4)) == pytest.approx(64 / np.log(64) ** 2)


@pytest.mark.parametrize(
    "law, verdict", [(lambda D: D / 20, "PASS"), (lambda D: np.log(D), "DEVIATES"), (lambda D: -1.0, "FAIL")]
)
def test_lemma43_across_d_verdict_can_come_out_otherwise(monkeypatch, law, verdict):
    rng = np.random.default_rng(0)
    monkeypatch.setattr(
        lemma43_exp, "lemma43_rate_ratio", lambda s, n, seed=0: law(s.D) * (1 + 0.01 * rng.standard_normal())
    )
    row = dynamics.lemma43_across_D(Setting(D=64, C=4), n_samples=10, seeds=(0, 1, 2))[0]  # q = C^2/D: the verdict
    assert str(row.verdict) == verdict


def _flow(alpha, gamma, rho, risk, T0=2.0):
    from theorydyn.core.phases import Phases
    from theorydyn.core.result import Result

    s = np.arange(len(alpha), dtype=float)
    tr = pd.DataFrame({"s": s, "alpha": alpha, "gamma": gamma, "rho": rho, "risk": risk})
    return Result("reduced", Setting(D=16, C=4), tr, Phases(T0=T0))


def test_event_rows_can_fail():
    """Event I (only v moves in phase I) on planted flows: PASS when alpha moves and gamma, rho stay put; FAIL when
    gamma moves with alpha or when T0 is not reached. Event III (the risk becomes o(1)) at one D is INFO, its note
    saying where the risk stands against log(2)/8; its verdict is read across D
    (tests/test_vanishing.py::test_vanishing_rows_pass_on_falling_errors_and_fail_on_rising_ones)."""
    good = [
        _flow(
            [0.1, 0.5, 1.0, 1.0],
            [0, 1e-4 * k, 2e-4 * k, 3.0],
            [0, -1e-4, -2e-4, -1.0],
            [0.69, 0.4, 0.2, 0.03 + 0.001 * k],
        )
        for k in range(1, 6)
    ]
    e1, e3 = dynamics.event_rows(Setting(D=16, C=4), good, {"D": 16})
    assert (e1.verdict, e3.verdict) == (Verdict.PASS, Verdict.INFO) and e1.measured < 1e-3
    assert "upper bound < log(2)/8" in e3.note
    moving = [
        _flow([0.1, 0.5, 1.0, 1.0], [0, 0.3, 0.6 + 0.01 * k, 3.0], [0, 0, 0, 0], [0.69, 0.4, 0.2, 0.2])
        for k in range(5)
    ]
    e1, e3 = dynamics.event_rows(Setting(D=16, C=4), moving, {})
    assert (e1.verdict, e3.verdict) == (Verdict.FAIL, Verdict.INFO) and e1.measured > 0.5
    assert "upper bound >= log(2)/8" in e3.note
    never = [_flow([0.1, 0.2, 0.3], [0, 0, 0], [0, 0, 0], [0.6, 0.6, 0.6], T0=None)] * 3
    assert dynamics.event_rows(Setting(D=16, C=4), never, {})[0].verdict is Verdict.FAIL


def test_t0_and_t1_mass_are_info_definitions(monkeypatch):
    """T0 (0.9 x alpha's plateau) and T1_mass are the toolkit's definitions: INFO with the reason, while T1
    and T2 stay judged (reached in every seed)."""
    from theorydyn.core.phases import Phases
    from theorydyn.core.result import Result

    def fake_integrate(s, **kw):
        tr = pd.DataFrame(
            {
                "s": [0.0, 1.0, 2.0],
                "alpha": [0.1, 0.5, 0.6],
                "gamma": [0.0, 0.1, 0.2],
                "rho": [0.0, -0.01, -0.02],
                "amb_f": [0.0, 0.0, 0.0],
                "risk": [0.6, 0.3, 0.01],
                "err_f": [0.2, 0.1, 0.0],
            }
        )
        return Result(
            "reduced",
            s,
            tr,
            Phases(T0=1.0, T1=1.5, T1_mass=1.6, T2=1.8, plateau_err=0.1, final_err_f=0.0, lemma43_ratio=3.0),
        )

    from theorydyn.reduced import solve

    monkeypatch.setattr(solve, "integrate", fake_integrate)  # the flows of reduced.flows_until_t2
    monkeypatch.setattr(dynamics, "_flow_vs_gd", lambda s, quick: [])
    rows = {c.quantity.split(":")[0]: c for c in claims.judge(dynamics, Setting(D=16, C=4), quick=True, seeds=3)}
    assert rows["T0"].verdict is Verdict.INFO and "by construction" in rows["T0"].note
    assert rows["T1_mass"].verdict is Verdict.INFO and "not a claim" in rows["T1_mass"].note
    assert rows["T1"].verdict is Verdict.PASS and rows["T2"].verdict is Verdict.PASS
