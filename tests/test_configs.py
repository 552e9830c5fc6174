"""Typed, frozen configurations (issue 29): one default, one rule and one help text per option, read by the
library, the command lines and the scan.

* :func:`theorydyn.core.config.as_seeds`: one type of seeds, from a count or a sequence.
* A field's rule refuses a bad value on construction, naming the field (the words of theorydyn.core.validate).
* The flags of ``python -m theorydyn.reduced`` / ``simulate`` / ``vision`` are the fields': the same defaults
  and bounds; an old spelling (``--N-test``) still works and is hidden.
* ``integrate(Setting())`` and the reduced CLI resolve to one configuration: the same horizon, the same T1.
* The scan's option maps are derived from the fields and equal the literals they replace.
"""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from theorydyn.cli.configs import Rule, add_config_flags, as_seeds, config_flags, config_from_args, flag_of
from theorydyn.reduced.config import FLOW_DEFAULTS, FlowConfig
from theorydyn.simulate.config import SIM_DEFAULTS, SimConfig
from theorydyn.vision.config import TrainConfig


# ---- seeds -------------------------------------------------------------------------------------------------
def test_as_seeds_takes_a_count_or_the_seeds():
    assert as_seeds(3) == (0, 1, 2)
    assert as_seeds(2, first=5) == (5, 6)
    assert as_seeds(range(4, 6)) == (4, 5)
    assert as_seeds([7, 1]) == (7, 1)
    assert as_seeds((0,)) == (0,)
    import numpy as np

    assert as_seeds(np.arange(2)) == (0, 1) and all(type(v) is int for v in as_seeds(np.arange(2)))


@pytest.mark.parametrize(
    "seeds, match",
    [(0, "seeds must be a count >= 1"), ([0, -1], r"seeds\[1\] must be an integer >= 0"), ("12", "seeds must be")],
)
def test_as_seeds_refuses_naming_the_seed(seeds, match):
    with pytest.raises(ValueError, match=match):
        as_seeds(seeds)
    with pytest.raises(ValueError, match="first"):
        as_seeds([0, 1], first=2)


# ---- rules -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cls, change, match",
    [
        (FlowConfig, dict(eta=0), "eta must be finite and > 0, got eta=0$"),
        (FlowConfig, dict(n_samples=1), "n_samples must be an integer >= 2, got n_samples=1"),
        (FlowConfig, dict(s_max=0.0), "s_max must be finite and >= 1e-06"),
        (FlowConfig, dict(method="euler"), r"method must be one of \['flow', 'gd'\]"),
        (FlowConfig, dict(err_tol=1.0), r"err_tol must be in \(0, 1\), got err_tol=1.0"),
        (FlowConfig, dict(steps=2.5), "steps must be an integer, got steps=2.5"),
        (SimConfig, dict(n_test=0), "n_test must be an integer >= 1"),
        (SimConfig, dict(omega=-1.0), "omega must be finite and >= 0"),
        (SimConfig, dict(dtype="float16"), "dtype must be one of"),
        (TrainConfig, dict(label_smoothing=1.0), r"label_smoothing must be >= 0 and < 1, got label_smoothing=1.0"),
        (TrainConfig, dict(epochs=0), "epochs must be an integer in"),
        (TrainConfig, dict(pad=-1), "pad must be an integer >= 0"),
    ],
)
def test_a_field_refuses_a_bad_value_naming_it(cls, change, match):
    with pytest.raises(ValueError, match=match):
        cls(**change)
    with pytest.raises(ValueError, match=match):
        cls().replace(**change)


def test_a_rule_can_fail_and_pass():
    r = Rule(kind=float, low=0.0, high=1.0, high_open=True)
    r.check("x", 0.0)
    r.check("x", 0.999)
    for bad in (1.0, -0.1, float("nan"), float("inf"), "0.5", True):
        with pytest.raises(ValueError, match="^x must be"):
            r.check("x", bad)


def test_the_configurations_are_frozen_and_their_defaults_are_the_documented_values():
    with pytest.raises(dataclasses.FrozenInstanceError):
        FLOW_DEFAULTS.s_max = 1.0  # type: ignore[misc]
    # the values of the keyword APIs before issue 29 (every number stays as it is)
    assert FLOW_DEFAULTS.to_dict() == dict(
        method="flow", eta=1.0, steps=None, s_max=2e4, n_samples=4000, seed=0, expectation="mc",
        n_points=200, solver="LSODA", err_tol=0.02, rtol=1e-7, atol=1e-10,
    )  # fmt: skip
    assert SIM_DEFAULTS.to_dict() == dict(
        N=16384, eta=10.0, steps=1200, s_max=None, omega=1e-3, seed=0, record_every=10, dtype="float64",
        n_test=8192, dense_until=40, err_tol=0.02, update="Av", device="cpu-numba",
    )  # fmt: skip
    # TrainConfig's fields are the cache keys' (runspec.config_key hashes asdict): names and defaults kept
    assert dataclasses.asdict(TrainConfig()) == dict(
        epochs=10, batch_size=128, lr=1e-3, weight_decay=0.05, warmup_epochs=1.0, label_smoothing=0.1, seed=0,
        shuffle_grid=None, compile=False, pad=None, flip=None, affine=None, amp=None,
    )  # fmt: skip


def test_the_library_signatures_take_their_defaults_from_the_configurations():
    # the solvers take (setting, config) or keywords named after the config's fields: no parameter repeats
    # a field, so the defaults are the configuration's by construction (issue 40)
    import inspect

    from theorydyn.reduced import solve
    from theorydyn.simulate import run

    for fn, cls in ((solve.integrate, FlowConfig), (run.simulate, SimConfig), (run.simulate_replicas, SimConfig)):
        sig = inspect.signature(fn).parameters
        assert not set(sig) & set(cls.names()), fn.__name__
        assert sig["config"].default is None and sig["options"].kind is inspect.Parameter.VAR_KEYWORD
    # steps (simulate) and s_max (integrate) not given are derived from the run's other inputs
    assert FlowConfig.call_options("integrate", None, {}, derived="s_max") == {**FLOW_DEFAULTS.to_dict(), "s_max": None}
    assert SimConfig.call_options("simulate", None, {}, derived="steps") == {**SIM_DEFAULTS.to_dict(), "steps": None}
    with pytest.raises(TypeError, match="'replicas'"):
        SimConfig.call_options("simulate", None, {"replicas": 2}, derived="steps")


# ---- flags -------------------------------------------------------------------------------------------------
def test_flags_round_trip_and_an_old_spelling_is_hidden(capsys):
    ap = argparse.ArgumentParser()
    add_config_flags(ap, SimConfig, only=("N", "n_test", "dtype"), defaults={"dtype": "float32"})
    cfg = config_from_args(SimConfig, ap.parse_args(["--n-test", "64", "--N", "128"]))
    assert (cfg.N, cfg.n_test, cfg.dtype) == (128, 64, "float32")
    assert config_from_args(SimConfig, ap.parse_args(["--N-test", "32"])).n_test == 32  # the old spelling
    ap.print_help()
    out = capsys.readouterr().out
    assert "--n-test" in out and "--N-test" not in out
    with pytest.raises(SystemExit):
        ap.parse_args(["--n-test", "0"])
    assert "--n-test" in capsys.readouterr().err
    with pytest.raises(ValueError, match="^--n-test: n_test must be"):
        config_from_args(SimConfig, argparse.Namespace(n_test=0))
    assert flag_of(TrainConfig, "warmup_epochs") == "--warmup" and config_flags(FlowConfig)["s_max"] == "--s-max"


def _actions(ap: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in ap._actions if a.option_strings and a.help != argparse.SUPPRESS}


def test_the_cli_flags_are_the_fields():
    from theorydyn.reduced.__main__ import build_parser as reduced
    from theorydyn.simulate.__main__ import build_parser as simulate
    from theorydyn.vision.__main__ import build_parser as vision

    acts = _actions(reduced())
    for k in ("s_max", "n_points", "err_tol", "seed", "steps"):
        rule, conv = FlowConfig.rule(k), acts[k].type
        assert (conv.low, conv.high) == (rule.low, rule.high if rule.high is not None else conv.high), k
        assert acts[k].default == FLOW_DEFAULTS.to_dict()[k], k
    assert acts["method"].choices == ("flow", "gd") and acts["solver"].choices == FlowConfig.rule("solver").choices
    acts = _actions(simulate())
    for k in ("N", "eta", "steps", "omega", "record_every", "n_test", "dense_until", "device", "seed"):
        assert acts[k].default == getattr(SIM_DEFAULTS, k), k
    assert acts["dtype"].default == "float32"  # the CLI's own default, declared once (simulate.config)
    acts = _actions(vision())
    assert {"epochs", "batch_size", "lr", "weight_decay", "warmup", "label_smoothing", "pad", "shuffle_grid"} <= set(
        acts
    )
    assert acts["seed"].type.high == 2**32 - 1 and acts["compile"].default is False
    assert vision().parse_args(["--warmup", "2"]).warmup == 2.0


def test_the_reduced_cli_refuses_a_flag_of_the_other_mode():
    from theorydyn.reduced.__main__ import build_parser, flow_config

    ap = build_parser()
    for argv, flag in ((["--steps", "10"], "--steps"), (["--method", "gd", "--solver", "BDF"], "--solver")):
        with pytest.raises(ValueError, match=f"^{flag}: only used by"):
            flow_config(ap.parse_args(argv))
    cfg = flow_config(ap.parse_args(["--method", "gd", "--steps", "10", "--eta", "0.5"]))
    assert cfg.integrate_kwargs()["s_max"] is None and cfg.horizon == 5.0


# ---- one horizon -------------------------------------------------------------------------------------------
def test_integrate_and_the_reduced_cli_resolve_to_one_horizon_and_one_t1():
    """The CLI's resolution of its flags (flow_config) and integrate's own defaults give the same run:
    the same horizon and, on a small D, the same T1 and trajectory."""
    from theorydyn import Setting
    from theorydyn.reduced import default_horizon, integrate
    from theorydyn.reduced.__main__ import build_parser, flow_config

    cli = flow_config(build_parser().parse_args(["--D", "16", "--C", "4", "--q", "0.25"]))
    assert cli == FLOW_DEFAULTS and cli.horizon == FLOW_DEFAULTS.s_max == default_horizon(64) == 2e4
    s = Setting(D=16, C=4, q=0.25)  # T1 ≈ 1.1e3 (at q = 1, D = 16 γ decreases: no T1)
    lib, via_cli = integrate(s, n_points=20), integrate(s, config=cli.replace(n_points=20))
    assert float(lib.trajectory["s"].iloc[-1]) == float(via_cli.trajectory["s"].iloc[-1]) == cli.horizon
    assert lib.phases.T1 is not None and lib.phases.T1 == via_cli.phases.T1
    assert lib.trajectory.equals(via_cli.trajectory)
    with pytest.raises(ValueError, match="eta: given both in config and as keywords"):
        integrate(s, config=cli, eta=2.0)


# ---- the scan's maps ---------------------------------------------------------------------------------------
def test_the_scan_option_maps_are_derived_and_unchanged():
    """The options of the stored keys keep their names, defaults, order and kinds; an option added later
    (a field made scanned) is in a point's key only away from its default, so no stored row changes."""
    from theorydyn.scan import schema

    keyed = {
        "method": "flow", "s_max": 5.0e4, "n_samples": 4000, "expectation": "mc", "n_points": 400, "eta": 10.0,
        "steps": 0, "simulate": False, "N": 16384, "sim_steps": 1200, "omega": 1.0e-3, "record_every": 50,
        "dtype": "float64",
    }  # fmt: skip
    assert [(k, v) for k, v in schema.OPTION_DEFAULTS.items() if k in keyed] == list(keyed.items())
    assert schema.KEYED_AT_DEFAULT == frozenset(keyed)  # a later option: keyed only away from its default
    assert tuple(k for k in schema._FLOAT_OPTIONS if k in keyed) == ("s_max", "eta", "omega")
    assert tuple(k for k in schema._INT_OPTIONS if k in keyed) == (
        "n_samples", "n_points", "steps", "N", "sim_steps", "record_every",
    )  # fmt: skip
    assert {k: v for k, v in schema._CHOICES.items() if k in keyed} == {
        "method": ("flow", "gd"),
        "expectation": ("mc", "exact"),
        "dtype": ("float64", "float32", "bfloat16"),  # bfloat16 added (issue 32): no existing key changes
    }
    assert schema.KEY_FLAGS["sim_steps"] == "--sim-steps" and schema.KEY_FLAGS["seed"] == "--seeds"
    assert schema.KEY_FLAGS["partition_seed"] == "--partition-seed" and schema.KEY_FLAGS["n_test"] == "--n-test"


def test_the_scan_command_declares_no_flag_by_hand():
    """Issue 40: the scan's own flags are the fields of ScanConfig (their defaults its defaults), its
    options' flags the configurations' scanned fields; no solver command declares a flag outside cli/."""
    from pathlib import Path

    import theorydyn
    from theorydyn.scan.config import ScanConfig
    from theorydyn.scan.flags import scan_parser

    actions = {a.dest: a for a in scan_parser()._actions}
    for name in ScanConfig.names():
        assert actions[name].option_strings == [flag_of(ScanConfig, name)], name
        assert actions[name].default == ScanConfig.default(name), name
    assert ScanConfig() == ScanConfig()  # its defaults obey its rules
    root = Path(theorydyn.__file__).parent
    for package in ("scan", "reduced", "simulate"):
        for path in (root / package).glob("*.py"):
            assert ".add_argument(" not in path.read_text(encoding="utf-8"), path


def test_an_option_left_out_of_the_keys_at_its_default_reads_back_where_it_applies():
    """A scan along a later option (``update``: keyed only away from Av) reads its default's rows as Av,
    not as missing; a point that does not run the simulator keeps no value."""
    import pandas as pd

    from theorydyn.scan.schema import KEYED_AT_DEFAULT, with_option_defaults

    assert "update" not in KEYED_AT_DEFAULT
    frame = pd.DataFrame({"simulate": [True, True, False], "update": [None, "v", None]})
    out = with_option_defaults(frame)
    assert out["update"].tolist()[:2] == ["Av", "v"] and pd.isna(out["update"].iloc[2])
    assert frame["update"].isna().sum() == 2  # the rows given are left as they are
