"""``--help`` is cheap, and the command runner's shared behaviour (issue 29, issue 33).

* ``python -X importtime -m theorydyn.<command> --help`` imports none of Numba, SciPy, pandas,
  Matplotlib or torch, for every command, through ``python -m theorydyn <command> --help`` too:
  the packages re-export lazily (:mod:`theorydyn.infra._lazy`) and each command imports its solvers in its
  run function (:mod:`theorydyn.cli.runner`). A planted heavy import is caught (the check can fail).
* The runner maps known errors in one place: Ctrl-C → 130 and one line "interrupted; <what a rerun does>",
  a store error → 2, a full disk → 1, a read-only file system → 2, each one line, no traceback.
* ``integrate(Setting())`` and ``python -m theorydyn.reduced`` use the same horizon.
"""

from __future__ import annotations

import argparse
import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from theorydyn.__main__ import COMMANDS
from theorydyn.bench.__main__ import BENCHMARKS

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numba", "scipy", "pandas", "matplotlib", "torch")


def _runnable_modules() -> list[str]:
    """Every module run with ``-m``, found on disk (a new command is checked without being listed here):
    the package itself, each package with a ``__main__.py``, each module with a ``__main__`` block."""
    found = {"theorydyn"}
    for p in (ROOT / "theorydyn").rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if p.name == "__main__.py":
            found.add(".".join(parts[:-1]))
        elif 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"):
            found.add(".".join(parts))
    return sorted(found)


#: every command module run with -m (the dispatcher's commands, the dispatcher itself, the claims CLI,
#: the benchmarks, and any other module with a __main__)
MODULES = _runnable_modules()


def heavy_imports(args: list[str]) -> list[str]:
    """The heavy packages ``python -X importtime ARGS`` imports (top-level names), from its stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, env=env, timeout=120, cwd=ROOT
    )
    assert p.returncode == 0, p.stderr[-2000:]
    names = {line.rsplit("|", 1)[-1].strip() for line in p.stderr.splitlines() if line.startswith("import time:")}
    return sorted({n.split(".")[0] for n in names} & set(HEAVY))


def test_the_check_sees_a_heavy_import():
    """A planted counter-case: a command line that imports pandas is caught."""
    assert heavy_imports(["-c", "import pandas"]) == ["pandas"]


def test_scan_help_imports_nothing_heavy():
    assert heavy_imports(["-m", "theorydyn.scan", "--help"]) == []


#: commands whose --help still imports heavy packages, with why (not yet on the runner's light parsers)
HEAVY_HELP: dict[str, str] = {}


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    [pytest.param(m, marks=pytest.mark.xfail(reason=HEAVY_HELP[m])) if m in HEAVY_HELP else m for m in MODULES],
)
def test_help_of_every_command_imports_nothing_heavy(module):
    assert heavy_imports(["-m", module, "--help"]) == [], f"python -m {module} --help"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_through_the_dispatcher_imports_nothing_heavy(name):
    assert heavy_imports(["-m", "theorydyn", name, "--help"]) == [], f"theorydyn {name} --help"


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_help_of_every_benchmark_imports_nothing_heavy(name):
    assert heavy_imports(["-m", "theorydyn.bench", name, "--help"]) == [], f"theorydyn bench {name} --help"


def test_every_command_is_among_the_modules_checked():
    """The walk is not vacuous: it finds every registered command, the claims CLI and the benchmarks."""
    assert {m for m, _ in COMMANDS.values()} | {"theorydyn", "theorydyn.claims"} <= set(MODULES)
    assert {f"theorydyn.bench.{b}_cli" for b in BENCHMARKS} <= set(MODULES)


def test_verify_help_names_the_default_ledger():
    from theorydyn import Setting
    from theorydyn.verify import ledger_name
    from theorydyn.verify.defaults import DEFAULT_LEDGER

    assert DEFAULT_LEDGER == ledger_name(Setting(), True)


# ---- the runner: one place for interrupts and known errors ------------------------------------------------
def _command(run):
    from theorydyn.cli.runner import Command
    from theorydyn.cli.tools import ArgumentParser

    def build() -> argparse.ArgumentParser:
        ap = ArgumentParser(prog="toy")
        ap.add_argument("--out", default="x")
        return ap

    return Command("toy", build, run)


def _raises(e: BaseException):
    def run(inv):
        raise e

    return run


@pytest.mark.parametrize(
    "error, code, words",
    [
        (KeyboardInterrupt(), 130, "interrupted; nothing was saved (a run is written when it ends)"),
        (OSError(errno.ENOSPC, "No space left on device", "/x/out.csv"), 1, "'/x/out.csv': No space left"),
        (OSError(errno.EACCES, "Permission denied", "/x/out.csv"), 1, "'/x/out.csv': Permission denied"),
        (OSError(errno.EROFS, "Read-only file system", "/x/out.csv"), 2, "read-only"),
        (sqlite3.DatabaseError("database disk image is malformed"), 2, "store is damaged"),
    ],
)
def test_runner_maps_known_errors_to_one_line(capsys, error, code, words):
    assert _command(_raises(error)).main([]) == code
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and err.startswith(("toy:", "\ntoy:"))


def test_runner_maps_torchs_full_disk_error(capsys, monkeypatch):
    import types

    monkeypatch.setitem(sys.modules, "torch", sys.modules.get("torch") or types.ModuleType("torch"))
    e = RuntimeError(
        "[enforce fail at inline_container.cc:603] . PytorchStreamWriter failed writing file data/0: file write failed"
    )
    assert _command(_raises(e)).main([]) == 1
    err = capsys.readouterr().err
    assert "cannot write a checkpoint" in err and "Traceback" not in err


def test_runner_maps_a_store_error_to_exit_2(capsys):
    from theorydyn.infra.store import StoreError

    assert _command(_raises(StoreError("results.sqlite is damaged"))).main([]) == 2
    assert "toy: error: results.sqlite is damaged" in capsys.readouterr().err


def test_runner_lets_a_bug_through():
    """An error the runner does not know keeps its traceback (it is a bug, not an input)."""
    with pytest.raises(ZeroDivisionError):
        _command(_raises(ZeroDivisionError("bug"))).main([])


def test_a_shared_flag_is_added_in_one_place(capsys):
    """Every command gets the runner's global flags (theorydyn.cli.runner.GLOBAL_ARGUMENTS)."""
    from theorydyn import __version__
    from theorydyn.scan.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and __version__ in capsys.readouterr().out


# ---- one horizon ------------------------------------------------------------------------------------------
def test_integrate_and_the_reduced_cli_share_one_horizon():
    """integrate(s) without s_max runs to the CLI's default --s-max (theorydyn.reduced.defaults.S_MAX),
    the CLI's horizon (README's reduced numbers are at it)."""
    from theorydyn import Setting
    from theorydyn.reduced import integrate
    from theorydyn.reduced.__main__ import build_parser
    from theorydyn.reduced.defaults import S_MAX

    assert build_parser().get_default("s_max") == S_MAX == 2e4
    res = integrate(Setting(D=8, C=2), expectation="exact", n_points=5)
    assert float(res.trajectory["s"].iloc[-1]) == S_MAX


# ---- the command list -------------------------------------------------------------------------------------
def test_every_listed_command_is_a_module_run_with_dash_m():
    import importlib.util

    def runnable(mod: str) -> bool:  # a package with a __main__, or a module with a __main__ block
        spec = importlib.util.find_spec(mod)
        if spec is None:
            return False
        if spec.submodule_search_locations is not None:
            return importlib.util.find_spec(f"{mod}.__main__") is not None
        return 'if __name__ == "__main__":' in Path(spec.origin or "").read_text()

    missing = [f"{name}: {mod}" for name, (mod, _) in COMMANDS.items() if not runnable(mod)]
    assert not missing


def test_theorems_is_verify_only_theorems_quick():
    """``theorydyn theorems [FLAGS]`` parses to exactly ``verify --only theorems --quick [FLAGS]`` (--full: full)."""
    from theorydyn.theorems.__main__ import build_parser as theorems
    from theorydyn.verify.__main__ import build_parser as verify

    for flags, mode in (([], ["--quick"]), (["--full"], ["--full"]), (["--D", "32", "--quick"], ["--quick"])):
        assert vars(theorems().parse_args(flags)) == vars(verify().parse_args(["--only", "theorems", *mode, *flags]))


def test_theorems_refuses_another_selection(capsys):
    from theorydyn.theorems.__main__ import main

    with pytest.raises(SystemExit) as e:
        main(["--only", "theorem31"])
    assert e.value.code == 2 and "--only" in capsys.readouterr().err


@pytest.mark.parametrize(
    "module, flags",
    [
        ("theorydyn.verify.__main__", ["--quick", "--full"]),
        ("theorydyn.figures.__main__", ["--quick", "--full"]),
        ("theorydyn.transfer.__main__", ["--quick", "--full"]),
        ("theorydyn.claims.__main__", ["--quick", "--full"]),
    ],
)
def test_quick_and_full_are_both_accepted_and_exclusive(module, flags):
    import importlib

    ap = importlib.import_module(module).build_parser()
    dest = next(a.dest for a in ap._actions if "--quick" in a.option_strings)
    assert getattr(ap.parse_args(["--quick"]), dest) == (dest == "quick")
    assert getattr(ap.parse_args(["--full"]), dest) == (dest == "full")
    with pytest.raises(SystemExit):
        ap.parse_args(flags)


def test_transfer_reads_n_test_in_both_spellings():
    from theorydyn.transfer.__main__ import build_parser

    ap = build_parser()
    assert ap.parse_args(["--n-test", "64"]).N_test == ap.parse_args(["--N-test", "64"]).N_test == 64
    assert "--N-test" not in ap.format_help()  # one spelling shown
