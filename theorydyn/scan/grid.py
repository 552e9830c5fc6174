"""A scan: a grid of Settings × solver options × seeds, and the key that names each point.

A scan is the Cartesian product of its *axes* (lists of values, in their declared order)
over a *base* (fixed Setting fields and solver options). Each point of the grid is a
validated :class:`~theorydyn.setting.Setting`, a dict of solver options and a seed. Its
key is the sha256 of the canonical JSON of everything that determines its numbers::

    key = sha256(json({"setting": s.to_dict(), "options": options, "seed": seed,
                       "runner": "module:function"}, sort_keys, no spaces))

so the key changes with any parameter and is identical across runs, processes and machines
(the JSON of a float is its shortest round-trip repr). Options that cannot affect the numbers
(e.g. the simulator's N when ``simulate`` is off) are dropped before hashing, so that a point
is never computed twice under two names.

Saved grids are TOML files (``scans/NAME.toml``)::

    name = "default"                 # optional; else the file's stem
    [setting]                        # fixed Setting fields (SPEC §1); absent → Setting defaults
    D = 64
    C = 4
    [axes]                           # lists; the grid is their product, in this order
    q = [0.2, 0.25, 0.3]
    seed = [0, 1]
    [options]                        # solver options (OPTION_DEFAULTS)
    s_max = 2e4

An axis may name a Setting field, a solver option or ``seed``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..setting import SETTING_FIELDS, Setting

DEFAULT_RUNNER = "theorydyn.scan.point:run_point"

#: Solver options of a point, with their defaults (SPEC §9's regime).
OPTION_DEFAULTS: dict[str, Any] = {
    # reduced (α, γ, ρ) dynamics (Lemmas 4.1–4.3)
    "method": "flow",        # "flow" (gradient flow in s = ηt) or "gd" (the paper's recursion)
    "s_max": 5.0e4,          # horizon in s = η·t
    "n_samples": 4000,       # Monte Carlo count samples (common random numbers)
    "expectation": "mc",     # "mc" or "exact" (small L only)
    "n_points": 400,         # log-spaced trajectory points (phase times resolved to ≈4%)
    "eta": 10.0,             # GD step η: the reduced recursion (method="gd") and the simulator
    "steps": 0,              # reduced GD steps; 0 → ceil(s_max / η)
    # finite-sample simulator (Theorem 4.2, SPEC §4)
    "simulate": False,
    "N": 16384,
    "sim_steps": 1200,
    "omega": 1.0e-3,
    "record_every": 50,
    "dtype": "float64",
}

_FLOAT_OPTIONS = ("s_max", "eta", "omega")
_INT_OPTIONS = ("n_samples", "n_points", "steps", "N", "sim_steps", "record_every")
_CHOICES = {"method": ("flow", "gd"), "expectation": ("mc", "exact"), "dtype": ("float64", "float32")}
AXIS_NAMES = tuple(SETTING_FIELDS) + tuple(OPTION_DEFAULTS) + ("seed",)


class ScanError(ValueError):
    """A scan that cannot run; the message names the parameter and the rule it broke."""


@dataclass(frozen=True)
class Point:
    """One point of a scan: a validated Setting, its solver options and a seed."""

    setting: Setting
    options: dict[str, Any]
    seed: int
    runner: str = DEFAULT_RUNNER
    axes: dict[str, Any] = field(default_factory=dict)  # this point's value on each axis

    @property
    def key(self) -> str:
        return point_key(self.setting, self.options, self.seed, self.runner)

    def params(self) -> dict[str, Any]:
        """Flat, CSV friendly parameters: the Setting's fields, the options and the seed."""
        out: dict[str, Any] = {}
        for k, v in self.setting.to_dict().items():
            out[k] = v if isinstance(v, (str, int, float)) else json.dumps(v)
        out.update(self.options)
        out["seed"] = self.seed
        return out


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, NaN refused: the same text for the same values everywhere."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=True)


def point_key(s: Setting, options: dict[str, Any], seed: int, runner: str = DEFAULT_RUNNER) -> str:
    """sha256 hex digest of the point's full parameters (module docstring)."""
    payload = {"setting": s.to_dict(), "options": normalize_options(options), "seed": int(seed), "runner": runner}
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def normalize_options(options: dict[str, Any]) -> dict[str, Any]:
    """Validate and canonicalise solver options; keep only those that affect the numbers.

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
        if not (math.isfinite(o[k]) and o[k] > 0):
            raise ScanError(f"{k} must be finite and > 0, got {k}={o[k]}")
    for k in _INT_OPTIONS:
        v = o[k]
        if isinstance(v, bool) or not (isinstance(v, int) or (isinstance(v, float) and v.is_integer())):
            raise ScanError(f"{k} must be an integer, got {k}={v!r}")
        o[k] = int(v)
        if o[k] < (0 if k == "steps" else 1):
            raise ScanError(f"{k} must be {'>= 0' if k == 'steps' else '>= 1'}, got {k}={o[k]}")
    for k, allowed in _CHOICES.items():
        if o[k] not in allowed:
            raise ScanError(f"{k} must be one of {list(allowed)}, got {k}={o[k]!r}")
    if not isinstance(o["simulate"], bool):
        raise ScanError(f"simulate must be true or false, got {o['simulate']!r}")
    if o["n_points"] < 2:
        raise ScanError(f"n_points must be >= 2, got n_points={o['n_points']}")
    keep = ["method", "s_max", "expectation", "n_points", "simulate"]
    if o["expectation"] == "mc":
        keep.append("n_samples")
    if o["method"] == "gd":
        o["steps"] = o["steps"] or math.ceil(o["s_max"] / o["eta"])
        keep += ["eta", "steps"]
    if o["simulate"]:
        keep += ["eta", "N", "sim_steps", "omega", "record_every", "dtype"]
    return {k: o[k] for k in OPTION_DEFAULTS if k in keep}


@dataclass
class ScanSpec:
    """A grid: fixed Setting fields and options (``base``), axes, and a name.

    Attributes:
        name: names the results file ``scans/results/<name>.csv``.
        base: fixed values, Setting fields and/or solver options.
        axes: axis name → list of values; the grid is their product in this order.
        runner: ``"module:function"`` computing one point (default: the reduced solver,
            and the simulator when ``simulate`` is on).
    """

    name: str
    base: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, list[Any]] = field(default_factory=dict)
    runner: str = DEFAULT_RUNNER

    @classmethod
    def from_toml(cls, path: str | Path) -> "ScanSpec":
        """Read a saved grid (module docstring); ScanError naming what is wrong."""
        path = Path(path)
        try:
            raw = tomllib.loads(path.read_text())
        except FileNotFoundError:
            raise ScanError(f"--spec: no such file {str(path)!r}") from None
        except tomllib.TOMLDecodeError as e:
            raise ScanError(f"--spec: {path} is not valid TOML: {e}") from None
        unknown = sorted(set(raw) - {"name", "setting", "axes", "options", "runner"})
        if unknown:
            raise ScanError(f"--spec: unknown top-level key(s) {unknown} in {path}; use name, setting, axes, options")
        base = {**raw.get("setting", {}), **raw.get("options", {})}
        axes = {}
        for k, v in raw.get("axes", {}).items():
            axes[k] = list(v) if isinstance(v, list) else [v]
        return cls(name=str(raw.get("name", path.stem)), base=base, axes=axes,
                   runner=str(raw.get("runner", DEFAULT_RUNNER)))

    def scanned_axes(self) -> list[str]:
        """The axes with more than one value, seeds excluded."""
        return [k for k, v in self.axes.items() if k != "seed" and len(v) > 1]

    def expand(self) -> list[Point]:
        """Every point of the grid, validated; duplicates (same key) kept once.

        Raises:
            ScanError: listing every invalid axis value with the rule it breaks, so the
                scan stops before any work.
        """
        bad_names = sorted(set(self.axes) - set(AXIS_NAMES)) + sorted(set(self.base) - set(AXIS_NAMES))
        if bad_names:
            raise ScanError(f"unknown parameter(s) {bad_names}; a scan axis is a Setting field "
                            f"({', '.join(SETTING_FIELDS)}), a solver option ({', '.join(OPTION_DEFAULTS)}) or seed")
        for k, vals in self.axes.items():
            if not vals:
                raise ScanError(f"axis {k} has no values")
        problems: list[str] = []
        points: list[Point] = []
        seen: set[str] = set()
        names = list(self.axes)
        for combo in itertools.product(*(self.axes[k] for k in names)):
            values = {**self.base, **dict(zip(names, combo))}
            seed = values.pop("seed", 0)
            sfields = {k: v for k, v in values.items() if k in SETTING_FIELDS}
            opts = {k: v for k, v in values.items() if k in OPTION_DEFAULTS}
            where = ", ".join(f"{k}={v}" for k, v in zip(names, combo))
            try:
                if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                    raise ScanError(f"seed must be an integer >= 0, got seed={seed!r}")
                s = Setting(**sfields)
                opts = normalize_options(opts)
            except (ValueError, TypeError) as e:
                msg = f"{e} (at {where})" if where else str(e)
                if msg not in problems:
                    problems.append(msg)
                continue
            p = Point(s, opts, int(seed), self.runner, dict(zip(names, combo)))
            if p.key not in seen:
                seen.add(p.key)
                points.append(p)
        if problems:
            head = problems[:8] + ([f"… and {len(problems) - 8} more"] if len(problems) > 8 else [])
            raise ScanError("invalid scan value(s):\n  " + "\n  ".join(head))
        return points
