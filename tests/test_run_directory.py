"""Outputs never land in the checkout: every command writes under one run directory
(``$THEORYDYN_HOME``, else ``runs/``; :mod:`theorydyn.infra.paths`), and the committed figures change only
with an explicit ``--out figures``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from theorydyn.infra import paths

ROOT = Path(__file__).resolve().parent.parent


def test_run_dir_follows_theorydyn_home(monkeypatch, tmp_path):
    monkeypatch.delenv(paths.HOME_ENV, raising=False)
    assert paths.run_dir("ledger") == Path("runs") / "ledger"
    monkeypatch.setenv(paths.HOME_ENV, "   ")  # blank: the default
    assert paths.run_root() == Path("runs")
    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    assert paths.run_dir("scans") == tmp_path / "scans"
    assert paths.vision_ledger_dir() == tmp_path / "vision" / "ledger"


def test_vision_data_default_to_the_run_directory_and_the_ledger_names_it(monkeypatch, tmp_path):
    """Issue 41: the paper's dataset files go to ``<run dir>/data`` by default (``data/`` in a checkout
    showed in ``git status``); the ledger's NOT_RUN row names that folder and looks there."""
    pytest.importorskip("torch")
    from theorydyn.claims import vision as cv
    from theorydyn.vision import data

    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path))
    assert paths.data_dir() == tmp_path / "data"
    with pytest.raises(data.DataError, match=str(tmp_path / "data")):
        data.load("cifar10", download=False)
    assert cv.inputs(None, True) == {"data_dir": str(tmp_path / "data"), "present": {}}
    rows = [r for r in cv.paper_rows(quick=True) if r.claim == "Section 6, Figures 6/7 (cifar10)"]
    assert len(rows) == 1 and f"not in {tmp_path / 'data'}/" in rows[0].note, rows[0].note
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cifar-10-python.tar.gz").write_bytes(b"1234567")
    assert cv.inputs(None, True)["present"] == {"cifar-10-python.tar.gz": 7}
    assert "data/" in (ROOT / ".gitignore").read_text().split()  # --data-dir data in a checkout stays out of git


def test_every_default_output_is_under_the_run_directory():
    """The commands' default folders are the run directory's, read from one place."""
    from theorydyn.figures.__main__ import build_parser as figures_parser
    from theorydyn.scan.defaults import RESULTS_DIR
    from theorydyn.verify.defaults import DEFAULT_DIR

    root = paths.run_root()
    for p in (RESULTS_DIR, DEFAULT_DIR, Path(figures_parser().get_default("out"))):
        assert root in p.parents, f"{p} is not under the run directory {root}"


def _clean_copy(dst: Path) -> Path:
    """The tracked files of this checkout, committed in a fresh repository at ``dst``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dst / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q"], cwd=dst, check=True)
    subprocess.run(["git", "add", "-A"], cwd=dst, check=True)
    subprocess.run([*git, "commit", "-qm", "copy"], cwd=dst, check=True)
    return dst


@pytest.mark.slow
def test_readme_commands_leave_the_checkout_clean(tmp_path):
    """The main job and a committed figure's command, run inside a clean checkout: `git status` stays
    clean (the outputs go to the ignored run directory), the committed manifest is untouched."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    repo = _clean_copy(tmp_path / "clone")
    manifest = (repo / "figures" / "manifest.json").read_bytes()
    env = {k: v for k, v in os.environ.items() if k != paths.HOME_ENV}
    for cmd in (
        ["-m", "theorydyn.scan", "--D", "64", "--C", "4", "--no-plots", "--quiet"],
        ["-m", "theorydyn.figures", "theorem31", "--quick", "--quiet"],
    ):
        r = subprocess.run([sys.executable, *cmd], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"{cmd}: exit {r.returncode}\n{r.stderr[-2000:]}"
        status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
        assert status == "", f"{' '.join(cmd)} left the checkout changed:\n{status}"
    assert (repo / "figures" / "manifest.json").read_bytes() == manifest
    assert (repo / "runs" / "figures" / "theorem31.pdf").is_file()  # figures: PDF by default
    assert any((repo / "runs" / "scans").glob("*.csv"))
