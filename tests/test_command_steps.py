"""The commands' library steps (issue 40): the ledger's options as a Config, its files, its screen, the theorem
checks' selection, and the runner's shared steps (a config from the flags, a refused input, the flag helpers)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd
import pytest

from theorydyn import Setting, claims
from theorydyn.cli.flags import add_optional_path, add_selection, restate
from theorydyn.cli.runner import Command, Invocation
from theorydyn.cli.tools import ArgumentParser
from theorydyn.verify import COLUMNS, files
from theorydyn.verify.config import LedgerConfig
from theorydyn.verify.summary import format_glance, path_line, times_line


def test_ledger_config_names_its_options_and_refuses_a_reduced_flag_left_out():
    cfg = LedgerConfig(quick=True, s_max=500.0, seed=0)
    assert cfg.options == {"dynamics": dict(s_max=500.0, n_samples=None, seed=0)}
    assert cfg.extra == dict(s_max=500.0, n_samples=None, seed=None)  # seed 0 names the default ledger
    cfg.check_selection()  # every claim: the dynamics reads them
    with pytest.raises(ValueError, match=r"^--s-max: only used by the reduced dynamics"):
        cfg.replace(only=["theorem31"]).check_selection()
    with pytest.raises(ValueError, match="n_samples must be an integer >= 2"):
        LedgerConfig(n_samples=1)


def test_the_ledger_files_of_out(tmp_path):
    s, cfg = Setting(), LedgerConfig(quick=True)
    assert files.outputs(tmp_path / "x.csv", s, cfg) == (tmp_path, tmp_path / "x.csv")
    assert files.outputs(tmp_path, s, cfg) == (tmp_path, tmp_path / "verify_D64_C4_quick.csv")
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match=r"^--out: .* exists and is not a folder"):
        files.outputs(tmp_path / "f", s, cfg)
    assert files.report_path("", None, tmp_path / "l.csv") == tmp_path / "l.html"
    assert files.report_path("given.csv", tmp_path / "p.html", tmp_path / "l.csv") == tmp_path / "p.html"
    with pytest.raises(ValueError, match=r"^--quiet: has no effect with --markdown"):
        files.saved_ledger(s, cfg.replace(markdown=""), quiet=True)


def test_a_torn_ledger_is_refused_naming_the_flag(tmp_path):
    torn = tmp_path / "torn.csv"
    torn.write_text("claim,verdict\nA,PASS")  # no newline at the end
    with pytest.raises(ValueError, match=r"^--markdown: cannot read a ledger .* a torn ledger"):
        files.read_ledger(torn, "--markdown")


def test_the_screen_of_a_run_ends_with_the_csv_path():
    row = dict(claim="Theorem 3.1", quantity="err", measured=0.1, ci_low=0.1, ci_high=0.1, threshold="", note="")
    df = pd.DataFrame([dict(row, verdict=v, params="D=64") for v in ("PASS", "NOT_RUN")], columns=COLUMNS)
    df.attrs["claims"] = [dict(name="theorem31", rows=2, seconds=1.25, source="computed")]
    text = format_glance(df, Setting(), quick=True, seconds=3.0, csv=Path("/x/v.csv"), times=True, width=100)
    lines = text.splitlines()
    assert lines[0].startswith("the ledger at a glance, D=64 C=4 q=0.25 (quick)")
    assert "PASS 1 · NOT_RUN 1 · 2 rows · 3 s" in text and "seconds per claim: theorem31 1.2" in text
    assert lines[-1] == "every row (--detail prints them; --report makes a page): /x/v.csv"
    assert max(len(line) for line in lines) <= 100
    assert path_line("label:", Path("/" + "p" * 30), 20).splitlines() == ["label:", "  /" + "p" * 30]
    assert times_line([dict(name="a", rows=1, seconds=math.nan, source="skipped")]).startswith(
        "seconds per claim: a skipped"
    )


def test_the_theorem_checks_are_the_registrys_group():
    from theorydyn.claims.theorem_checks import CHEAP, theorem_claims

    assert [m.__name__.rsplit(".", 1)[1] for m in theorem_claims()] == list(claims.select(["theorems"]))
    assert CHEAP == ("3.1", "3.2")


def _invocation(build, argv):
    command = Command("prog", build, lambda inv: 0)
    parser = command.parser()
    return Invocation(command, parser, parser.parse_args(argv), argv)


def test_the_runner_builds_a_config_and_refuses_bad_input(capsys):
    def build():
        ap = ArgumentParser(prog="prog")
        add_selection(ap, "--only", ("a", "b"), "some (default: all)")
        add_optional_path(ap, "--markdown", "CSV", "print it")
        ap.add_argument("--n-samples", type=int, default=None)
        return ap

    inv = _invocation(build, ["--only", "a", "--markdown"])
    assert inv.args.only == ["a"] and inv.args.markdown == ""
    assert inv.config(LedgerConfig, quick=True) == LedgerConfig(quick=True, only=["a"], markdown="")
    with pytest.raises(SystemExit) as e:
        _invocation(build, ["--n-samples", "1"]).config(LedgerConfig)
    assert e.value.code == 2 and "prog: error: --n-samples: n_samples must be" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e, inv.refusing():
        raise ValueError("--out: no")
    assert e.value.code == 2 and capsys.readouterr().err == "prog: error: --out: no\n"
    with pytest.raises(KeyError), inv.refusing():  # not bad input: left to the runner (a traceback)
        raise KeyError("bug")


def test_restate_gives_a_flag_another_default_and_help():
    ap = ArgumentParser(prog="p")
    add_selection(ap, "--only", ("x", "y"), "some")
    restate(ap, "--only", default=["x"], help=argparse.SUPPRESS)
    assert ap.parse_args([]).only == ["x"] and "--only" not in ap.format_help()
