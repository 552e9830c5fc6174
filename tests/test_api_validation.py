"""The Python API checks its arguments with the CLI's rules (issue 33 item 9, issue 31 item 7):
ValueError / TypeError naming the parameter, before any work; and a bounded hypothesis fuzz over
the signatures of Setting, integrate and simulate."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from theorydyn.core.setting import Setting
from theorydyn.reduced import integrate
from theorydyn.simulate import simulate, simulate_replicas

S = Setting(D=8, C=2)
#: the smallest runs that do work: a refusal must come before any of it
SIM = dict(N=64, n_test=32, steps=2)
RED = dict(n_samples=50, n_points=4, s_max=1.0)


@pytest.mark.parametrize("field", ["q", "sigma2", "nu", "beta", "tau"])
def test_setting_refuses_text_for_a_real_field_as_it_does_for_D(field):
    with pytest.raises(ValueError, match="D must be an integer"):
        Setting(D="16")
    with pytest.raises(ValueError, match=f"{field} must be a real number, got '0.5'"):
        Setting(D=16, C=4, **{field: "0.5"})
    with pytest.raises(ValueError, match=f"{field} must be a real number"):
        Setting(D=16, C=4, **{field: True})
    # numbers of every kind NumPy hands out are fine
    assert getattr(Setting(D=16, C=4, **{field: np.float32(0.5)}), field) == 0.5
    assert getattr(Setting(D=16, C=4, **{field: np.array(0.5)}), field) == 0.5


@pytest.mark.parametrize(
    "call",
    [
        lambda: integrate({"D": 8, "C": 2}, **RED),
        lambda: simulate({"D": 8, "C": 2}, **SIM),
        lambda: simulate_replicas({"D": 8, "C": 2}, **SIM),
    ],
)
def test_a_dict_for_the_setting_is_a_type_error_naming_it(call):
    with pytest.raises(TypeError, match=r"s must be a theorydyn.Setting, got dict; build one with Setting\(\*\*s\)"):
        call()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(dense_until=-1), "dense_until must be an integer >= 0, got dense_until=-1"),
        (dict(eta=0), "eta must be finite and > 0, got eta=0$"),
        (dict(eta=-1.5), "eta must be finite and > 0, got eta=-1.5$"),
        (dict(eta=float("nan")), "eta must be finite"),
        (dict(eta="1"), "eta must be a real number"),
        (dict(steps=0), "steps must be an integer in"),
        (dict(steps=2.0), "steps must be an integer, got steps=2.0"),
        (dict(seed=-1), "seed must be an integer >= 0, got seed=-1"),
        (dict(seed=1.5), "seed must be an integer"),
        (dict(N=0), "N must be an integer >= 1"),
        (dict(omega=-1.0), "omega must be finite and >= 0"),
        (dict(record_every=0), "record_every must be an integer >= 1"),
        (dict(s_grid=[0.0, 3.0, 1.0]), r"s_grid must be strictly increasing.*got s_grid\[1\]=3 then s_grid\[2\]=1"),
        (dict(s_grid=[0.0, 1.0, 1.0]), "s_grid must be strictly increasing"),
        (dict(init=(math.nan, 0.0, 0.0), A0=None), "init must be three finite numbers.*alpha=nan"),
        (dict(err_tol=1.0), "err_tol must be in"),
        (dict(s_max=-1.0, steps=None), "s_max must be finite and >= 1e-06"),
    ],
)
def test_simulate_refuses_naming_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match) as e:
        simulate(S, **{**SIM, **kwargs})
    assert "array(" not in str(e.value)


@pytest.mark.slow  # compiles the simulator's kernels when their cache is cold
def test_simulate_replicas_takes_zero_steps_and_checks_each_eta():
    (r,) = simulate_replicas(S, N=64, n_test=32, steps=0)
    assert list(r.trajectory.step) == [0]
    with pytest.raises(ValueError, match=r"eta\[1\] must be finite and > 0, got eta\[1\]=0.0"):
        simulate_replicas(S, eta=[0.5, 0.0], **SIM)
    with pytest.raises(ValueError, match=r"init_seeds\[0\] must be an integer >= 0, got init_seeds\[0\]=-1"):
        simulate_replicas(S, init_seeds=[-1], **SIM)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rtol=-1), "rtol must be finite and > 0 and <= 1, got rtol=-1"),
        (dict(rtol=0), "rtol must be"),
        (dict(atol=-1e-9), "atol must be finite and >= 1e-20"),
        (dict(atol=0.0), "atol must be finite and >= 1e-20"),  # LSODA never ended at atol = 1e-200
        (dict(s_grid=[0.0, 2.0, 1.0]), "s_grid must be strictly increasing"),
        (dict(init=(float("nan"), 0.0, 0.0)), "init must be three finite numbers.*alpha=nan"),
        (dict(init=(1.0, 0.0)), "init must be three numbers"),
        (dict(seed=-1), "seed must be an integer >= 0, got seed=-1"),
        (dict(eta=0), "eta must be finite and > 0, got eta=0$"),
        (dict(steps=0), "steps must be an integer in"),
        (dict(n_points=1), "n_points must be an integer in"),
        (dict(n_samples=0), "n_samples must be an integer >= 2"),
        (dict(s_max=0.0), "s_max must be finite and >= 1e-06"),
        (dict(s_min=-1.0), "s_min must be finite and > 0"),
    ],
)
def test_integrate_refuses_naming_the_parameter(kwargs, match):
    with pytest.raises(ValueError, match=match) as e:
        integrate(S, **{**RED, **kwargs})
    assert "array(" not in str(e.value)


@pytest.mark.slow  # compiles the reduced kernels when their cache is cold
def test_an_increasing_grid_is_still_taken_as_it_is():
    r = integrate(S, method="gd", eta=0.5, s_grid=[0.0, 0.5, 2.0], n_samples=50)
    assert list(r.trajectory.s) == [0.0, 0.5, 2.0]


# ---- a bounded fuzz over the signatures ------------------------------------------------------------
#: values of every kind a notebook user might pass by mistake
BAD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.floats(allow_nan=True), max_size=3),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


class Accepted(Exception):
    """Raised by the stubbed solvers: the arguments passed every check."""


def _refused_cleanly(call) -> None:
    """The call either returns (the value was fine) or raises ValueError / TypeError with a message
    naming a parameter; nothing else (no AttributeError, no IndexError, no NumPy error text)."""
    try:
        call()
    except Accepted:
        pass
    except (ValueError, TypeError) as e:
        assert str(e), "an empty message"
    except MemoryError:  # pragma: no cover - would be a finding: a size not bounded before work
        pytest.fail("MemoryError: a size was not bounded before the work")


@FUZZ
@given(field=st.sampled_from(["D", "C", "d", "q", "sigma2", "p", "nu", "beta", "tau", "partition_seed"]), v=BAD)
def test_fuzz_setting(field, v):
    _refused_cleanly(lambda: Setting(**{"D": 16, "C": 4, field: v}))


SIM_FIELDS = ["N", "eta", "steps", "omega", "seed", "record_every", "n_test", "dense_until", "err_tol"]
SIM_FIELDS += ["init", "s_grid"]


@FUZZ
@given(field=st.sampled_from(SIM_FIELDS), v=BAD)
def test_fuzz_simulate(field, v, monkeypatch_sim):
    _refused_cleanly(lambda: simulate(S, **{**SIM, field: v}))


RED_FIELDS = ["eta", "steps", "s_max", "n_samples", "seed", "n_points", "s_min", "rtol", "atol", "init", "s_grid"]


@FUZZ
@given(field=st.sampled_from(RED_FIELDS), v=BAD)
def test_fuzz_integrate(field, v, monkeypatch_sim):
    _refused_cleanly(lambda: integrate(S, **{**RED, field: v}))


@pytest.fixture(scope="module")
def monkeypatch_sim():
    """The fuzz checks the refusals only: an accepted argument set is not run (the solvers are
    replaced by a stub after the checks), so 60 examples take well under a second each."""
    from theorydyn.reduced import solve
    from theorydyn.simulate import run

    mp = pytest.MonkeyPatch()

    def stop(*a, **k):
        raise Accepted

    mp.setattr(solve, "make_bank", stop)
    mp.setattr(run, "_resolve_steps", stop)
    yield
    mp.undo()
