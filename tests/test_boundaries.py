"""Validation from the declared range, at both ends, with one rule in the command line and the library
(issue 42).

* Every field of the run configurations (:class:`~theorydyn.reduced.config.FlowConfig`,
  :class:`~theorydyn.simulate.config.SimConfig`, :class:`~theorydyn.vision.config.TrainConfig`) and
  every numeric field of :class:`~theorydyn.core.setting.Setting`: the values at both ends of its
  declared range that lie outside it (zero, -0, negatives, 5e-324, the bound where it is open, the
  nearest float beyond each bound, NaN, ±inf) raise ValueError naming the parameter, in the
  configuration and in the solver (``integrate``, ``simulate``) before any work; and the flag made
  from the same field refuses exactly the same values (one rule, two places).
* The values at the low end *inside* the range (5e-324 where the rule is > 0, the bound where it is
  closed) run to a result, or are refused naming a parameter: no ZeroDivisionError, OverflowError or
  solve that never ends (tau = 5e-324 divided by zero; eta = 5e-324 made ceil(s_max/eta) infinite;
  atol = 1e-200 never ended).
* Help and error state the same bound for every numeric flag (``--tau`` said ">= 1e-12" and "> 0").
* A setting that fails at every point of a scan is refused once, before any work.
"""

from __future__ import annotations

import argparse
import math
import re
import signal
import warnings

import pytest
from test_cli_fuzz import NUMERIC, clean

from theorydyn.cli.configs import converter
from theorydyn.core.config import Rule
from theorydyn.core.setting import Setting
from theorydyn.reduced import integrate
from theorydyn.reduced.config import FlowConfig
from theorydyn.simulate import simulate
from theorydyn.simulate.config import SimConfig
from theorydyn.vision.config import TrainConfig

S = Setting(D=8, C=2)
RED = dict(n_samples=50, n_points=4, s_max=10.0)
SIM = dict(N=32, n_test=16, steps=2)


def _inside(rule: Rule, v: float) -> bool:
    low, high = rule.low, rule.high
    if not math.isfinite(v):
        return False
    if low is not None and (v < low or ((rule.low_open or (rule.positive and low == 0)) and v == low)):
        return False
    return not (high is not None and (v > high or (rule.high_open and v == high)))


def _candidates(rule: Rule) -> list[float]:
    """Both ends of the range, and the values a user mistypes: every one tested, inside or out."""
    vals = [0.0, -0.0, -1.0, 5e-324, -5e-324, math.nan, math.inf, -math.inf]
    for b, away in ((rule.low, -math.inf), (rule.high, math.inf)):
        if b is not None:
            vals += [float(b), math.nextafter(float(b), away), math.nextafter(float(b), -away)]
    if rule.kind is int:
        ints = [int(v) for v in vals if math.isfinite(v) and v == int(v)]
        ints += [int(b) + d for b in (rule.low, rule.high) if b is not None for d in (-1, 0, 1)]
        return sorted(set(ints))
    return vals


def _numeric_fields(cls) -> list[tuple[str, Rule]]:
    return [
        (name, cls.rule(name))
        for name in cls.names()
        if cls.rule(name).kind in (int, float) and cls.rule(name).choices is None
    ]


CONFIG_FIELDS = [
    (cls, name, rule) for cls in (FlowConfig, SimConfig, TrainConfig) for name, rule in _numeric_fields(cls)
]


@pytest.mark.parametrize("cls, name, rule", CONFIG_FIELDS, ids=[f"{c.__name__}.{n}" for c, n, _ in CONFIG_FIELDS])
def test_each_configuration_field_refuses_the_values_outside_its_range_and_its_flag_the_same(cls, name, rule):
    conv = converter(rule, f"--{name.replace('_', '-')}")
    assert conv is not None
    bad = []
    for v in _candidates(rule):
        outside = not _inside(rule, v)
        try:
            rule.check(name, v)
            library = True
        except ValueError as e:
            library = False
            if not str(e).startswith(name):
                bad.append(f"{name}={v!r}: the message does not start with the parameter: {e}")
        text = str(v) if rule.kind is int else repr(v)
        try:
            conv(text)
            flag = True
        except argparse.ArgumentTypeError:
            flag = False
        if library == outside or flag != library:
            bad.append(f"{name}={v!r}: outside={outside}, the library accepts={library}, the flag accepts={flag}")
    assert not bad, "\n".join(bad)


class Accepted(Exception):
    """Raised by the stubbed solvers: the arguments passed every check."""


@pytest.fixture()
def stubbed(monkeypatch):
    from theorydyn.reduced import solve
    from theorydyn.simulate import run

    def stop(*a, **k):
        raise Accepted

    monkeypatch.setattr(solve, "make_bank", stop)
    monkeypatch.setattr(run, "_resolve_steps", stop)


#: the keyword of each solver's option, where it is not the field's name
SOLVER_OPTIONS = {
    integrate: [n for n, _ in _numeric_fields(FlowConfig)],
    simulate: [n for n, _ in _numeric_fields(SimConfig) if n != "s_max"],
}


@pytest.mark.parametrize("solver", list(SOLVER_OPTIONS), ids=lambda f: f.__name__)
def test_the_solvers_refuse_each_value_outside_the_range_before_any_work(solver, stubbed):
    cls = FlowConfig if solver is integrate else SimConfig
    base = dict(RED) if solver is integrate else dict(SIM)
    bad = []
    for name in SOLVER_OPTIONS[solver]:
        rule = cls.rule(name)
        for v in _candidates(rule):
            if _inside(rule, v):
                continue
            kw = {**base, name: v}
            if name == "eta" and solver is integrate:
                kw["method"] = "gd"
            try:
                solver(S, **kw)
                bad.append(f"{solver.__name__}({name}={v!r}) was accepted")
            except Accepted:
                bad.append(f"{solver.__name__}({name}={v!r}) reached the work")
            except ValueError as e:
                if name not in str(e):
                    bad.append(f"{solver.__name__}({name}={v!r}): the message does not name it: {e}")
    assert not bad, "\n".join(bad)


#: the Setting's numeric fields: (field, the flag's converter) — the setting's rules and the CLI's
SETTING_REALS = ("q", "sigma2", "nu", "beta", "tau")
SETTING_INTS = ("d", "partition_seed")


def _setting_flag(field: str):
    from theorydyn.cli.tools import SETTING_FLAGS, ArgumentParser, add_setting_arguments

    ap = ArgumentParser()
    add_setting_arguments(ap)
    (action,) = [a for a in ap._actions if SETTING_FLAGS[field] in a.option_strings]
    return action.type


@pytest.mark.parametrize("field", SETTING_REALS + SETTING_INTS)
def test_each_setting_field_and_its_flag_refuse_the_same_boundary_values(field):
    conv = _setting_flag(field)
    rule = Rule(
        kind=int if field in SETTING_INTS else float,
        low=conv.low,
        high=None if conv.high == 1e11 else conv.high,
        low_open=conv.low_open,
        high_open=conv.high_open,
    )
    bad = []
    for v in _candidates(rule) + [1e300, -1e300]:
        try:
            Setting(D=16, C=4, **{field: v})
            library = True
        except ValueError as e:
            library = False
            if field.split("_")[0] not in str(e):
                bad.append(f"{field}={v!r}: the message does not name it: {e}")
        try:
            conv(str(v) if rule.kind is int else repr(v))
            flag = True
        except argparse.ArgumentTypeError:
            flag = False
        if flag != library:
            bad.append(f"{field}={v!r}: the Setting accepts={library}, the flag accepts={flag}")
    assert not bad, "\n".join(bad)


# ---- the low end, inside the range: a result or a refusal naming a parameter, never a crash ----------------
class _Alarm(BaseException):
    pass


def _within(seconds: float, call):
    def on_alarm(signum, frame):
        raise _Alarm

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _low_inside(rule: Rule) -> list[float]:
    """The smallest values the rule accepts: the bound when it is closed, 5e-324 above an open 0, the
    nearest float above an open bound."""
    vals = [v for v in (0.0, 5e-324, 1.0) if _inside(rule, v)]
    if rule.low is not None:
        vals += [v for v in (float(rule.low), math.nextafter(float(rule.low), math.inf)) if _inside(rule, v)]
    return sorted(set(int(v) for v in vals) if rule.kind is int else set(vals))


LOW_END = [(integrate, n) for n in SOLVER_OPTIONS[integrate]] + [(simulate, n) for n in SOLVER_OPTIONS[simulate]]


@pytest.mark.slow  # compiles the solvers' kernels when their cache is cold
def test_the_smallest_accepted_values_run_or_are_refused_naming_a_parameter():
    bad = []
    for solver, name in LOW_END:
        cls = FlowConfig if solver is integrate else SimConfig
        for v in _low_inside(cls.rule(name)):
            kw = {**(RED if solver is integrate else SIM), name: v}
            if name in ("eta", "steps") and solver is integrate:
                kw["method"] = "gd"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _within(30, lambda kw=kw: solver(S, **kw))
            except ValueError as e:
                if not re.search(r"\b(eta|s_max|steps|n_test|N)\b", str(e)):
                    bad.append(f"{solver.__name__}({name}={v!r}): {e}")
            except _Alarm:
                bad.append(f"{solver.__name__}({name}={v!r}) ran past 30 s")
            except Exception as e:  # noqa: BLE001 — the finding
                bad.append(f"{solver.__name__}({name}={v!r}): {type(e).__name__}: {e}")
    for field, v in (
        ("sigma2", 5e-324),
        ("nu", 5e-324),
        ("tau", 1e-12),
        ("q", 0.0),
        ("q", 1.0),
        ("beta", 1e11),
        ("beta", -1e300),
    ):
        s = Setting(D=8, C=2, **{field: v})
        for solver, kw in ((integrate, RED), (simulate, SIM)):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _within(30, lambda solver=solver, kw=kw, s=s: solver(s, **kw))
            except _Alarm:
                bad.append(f"{solver.__name__} at {field}={v!r} ran past 30 s")
            except Exception as e:  # noqa: BLE001 — the finding (tau = 5e-324 was a ZeroDivisionError)
                bad.append(f"{solver.__name__} at {field}={v!r}: {type(e).__name__}: {e}")
    assert not bad, "\n".join(bad)


# ---- help and error say the same bound ---------------------------------------------------------------------
BOUND = re.compile(r"(>=|>|<=|<)\s*(-?\d[\d.]*(?:e[+-]?\d+)?)")


def _states(t, kind, op: str, v: float) -> bool:
    """Whether the converter ``t``'s rule is the bound ``op v`` of a help text (``> 0`` of an integer is
    ``>= 1``)."""
    low, high = t.low, t.high
    if op == ">=":
        return low is not None and (low == v and not t.low_open or kind is int and t.low_open and low == v - 1)
    if op == ">":
        return low is not None and (low == v and t.low_open or kind is int and not t.low_open and low == v + 1)
    if op == "<=":
        return high is not None and high == v and not t.high_open
    return high is not None and (high == v and t.high_open or kind is int and high == v - 1)


def test_help_and_error_state_the_same_bound_for_every_numeric_flag():
    bad = []
    for name, flag, action, kind in NUMERIC:
        for op, num in BOUND.findall(action.help or ""):
            if not _states(action.type, kind, op, float(num)):
                bad.append(
                    f"{name} {flag}: help says {op} {num}, the rule is low={action.type.low}, high={action.type.high}"
                )
    assert len(NUMERIC) > 40 and not bad, "\n".join(bad)


def test_tau_help_and_error_say_the_same_bound():
    ok, why = clean("reduced", ["--tau", "0"], ("--tau",), also=("must be >= 1e-12",))
    assert ok, why
    (tau,) = [a for n, f, a, _ in NUMERIC if n == "reduced" and f == "--tau"]
    assert ">= 1e-12" in tau.help


# ---- a setting that fails at every point: refused once ------------------------------------------------------
def test_a_setting_that_fails_at_every_point_is_refused_once_before_any_work():
    from test_cli_fuzz import call

    code, err = call("scan", ["--D", "30", "--C", "4"])
    assert code == 2 and err.count("C must divide D") == 1 and "every one of the 15 points" in err, err
    code, err = call(
        "scan", ["--D", "16", "32", "--C", "4", "--q", "0.1", "0.2", "--partition", "grid", "--seeds", "2"]
    )
    assert code == 2 and err.count("partition='grid'") == 1, err  # D = 32 is no square: half the points
    assert "and 3 more point(s)" in err, err
