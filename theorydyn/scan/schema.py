"""The parameters a scan point takes and the scan spec files (:mod:`theorydyn.scan.grid` describes
both): the solver options with their defaults (:data:`OPTION_DEFAULTS`), the names an axis may take,
the type each value must have (:func:`value_type_problem`) and the checked reading of a TOML spec file
(:func:`load_spec_file`). Re-exported by :mod:`theorydyn.scan.grid`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from ..cli.tools import SETTING_FLAGS
from ..core.config import Rule
from ..core.setting import SETTING_FIELDS
from ..infra.limits import SIM_STEPS_MAX, STEPS_MAX
from ..reduced.config import FlowConfig
from ..simulate.config import SimConfig

DEFAULT_RUNNER = "theorydyn.scan.point:run_point"


def _same_name(cls: type, *names: str) -> dict[str, tuple[type, str]]:
    """Options named as the fields of ``cls`` that describe them, in the order given."""
    return {name: (cls, name) for name in names}


#: Each solver option of a point → the configuration field that describes the same option (its kind, its
#: choices and, unless :data:`SCAN_DEFAULTS` says otherwise, its default): the reduced run's
#: :class:`~theorydyn.reduced.config.FlowConfig`, the simulator's :class:`~theorydyn.simulate.config.SimConfig`.
#: ``eta`` is shared by the reduced GD and the simulator (the simulator's default); ``steps`` is the reduced
#: GD's (0: ⌈s_max/η⌉), ``sim_steps`` the simulator's. ``simulate`` (run the simulator too) is the scan's own.
OPTION_FIELDS: dict[str, tuple[type, str]] = {
    # reduced (α, γ, ρ) dynamics (Lemmas 4.1–4.3)
    **_same_name(FlowConfig, "method", "s_max", "n_samples", "expectation", "n_points"),
    **_same_name(SimConfig, "eta"),
    **_same_name(FlowConfig, "steps"),
    # finite-sample simulator (Theorem 4.2, docs/theory.md §4)
    **_same_name(SimConfig, "N"),
    "sim_steps": (SimConfig, "steps"),
    **_same_name(SimConfig, "omega", "record_every", "dtype"),
}
#: The scan's own defaults, where a point is not one run at the library's defaults (docs/theory.md §9's regime):
SCAN_DEFAULTS: dict[str, Any] = {
    "s_max": 5.0e4,  # horizon in s = η·t; a point's default is point.scan_horizon(D) (5e4 up to D = 64)
    "n_points": 400,  # log-spaced trajectory points (phase times resolved to ≈4%)
    "steps": 0,  # reduced GD steps; 0 → ceil(s_max / η)
    "simulate": False,  # also run the finite-sample simulator
    "record_every": 50,  # the simulator's records (its own default is 10)
}


#: The scan's own rules, where a point's option is not its configuration field's: ``steps`` 0 means
#: ⌈s_max/η⌉ (the reduced GD's horizon), and a simulated point takes at least one step.
SCAN_RULES: dict[str, Rule] = {
    "steps": Rule(kind=int, low=0, high=STEPS_MAX),
    "sim_steps": Rule(kind=int, low=1, high=SIM_STEPS_MAX),
}


def option_rule(k: str) -> Rule:
    """The rule of solver option ``k`` of a point: :data:`SCAN_RULES`, else its configuration field's
    (:data:`OPTION_FIELDS`). One rule for the scan's flag (``converter(option_rule(k), flag)``), its spec
    files and the library's :func:`~theorydyn.scan.grid.normalize_options`."""
    if k in SCAN_RULES:
        return SCAN_RULES[k]
    cls, name = OPTION_FIELDS[k]
    return cls.rule(name)  # type: ignore[attr-defined]


def _option_defaults() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, (cls, name) in OPTION_FIELDS.items():
        out[k] = SCAN_DEFAULTS[k] if k in SCAN_DEFAULTS else cls.default(name)  # type: ignore[attr-defined]
        if k == "steps":
            out["simulate"] = SCAN_DEFAULTS["simulate"]
    return out


#: Solver options of a point, with their defaults: the configurations' (:data:`OPTION_FIELDS`) but for
#: :data:`SCAN_DEFAULTS`, in the order of the key's options.
OPTION_DEFAULTS: dict[str, Any] = _option_defaults()


def _kind(k: str) -> type:
    cls, name = OPTION_FIELDS[k]
    return cls.rule(name).kind  # type: ignore[attr-defined]


_FLOAT_OPTIONS = tuple(k for k in OPTION_FIELDS if _kind(k) is float)
_INT_OPTIONS = tuple(k for k in OPTION_FIELDS if _kind(k) is int)
_CHOICES = {
    k: cls.rule(name).choices  # type: ignore[attr-defined]
    for k, (cls, name) in OPTION_FIELDS.items()
    if cls.rule(name).choices is not None  # type: ignore[attr-defined]
}
AXIS_NAMES = tuple(SETTING_FIELDS) + tuple(OPTION_DEFAULTS) + ("seed",)


def option_flag(key: str) -> str:
    """The flag of ``python -m theorydyn.scan`` that sets grid key ``key`` (``--s-max``; seeds: ``--seeds``)."""
    if key == "seed":
        return "--seeds"
    return SETTING_FLAGS.get(key) or "--" + key.replace("_", "-")


#: Every grid key → the flag that sets it, for messages that name a key (the scan CLI's ``_KEY_FLAGS``):
#: the Setting's flags, the seeds, the solver options, and the simulator options a message may name.
KEY_FLAGS: dict[str, str] = {k: option_flag(k) for k in (*SETTING_FIELDS, "seed", *OPTION_DEFAULTS, "n_test")}


class ScanError(ValueError):
    """A scan that cannot run; the message names the parameter and the rule it broke."""


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
    such as 4e3 is accepted for options, as ``normalize_options`` does); real numbers for q, σ²,
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
    runner = raw.get("runner", DEFAULT_RUNNER)
    if not (isinstance(runner, str) and _RUNNER_RE.fullmatch(runner)):
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
    return dict(name=name, base={**setting, **options}, axes=axes, runner=runner)
