"""Crashes and a full disk at any moment (issue 18): ``kill -9`` of a ``verify`` run, and a store whose
disk fills at the k-th write of a scan. What is left must be whole, and a rerun must give an
uninterrupted run's results."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import join_or_kill, kill_at_random_moments

from theorydyn.verify.__main__ import main  # imported here: each forked run starts at main()
from theorydyn.verify.files import whole_ledger as _whole_ledger  # the ledger read as the command reads it

# a small, fast selection of the quick ledger (the claims' checks take ~1 s; the rest is the write)
VERIFY = ["--D", "16", "--C", "4", "--quick", "--only", "definition21", "theorem32"]
# columns that legitimately differ between two runs: the provenance's time stamp
STAMPS = ["prov_created_utc"]


def _verify_quietly(out: Path, argv: tuple[str, ...] = tuple(VERIFY)) -> None:
    """``python -m theorydyn.verify`` as the CLI runs it (argument parsing, probe, checks, atomic ledger
    write), in a forked child whose output goes nowhere (the imports are the parent's: the time spent is
    that of the run itself, so that random moments fall in it)."""
    import contextlib

    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
        sys.exit(main([*argv, "--out", str(out)]))


def _run_verify(out: Path, argv: tuple[str, ...] = tuple(VERIFY)) -> float:
    """An uninterrupted verify run in a forked child (the parent never runs the checks' kernels, so its
    later forks are safe); returns its wall time."""
    p = multiprocessing.get_context("fork").Process(target=_verify_quietly, args=(out, argv))
    t = time.perf_counter()
    p.start()
    join_or_kill(p, 120)
    assert p.exitcode in (0, 1), p.exitcode  # 1: some claim FAILs at this tiny size, which is a verdict
    return time.perf_counter() - t


def _ledger(path: Path) -> pd.DataFrame:
    return _whole_ledger(path).drop(columns=STAMPS)  # raises on a torn ledger


@pytest.mark.slow
def test_kill_9_at_20_random_moments_of_verify_leaves_the_old_ledger_or_the_new_one_and_a_rerun_equals(tmp_path):
    ref_path = tmp_path / "ref" / "ledger.csv"
    full = _run_verify(ref_path)
    ref = _ledger(ref_path)
    assert len(ref) == ref["ledger_rows"].iloc[0] > 5
    # the ledger that exists before each killed run: an older one (another selection), so old and new differ
    out = tmp_path / "k" / "ledger.csv"
    old_run = tmp_path / "old" / "ledger.csv"
    _run_verify(old_run, tuple(a for a in VERIFY if a != "theorem32"))
    old = old_run.read_bytes()
    assert len(_ledger(old_run)) < len(ref)
    seen = {"old": 0, "new": 0}

    def before(i: int) -> tuple[Path, tuple[str, ...]]:
        out.parent.mkdir(exist_ok=True)
        for p in out.parent.glob("ledger.csv.old-*"):  # each kill starts from one earlier ledger
            p.unlink()
        out.write_bytes(old)
        # --fresh: the claims stored by an earlier killed run would otherwise make the run too short for the
        # kill to land in it (the resume itself is tested in tests/test_verify_ledger.py); it renames the
        # earlier ledger to ledger.csv.old-<UTC time> before any work, so a kill may find it there
        return (out, (*VERIFY, "--fresh"))

    def after(i: int, killed: bool) -> None:
        aside = sorted(out.parent.glob("ledger.csv.old-*"))
        assert len(aside) <= 1, aside
        if not out.exists():  # killed after --fresh set the old ledger aside: it is there, byte for byte
            assert len(aside) == 1 and aside[0].read_bytes() == old, (aside, killed)
            seen["old"] += 1
        elif out.read_bytes() == old:
            seen["old"] += 1
        else:  # the new ledger, whole, with an uninterrupted run's values; the old one kept aside
            pd.testing.assert_frame_equal(_ledger(out), ref)
            assert len(aside) == 1 and aside[0].read_bytes() == old, aside
            seen["new"] += 1
        # what a reader sees (every name not hidden) is the ledger (or the old one set aside) and the claims'
        # store: no torn copy, no temporary file; a kill -9 can leave the hidden temporary of atomic_path
        # (.<stem>.<pid>.tmp.csv)
        visible = sorted(p.name for p in out.parent.iterdir() if not p.name.startswith("."))
        # (--fresh lists the claims' rows it set aside in ledger_claims.rejected.csv)
        store = {"results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "ledger_claims.rejected.csv"}
        ledgers = [v for v in visible if v.startswith("ledger.csv")]
        assert 1 <= len(ledgers) <= 2 and set(visible) - set(ledgers) <= store, visible
        hidden = [p.name for p in out.parent.iterdir() if p.name.startswith(".")]
        assert all(h.startswith((".ledger.", ".ledger_claims.")) and h.endswith(".tmp.csv") for h in hidden), hidden

    hits = kill_at_random_moments(_verify_quietly, before, 20, duration=full, seed=18, after=after)
    assert len(hits) == 20, hits  # 20 kills landed while verify was running
    assert seen["old"] >= 1, seen
    # an uninterrupted rerun over whatever the kills left: the uninterrupted run's ledger
    _run_verify(out)
    pd.testing.assert_frame_equal(_ledger(out), ref)


# ---- a full disk at the k-th write of the store ---------------------------------------------------------
FULL = "database or disk is full"
SCAN = ["--runner", "scan_fake:fake_point", "--no-plots", "--quiet", "--workers", "0", "--name", "full"]
SCAN += ["--D", "16", "--C", "4", "--n-points", "8", "--q", "0.1", "0.2", "--seeds", "6"]
WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "COMMIT")


class _DiskFillsAt:
    """A store connection whose k-th write (INSERT, UPDATE, DELETE, COMMIT) and every later one fail as
    SQLite fails on a full disk, until ``freed``."""

    def __init__(self, con, disk):
        self._con, self._disk = con, disk

    def execute(self, sql, *args):
        if sql.lstrip().split(None, 1)[0].upper() in WRITES and not self._disk["freed"]:
            self._disk["writes"] += 1
            if self._disk["writes"] >= self._disk["k"]:
                raise sqlite3.OperationalError(FULL)
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def _scan(results: Path, capsys) -> tuple[int, str]:
    from theorydyn.scan.__main__ import main as scan_main

    try:
        rc = scan_main([*SCAN, "--out", str(results)])
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 2
    return rc, capsys.readouterr().err


def _stored(results: Path) -> dict[str, dict]:
    """The committed rows, read with plain sqlite3 (not through the store), without the columns that differ
    between runs (wall times, the provenance's time stamp)."""
    con = sqlite3.connect(results / "results.sqlite")
    try:
        found = con.execute("SELECT key, data FROM rows WHERE scope = 'full'").fetchall()
    finally:
        con.close()
    return {
        k: {c: v for c, v in json.loads(d).items() if not (c.endswith("wall_s") or c == "prov_created_utc")}
        for k, d in found
    }


@pytest.mark.parametrize("k", [1, 2, 7, 12, 13])  # 12 points: 12 row commits, then the export's bookkeeping
def test_a_full_disk_at_the_kth_store_write_is_a_clean_error_and_a_rerun_completes(tmp_path, monkeypatch, capsys, k):
    from theorydyn.infra import store as store_mod

    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the stand-in runner
    assert _scan(tmp_path / "ref", capsys)[0] == 0
    ref = _stored(tmp_path / "ref")
    assert len(ref) == 12

    disk = {"k": k, "writes": 0, "freed": False}
    real = store_mod.connect
    monkeypatch.setattr(store_mod, "connect", lambda db: _DiskFillsAt(real(db), disk))
    res = tmp_path / "res"
    rc, err = _scan(res, capsys)
    assert rc in (1, 2) and "results.sqlite" in err and FULL in err and "Traceback" not in err, (rc, err)
    got = _stored(res)
    assert len(got) == min(k - 1, 12)  # the rows committed before the disk filled stay
    assert all(ref[key] == row for key, row in got.items())

    disk["freed"] = True  # space is freed: the rerun completes, and equals an uninterrupted run's rows
    rc, err = _scan(res, capsys)
    assert rc == 0 and "Traceback" not in err, err
    assert _stored(res) == ref
    assert sorted(pd.read_csv(res / "full.csv", dtype={"key": str})["key"]) == sorted(ref)


@pytest.fixture()
def small_tmpfs(tmpfs):
    return tmpfs("1m")


@pytest.mark.parametrize("room_kib", [96, 128, 192])
def test_a_scan_on_a_real_full_disk_exits_cleanly_and_resumes_once_space_is_freed(
    small_tmpfs, tmp_path, monkeypatch, capsys, room_kib
):
    """The same on a real 1 MiB tmpfs, filled to leave ``room_kib``: enough for the folder's 64 KiB write
    probe and the database, too little for 12 points' trajectories, rows and WAL frames, so the disk fills
    mid-scan (at 96/128/192 KiB: after 1/3/4-5 rows), wherever SQLite or a trajectory write meets it."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # the stand-in runner
    assert _scan(tmp_path / "ref", capsys)[0] == 0
    ref = _stored(tmp_path / "ref")
    res = small_tmpfs / "res"
    st = os.statvfs(small_tmpfs)
    (small_tmpfs / "fill").write_bytes(b"\0" * max(st.f_bavail * st.f_frsize - room_kib * 1024, 0))
    rc, err = _scan(res, capsys)
    assert rc == 1 and "Traceback" not in err, (rc, err)
    assert ("No space left" in err or FULL in err) and str(res) in err, err  # the file is named
    got = _stored(res)
    assert len(got) < 12 and all(ref[key] == row for key, row in got.items())  # the rows committed stay
    (small_tmpfs / "fill").unlink()  # space is freed
    rc, err = _scan(res, capsys)
    assert rc == 0 and "Traceback" not in err, err
    assert _stored(res) == ref
    assert sorted(pd.read_csv(res / "full.csv", dtype={"key": str})["key"]) == sorted(ref)


def _hold_the_bar_lock_then_sleep() -> None:
    from tqdm.std import tqdm

    tqdm.get_lock().acquire()  # a bar being drawn at the moment of the kill
    time.sleep(60)


def test_a_child_killed_while_drawing_a_bar_does_not_hang_the_next_bar():
    """tests/conftest.py gives each forked child tqdm locks of its own: without that, a child killed by
    SIGKILL inside tqdm's shared write lock leaves it acquired, and the test process's next bar waits for ever
    (the hang of the full-disk test after the kill -9 tests)."""
    import signal

    from tqdm.std import tqdm

    tqdm(range(1), disable=True)  # the lock exists before the fork, as after any earlier bar
    p = multiprocessing.get_context("fork").Process(target=_hold_the_bar_lock_then_sleep)
    p.start()
    time.sleep(1.0)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    lock = tqdm.get_lock()
    assert lock.locks[0].acquire(timeout=5), "tqdm's multiprocessing lock is held by a killed child"
    lock.locks[0].release()
