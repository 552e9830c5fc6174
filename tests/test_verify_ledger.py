"""The ledger as a resumable job: each claim stored whole as it finishes, reused while its key matches,
a kill -9 losing only the claim in progress, the same rows on a Dask cluster, the file named by its
parameters, the printed table wrapped to the terminal with the notes of the verdicts that need one."""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import re
import signal
import sqlite3
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import claim_module, join_or_kill, kill_at_random_moments, register_claims
from toy_ledger import CLAIMS, computed
from toy_ledger.two import NOTE

from theorydyn import Setting, claims, verify
from theorydyn.claims.check import Check, Verdict
from theorydyn.infra.store import DB_NAME, RejectedRowsWarning
from theorydyn.verify import ledger
from theorydyn.verify.__main__ import build_parser, main
from theorydyn.verify.files import whole_ledger as _whole_ledger

ARGS = ["--D", "16", "--C", "4", "--quick", "--quiet"]
CSV = "verify_D16_C4_quick.csv"
STAMPS = ["prov_created_utc"]  # the one column that differs between two runs: the time it was written


def _ledger(path: Path) -> pd.DataFrame:
    return _whole_ledger(path).drop(columns=STAMPS)


@pytest.fixture()
def toys(monkeypatch, tmp_path):
    """The toy claims one, two, three (tests/toy_ledger) as the whole registry, run in ``tmp_path`` (so
    the default runs/ledger is there); returns the log file of what they computed."""
    monkeypatch.chdir(tmp_path)
    log = tmp_path / "computed.log"
    monkeypatch.setenv("TOY_LEDGER_LOG", str(log))
    for k in [k for k in os.environ if k.startswith("TOY_LEDGER_SLEEP")]:
        monkeypatch.delenv(k)
    register_claims(monkeypatch, dict(CLAIMS))
    return log


def _stored_claims(folder: Path) -> list[str]:
    db = folder / DB_NAME
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as con:
        try:
            rows = con.execute("SELECT data FROM rows WHERE scope = ? ORDER BY seq", (ledger.SCOPE,)).fetchall()
        except sqlite3.OperationalError:  # created, its schema not yet
            return []
    return [json.loads(d)["claim"] for (d,) in rows]


# ---- resume ------------------------------------------------------------------------------------------
def test_a_rerun_reads_every_claim_back_and_writes_the_same_ledger(toys, tmp_path, capsys):
    assert main(ARGS) == 0
    out = tmp_path / "runs" / "ledger" / CSV
    first = _ledger(out)
    assert computed(toys) == ["one", "two", "three"]
    assert list(first["claim"]) == ["Toy 1", "Toy 2", "Toy 2 (scope)", "Toy 3", "Toy 3"]
    assert _stored_claims(out.parent) == ["one", "two", "three"]
    text = " ".join(capsys.readouterr().out.split())  # (a paragraph, wrapped to the terminal)
    assert "read from the store: 0 of 3 claims" in text and "computed" in text
    assert main(ARGS) == 0  # nothing left to compute: every claim read back
    text = " ".join(capsys.readouterr().out.split())
    assert computed(toys) == ["one", "two", "three"]
    assert "read from the store: 3 of 3 claims" in text
    pd.testing.assert_frame_equal(_ledger(out), first)
    assert main(ARGS + ["--recompute"]) == 0
    assert computed(toys) == ["one", "two", "three"] * 2
    pd.testing.assert_frame_equal(_ledger(out), first)
    # another D: its own file and its own rows, the first ledger untouched
    assert main(["--D", "32", "--C", "4", "--quick", "--quiet"]) == 0
    assert computed(toys)[-3:] == ["one", "two", "three"]
    other = _ledger(out.parent / "verify_D32_C4_quick.csv")
    assert other["quantity"][0] == "a draw around D = 32" and not other["measured"].equals(first["measured"])
    pd.testing.assert_frame_equal(_ledger(out), first)
    # --markdown finds the ledger of these flags at its new place
    capsys.readouterr()
    assert main(["--D", "16", "--C", "4", "--quick", "--markdown"]) == 0
    summary, detail = capsys.readouterr().out.split("| # | claim |")
    assert summary.count("| Toy ") == 3 and detail.count("| Toy ") == 5  # Toy 1, 2 and 3; then every row


def test_not_run_and_raising_claims_run_again_and_only_names_the_file(toys, tmp_path, monkeypatch):
    """A claim that raised is not stored; a result with a NOT_RUN row (it could not run *here*: data
    absent, which no key sees) is not reused; --only gives the ledger its own file."""
    register_claims(monkeypatch, {**CLAIMS, "notrun": "toy_ledger.notrun", "broken": "toy_ledger.broken"})
    assert main(ARGS) == 1  # broken's FAIL row
    assert main(ARGS) == 1
    assert computed(toys) == ["one", "two", "three", "notrun", "broken", "notrun", "broken"]
    df = _ledger(tmp_path / "runs" / "ledger" / CSV)
    assert list(df["verdict"][-2:]) == ["NOT_RUN", "FAIL"] and "kaboom" in df["note"].iloc[-1]
    assert main(ARGS + ["--only", "one", "three"]) == 0
    only = _ledger(tmp_path / "runs" / "ledger" / "verify_D16_C4_only-one+three_quick.csv")
    assert list(only["claim"]) == ["Toy 1", "Toy 3", "Toy 3"]
    assert len(_ledger(tmp_path / "runs" / "ledger" / CSV)) == len(df)  # the whole ledger untouched


def test_a_claim_that_declares_its_inputs_has_its_not_run_rows_reused_until_they_change(toys, monkeypatch):
    register_claims(monkeypatch, {"notrun_keyed": "toy_ledger.notrun_keyed"})
    only = ["--only", "notrun_keyed"]
    assert main(ARGS + only) == 0 and main(ARGS + only) == 0
    assert computed(toys) == ["notrun_keyed"]  # NOT_RUN, reused: its inputs are in the key
    monkeypatch.setenv("TOY_LEDGER_DATA", "1")  # the data appears: another key, computed, now PASS
    assert main(ARGS + only) == 0
    assert computed(toys) == ["notrun_keyed"] * 2
    assert list(_ledger(Path("runs/ledger") / "verify_D16_C4_quick.csv")["verdict"]) == ["PASS"]


def test_a_stored_row_that_fails_its_checks_is_set_aside_and_computed_again(toys, tmp_path):
    out = tmp_path / "o"
    assert main(ARGS + ["--out", str(out)]) == 0
    first = _ledger(out / CSV)
    with contextlib.closing(sqlite3.connect(out / DB_NAME)) as con:
        for seq, data in con.execute("SELECT seq, data FROM rows ORDER BY seq").fetchall():
            d = json.loads(data)
            if d["claim"] == "one":  # a verdict that is not one
                d["rows"] = d["rows"].replace('"PASS"', '"WIN"')
            elif d["claim"] == "two":  # a payload whose hash is not the key
                d["payload"] = d["payload"].replace('"quick":true', '"quick":false')
            con.execute("UPDATE rows SET data = ? WHERE seq = ?", (json.dumps(d), seq))
        con.commit()
    with pytest.warns(RejectedRowsWarning, match="2 row"):
        assert main(ARGS + ["--out", str(out)]) == 0
    assert computed(toys) == ["one", "two", "three", "one", "two"]
    pd.testing.assert_frame_equal(_ledger(out / CSV), first)
    reasons = pd.read_csv(out / f"{ledger.SCOPE}.rejected.csv")["reason"]
    assert any("WIN" in r for r in reasons) and any("hash" in r for r in reasons)


def _quiet_main(argv: list[str]) -> None:
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        sys.exit(main(argv))


def test_a_kill_9_loses_only_the_claim_in_progress(toys, tmp_path, monkeypatch):
    ref = tmp_path / "ref"
    assert main(ARGS + ["--out", str(ref)]) == 0
    toys.unlink()
    out = tmp_path / "k"
    monkeypatch.setenv("TOY_LEDGER_SLEEP_TWO", "120")  # claim two runs until the kill
    p = multiprocessing.get_context("fork").Process(target=_quiet_main, args=(ARGS + ["--out", str(out)],))
    p.start()
    deadline = time.monotonic() + 120
    while not (_stored_claims(out) == ["one"] and computed(toys) == ["one", "two"]):
        assert time.monotonic() < deadline and p.is_alive(), "claim one never got stored"
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert p.exitcode == -signal.SIGKILL
    assert not (out / CSV).exists()  # the CSV is an export, written at the end
    monkeypatch.delenv("TOY_LEDGER_SLEEP_TWO")
    assert main(ARGS + ["--out", str(out)]) == 0
    assert computed(toys) == ["one", "two", "two", "three"]  # one was read back; two and three computed
    pd.testing.assert_frame_equal(_ledger(out / CSV), _ledger(ref / CSV))


@pytest.mark.slow
def test_kill_9_at_random_moments_leaves_whole_claims_and_a_rerun_equals(toys, tmp_path, monkeypatch):
    """Each try a fresh folder, killed at a random moment of its run: what the store holds is a set of
    whole claims with the uninterrupted run's rows, and a rerun there gives the uninterrupted ledger."""
    ref = tmp_path / "ref"
    assert main(ARGS + ["--out", str(ref)]) == 0
    by_claim = {r["claim"]: r["rows"] for r in ledger.open_store(ref).rows.values()}
    assert set(by_claim) == set(CLAIMS)
    monkeypatch.setenv("TOY_LEDGER_SLEEP", "0.3")
    p = multiprocessing.get_context("fork").Process(target=_quiet_main, args=(ARGS + ["--out", str(tmp_path / "t")],))
    t = time.perf_counter()
    p.start()
    join_or_kill(p, 60)
    full = time.perf_counter() - t

    def after(i: int, killed: bool) -> None:
        out = tmp_path / f"k{i}"
        if (out / DB_NAME).exists():
            store = ledger.open_store(out)
            assert store.rejected == 0
            for r in store.rows.values():
                assert r["rows"] == by_claim[r["claim"]], r["claim"]

    hits = kill_at_random_moments(
        _quiet_main, lambda i: (ARGS + ["--out", str(tmp_path / f"k{i}")],), 5, full, seed=20, after=after
    )
    assert len(hits) == 5
    monkeypatch.delenv("TOY_LEDGER_SLEEP")
    for i in hits:
        assert main(ARGS + ["--out", str(tmp_path / f"k{i}")]) == 0
        pd.testing.assert_frame_equal(_ledger(tmp_path / f"k{i}" / CSV), _ledger(ref / CSV))


# ---- what a key depends on ---------------------------------------------------------------------------
def test_the_code_fingerprint_follows_the_imports_and_changes_with_the_source(tmp_path, monkeypatch):
    names = set(ledger.code_sources("theorydyn.claims.definition21"))
    assert {
        "theorydyn.claims.definition21",
        "theorydyn.claims.check",
        "theorydyn.infra.memory",
        "theorydyn.core.setting",
    } <= names
    assert {"theorydyn", "theorydyn.claims"} <= names  # the packages' __init__ run first
    assert not any(n.startswith(("theorydyn.vision", "theorydyn.scan", "theorydyn.verify")) for n in names)
    assert "theorydyn.claims.vision" not in names  # the registry's strings are not imports
    # a claim outside the package: its own source and the theorydyn modules it imports
    src = tmp_path / "fp_claim.py"
    src.write_text("from theorydyn.core.stats import mean_ci\n\ndef checks(s, *, quick, progress):\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    # theorydyn/__init__.py imports the lazy-export helper and the version; the Setting, the solvers and the
    # drivers it names under `if TYPE_CHECKING:` (its lazy exports) are not imported at run time; the packages
    # core and infra run their __init__ (core's lazy exports come from infra._lazy)
    assert set(ledger.code_sources("fp_claim")) == {
        "fp_claim",
        "theorydyn",
        "theorydyn.core",
        "theorydyn.infra",
        "theorydyn.infra._lazy",
        "theorydyn._version",
        "theorydyn.core.stats",
    }
    before = ledger.code_fingerprint("fp_claim")
    src.write_text(src.read_text() + "# an edit\n")
    ledger.code_fingerprint.cache_clear()
    ledger._read.cache_clear()
    assert ledger.code_fingerprint("fp_claim") != before
    # the runner strings of a scan ("module:function") count as imports
    assert "theorydyn.scan.point" in ledger.code_sources("theorydyn.scan.grid")


def test_a_claim_without_a_source_file_is_computed_every_time(monkeypatch, tmp_path):
    calls = []

    def checks(s, *, quick=False, progress=None):
        calls.append(1)
        return [Check.exact("Memory", "x", 1.0, "== 1", True)]

    register_claims(monkeypatch, {"m": claim_module("m", checks)})
    for _ in range(2):
        df = verify.collect(Setting(D=8, C=2), progress=False, store=tmp_path)
        assert df.attrs["claims"][0]["source"] == "computed"
    assert len(calls) == 2 and _stored_claims(tmp_path) == []


def test_last_seconds_weigh_the_progress_bar(toys, tmp_path):
    assert main(ARGS + ["--out", str(tmp_path / "o")]) == 0
    store = ledger.open_store(tmp_path / "o")
    secs = {r["claim"]: float(r["seconds"]) for r in store.rows.values()}
    s = Setting(D=16, C=4)
    assert ledger.last_seconds(store, "one", s, True) == secs["one"]
    assert ledger.last_seconds(store, "one", Setting(D=32, C=4), True) == secs["one"]  # another D: the latest
    assert ledger.last_seconds(store, "one", s, False) is None  # never run in full mode
    from theorydyn.verify.core import _Bar  # private: not one of the package's exports

    bar = _Bar(False, {"a": 4.0, "b": None, "c": 2.0})
    assert bar.w == {"a": 4.0, "b": 3.0, "c": 2.0} and bar.bar.total == 9.0  # never run: the mean of the others
    assert _Bar(False, {"a": None, "b": None}).w == {"a": 1.0, "b": 1.0}  # none ran: equal weights


def test_every_claim_has_a_measured_cold_time_for_the_eta():
    # a cold ledger (empty store) weighs each claim by its measured time, not by equal guesses
    assert set(claims.COLD_SECONDS) == set(claims.REGISTRY)
    assert all(claims.expected_seconds(n, True) > 0 for n in claims.REGISTRY)
    assert claims.expected_seconds("not a claim", True) is None


def test_one_progress_bar_unless_quiet(toys, tmp_path, capsys):
    assert main([a for a in ARGS if a != "--quiet"] + ["--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert "verify 3/3 claims: 100%" in err
    assert main(ARGS + ["--out", str(tmp_path / "p")]) == 0
    assert capsys.readouterr().err == ""


# ---- the file ------------------------------------------------------------------------------------------
def test_the_ledger_file_is_named_by_every_parameter_that_differs():
    name = verify.ledger_name
    assert name(Setting(), True) == "verify_D64_C4_quick.csv"
    assert name(Setting(), False) == "verify_D64_C4_full.csv"
    assert name(Setting(q=0.25), True) == "verify_D64_C4_quick.csv"  # 0.25 is C^2/D: the default ledger
    assert name(Setting(q=0.3), True) == "verify_D64_C4_q0.3_quick.csv"
    assert name(Setting(D=32, C=4, tau=2.0, p=5), True) == "verify_D32_C4_p5_tau2_quick.csv"
    assert name(Setting(partition="random", partition_seed=3), True) == (
        "verify_D64_C4_partitionrandom_partition_seed3_quick.csv"
    )
    assert name(Setting(), True, ["theorems"]).startswith("verify_D64_C4_only-theorem31+theorem32+")
    assert name(Setting(), True, extra={"s_max": 5000.0, "seed": None}) == "verify_D64_C4_smax5000_quick.csv"
    assert name(Setting(q=1 / 3), True) == f"verify_D64_C4_q{1 / 3!r}_quick.csv"  # never rounded into another q
    names = {name(Setting(q=q), quick) for q in (0.1, 0.2, 0.3) for quick in (True, False)}
    assert len(names) == 6


def test_out_is_a_folder_and_a_csv_path_names_the_file(toys, tmp_path, capsys):
    assert main(ARGS + ["--out", str(tmp_path / "f")]) == 0
    assert {p.name for p in (tmp_path / "f").iterdir()} >= {CSV, DB_NAME}
    assert main(ARGS + ["--out", str(tmp_path / "g" / "mine.csv")]) == 0
    assert (tmp_path / "g" / "mine.csv").is_file() and (tmp_path / "g" / DB_NAME).is_file()
    (tmp_path / "file").write_text("x")
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(ARGS + ["--out", str(tmp_path / "file")])
    assert e.value.code == 2 and "--out" in capsys.readouterr().err
    for flag in (["--recompute"], ["--scheduler", "tcp://127.0.0.1:9"], ["--quiet"], ["--force"]):
        with pytest.raises(SystemExit) as e:
            main(["--markdown", *flag])
        assert e.value.code == 2 and flag[0] in capsys.readouterr().err


def test_every_flag_help_gives_its_default():
    for a in build_parser()._actions:
        hidden = a.help == argparse.SUPPRESS  # an old spelling (--recompute of --fresh): not in --help
        if a.option_strings and a.dest != "help" and a.container.title != "setting (docs/theory.md §1)" and not hidden:
            assert "default" in (a.help or ""), a.option_strings
    text = build_parser().format_help()
    flat = " ".join(text.split())
    # the times are stated once, in docs/benchmarks.md (tests/test_times.py): the help points there
    assert "docs/benchmarks.md" in flat and not re.search(r"\d ?(s|ms|min|minutes?|seconds?)\b", flat)


# ---- the printed ledger ------------------------------------------------------------------------------
@pytest.mark.parametrize("width", [40, 60, 80, 100, 160])
def test_the_printed_ledger_fits_the_terminal_and_prints_the_notes(toys, monkeypatch, capsys, width):
    monkeypatch.setenv("COLUMNS", str(width))
    assert main(ARGS) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    # the summary alone: one line per claim (Toy 1, 2, 3), none wider than the terminal or 100 columns
    assert max(len(line) for line in lines) <= min(width, 100)
    assert [line.split()[:3] for line in lines if line.startswith("Toy ")] == [
        ["Toy", "1", "PASS"],
        ["Toy", "2", "PASS"],  # its PASS row outranks its OUT_OF_SCOPE row
        ["Toy", "3", "DEVIATES"],
    ], text
    assert "0.333… is not 1/3" not in text  # the notes are in --detail and the CSV
    assert main(ARGS + ["--detail"]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= width
    flat = " ".join(text.split())
    assert " ".join(NOTE.split()) in flat  # OUT_OF_SCOPE: the assumption that does not hold, in full
    assert "0.333… is not 1/3" in flat  # DEVIATES: what and why
    assert "an INFO note" not in flat  # INFO rows keep their note in the CSV only


def test_format_table_wraps_long_cells_without_losing_a_word(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    long = "a quantity with a long description " * 5
    rows = [
        Check.exact("Theorem 9.9 (a long claim name)", long, 0.5, "<= 0.01 (d^-omega(1))", Verdict.FAIL).row(),
        Check.not_run("Section 6", "acc", "on par", "cifar not in data/", "python -m theorydyn.vision cifar10").row(),
    ]
    df = pd.DataFrame(rows, columns=verify.COLUMNS)
    assert max(map(len, verify.format_table(df).splitlines())) <= verify.FALLBACK_WIDTH  # not a terminal: 100
    for width in (30, 50, 246):
        table = verify.format_table(df, width)
        assert max(map(len, table.splitlines())) <= width
        words = Counter(table.split())
        assert all(words[w] >= n for w, n in Counter(long.split()).items())  # every word of the cell kept
        assert "run it with: python -m theorydyn.vision cifar10" in " ".join(table.split())  # the note, whole
    assert verify.format_table(df, 246).splitlines()[0].split()[:3] == ["claim", "quantity", "measured"]
    assert textwrap.dedent(verify.format_table(df, 30)).startswith("Theorem 9.9")  # narrow: one block per row


# ---- Dask --------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_on_a_local_dask_cluster_the_rows_equal_a_local_run(toys, tmp_path, monkeypatch):
    """Two worker processes on 127.0.0.1: the toy claims (imported by the workers from tests/) and one
    real claim (Definition 2.1 at D = 16) give the local run's ledger, computed in the workers."""
    distributed = pytest.importorskip("distributed")
    register_claims(monkeypatch, {"definition21": "theorydyn.claims.definition21", **CLAIMS})
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    code = main(ARGS + ["--out", str(tmp_path / "local")])
    local = _ledger(tmp_path / "local" / CSV)
    here = os.getpid()
    assert computed(toys) == ["one", "two", "three"]
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, host="127.0.0.1", processes=True, dashboard_address=None
    ) as cluster:
        args = ARGS + ["--out", str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address]
        assert main(args) == code
        runs = [line.split() for line in toys.read_text().splitlines()[3:]]
        assert sorted(n for n, _ in runs) == ["one", "three", "two"]
        assert all(int(pid) != here for _, pid in runs)  # computed in the workers
        pd.testing.assert_frame_equal(_ledger(tmp_path / "dask" / CSV), local)
        assert main(args) == code  # a rerun on the cluster reads every claim back
        assert len(toys.read_text().splitlines()) == 6
    assert set(_stored_claims(tmp_path / "dask")) == {"definition21", "one", "two", "three"}


def test_a_scheduler_that_cannot_be_reached_exits_2_before_any_claim(toys, capsys):
    pytest.importorskip("distributed")
    with pytest.raises(SystemExit) as e:
        main(ARGS + ["--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "--scheduler" in err and "Traceback" not in err
    assert computed(toys) == []


def test_a_full_disk_under_the_store_exits_1_and_a_rerun_resumes(toys, tmp_path, monkeypatch, capsys):
    from theorydyn.infra.store import ResultStore

    real = ResultStore.append
    calls = []

    def append(self, row):
        calls.append(row["claim"])
        if len(calls) == 2:  # the disk fills as claim two is committed
            raise OSError("cannot commit a row to results.sqlite: database or disk is full")
        return real(self, row)

    monkeypatch.setattr(ResultStore, "append", append)
    out = tmp_path / "o"
    assert main(ARGS + ["--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "disk is full" in err and "rerun the same command to resume" in err and "Traceback" not in err
    assert _stored_claims(out) == ["one"] and not (out / CSV).exists()
    assert main(ARGS + ["--out", str(out)]) == 0
    assert computed(toys) == ["one", "two", "two", "three"]
    assert _stored_claims(out) == ["one", "two", "three"]


def test_report_of_these_flags_lands_beside_their_ledger(toys, tmp_path, capsys):
    """`--report` without a CSV reads the ledger these flags wrote and puts the page beside it, naming
    the whole setting; it runs no claim."""
    assert main(ARGS) == 0
    capsys.readouterr()
    assert main(["--D", "16", "--C", "4", "--quick", "--report"]) == 0
    page = tmp_path / "runs" / "ledger" / CSV.replace(".csv", ".html")
    assert f"report: {Path('runs') / 'ledger' / page.name}" in capsys.readouterr().out
    text = page.read_text(encoding="utf-8")
    assert "Setting(D=16, C=4" in text and text.count('<tr id="row-') == 5 and "Toy 3: " in text
    assert computed(toys) == ["one", "two", "three"]  # nothing computed again
