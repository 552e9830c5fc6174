"""Outputs under a full disk, a kill, a torn file (issue 18, item 3).

reduced, simulate, verify and figures write every output atomically (theorydyn.infra.atomic): a full disk
is a clean error naming the file (exit 1 after the work, exit 2 when the writability probe sees it
before any work), the earlier file is left byte for byte, and no temporary file is left behind.

A full disk is simulated in-process: ``os.fsync`` raises ``ENOSPC`` from a chosen moment (where a
real file system reports delayed allocation failures), so the tests need no root and no mount.
One test runs the same on a real 256 KiB tmpfs when it can be mounted (root), and is skipped if not.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]


class Disk:
    """``os.fsync`` that fails with ENOSPC once ``full`` is set."""

    def __init__(self, monkeypatch, full: bool = False):
        self.full = full
        real = os.fsync

        def fsync(fd):
            if self.full:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        self.monkeypatch = monkeypatch

    def fills_after(self, target: str, fn) -> None:
        """Replace ``target`` (a dotted name) by ``fn`` followed by a full disk: the disk fills while
        the command computes, after its output probes passed."""

        def then_fill(*a, **k):
            res = fn(*a, **k)
            self.full = True
            return res

        self.monkeypatch.setattr(target, then_fill)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _run(main, argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code)


# ---- reduced ------------------------------------------------------------------------------------------
REDUCED = ["--D", "8", "--C", "2", "--s-max", "100", "--n-samples", "200", "--quiet"]


def test_reduced_full_disk_after_the_run_keeps_the_earlier_files(tmp_path, monkeypatch, capsys):
    from theorydyn.reduced import __main__ as cli

    out = tmp_path / "r"
    assert _run(cli.main, REDUCED + ["--n-points", "20", "--out", str(out)]) == 0
    before = _snapshot(out)
    from theorydyn.reduced.solve import integrate as real  # the CLI imports it when it runs

    Disk(monkeypatch).fills_after("theorydyn.reduced.solve.integrate", real)
    capsys.readouterr()
    code = _run(cli.main, REDUCED + ["--n-points", "20", "--out", str(out)])  # the same run: its files are rewritten
    err = capsys.readouterr().err
    csv = "reduced_flow_D8_C2_n-points20_s-max100_n-samples200.csv"  # named by what made it (issue 20)
    assert code == 1 and csv in err and "No space left" in err and "Traceback" not in err
    assert _snapshot(out) == before  # the earlier CSV, JSON and PNG, byte for byte; no temporary file left


def test_reduced_full_disk_before_the_run_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    from theorydyn.reduced import __main__ as cli

    Disk(monkeypatch, full=True)
    monkeypatch.setattr("theorydyn.reduced.solve.integrate", lambda *a, **k: pytest.fail("computed on a full disk"))
    code = _run(cli.main, REDUCED + ["--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "No space left" in err
    assert not list((tmp_path / "r").iterdir())


# ---- simulate -----------------------------------------------------------------------------------------
SIMULATE = ["--D", "8", "--C", "2", "--N", "64", "--n-test", "64", "--steps", "4", "--quiet"]


def test_simulate_full_disk_after_the_run_keeps_the_earlier_files(tmp_path, monkeypatch, capsys):
    from theorydyn.simulate import __main__ as cli

    out = tmp_path / "s"
    assert _run(cli.main, SIMULATE + ["--out", str(out)]) == 0
    before = _snapshot(out)
    from theorydyn.simulate.run import simulate as real  # the CLI imports it when it runs

    Disk(monkeypatch).fills_after("theorydyn.simulate.run.simulate", real)
    capsys.readouterr()
    code = _run(cli.main, SIMULATE + ["--out", str(out)])  # the same run: its files are rewritten
    err = capsys.readouterr().err
    assert code == 1 and "simulate_D8_C2_N64_steps4_n-test64.csv" in err and "Traceback" not in err
    assert _snapshot(out) == before


def test_simulate_divergence_exits_1_naming_the_step(tmp_path, capsys):
    """--eta 1e11 diverges at once: the phases are None, which used to be a TypeError when printed."""
    from theorydyn.simulate.__main__ import main

    code = _run(
        main,
        [
            "--D",
            "16",
            "--C",
            "4",
            "--N",
            "128",
            "--n-test",
            "128",
            "--steps",
            "5",
            "--eta",
            "1e11",  # the largest step the CLI takes (1e308 is refused at parsing): overflows at step 2
            "--quiet",
            "--out",
            str(tmp_path / "s"),
        ],
    )
    out = capsys.readouterr()
    assert code == 1 and "diverged" in out.out and "at step 2" in out.out and "Traceback" not in out.err


# ---- verify: the probe, the ledger, a torn ledger -------------------------------------------------------
def _fake_collect(n: int = 14):
    """verify's ``collect`` replaced by ``n`` passing checks (no computation)."""
    from theorydyn.claims.check import Check
    from theorydyn.verify import COLUMNS

    def collect(s, **kw):
        rows = [Check.over_seeds(f"Claim {i}", "x", [1.0, 2.0, 3.0], "> 0", True).row() for i in range(n)]
        return pd.DataFrame(rows, columns=COLUMNS)

    return collect


VERIFY = ["--D", "8", "--C", "2", "--quick", "--only", "reduced"]


def test_verify_probe_sees_a_full_disk_before_any_check(tmp_path, monkeypatch, capsys):
    from theorydyn.verify import __main__ as cli

    Disk(monkeypatch, full=True)
    monkeypatch.setattr("theorydyn.verify.core.collect", lambda *a, **k: pytest.fail("checks ran on a full disk"))
    code = _run(cli.main, VERIFY + ["--out", str(tmp_path / "v.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "No space left" in err and not (tmp_path / "v.csv").exists()


def test_verify_full_disk_after_the_checks_keeps_the_earlier_ledger(tmp_path, monkeypatch, capsys):
    from theorydyn.verify import __main__ as cli

    out = tmp_path / "v.csv"
    monkeypatch.setattr("theorydyn.verify.core.collect", _fake_collect())
    assert _run(cli.main, VERIFY + ["--out", str(out)]) == 0
    before = out.read_bytes()
    Disk(monkeypatch).fills_after("theorydyn.verify.core.collect", _fake_collect(3))
    capsys.readouterr()
    code = _run(cli.main, VERIFY + ["--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "v.csv" in err and "Traceback" not in err
    assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["v.csv"]


def test_a_torn_ledger_is_refused_by_markdown(tmp_path, monkeypatch, capsys):
    from theorydyn.verify import __main__ as cli

    out = tmp_path / "v.csv"
    monkeypatch.setattr("theorydyn.verify.core.collect", _fake_collect(14))
    assert _run(cli.main, VERIFY + ["--out", str(out)]) == 0
    assert pd.read_csv(out)["ledger_rows"].eq(14).all()
    capsys.readouterr()
    assert _run(cli.main, ["--markdown", str(out)]) == 0
    assert capsys.readouterr().out.split("| # | claim |")[1].count("| Claim ") == 14  # every row, after the summary
    lines = out.read_bytes().splitlines(keepends=True)
    cases = {
        "row_boundary": b"".join(lines[:-1]),  # 13 of 14 rows, every line whole
        "mid_line": out.read_bytes()[:-25],  # the last row cut
        "empty": b"",
    }
    for name, data in cases.items():
        torn = tmp_path / f"{name}.csv"
        torn.write_bytes(data)
        code = _run(cli.main, ["--markdown", str(torn)])
        cap = capsys.readouterr()
        assert code == 2 and "--markdown" in cap.err and "| Claim" not in cap.out, (name, cap.err)


def test_verify_out_with_a_256_character_name_exits_2(tmp_path, capsys):
    from theorydyn.verify.__main__ import main

    for name in ("x" * 256 + ".csv", "x" * 250 + ".csv"):  # too long itself; too long with the atomic temp name
        code = _run(main, VERIFY + ["--out", str(tmp_path / name)])
        err = capsys.readouterr().err
        assert code == 2 and "--out" in err and "too long" in err and "Traceback" not in err


# ---- figures ------------------------------------------------------------------------------------------
def test_figures_full_disk_keeps_the_earlier_figure_without_a_traceback(tmp_path, monkeypatch, capsys):
    import matplotlib.pyplot as plt

    from theorydyn import figures
    from theorydyn.figures.__main__ import main

    disk = Disk(monkeypatch)

    def draw(data, axes=None):
        fig, ax = plt.subplots()
        ax.plot(data)
        return fig

    state = {"fill": False}

    def compute(quick):
        disk.full = state["fill"]
        return [1, 2, 3]

    monkeypatch.setitem(figures.REGISTRY, "fake", figures.Figure("fake", "fake", "none", (), compute, draw))
    out = tmp_path / "f"
    assert _run(main, ["fake", "--out", str(out)]) == 0
    before = _snapshot(out)
    assert {"fake.pdf", "README.generated.md", "manifest.json"} <= set(before)
    state["fill"] = True
    capsys.readouterr()
    code = _run(main, ["fake", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "fake" in err and "No space left" in err and "Traceback" not in err
    assert _snapshot(out) == before


# ---- a real full disk: a 256 KiB tmpfs (root only; skipped elsewhere) -----------------------------------------
@pytest.fixture()
def tiny_tmpfs(tmpfs):
    return tmpfs("256k")


def test_reduced_on_a_real_full_disk(tiny_tmpfs):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "theorydyn.reduced", *REDUCED, "--out", str(tiny_tmpfs / "r")]
    assert subprocess.run(cmd + ["--n-points", "20"], env=env, capture_output=True, timeout=300).returncode == 0
    before = _snapshot(tiny_tmpfs / "r")
    free = os.statvfs(tiny_tmpfs).f_bavail * os.statvfs(tiny_tmpfs).f_frsize
    (tiny_tmpfs / "fill").write_bytes(b"\0" * max(free - 96 * 1024, 0))  # room for the probe, not for the CSV
    r = subprocess.run(cmd + ["--n-points", "3000"], env=env, capture_output=True, text=True, timeout=300)
    # the output is named by what made it (issue 20): this run's own file, the earlier one untouched
    csv = "reduced_flow_D8_C2_n-points3000_s-max100_n-samples200.csv"
    assert r.returncode == 1 and csv in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _snapshot(tiny_tmpfs / "r") == before
    (tiny_tmpfs / "fill").write_bytes(b"\0" * (free - 8 * 1024) if free > 8 * 1024 else b"")  # nearly full
    r = subprocess.run(cmd + ["--n-points", "30"], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--out" in r.stderr and "No space left" in r.stderr, r.stderr
    assert _snapshot(tiny_tmpfs / "r") == before


# ---- kill -9 at random moments of a ledger write ---------------------------------------------------------
_KILL_SCRIPT = """
import sys, time
import pandas as pd
from theorydyn.claims.check import Check
from theorydyn.verify import COLUMNS
from theorydyn.verify import __main__ as cli

def collect(s, **kw):  # a large ledger, so that the write takes a while; no computation
    row = Check.over_seeds("Claim", "x", [1.0, 2.0, 3.0], "> 0", True).row()
    return pd.DataFrame([row] * int(sys.argv[2]), columns=COLUMNS)

import theorydyn.verify.core
theorydyn.verify.core.collect = collect  # the CLI imports it when it runs
print("start", flush=True)
sys.stdout = open("/dev/null", "w")  # the ledger's table would fill the pipe nobody reads
sys.exit(cli.main(["--D", "8", "--C", "2", "--quick", "--only", "reduced", "--out", sys.argv[1]]))
"""


ROWS = 10000
KILLS = 4


@pytest.mark.slow
def test_kill_during_the_ledger_write_leaves_the_old_ledger_or_the_new_one(tmp_path, capsys):
    import random
    import signal
    import time

    from theorydyn.verify.__main__ import main

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = tmp_path / "v.csv"
    cmd = [sys.executable, "-c", _KILL_SCRIPT, str(out)]
    assert subprocess.run(cmd + ["3"], env=env, capture_output=True, timeout=300).returncode == 0
    old = out.read_bytes()

    def start(n: int) -> subprocess.Popen:
        p = subprocess.Popen(cmd + [str(n)], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdout is not None and p.stdout.readline().strip() == b"start"  # the imports are done
        return p

    p = start(ROWS)
    t = time.perf_counter()
    assert p.wait(timeout=300) == 0
    window = time.perf_counter() - t  # the fake checks and the write of ROWS rows
    out.write_bytes(old)
    rng = random.Random(18)
    outcomes = []
    for _ in range(KILLS):
        p = start(ROWS)
        time.sleep(rng.uniform(0.0, window))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        data = out.read_bytes()
        if data == old:
            outcomes.append("old")
        else:
            df = pd.read_csv(out)
            assert len(df) == ROWS and df["ledger_rows"].eq(ROWS).all()
            assert main(["--markdown", str(out)]) == 0
            outcomes.append("new")
            out.write_bytes(old)
    assert len(outcomes) == KILLS  # each kill left one whole ledger, the old or the new (which depends on the moment)
