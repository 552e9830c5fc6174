"""Ctrl-C in every command goes through the one handler of theorydyn.cli.runner (issue 33, item 7):
exit 130, one line "interrupted; …" saying what a rerun does (issue 42), no traceback, from the driver
or from its workers, also while the scan's worker processes are still starting (they start with SIGINT
ignored and are ended by the driver)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _interrupt(args: list[str], after_s: float, cwd: Path) -> tuple[int, str, list[str]]:
    """Run ``python -m ARGS`` in its own process group with SIGINT at its default, send SIGINT to the
    group (as a terminal's Ctrl-C does) after ``after_s`` s: (status, stderr, processes left)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen(
        [sys.executable, "-m", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(after_s)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=120)
    deadline = time.monotonic() + 10
    while True:
        left = subprocess.run(["pgrep", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        if not left or time.monotonic() > deadline:
            return p.returncode, err, left
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [1.5, 6.0])  # while the workers import, and while they compute
def test_scan_interrupted_exits_130_without_worker_tracebacks(tmp_path, after_s):
    code, err, left = _interrupt(
        # 40 seeds (200 points, ~1 min): the default scan's 15 points can end within 6 s on an idle machine
        ["theorydyn.scan", "--D", "64", "--C", "4", "--seeds", "40", "--quiet", "--no-plots", "--workers", "2"]
        + ["--out", "out"],
        after_s,
        tmp_path,
    )
    assert code == 130 and err.count("interrupted;") == 1 and "Traceback" not in err, err[-2000:]
    assert "the same command, rerun, " in err, err[-2000:]  # computes only those N / resumes from them
    assert not left, f"processes left in the scan's group: {left}"


@pytest.mark.slow
def test_reduced_interrupted_exits_130(tmp_path):
    # a run that lasts well past the SIGINT (the default flow ends in under 3 s on an idle machine, and a
    # run that has already finished is not interrupted): 2·10⁶ GD steps take ~30 s
    long_run = ["--method", "gd", "--eta", "0.01", "--steps", "2000000"]
    code, err, _ = _interrupt(["theorydyn.reduced", "--quiet", "--out", "out", *long_run], 3.0, tmp_path)
    assert code == 130 and "Traceback" not in err, err[-2000:]
    assert (
        "interrupted; nothing was saved (a run is written when it ends): the same command, rerun, starts it again"
        in err
    )
