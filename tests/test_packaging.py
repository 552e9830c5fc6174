"""The README's commands and .ci/run agree; every CLI exits 2 on a bad Setting."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands():
    head = (ROOT / "README.md").read_text().splitlines()[:20]
    return [line.strip() for line in head if line.startswith("    ") and "pip install" in line]


def test_readme_opens_with_the_two_commands():
    cmds = _readme_commands()
    assert len(cmds) >= 2
    assert "python -m theorydyn.scan --D 64 --C 4" in cmds[0]
    assert "pytest" in cmds[1]


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in [line.strip() for line in ci]


def test_setting_cli_error_exits_2():
    code = (
        "import argparse, sys; from theorydyn.cli.tools import add_setting_arguments, setting_from_args;"
        "p = argparse.ArgumentParser(); add_setting_arguments(p); setting_from_args(p.parse_args(sys.argv[1:]))"
    )
    out = subprocess.run([sys.executable, "-c", code, "--D", "10", "--C", "4"], capture_output=True, text=True)
    assert out.returncode == 2
    assert "C must divide D" in out.stderr and "Traceback" not in out.stderr


def test_error_messages_name_the_command():
    out = subprocess.run([sys.executable, "-m", "theorydyn.reduced", "--tau", "-1"], capture_output=True, text=True)
    assert out.returncode == 2
    assert (
        out.stderr.strip().splitlines()[-1]
        == "python -m theorydyn.reduced: error: argument --tau: must be >= 1e-12, got -1"
    )


def test_ci_installs_the_optional_extras():
    """The vision and Dask tests import-or-skip so that a core-only install can run the rest; under
    CI the extras are installed, so none of them may skip there."""
    import importlib
    import os

    if os.environ.get("CI"):
        for mod in ("torch", "sklearn", "distributed"):
            importlib.import_module(mod)
    else:
        pytest.importorskip("torch")


def test_the_docs_home_gives_the_readme_commands():
    index = [line.strip() for line in (ROOT / "docs" / "index.md").read_text().splitlines()]
    for cmd in _readme_commands()[:2]:
        assert cmd in index, f"docs/index.md does not give the README's command {cmd!r}"
