"""Every bad input of every CLI is a clear error before any work (issue 11).

For each CLI the flags are read from its own argparse parser (``build_parser()``), so a flag
added later is covered without touching this file. Each numeric flag must use the checked
converter of :func:`theorydyn.cli.tools.number` (finite, integer where it must be, its range kept on
the converter); from that range the test derives the values that must be refused: nan, ±inf,
1e400, '', text, a fraction for an integer flag, a value just outside the range. A hypothesis
strategy draws further invalid values of every flag. Then come the rules checked after parsing
(a Setting's, a flag that does nothing in the chosen mode, output paths that cannot be written,
memory estimates above ``$THEORYDYN_MEMORY_LIMIT``, invalid ``scan --spec`` files).

Each case calls the CLI's ``main(argv)`` in-process, in an empty temporary working folder
(the default output folders are relative), and asserts: exit status 2, the flag named in stderr,
no traceback, nothing written. A case that slips through validation would start the computation:
an alarm stops it after a few seconds and the case fails. Two subprocess runs check the same end
to end through ``python -m theorydyn``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import math
import os
import signal
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

import pytest
from conftest import NON_REGULAR, make_non_regular
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from theorydyn.cli.tools import guard_memory, number, positive
from theorydyn.core.setting import D_MAX, Setting
from theorydyn.infra.memory import MEMORY_ENV, available_memory
from theorydyn.reduced.memory import reduced_memory

ROOT = Path(__file__).resolve().parents[1]

#: CLI → the module whose ``build_parser()`` / ``main(argv)`` it runs
CLIS = {
    "reduced": "theorydyn.reduced.__main__",
    "simulate": "theorydyn.simulate.__main__",
    "scan": "theorydyn.scan.__main__",
    "verify": "theorydyn.verify.__main__",
    "theorems": "theorydyn.claims.__main__",
    "figures": "theorydyn.figures.__main__",
    "bench-simulate": "theorydyn.bench.simulate_cli",
    "bench-reduced": "theorydyn.bench.reduced_cli",
    "transfer": "theorydyn.transfer.__main__",
    "vision": "theorydyn.vision.__main__",
    "vision-bench": "theorydyn.vision.bench",
}
#: prepended to every call: no progress bars, no worker processes (an input that slipped through
#: must fail by the alarm here, not in a child)
BASE = {
    "reduced": ["--quiet", "--no-plot"],
    "simulate": ["--quiet"],
    "scan": ["--quiet", "--no-plots", "--workers", "0"],
    "vision": ["--device", "cpu"],
    "vision-bench": ["--device", "cpu"],
}
ALARM_S = 8
#: a small limit, so that the memory guard trips the same way on every machine
MEMORY_LIMIT = "1G"

COUNTS = {"tried": 0, "clean": 0}


class _Alarm(BaseException):
    """Raised by SIGALRM: the CLI started working on an input it should have refused."""


def _on_alarm(signum, frame):
    raise _Alarm()


def _parser(name: str) -> argparse.ArgumentParser:
    return importlib.import_module(CLIS[name]).build_parser()


def call(name: str, argv: list[str]) -> tuple[object, str]:
    """Run ``main(BASE + argv)`` of CLI ``name`` in an empty temporary cwd: (exit status, stderr).

    The status is the SystemExit code or main's return value; 'alarm' when it ran past
    ALARM_S seconds; 'exception' (with the traceback in stderr) when anything else escaped;
    'wrote' (with the listing) when the working folder is not empty afterwards.
    """
    main = importlib.import_module(CLIS[name]).main
    err, out = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    old = signal.signal(signal.SIGALRM, _on_alarm)
    with tempfile.TemporaryDirectory() as cwd:
        os.chdir(cwd)
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                signal.setitimer(signal.ITIMER_REAL, ALARM_S)
                try:
                    code = main(BASE.get(name, []) + argv)
                except SystemExit as e:
                    code = e.code
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except _Alarm:
            code = "alarm"
        except BaseException:  # noqa: BLE001 — reported as the failure it is
            code = "exception"
            err.write(traceback.format_exc())
        finally:
            signal.signal(signal.SIGALRM, old)
            left = sorted(str(p.relative_to(cwd)) for p in Path(cwd).rglob("*"))
            os.chdir(old_cwd)
    if left and code == 2:
        code = "wrote"
        err.write(f"\nfiles written: {left}")
    return code, err.getvalue()


def clean(name: str, argv: list[str], flags: tuple[str, ...] | str, also: tuple[str, ...] = ()) -> tuple[bool, str]:
    """(the case is clean, a description): exit 2, one of ``flags`` and all of ``also`` in stderr,
    no traceback, nothing written."""
    flags = (flags,) if isinstance(flags, str) else flags
    code, err = call(name, argv)
    ok = code == 2 and any(f in err for f in flags) and all(w in err for w in also) and "Traceback" not in err
    COUNTS["tried"] += 1
    COUNTS["clean"] += ok
    return ok, f"{name} {argv}: exit {code!r}, want 2 naming {flags} {also}; stderr: {err[-600:]!r}"


# ---- the flags of every parser ------------------------------------------------------------------
def numeric_actions(parser: argparse.ArgumentParser):
    """(flag, action, kind) for every option whose value is a number."""
    for a in parser._actions:
        if not a.option_strings:
            continue
        kind = getattr(a.type, "kind", None) or (a.type if a.type in (int, float) else None)
        if kind is not None:
            yield a.option_strings[-1], a, kind


def _fmt(x: float, kind) -> str:
    return str(int(x)) if kind is int else repr(float(x))


def _inside(t, x: float) -> bool:
    """Whether ``x`` lies in the declared range of the converter ``t`` (its ``low``/``high``, open or not)."""
    low, high = getattr(t, "low", None), getattr(t, "high", None)
    if not math.isfinite(x):
        return False
    if low is not None and (x < low or (t.low_open and x == low)):
        return False
    return not (high is not None and (x > high or (t.high_open and x == high)))


def boundary_values(action: argparse.Action, kind) -> list[str]:
    """The values at both ends of the flag's declared range that lie outside it (issue 42): zero, -0, the
    negatives, the smallest positive float (5e-324) and its negative, the bound itself where it is open,
    the nearest float beyond each bound (``nextafter``), the integer beyond it; each written as a
    command line would."""
    t = action.type
    low, high = getattr(t, "low", None), getattr(t, "high", None)
    cand: list[float] = [0.0, -0.0, -1.0, 5e-324, -5e-324, -1e-300]
    for b, away in ((low, -math.inf), (high, math.inf)):
        if b is not None:
            cand += [b, math.nextafter(b, away), b - 1 if away < 0 else b + 1]
    if kind is int:
        cand = [c for c in cand if c == int(c)]
    out = []
    for c in cand:
        if not _inside(t, c):
            text = str(int(c)) if kind is int else repr(float(c))
            if text not in out:
                out.append(text)
    return out


def bad_values(action: argparse.Action, kind) -> list[str]:
    """The values the flag's rule must refuse (see the module docstring), its boundary values included
    (:func:`boundary_values`)."""
    t = action.type
    vals = ["nan", "inf", "-inf", "1e400", "", "abc", "1,5"]
    if kind is int:
        vals += ["1.5", "0x10"]
    low, high = getattr(t, "low", None), getattr(t, "high", None)
    if low is not None:
        vals.append(_fmt(low, kind) if t.low_open else _fmt(low - 1 if kind is int else low - 0.5, kind))
        vals.append(_fmt(low - 10**6, kind))
    if high is not None:
        vals.append(_fmt(high, kind) if t.high_open else _fmt(high + 1 if kind is int else high + 0.5, kind))
        vals.append(str(10**12) if kind is int else "1e300")
    return list(dict.fromkeys(vals + boundary_values(action, kind)))


def test_the_boundary_values_are_derived_from_each_declared_range():
    """A planted check of :func:`boundary_values`: the values just outside each end, nothing inside."""
    conv = number(float, "--x", low=0, low_open=True, high=1)
    vals = boundary_values(argparse.Namespace(type=conv), float)
    assert {"0.0", "-0.0", "-1.0", "-5e-324", repr(math.nextafter(1.0, 2.0)), "2.0"} <= set(vals)
    assert "5e-324" not in vals and "1.0" not in vals  # inside (0, 1]
    conv = number(float, "--tau", low=1e-12)
    tau = set(boundary_values(argparse.Namespace(type=conv), float))
    assert {"5e-324", repr(math.nextafter(1e-12, 0.0)), "0.0"} <= tau
    ints = boundary_values(argparse.Namespace(type=number(int, "--n", low=2, high=9)), int)
    assert set(ints) == {"0", "-1", "1", "10"}


def _arg(flag: str, value: str) -> list[str]:
    return [f"{flag}={value}"]  # '=' so that '-inf' or '' is read as the value


NUMERIC = [(name, flag, action, kind) for name in CLIS for flag, action, kind in numeric_actions(_parser(name))]


def test_every_numeric_flag_has_a_checked_converter():
    """A bare ``type=int``/``float`` lets nan, inf or any range through: every numeric flag must use
    :func:`theorydyn.cli.tools.number` (or :func:`~theorydyn.cli.tools.positive`), whose rule the other tests read."""
    assert len(NUMERIC) > 40  # the enumeration found the flags (not an empty, vacuous pass)
    bare = [f"{name} {flag}" for name, flag, action, _ in NUMERIC if action.type in (int, float)]
    assert not bare, f"flags without a checked converter: {bare}"
    for name in CLIS:
        for a in _parser(name)._actions:
            assert a.type is None or callable(a.type)


@pytest.mark.parametrize("name", list(CLIS))
def test_every_invalid_value_of_every_numeric_flag_is_refused_cleanly(name):
    bad = []
    for n, flag, action, kind in NUMERIC:
        if n != name:
            continue
        for value in bad_values(action, kind):
            ok, why = clean(name, _arg(flag, value), action.option_strings)
            if not ok:
                bad.append(why)
    assert not bad, "\n".join(bad)


# ---- hypothesis: further invalid values of every numeric flag -------------------------------------
def _not_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return True
    return False


@st.composite
def invalid_value(draw, action: argparse.Action, kind) -> str:
    t = action.type
    low, high = getattr(t, "low", None), getattr(t, "high", None)
    options = [
        st.sampled_from(["nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity", "1e400", "-1e999", "", " "]),
        # exactly '--' is argparse's own gap, tested by test_a_double_dash_value_is_refused
        st.text(alphabet="abcxyz_+-. ,;e", min_size=1, max_size=8).filter(_not_float).filter(lambda t: t != "--"),
    ]
    if kind is int:
        options.append(
            st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)
            .filter(lambda x: x != int(x))
            .map(repr)
        )
    if low is not None:
        options.append(_beyond(kind, low, t.low_open, below=True))
    if high is not None:
        options.append(_beyond(kind, high, t.high_open, below=False))
    return draw(st.one_of(options))


def _beyond(kind, bound: float, is_open: bool, *, below: bool):
    """Values of ``kind`` that break ``bound``: under it (``below``) or over it, the bound itself
    where it is open, written as a command line would."""
    if kind is int:
        base = st.integers(max_value=int(math.floor(bound))) if below else st.integers(min_value=int(math.ceil(bound)))
    else:
        limit = {"max_value" if below else "min_value": float(bound)}
        base = st.floats(**limit, allow_nan=False, allow_infinity=False)
    if below:
        breaks = (lambda x: not x > bound) if is_open else (lambda x: not x >= bound)
    else:
        breaks = (lambda x: not x < bound) if is_open else (lambda x: not x <= bound)
    return base.filter(breaks).map(lambda x: _fmt(x, kind))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hypothesis_draws_invalid_values_of_every_flag(data):
    name, flag, action, kind = data.draw(st.sampled_from(NUMERIC), label="flag")
    value = data.draw(invalid_value(action, kind), label="value")
    ok, why = clean(name, _arg(flag, value), action.option_strings)
    assert ok, why


# ---- '--flag=--': argparse (3.11) strips the '--' and hands main an empty list, no converter called ----
@pytest.mark.parametrize("name", sorted({n for n, *_ in NUMERIC}))  # the CLIs that have numeric flags
def test_a_double_dash_value_is_refused(name):
    """``--flag=--``: argparse (3.11) reads an empty list without calling the converter; every CLI
    parses with theorydyn.cli.tools.ArgumentParser, which refuses it naming the flag."""
    flags = [(flag, action) for n, flag, action, _ in NUMERIC if n == name]
    assert flags
    bad = []
    for flag, action in flags:
        ok, why = clean(name, _arg(flag, "--"), action.option_strings)
        if not ok:
            bad.append(why)
    assert not bad, "\n".join(bad)


# ---- rules checked after parsing ---------------------------------------------------------------------
@pytest.fixture()
def blocked(tmp_path):
    """A path under a regular file: no folder can be created there."""
    f = tmp_path / "file"
    f.write_text("")
    return f / "sub"


def _rule_cases(blocked: Path) -> list[tuple[str, list[str], tuple[str, ...]]]:
    b = str(blocked)
    return [
        # the Setting's joint rules, named by flag
        ("reduced", ["--D", "10", "--C", "4"], ("--C",)),
        ("reduced", ["--C", "64"], ("--C",)),
        ("reduced", ["--p", "4"], ("--p",)),
        ("reduced", ["--partition", "grid", "--D", "8", "--C", "2"], ("--partition",)),
        ("reduced", ["--partition", "0,1;2"], ("--partition",)),
        ("reduced", ["--partition", "zigzag"], ("--partition",)),
        ("reduced", ["--D", "8", "--C", "2", "--partition", "0,1;2,3;4,5;6,6"], ("--partition",)),
        ("simulate", ["--D", "12", "--C", "8"], ("--C",)),
        ("verify", ["--d", "1"], ("--d",)),
        # values the converter cannot know
        ("reduced", ["--n-samples", "1"], ("--n-samples",)),
        ("reduced", ["--n-points", "1"], ("--n-points",)),
        ("reduced", ["--method", "gd", "--eta", "1e-9"], ("--eta",)),
        ("reduced", ["--method", "gd", "--steps", "10000000000"], ("--steps",)),
        ("reduced", ["--expectation", "exact", "--D", "4096", "--C", "4"], ("--expectation",)),
        # a flag that does nothing in the chosen mode
        ("reduced", ["--steps", "5"], ("--steps",)),
        ("reduced", ["--eta", "0.5"], ("--eta",)),
        ("reduced", ["--method", "gd", "--solver", "BDF"], ("--solver",)),
        ("reduced", ["--expectation", "exact", "--n-samples", "100"], ("--n-samples",)),
        ("theorems", ["--only", "3.1", "--full"], ("--full",)),
        ("theorems", ["--figure31", "x.png", "--D", "32"], ("--D",)),
        ("theorems", ["--figure31", "x.png", "--only", "3.1"], ("--only",)),
        ("theorems", ["--figure31", "x.png", "--quiet"], ("--quiet",)),
        ("scan", ["--results-dir", "r"], ("--results-dir",)),  # issue 20: the output folder is --out
        ("scan", ["--seeds", "0", "1"], ("--seeds",)),  # --seeds is a count
        ("transfer", ["--Ds", "16,32"], ("--Ds",)),  # lists are space-separated
        ("verify", ["--markdown", "l.csv", "--seed", "3"], ("--seed",)),
        ("verify", ["--only", "transfer", "--s-max", "10"], ("--s-max",)),
        ("figures", ["--list", "--quick"], ("--quick",)),
        ("figures", ["--list", "phases"], ("names",)),
        ("scan", ["--eta", "1"], ("--eta",)),
        ("scan", ["--N", "100"], ("--N",)),
        # choices and names
        ("theorems", ["--only", "3.3"], ("--only",)),
        ("theorems", ["--only", ","], ("--only",)),
        ("theorems", ["--D", "96", "--C", "12"], ("--C",)),  # the quick GD checks move to D = 16, 32
        ("verify", ["--only", "nope"], ("--only",)),
        ("figures", ["nope"], ("names",)),
        ("reduced", ["--method", "euler"], ("--method",)),
        ("simulate", ["--dtype", "float16"], ("--dtype",)),
        ("scan", ["--runner", "no_such_module_xyz:f"], ("--runner",)),
        ("scan", ["--workers", "100000"], ("--workers",)),
        ("scan", ["--name", " "], ("--name",)),
        # scan grid values (ranges are the grid's), named by flag
        ("scan", ["--D", "-1"], ("--D",)),
        ("scan", ["--C", "0"], ("--C",)),
        ("scan", ["--q", "2"], ("--q",)),
        ("scan", ["--tau", "0"], ("--tau",)),
        ("scan", ["--seeds", "0"], ("--seeds",)),
        ("scan", ["--N", "0", "--simulate"], ("--N",)),
        ("scan", ["--eta", "0", "--simulate"], ("--eta",)),
        ("scan", ["--D", "10", "--C", "4"], ("--C",)),
        # output locations that cannot be written, refused before any work
        ("reduced", ["--out", b], ("--out",)),
        ("simulate", ["--out", b], ("--out",)),
        ("scan", ["--out", b], ("--out",)),
        ("verify", ["--out", b + "/ledger.csv"], ("--out",)),
        ("verify", ["--out", ""], ("--out",)),
        ("theorems", ["--only", "3.1", "--out", b + "/t.csv"], ("--out",)),
        ("theorems", ["--figure31", b + "/f.png"], ("--figure31",)),
        ("figures", ["--out", b], ("--out",)),
        ("figures", ["--out", ""], ("--out",)),
        # the benchmarks: the Setting at each D, flags of a part that does not run, output paths
        ("bench-simulate", ["--D", "10"], ("--D",)),
        ("bench-simulate", ["--scaling", "--scaling-D", "8", "10"], ("--scaling-D",)),
        ("bench-simulate", ["--scaling-only", "--N", "64"], ("--N",)),
        ("bench-simulate", ["--scaling-N", "64"], ("--scaling-N",)),
        ("bench-simulate", ["--no-simulate", "--sim-steps", "3"], ("--sim-steps",)),
        ("bench-simulate", ["--scaling", "--no-memory", "--memory-N", "64", "128"], ("--memory-N",)),
        ("bench-simulate", ["--scaling", "--scaling-only"], ("--scaling",)),
        ("bench-simulate", ["--dtypes", "float16"], ("--dtypes",)),
        ("bench-simulate", ["--scaling", "--memory-N", "10", "5"], ("--memory-N",)),
        ("bench-simulate", ["--out", b + "/s.csv"], ("--out",)),
        ("bench-simulate", ["--out", "."], ("--out",)),
        ("bench-reduced", ["--scaling-only", "--repeats", "3"], ("--repeats",)),
        ("bench-reduced", ["--budget-s", "3"], ("--budget-s",)),
        ("bench-reduced", ["--no-flow", "--s-max", "3"], ("--s-max",)),
        ("bench-reduced", ["--out", b + "/r.csv"], ("--out",)),
        # transfer: flags that do nothing, the setting across D, output folders
        ("transfer", ["--q", "0.1"], ("--q",)),
        ("transfer", ["--keep-q", "--count", "3"], ("--count",)),
        ("transfer", ["--D", "32"], ("--D",)),
        ("transfer", ["--checks", "--Ns", "1", "2"], ("--Ns",)),
        ("transfer", ["--checks", "--C", "8"], ("--C",)),
        ("transfer", ["--methods", "init", "--upstream-N", "64"], ("--upstream-N",)),
        ("transfer", ["--methods", "logreg", "--cache", "c"], ("--cache",)),
        ("transfer", ["--methods", "logreg", "--steps-v", "3"], ("--steps-v",)),
        ("transfer", ["--methods", "logreg", "--eta", "3"], ("--eta",)),
        ("transfer", ["--methods", "bogus"], ("--methods",)),
        ("transfer", ["--Ds", "30"], ("--Ds",)),
        ("transfer", ["--Ds", "16", "--count", "100"], ("--count",)),
        ("transfer", ["--Ns", "4", "2"], ("--Ns",)),
        ("transfer", ["--C", "5"], ("--C",)),
        ("transfer", ["--out", b], ("--out",)),
        ("transfer", ["--cache", b], ("--cache",)),  # the default --out is not left behind either
        # vision: flags that do nothing in the experiment, shapes, the output folder
        ("vision", ["--perm-seed", "3"], ("--perm-seed",)),
        ("vision", ["--experiment", "compare", "--shuffle-grid", "2"], ("--shuffle-grid",)),
        ("vision", ["--experiment", "compare", "--attention", "vanilla"], ("--attention",)),
        ("vision", ["--experiment", "single", "--model", "cnn", "--width", "8"], ("--width",)),
        ("vision", ["--experiment", "permuted", "--patch", "4"], ("--patch",)),
        ("vision", ["--experiment", "robustness", "--seed", "3"], ("--seed",)),  # --resume: a no-op alias now
        ("vision", ["--experiment", "single", "--seeds", "2"], ("--seeds",)),
        ("vision", ["--experiment", "compare", "--seed", "2"], ("--seed",)),  # compare: --first-seed, --seeds
        ("vision", ["--first-seed", "2"], ("--first-seed",)),  # the demo trains one seed: --seed
        ("vision", ["--data-dir", ""], ("--data-dir",)),
        ("vision", ["--warmup", "100"], ("--warmup",)),
        ("vision", ["--patch", "3"], ("--patch",)),
        ("vision", ["--width", "10", "--heads", "3"], ("--heads",)),
        ("vision", ["--data-dir", b], ("--data-dir",)),
        ("vision", ["--out", b], ("--out",)),
        ("vision", ["--out", ""], ("--out",)),
        # refused after the data is read: the folder made for --out is removed again
        ("vision", ["--experiment", "single", "--batch-size", "5000"], ("--batch-size",)),
        ("vision", ["cifar10", "--data-dir", ".", "--no-download"], ("cifar-10-python.tar.gz",)),
        ("vision-bench", ["--smoke", "--steps", "3"], ("--steps",)),
        ("vision-bench", ["--smoke", "--batches", "8", "16"], ("--batches",)),
        ("vision-bench", ["--smoke-images", "64"], ("--smoke-images",)),
        ("vision-bench", ["--batches", "12", "x"], ("--batches",)),
        ("vision-bench", ["--width", "10", "--heads", "3"], ("--heads",)),
        ("vision-bench", ["--patch", "5"], ("--patch",)),
        ("vision-bench", ["--out", b + "/v.csv"], ("--out",)),
        ("vision-bench", ["--smoke", "--batches", "8", "--smoke-images", "16", "--out", b + "/v.csv"], ("--out",)),
    ]


def test_rules_checked_after_parsing_are_refused_cleanly(blocked):
    bad = [why for name, argv, flags in _rule_cases(blocked) for ok, why in [clean(name, argv, flags)] if not ok]
    assert not bad, "\n".join(bad)


MEMORY_CASES = [
    ("reduced", ["--n-samples", "100000000"], ("--n-samples",)),
    ("simulate", ["--N", "10000000"], ("--N",)),
    ("simulate", ["--D", "4096", "--C", "4", "--N", "64", "--n-test", "64"], ("--D",)),
    ("theorems", ["--D", "65536", "--only", "3.2"], ("--D",)),
    ("theorems", ["--D", "16384", "--only", "3.1"], ("--D",)),
    ("theorems", ["--D", "4096"], ("--D",)),
    ("verify", ["--D", "8192", "--only", "theorems"], ("--D",)),
    ("verify", ["--n-samples", "100000000", "--only", "reduced"], ("--n-samples",)),
    ("scan", ["--D", "4096", "--C", "4", "--simulate", "--N", "64"], ("--D",)),
    ("scan", ["--n-samples", "100000000"], ("--n-samples",)),
    ("bench-simulate", ["--replicas", "100000000"], ("--replicas",)),
    ("bench-simulate", ["--N", "10000000"], ("--N",)),
    ("bench-simulate", ["--scaling-only", "--scaling-N", "100000000"], ("--scaling-N",)),
    (
        "bench-simulate",
        ["--scaling-only", "--no-memory", "--scaling-N", "64", "--scaling-D", "8", "8192"],
        ("--scaling-D",),
    ),
    ("bench-reduced", ["--n-samples", "1e10"], ("--n-samples",)),  # 1e12: above the ceiling, refused at parsing
    ("transfer", ["--Ds", "65536"], ("--Ds",)),
    ("transfer", ["--keep-q", "--D", "65536", "--Ds", "65536"], ("--Ds",)),
    ("transfer", ["--n-test", "1000000000"], ("--n-test",)),
    ("transfer", ["--Ns", "100000000"], ("--Ns",)),
    ("transfer", ["--upstream-N", "100000000"], ("--upstream-N",)),
    ("vision", ["--batch-size", "100000000"], ("--batch-size",)),
    ("vision", ["--width", "1000000"], ("--width",)),
    ("vision-bench", ["--batches", "100000000"], ("--batches",)),
    ("vision-bench", ["--smoke", "--batches", "8", "--smoke-images", "100000000"], ("--smoke-images",)),
]


def test_memory_guard_refuses_with_the_flag_the_estimate_and_the_limit(monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, MEMORY_LIMIT)
    assert available_memory() == (2**30, f"${MEMORY_ENV}")  # the guard reads the limit we set
    bad = []
    for name, argv, flags in MEMORY_CASES:
        ok, why = clean(name, argv, flags, also=("1.0 GiB", "force"))  # the limit and the override are quoted
        if not ok:
            bad.append(why)
    assert not bad, "\n".join(bad)


def test_guard_memory_names_the_flag_and_force_overrides(monkeypatch, capsys):
    monkeypatch.setenv(MEMORY_ENV, "1M")
    est = reduced_memory(64, 4, 0.25, n_samples=10**6)
    with pytest.raises(SystemExit) as e:
        guard_memory(est, prog="p")
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.startswith("p: error: --n-samples: n_samples=1000000:") and "1.0 MiB" in err
    assert guard_memory(est, force=True) is est


SPEC_FILES = {
    "missing.toml": None,
    "folder.toml": "DIR",
    "binary.toml": b"\xff\xfe\x00garbage",
    "not_toml.toml": "[[[",
    "unknown_key.toml": "[setting]\nD = 64\nfoo = 1\n",
    "wrong_type.toml": '[setting]\nD = "64"\n',
    "nan.toml": "[setting]\nD = 64\nC = 4\nq = nan\n",
    "negative_D.toml": "[setting]\nD = -1\nC = 4\n",
    "huge_D.toml": "[setting]\nD = 1000000000000\nC = 4\n",
    "negative_seed.toml": "[setting]\nD = 64\nC = 4\n[axes]\nseed = [-1]\n",
    "empty_axis.toml": "[setting]\nD = 64\nC = 4\n[axes]\nq = []\n",
    "setting_not_table.toml": "setting = 3\n",
    "bad_option.toml": "[setting]\nD = 64\nC = 4\n[options]\nn_samples = 0\n",
    "inf_smax.toml": "[setting]\nD = 64\nC = 4\n[options]\ns_max = inf\n",
    # issue 18: values that passed validation, then hung or failed at run time (silently with --quiet)
    "n_points_2_63.toml": "[setting]\nD = 16\nC = 4\n[options]\nn_points = 9223372036854775807\n",
    "s_max_subnormal.toml": "[setting]\nD = 16\nC = 4\n[options]\ns_max = 5e-324\n",
    "s_max_tiny.toml": "[setting]\nD = 16\nC = 4\n[options]\ns_max = 1e-300\n",
    "sim_steps_2_63.toml": "[setting]\nD = 16\nC = 4\n[options]\nsimulate = true\nsim_steps = 9223372036854775807\n",
    "tau_subnormal.toml": "[setting]\nD = 16\nC = 4\ntau = 5e-324\n",
    "feature_overflow.toml": "[setting]\nD = 16\nC = 4\nfeature = [" + ", ".join(["1e300"] * 16) + "]\n",
    "nested_5000.toml": "[setting]\nD = 16\nC = 4\n[axes]\nq = " + "[" * 5000 + "]" * 5000 + "\n",
    "nested_table_5000.toml": "[setting]\nD = 16\nC = 4\n[axes]\nq = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
    "grid_1e7_points.toml": "[setting]\nD = 16\nC = 4\n[axes]\nq = ["
    + ", ".join(f"{0.001 * (i + 1):g}" for i in range(100))
    + "]\ntau = ["
    + ", ".join(f"{1 + i / 100:g}" for i in range(100))
    + "]\nseed = ["
    + ", ".join(str(i) for i in range(1000))
    + "]\n",
}


def test_invalid_spec_files_are_refused_cleanly(tmp_path):
    bad = []
    for fname, content in SPEC_FILES.items():
        p = tmp_path / fname
        if content == "DIR":
            p.mkdir()
        elif isinstance(content, bytes):
            p.write_bytes(content)
        elif content is not None:
            p.write_text(content)
        ok, why = clean("scan", ["--spec", str(p)], ("--spec",))
        if not ok:
            bad.append(why)
    assert not bad, "\n".join(bad)


# ---- issue 18: inputs that hung, or ended in a traceback ------------------------------------------------------
def _issue18_cases(tmp: Path) -> list[tuple[str, list[str], tuple[str, ...]]]:
    data = tmp / "data"
    (data / "cifar-10-python.tar.gz").mkdir(parents=True)  # a folder named like the archive
    return [
        ("reduced", ["--D", "16", "--C", "4", "--tau", "5e-324"], ("--tau",)),  # was ZeroDivisionError
        ("reduced", ["--D", "16", "--C", "4", "--s-max", "1e-300"], ("--s-max",)),  # LSODA looped forever
        ("reduced", ["--D", "16", "--C", "4", "--s-max", "5e-324"], ("--s-max",)),
        ("reduced", ["--method", "gd", "--steps", str(2**63)], ("--steps",)),
        ("reduced", ["--n-points", str(2**63 - 1)], ("--n-points",)),
        ("simulate", ["--steps", str(2**63)], ("--steps",)),  # ran until killed
        ("scan", ["--D", "16", "--C", "4", "--s-max", "1e-300"], ("--s-max",)),
        ("scan", ["--D", "16", "--C", "4", "--tau", "5e-324"], ("--tau",)),
        ("scan", ["--D", "16", "--C", "4", "--n-points", str(2**63 - 1)], ("--n-points",)),
        ("scan", ["--D", "16", "--C", "4", "--simulate", "--sim-steps", str(2**63)], ("--sim-steps",)),
        ("scan", ["--D", "16", "--C", "4", "--method", "gd", "--eta", "1e-9", "--s-max", "1e6"], ("--s-max", "--eta")),
        (
            "verify",
            ["--D", "16", "--C", "4", "--quick", "--only", "reduced", "--out", str(tmp / ("x" * 256 + ".csv"))],
            ("--out",),
        ),  # was ENAMETOOLONG
        ("vision", ["cifar10", "--data-dir", str(data), "--no-download"], ("cifar-10-python.tar.gz",)),
    ]


def test_issue18_inputs_that_hung_or_crashed_exit_2(tmp_path):
    bad = [why for name, argv, flags in _issue18_cases(tmp_path) for ok, why in [clean(name, argv, flags)] if not ok]
    assert not bad, "\n".join(bad)


#: the CLIs that read $THEORYDYN_MEMORY_LIMIT, with arguments that reach the memory guard
MEMORY_ENV_CLIS = {
    "reduced": ["--D", "16", "--C", "4"],
    "scan": ["--D", "16", "--C", "4"],
    "transfer": [],
    "vision": ["digits"],
    "simulate": [],
    "verify": ["--quick", "--only", "reduced"],
}


@pytest.mark.parametrize("value", ["abc", "-5", "nan", "1e400", "0", "inf"])
def test_an_invalid_memory_limit_exits_2_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv(MEMORY_ENV, value)
    bad = [why for name, argv in MEMORY_ENV_CLIS.items() for ok, why in [clean(name, argv, (MEMORY_ENV,))] if not ok]
    assert not bad, "\n".join(bad)


def test_a_feature_whose_norm_overflows_is_refused():
    with pytest.raises(ValueError, match="feature"):
        Setting(D=16, C=4, feature=[1e300] * 16)  # the norm is inf, and w* = w / inf used to be 0
    assert Setting(D=16, C=4, feature=[3.0] + [0.0] * 15).feature[0] == 1.0


def test_bench_dispatcher_refuses_unknown_benchmarks_and_dropped_options(capsys):
    from theorydyn.bench.__main__ import main

    assert main(["nope"]) == 2 and "benchmark must be one of" in capsys.readouterr().err
    assert main(["all", "--D", "10"]) == 2 and "--D: 'all' takes no options" in capsys.readouterr().err


# ---- the estimates behind the new guards, against the arrays they stand for ----------------------------------
def test_transfer_memory_covers_the_test_set_and_the_downstream_samples():
    """The rows phase of resources.transfer_memory: its test-set terms lie between the peak that
    tracemalloc measures for TestSet.draw + one evaluation and 4x it; its X term is X's nbytes."""
    import tracemalloc

    import numpy as np

    from theorydyn.core import data, model
    from theorydyn.transfer.experiment import TestSet, downstream_setting, outputs_v
    from theorydyn.transfer.memory import transfer_memory

    sd = downstream_setting(Setting(D=64, C=4, q=0.125))
    N = 4000
    est = transfer_memory(64, 4, None, 0.125, N, 16, ceiling_samples=10, flow_n_samples=None)
    test_terms = sum(t.nbytes for t in est.terms if "N_test" in t.params)
    S = model.attention(sd, np.zeros((64, 64)))
    tracemalloc.start()
    test = TestSet.draw(sd, N, seed=0)
    outputs_v(sd, S, sd.w_star, test)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= test_terms <= 4 * peak, (peak, test_terms)
    X = data.sample(sd, 16, seed=0).X
    assert [t.nbytes for t in est.terms if t.what.startswith("X (")] == [X.nbytes]
    # the phases are alternatives: the estimate is the largest, not their sum
    big = transfer_memory(64, 4, None, 0.125, 10, 1, ceiling_samples=10**6, flow_n_samples=None)
    assert big.task.startswith("transfer references") and big.largest.params == {"D": 64}


def test_vit_train_memory_counts_the_parameters_of_the_model():
    torch = pytest.importorskip("torch")
    from theorydyn.vision.memory import vit_batch_memory, vit_train_memory
    from theorydyn.vision.model import ViT, ViTConfig

    for kw in (dict(width=64, depth=2, heads=4, mlp=128, patch=4), dict(width=96, depth=3, heads=4, mlp=96, patch=2)):
        n = sum(p.numel() for p in ViT(ViTConfig(**kw)).parameters())
        est = vit_train_memory(8, **kw)
        weights = [t.nbytes for t in est.terms if "parameters" in t.what]
        assert len(weights) == 1 and 0.9 * 16 * n <= weights[0] <= 1.1 * 16 * n, (n, weights)
        assert est.total - weights[0] == vit_batch_memory(8, **kw).total
    del torch


# ---- the converter and the Setting cap -------------------------------------------------------------------
def test_number_converter_rules():
    conv = number(int, "--n", low=2, high=10)
    assert conv("3") == 3 and conv("1e1") == 10 and conv("4.0") == 4
    for text in ("1.5", "nan", "inf", "1e400", "", "x", "1", "11", "1e20"):
        with pytest.raises(argparse.ArgumentTypeError):
            conv(text)
    f = positive(float, "--eta", below=1.0)
    assert f("0.5") == 0.5
    for text in ("0", "1", "-0.1", "nan", "-inf"):
        with pytest.raises(argparse.ArgumentTypeError):
            f(text)
    assert (f.kind, f.low, f.low_open, f.high, f.high_open, f.flag) == (float, 0, True, 1.0, True, "--eta")


def test_setting_caps_D_and_d_and_keeps_large_sizes_usable():
    import tracemalloc

    for kw, word in (
        (dict(D=10**12), "D must be at most"),
        (dict(D=D_MAX + 4), "D must be at most"),
        (dict(D=64, d=D_MAX + 1), "d must be an integer in"),
        (dict(partition_seed=-1), "partition_seed"),
    ):
        tracemalloc.start()
        try:
            with pytest.raises(ValueError, match=word):
                Setting(**kw)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, peak  # refused, not built: D = 10**12 used to build its partition (and hang)
    assert Setting(D=4096, C=16).L == 256 and Setting(D=D_MAX, C=4).L == D_MAX // 4


# ---- end to end ------------------------------------------------------------------------------------------
def _python_m(cwd, *argv: str, **env: str) -> subprocess.CompletedProcess:
    """``python -m ARGV`` in ``cwd``, this checkout first on the path and ``env`` added to the
    environment; stdout and stderr captured as text, killed after 120 s (a hang fails, never blocks)."""
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=cwd,
        env=dict(os.environ, PYTHONPATH=str(ROOT), **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "argv, flag",
    [
        # issue 18's hangs: a regression fails by the subprocess timeout instead of hanging the suite
        (["reduced", "--D", "16", "--C", "4", "--s-max", "1e-300"], "--s-max"),
        (["simulate", "--steps", str(2**63)], "--steps"),
        (["reduced", "--D", "16", "--C", "4", "--tau", "5e-324"], "--tau"),
        (["simulate", "--seed", "-1"], "--seed"),
        (["theorems", "--D", "65536", "--only", "3.2"], "--D"),
        (["bench", "simulate", "--replicas", "100000000"], "--replicas"),
    ],
)
def test_subprocess_exits_2_without_a_traceback(tmp_path, argv, flag):
    out = _python_m(tmp_path, "theorydyn", *argv, **{MEMORY_ENV: MEMORY_LIMIT})
    assert out.returncode == 2, out.stderr
    assert flag in out.stderr and "Traceback" not in out.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kind", NON_REGULAR)
def test_an_archive_that_is_not_a_regular_file_is_refused_in_time(tmp_path, kind):
    """A FIFO would block the md5 forever, /dev/zero never ends, a folder is not an archive."""
    data = tmp_path / "data"
    make_non_regular(data / "cifar-10-python.tar.gz", kind)
    out = _python_m(
        tmp_path,
        "theorydyn.vision",
        "cifar10",
        "--device",
        "cpu",
        "--no-download",
        "--data-dir",
        str(data),
        "--out",
        str(tmp_path / "v.csv"),
    )
    assert out.returncode == 2 and "not a regular file" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_spec_of_ten_million_points_is_refused_in_time(tmp_path):
    spec = tmp_path / "big.toml"
    spec.write_text(SPEC_FILES["grid_1e7_points.toml"])
    out = _python_m(
        tmp_path,
        "theorydyn.scan",
        "--spec",
        str(spec),
        "--quiet",
        "--no-plots",
        "--workers",
        "0",
        "--out",
        str(tmp_path / "res"),
    )
    assert out.returncode == 2 and "10,000,000 points" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_help_into_a_closed_pipe_is_not_a_traceback(tmp_path):
    """`theorydyn --help | head -1`: the reader closes the pipe before the help is written."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r, w = os.pipe()
    os.close(r)  # nobody reads: the first write raises EPIPE (BrokenPipeError; SIGPIPE is ignored by Python)
    out = subprocess.run(
        [sys.executable, "-m", "theorydyn", "--help"],
        cwd=tmp_path,
        env=env,
        stdout=w,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(w)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr


def test_zz_report_counts(capsys):
    """Prints how many invalid inputs this module tried in this run and how many were clean."""
    with capsys.disabled():
        print(f"\n[cli fuzz] invalid inputs tried: {COUNTS['tried']}, clean: {COUNTS['clean']}")
    assert COUNTS["clean"] <= COUNTS["tried"]
