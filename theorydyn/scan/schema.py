"""The parameters a scan point takes and the scan spec files (:mod:`theorydyn.scan.grid` describes
both): the solver options, read from the run configurations' fields (:data:`OPTIONS`: their defaults,
kinds, rules and the scan's flags; :func:`point_options`: a point's options checked by those rules), the
names an axis may take, the type each value must have (:func:`value_type_problem`) and the checked reading
of a TOML spec file (:func:`load_spec_file`). Re-exported by :mod:`theorydyn.scan.grid`.

A simulator option that a scan may sweep is one field of :class:`~theorydyn.simulate.config.SimConfig`
made :func:`~theorydyn.core.config.scanned`: its flag, its spec key, its rule, the point's key and the
simulator's keyword argument (:func:`simulator_kwargs`) follow from it.

>>> OPTION_DEFAULTS["n_points"], BY_NAME["sim_steps"].field, BY_NAME["sim_steps"].flag
(400, 'steps', '--sim-steps')
>>> point_options({"method": "gd", "eta": 2.0, "s_max": 100.0})["steps"]  # 0 steps: ⌈s_max/η⌉
50
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli.configs import scan_flag
from ..cli.tools import SETTING_FLAGS
from ..core.config import FIELD_DEFAULT, Config, Rule, _field, option, scan_key, scanned, scanned_fields
from ..core.setting import SETTING_FIELDS
from ..core.validate import gd_steps
from ..infra.limits import STEPS_MAX
from ..reduced.config import FlowConfig
from ..simulate.config import SimConfig


class ScanError(ValueError):
    """A scan that cannot run; the message names the parameter and the rule it broke."""


@dataclass(frozen=True)
class PointConfig(Config):
    """The options of a scan point that are the scan's own: one step η for the reduced GD and the simulator
    (the simulator's field: its default and rule), the reduced GD's steps (0: ⌈s_max/η⌉, its horizon) and
    whether the simulator runs too."""

    eta: float = scanned(
        _field(SimConfig, "eta"),
        "GD step(s) η > 0: reduced --method gd and the simulator (default 10)",
        axis=True,
        when=(("method", "gd"), ("simulate", True)),
    )
    steps: int = scanned(
        option(0, "reduced GD steps; 0: ⌈s_max/η⌉", low=0, high=STEPS_MAX), None, when=(("method", "gd"),)
    )
    simulate: bool = scanned(
        option(False, "also run the finite-sample simulator"), "also run the finite-sample simulator"
    )


@dataclass(frozen=True)
class PointOption:
    """One solver option of a scan point: the field ``field`` of ``config``, as its
    :class:`~theorydyn.core.config.ScanOption` makes it an option of the scan."""

    name: str
    config: type
    field: str
    default: Any
    rule: Rule
    help: str | None
    axis: bool
    when: tuple[tuple[str, Any], ...]

    @property
    def flag(self) -> str | None:
        """The scan's flag that sets it (``--sim-steps``), or None: a spec file's key only."""
        return None if self.help is None else scan_flag(self.name)

    def applies(self, options: dict[str, Any]) -> bool:
        """Whether it changes the numbers of a point with these (complete) options."""
        return not self.when or any(options.get(k) == v for k, v in self.when)


def _read(config: type, when: tuple[tuple[str, Any], ...] = ()) -> tuple[PointOption, ...]:
    """The options of a point that the fields of ``config`` describe (those made ``scanned``), in their order."""
    return tuple(
        PointOption(
            name=scan_key(f, scan),
            config=config,
            field=f.name,
            default=f.default if scan.default is FIELD_DEFAULT else scan.default,
            rule=scan.rule or f.metadata["rule"],
            help=scan.help,
            axis=scan.axis,
            when=scan.when or when,
        )
        for f, scan in scanned_fields(config)
    )


#: Every solver option of a scan point, read from the configurations' fields, in the order of the rows'
#: columns: the reduced run's (:class:`~theorydyn.reduced.config.FlowConfig`), the scan's own
#: (:class:`PointConfig`), then the simulator's (:class:`~theorydyn.simulate.config.SimConfig`, acting when
#: ``simulate`` is on). From these come the scan's flags, a spec file's ``[options]``, the rows' column kinds
#: and the point's key (:func:`point_options`); the scan's flags come from :data:`CONFIGS` in the same order.
OPTIONS: tuple[PointOption, ...] = (
    *_read(FlowConfig),
    *_read(PointConfig),
    *_read(SimConfig, when=(("simulate", True),)),
)
#: The configurations whose scanned fields are the options, in :data:`OPTIONS`' order.
CONFIGS: tuple[type, ...] = (FlowConfig, PointConfig, SimConfig)
#: Solver options of a point, with their defaults, in the order of the key's options.
OPTION_DEFAULTS: dict[str, Any] = {o.name: o.default for o in OPTIONS}
#: option name → its record
BY_NAME: dict[str, PointOption] = {o.name: o for o in OPTIONS}
#: The options of the scans' first keys: in a point's key at their defaults too. An option made a scan's
#: later is left out of the key at its default, so that the rows stored before it stay valid.
KEYED_AT_DEFAULT = frozenset(
    ("method", "s_max", "n_samples", "expectation", "n_points", "eta", "steps", "simulate", "N", "sim_steps")
    + ("omega", "record_every", "dtype")
)

_FLOAT_OPTIONS = tuple(o.name for o in OPTIONS if o.rule.kind is float)
_INT_OPTIONS = tuple(o.name for o in OPTIONS if o.rule.kind is int)
_CHOICES = {o.name: o.rule.choices for o in OPTIONS if o.rule.choices is not None}
AXIS_NAMES = tuple(SETTING_FIELDS) + tuple(OPTION_DEFAULTS) + ("seed",)

#: The Setting fields that the scan's flags take as lists, among its axes (``--D 16 32``); the others take one value.
SETTING_AXES = ("D", "C", "q", "tau")
#: Every grid key → the flag of ``python -m theorydyn.scan`` that sets it, for messages that name a key: the
#: axes (the Setting's, the options', the seeds), the Setting's other flags, the options that have a flag,
#: and ``n_test`` (the simulator's, named in its messages).
KEY_FLAGS: dict[str, str] = {
    **{k: SETTING_FLAGS[k] for k in SETTING_AXES},
    **{o.name: o.flag for o in OPTIONS if o.axis and o.flag},
    "seed": "--seeds",
    **{k: flag for k, flag in SETTING_FLAGS.items() if k not in SETTING_AXES},
    **{o.name: o.flag for o in OPTIONS if not o.axis and o.flag},
    "n_test": "--n-test",
}


def point_options(options: dict[str, Any]) -> dict[str, Any]:
    """A point's solver options, checked by their fields' rules and complete, keeping only those that affect
    its numbers (:meth:`PointOption.applies`), in :data:`OPTION_DEFAULTS`' order: an integral number given
    for an integer option is that integer, a number for a real option a float; the reduced GD's steps 0 is
    ⌈s_max/η⌉.

    Raises:
        ScanError: an unknown option or a value breaking its rule, naming it.
    """
    unknown = sorted(set(options) - set(OPTION_DEFAULTS))
    if unknown:
        raise ScanError(f"unknown solver option(s) {unknown}; known: {sorted(OPTION_DEFAULTS)}")
    o = {**OPTION_DEFAULTS, **options}
    for k in _FLOAT_OPTIONS:
        try:
            o[k] = float(o[k])
        except (TypeError, ValueError):
            raise ScanError(f"{k} must be a real number, got {o[k]!r}") from None
    for k in _INT_OPTIONS:
        v = o[k]
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
            raise ScanError(f"{k} must be an integer, got {k}={v!r}")
        o[k] = int(v)
    for opt in OPTIONS:  # the rule of each option: its field's (the flag's converter applies the same)
        try:
            opt.rule.check(opt.name, o[opt.name])
        except ValueError as e:
            raise ScanError(str(e)) from None
    if o["method"] == "gd" and not o["steps"]:  # derived, checked where derived: s_max/eta is inf at eta = 5e-324
        try:
            o["steps"] = gd_steps(o["s_max"], o["eta"], STEPS_MAX)
        except ValueError as e:
            raise ScanError(str(e)) from None
    return {
        opt.name: o[opt.name]
        for opt in OPTIONS
        if opt.applies(o) and (opt.name in KEYED_AT_DEFAULT or o[opt.name] != opt.default)
    }


def with_option_defaults(frame: Any) -> Any:
    """The rows ``frame`` (a DataFrame of a store's rows) with the value of each option that their keys
    leave out at its default (one made scanned after the first keys: not in :data:`KEYED_AT_DEFAULT`)
    written back where the option applies (:meth:`PointOption.applies`), so that a scan along it reads
    its default's rows beside the others (the store and its CSV export keep the rows as keyed)."""
    import pandas as pd

    later = [o for o in OPTIONS if o.name not in KEYED_AT_DEFAULT and o.name in frame.columns]
    if not later:
        return frame
    frame = frame.copy()
    for o in later:
        applies = pd.Series(not o.when, index=frame.index)
        for k, v in o.when:
            applies |= frame[k].eq(v) if k in frame.columns else OPTION_DEFAULTS[k] == v
        frame.loc[applies & frame[o.name].isna(), o.name] = o.default
    return frame


def reduced_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`theorydyn.reduced.integrate` of a point's options
    (:func:`point_options`): its :class:`~theorydyn.reduced.config.FlowConfig` options, and the GD's step and
    steps under ``method="gd"``."""
    kw = {o.field: options[o.name] for o in OPTIONS if o.config is FlowConfig and o.name in options}
    if options["method"] == "gd":
        kw.update(eta=options["eta"], steps=options["steps"])
    return kw


def simulator_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`theorydyn.simulate.simulate` of a point's options (:func:`point_options`,
    ``simulate`` on): its :class:`~theorydyn.simulate.config.SimConfig` options by their fields' names, and η."""
    kw = {o.field: options[o.name] for o in OPTIONS if o.config is SimConfig and o.name in options}
    return {"eta": options["eta"], **kw}


# ---- spec files -------------------------------------------------------------------------------------
_INT_FIELDS = ("D", "C", "d", "p", "partition_seed")
_REAL_FIELDS = ("q", "sigma2", "nu", "beta", "tau")
_TOP_KEYS = ("name", "runner", "setting", "axes", "options")
_RUNNER_RE = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
_NAME_RE = re.compile(r"[A-Za-z0-9._+-]{1,120}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def value_type_problem(name: str, v: Any) -> str | None:
    """What is wrong with the *type* of a value of parameter ``name`` (Setting field, option, seed), or None.

    Integers for D, C, d, p, partition_seed, seed and the integer options (an integral float
    such as 4e3 is accepted for options, as :func:`point_options` does); real numbers for q, σ²,
    ν, β, τ and the real options; true/false for ``simulate``; text for the choices;
    ``partition`` a name or a list of lists of integers; ``feature`` an integer or a list of numbers.
    """
    if name in _INT_FIELDS or name == "seed":
        return None if _is_int(v) else "an integer"
    if name in _INT_OPTIONS:
        return None if _is_int(v) or (isinstance(v, float) and v.is_integer()) else "an integer"
    if name in _REAL_FIELDS or name in _FLOAT_OPTIONS:
        return None if _is_real(v) else "a number"
    if name == "simulate":
        return None if isinstance(v, bool) else "true or false"
    if name in _CHOICES:
        return None if isinstance(v, str) else f"one of {list(_CHOICES[name])} (text)"
    if name == "partition":
        ok = isinstance(v, str) or (
            isinstance(v, list) and all(isinstance(S, list) and all(_is_int(i) for i in S) for S in v)
        )
        return None if ok else f"one of {list(('blocks', 'grid', 'random'))} or a list of lists of patch indices"
    if name == "feature":
        return (
            None
            if _is_int(v) or (isinstance(v, list) and all(_is_real(x) for x in v))
            else "a basis index (integer) or a list of numbers"
        )
    return None


def _section(raw: dict[str, Any], table: str, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    sec = raw.get(table, {})
    if not isinstance(sec, dict):
        raise ScanError(
            f"--spec: [{table}] must be a table (lines 'name = value' under '[{table}]'), "
            f"got {table} = {sec!r} in {where}"
        )
    problems = []
    for k, v in sec.items():
        if k not in allowed:
            if k == "seed":
                hint = "seeds go in [axes] as a list, e.g. seed = [0, 1]"
            elif k in SETTING_FIELDS:
                hint = f"{k} is a Setting field: put it in [setting] (or [axes])"
            elif k in OPTION_DEFAULTS:
                hint = f"{k} is a solver option: put it in [options] (or [axes])"
            else:
                hint = f"known here: {', '.join(allowed)}"
            problems.append(f"unknown key {table}.{k} ({hint})")
            continue
        values = v if table == "axes" and isinstance(v, list) else [v]
        if table == "axes" and isinstance(v, list) and not v:
            problems.append(f"axes.{k} has no values")
        for x in values:
            why = value_type_problem(k, x)
            if why:
                problems.append(f"{table}.{k} must be {why}, got {x!r} ({type(x).__name__})")
                break
    if problems:
        raise ScanError(f"--spec: {where}: " + "; ".join(problems))
    return sec


def load_spec_file(path: str | Path) -> dict[str, Any]:
    """Read and check a spec file (module docstring): the keyword arguments of :class:`ScanSpec`.

    Raises:
        ScanError: the file and what is wrong (see :meth:`ScanSpec.from_toml`).
    """
    path = Path(path)
    where = str(path)
    if path.is_dir():
        raise ScanError(f"--spec: {where!r} is a directory, not a spec file (scans/NAME.toml)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ScanError(f"--spec: no such file {where!r}") from None
    except OSError as e:
        raise ScanError(f"--spec: cannot read {where!r}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ScanError(
            f"--spec: {where} is not UTF-8 text (byte {e.start}: {data[e.start : e.start + 1]!r})"
        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScanError(f"--spec: {where} is not valid TOML: {e}") from None
    except RecursionError:  # a value nested thousands of levels deep
        raise ScanError(f"--spec: {where} nests values too deeply to read (lists or tables within lists)") from None
    unknown = [k for k in raw if k not in _TOP_KEYS]
    if unknown:
        raise ScanError(
            f"--spec: unknown top-level key(s) {unknown} in {where}; use name, runner and the tables "
            f"[setting], [axes], [options]"
        )
    name = raw.get("name", path.stem)
    if not (isinstance(name, str) and _NAME_RE.fullmatch(name)):
        raise ScanError(
            f"--spec: name must be text of letters, digits and . _ + - (it names the results file), "
            f"got name = {name!r} in {where}"
        )
    runner = raw.get("runner")  # absent: the scan's default runner
    if runner is not None and not (isinstance(runner, str) and _RUNNER_RE.fullmatch(runner)):
        raise ScanError(f"--spec: runner must look like 'module:function', got runner = {runner!r} in {where}")
    setting = _section(raw, "setting", SETTING_FIELDS, where)
    options = _section(raw, "options", tuple(OPTION_DEFAULTS), where)
    axes_raw = _section(raw, "axes", AXIS_NAMES, where)
    both = sorted((set(setting) | set(options)) & set(axes_raw))
    if both:
        raise ScanError(f"--spec: {both} both fixed ([setting]/[options]) and scanned ([axes]) in {where}; keep one")
    axes = {}
    for k, v in axes_raw.items():  # a list is the axis' values (so one explicit vector is [[...]]); else one value
        axes[k] = list(v) if isinstance(v, list) else [v]
    return dict(name=name, base={**setting, **options}, axes=axes, **({} if runner is None else {"runner": runner}))
