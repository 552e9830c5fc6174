"""Every size has a bound, checked before any work (issue 33, item 3).

Every numeric flag of every parser (found by walking the parsers, as tests/test_cli_fuzz.py does) is
fed its largest representable value, 1e308 for a number and 2**63 for an integer: each must exit 2
naming the flag, with no traceback, nothing written and no work started (the fuzz test's alarm).
The named cases of the issue (``scan --seeds 1e9``, ``transfer --seeds 1000000000``, ``vision …
--seeds 1e9``, ``--epochs``) and the cross-flag rules found only after work (a duplicated
``transfer --Ds``) are checked by name.
"""

from __future__ import annotations

import pytest
from test_cli_fuzz import NUMERIC, _arg, clean

from theorydyn.cli.tools import VALUE_MAX, number


def _largest(kind) -> str:
    return str(2**63) if kind is int else "1e308"


@pytest.mark.parametrize("name", sorted({n for n, *_ in NUMERIC}))
def test_the_largest_value_of_every_numeric_flag_is_refused_before_work(name):
    bad = []
    for n, flag, action, kind in NUMERIC:
        if n == name:
            ok, why = clean(name, _arg(flag, _largest(kind)), action.option_strings)
            if not ok:
                bad.append(why)
    assert not bad, "\n".join(bad)


def test_a_flag_without_a_bound_of_its_own_gets_the_ceiling():
    """A planted counter-case for the walk above: a converter with no ``high`` still has one."""
    conv = number(int, "--toy", low=1)
    assert conv.high == VALUE_MAX and conv(str(int(VALUE_MAX))) == int(VALUE_MAX)
    with pytest.raises(Exception, match="--toy|<= 1e"):
        conv(str(2**63))


@pytest.mark.parametrize(
    "name, argv, flag",
    [
        ("scan", ["--seeds", "1e9"], "--seeds"),
        ("transfer", ["--seeds", "1000000000"], "--seeds"),
        ("vision", ["digits", "--experiment", "compare", "--seeds", "1e9"], "--seeds"),
        ("vision", ["digits", "--experiment", "single", "--epochs", "1000000"], "--epochs"),
        ("transfer", ["--Ds", "16", "16"], "--Ds"),
    ],
)
def test_the_cases_of_the_issue_exit_2_before_work(name, argv, flag):
    ok, why = clean(name, argv, flag)
    assert ok, why
