"""A scan: a grid of Settings × solver options × seeds, and the key that names each point.

A scan is the Cartesian product of its *axes* (lists of values, in their declared order)
over a *base* (fixed Setting fields and solver options). Each point of the grid is a
validated :class:`~theorydyn.core.setting.Setting`, a dict of solver options and a seed. Its
key is the sha256 of the canonical JSON of everything that determines its numbers::

    key = sha256(json({"setting": s.to_dict(), "options": options, "seed": seed,
                       "runner": "module:function", "numerics": NUMERICS_VERSION},
                      sort_keys, no spaces))

so the key changes with any parameter and is identical across runs, processes and machines
(the JSON of a float is its shortest round-trip repr). Options that cannot affect the numbers
(e.g. the simulator's N when ``simulate`` is off) are dropped before hashing, so that a point
is never computed twice under two names. ``NUMERICS_VERSION`` salts the key with the version of
the code's numerics: raising it makes every point a new key, so that rows computed by older
numerics are recomputed rather than reused (and moved aside on loading, see :func:`row_problem`).
The runner is named by its function's module and name (:func:`runner_name`; the default
:func:`~theorydyn.scan.point.run_point` is ``theorydyn.scan.point:run_point``); it reaches a worker process
as that reference (pickle), so a runner of a scan with workers is a function defined at a module's top level.

Every row carries its parameters, ``runner`` and ``numerics_version``, so that loading can check
that its key is the hash of its own parameters (:func:`row_problem`, used by :func:`open_store`).

Saved grids are TOML files (``scans/NAME.toml``)::

    name = "default"                 # optional; else the file's stem
    [setting]                        # fixed Setting fields (docs/theory.md §1); absent → Setting defaults
    D = 64
    C = 4
    [axes]                           # lists; the grid is their product, in this order
    q = [0.2, 0.25, 0.3]
    seed = [0, 1]
    [options]                        # solver options (OPTION_DEFAULTS: the configurations' scanned fields)
    s_max = 2e4

An axis may name a Setting field, a solver option or ``seed``; its value is a list of values or a
single value (so an explicit partition or feature vector as an axis value is one more list
level: ``feature = [[1.0, 0.0]]``). The file is checked against a
typed schema before anything runs (:meth:`ScanSpec.from_toml`): UTF-8 TOML, only these four
tables and the keys ``name`` and ``runner``, each key known and in its table, each value of its
type (an axis value may be a single value or a list of them), no key both fixed and scanned.
:func:`validate_points` then refuses, before any work, points that cannot be computed: an
exact expectation over more multisets than the solver allows, or a point whose memory estimate
(:mod:`theorydyn.infra.memory`) exceeds the memory available.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.setting import SETTING_FIELDS, Setting
from ..infra import keyed
from ..infra import memory as resources
from ..infra.keyed import KeyedStore
from ..infra.limits import GRID_POINTS_MAX
from ..reduced import MAX_TERMS
from ..reduced.memory import n_exact_terms, reduced_memory
from ..simulate.config import SIM_DEFAULTS
from ..simulate.memory import simulate_memory
from .point import run_point, scan_horizon
from .schema import (  # noqa: F401  (re-exported: imported from here)
    _CHOICES,
    _FLOAT_OPTIONS,
    _INT_FIELDS,
    _INT_OPTIONS,
    _REAL_FIELDS,
    AXIS_NAMES,
    OPTION_DEFAULTS,
    ScanError,
    _is_int,
    _is_real,
    load_spec_file,
    point_options,
    value_type_problem,
    with_option_defaults,
)

if TYPE_CHECKING:
    import pandas as pd

from ..core.phases import Phases  # noqa: E402
from ..infra.provenance import NUMERICS_VERSION, PROVENANCE_TEXT_COLUMNS  # noqa: E402 — the salt of every scan key (documented there)

#: What computes one point: ``runner(s: Setting, options: dict, seed: int) -> dict`` (:mod:`theorydyn.scan.point`).
Runner = Callable[..., dict[str, Any]]


def runner_name(runner: Runner) -> str:
    """``"module:function"``: the runner as a row's ``runner`` column and a point's key name it."""
    return f"{runner.__module__}:{runner.__qualname__}"


def runner_function(runner: Runner | str) -> Runner:
    """The runner itself, or the function a ``"module:function"`` text names (``--runner``, a spec file's
    ``runner``), imported.

    Raises:
        ScanError: the text names no function that can be imported.
    """
    if callable(runner):
        return runner
    mod_name, _, fn_name = runner.partition(":")
    try:
        if not mod_name or not fn_name:
            raise ImportError(f"runner must look like 'module:function', got {runner!r}")
        # the standard library's resolver of "module:qualname" (the form entry points use)
        fn: Any = pkgutil.resolve_name(runner)
    except (ImportError, AttributeError, ValueError) as e:
        raise ScanError(f"--runner: cannot load {runner!r}: {e}") from None
    return fn


@dataclass(frozen=True)
class Point:
    """One point of a scan: a validated Setting, its solver options, a seed and the runner that computes it."""

    setting: Setting
    options: dict[str, Any]
    seed: int
    runner: Runner = run_point
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
        out["runner"] = runner_name(self.runner)
        out["numerics_version"] = NUMERICS_VERSION
        return out


def point_key(s: Setting, options: dict[str, Any], seed: int, runner: Runner | str = run_point) -> str:
    """sha256 hex digest of the point's full parameters and NUMERICS_VERSION (module docstring)."""
    options = {"s_max": scan_horizon(s.D), **options}  # the default horizon follows D
    name = runner if isinstance(runner, str) else runner_name(runner)
    return _key(s.to_dict(), point_options(options), int(seed), name, NUMERICS_VERSION)


def _payload(setting: dict[str, Any], options: dict[str, Any], seed: int, runner: str, numerics: int) -> dict[str, Any]:
    return {"setting": setting, "options": options, "seed": seed, "runner": runner, "numerics": numerics}


def _key(setting: dict[str, Any], options: dict[str, Any], seed: int, runner: str, numerics: int) -> str:
    return KeyedStore.key(_payload(setting, options, seed, runner, numerics))


@dataclass
class ScanSpec:
    """A grid: fixed Setting fields and options (``base``), axes, and a name.

    Attributes:
        name: names the results file ``<run dir>/scans/<name>.csv``.
        base: fixed values, Setting fields and/or solver options.
        axes: axis name → list of values; the grid is their product in this order.
        runner: the function computing one point (default :func:`~theorydyn.scan.point.run_point`: the
            reduced solver, and the simulator when ``simulate`` is on), or the ``"module:function"`` text
            that names one (``--runner``, a spec file's ``runner``: :func:`runner_function`).
    """

    name: str
    base: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, list[Any]] = field(default_factory=dict)
    runner: Runner | str = run_point

    @classmethod
    def from_toml(cls, path: str | Path) -> ScanSpec:
        """Read a saved grid (module docstring), checked against the schema before use.

        Raises:
            ScanError: naming the file and what is wrong: missing, a directory, unreadable,
                not UTF-8, not TOML, an unknown or misplaced key, a value of the wrong type,
                a key both fixed and scanned.
        """
        return cls(**load_spec_file(path))

    def size(self) -> int:
        """Points of the grid before duplicates are dropped: the product of the axes' lengths."""
        return math.prod(len(v) for v in self.axes.values())

    def scanned_axes(self) -> list[str]:
        """The axes with more than one value, seeds excluded."""
        return [k for k, v in self.axes.items() if k != "seed" and len(v) > 1]

    def expand(self) -> list[Point]:
        """Every point of the grid, validated; duplicates (same key) kept once.

        Raises:
            ScanError: listing every invalid axis value with the rule it breaks, so the
                scan stops before any work.
        """
        if self.name and ("/" in self.name or "\\" in self.name or self.name.startswith(".")):
            # the name is a file name in the results folder: '..' or 'a/b' would put files outside it
            raise ScanError(f"name must be a file name (no '/', not starting with '.'), got name={self.name!r}")
        bad_names = sorted(set(self.axes) - set(AXIS_NAMES)) + sorted(set(self.base) - set(AXIS_NAMES))
        if bad_names:
            raise ScanError(
                f"unknown parameter(s) {bad_names}; a scan axis is a Setting field "
                f"({', '.join(SETTING_FIELDS)}), a solver option ({', '.join(OPTION_DEFAULTS)}) or seed"
            )
        for k, vals in self.axes.items():
            if not vals:
                raise ScanError(f"axis {k} has no values")
        runner = runner_function(self.runner)
        size = self.size()
        if size > GRID_POINTS_MAX:  # counted before expanding: a 10^7-point grid is refused at once
            counts = " × ".join(f"{k}: {len(v)}" for k, v in self.axes.items())
            raise ScanError(
                f"the grid has {size:,} points ({counts}), more than the limit of {GRID_POINTS_MAX:,}; "
                f"split it into smaller scans"
            )
        problems: dict[str, list[str]] = {}  # each broken rule once, with the points it holds at
        points: list[Point] = []
        seen: set[str] = set()
        names = list(self.axes)
        for combo in itertools.product(*(self.axes[k] for k in names)):
            values = {**self.base, **dict(zip(names, combo, strict=True))}
            seed = values.pop("seed", 0)
            sfields = {k: v for k, v in values.items() if k in SETTING_FIELDS}
            opts = {k: v for k, v in values.items() if k in OPTION_DEFAULTS}
            where = ", ".join(f"{k}={v}" for k, v in zip(names, combo, strict=True))
            try:
                if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                    raise ScanError(f"seed must be an integer >= 0, got seed={seed!r}")
                s = Setting(**sfields)
                opts = point_options({"s_max": scan_horizon(s.D), **opts})  # the default horizon follows D
            except (ValueError, TypeError) as e:
                problems.setdefault(str(e), []).append(where)
                continue
            p = Point(s, opts, int(seed), runner, dict(zip(names, combo, strict=True)))
            if p.key not in seen:
                seen.add(p.key)
                points.append(p)
        if problems:
            lines = [f"{msg}{_at(wheres, size)}" for msg, wheres in problems.items()]
            head = lines[:8] + ([f"… and {len(lines) - 8} more"] if len(lines) > 8 else [])
            raise ScanError("invalid scan value(s):\n  " + "\n  ".join(head))
        return points


def _at(wheres: list[str], size: int) -> str:
    """Where a broken rule holds, said once: at every point, or at the first and how many more."""
    if not any(wheres):
        return ""
    if len(wheres) == size > 1:
        return f" (at every one of the {size} points)"
    more = f" and {len(wheres) - 1} more point(s)" if len(wheres) > 1 else ""
    return f" (at {wheres[0]}{more})"


# ---- points that cannot be computed -------------------------------------------------------------------
def point_memory(p: Point) -> resources.MemoryEstimate | None:
    """Peak memory of one point of the default runner (reduced bank, plus the simulator when on)."""

    if p.runner is not run_point:
        return None  # a custom runner's needs are its own
    s, o = p.setting, p.options
    if o["expectation"] == "exact":
        est = reduced_memory(s.D, s.C, s.q, expectation="exact")
    else:
        est = reduced_memory(s.D, s.C, s.q, n_samples=o["n_samples"])
    if o.get("simulate"):
        # scanpoint runs simulate() with its default n_test
        est = est + simulate_memory(s.D, s.C, s.d, N=o["N"], n_test=_SIM_N_TEST, dtype=o["dtype"])
    return est


#: The simulator's default test-set size, which scanpoint uses (SimConfig's n_test, 8192).
_SIM_N_TEST = SIM_DEFAULTS.n_test


def validate_points(
    points: list[Point],
    *,
    force: bool = False,
    available: int | None = None,
    concurrent: int = 1,
    max_terms: int | None = None,
) -> None:
    """Refuse, before any work, the points the default runner cannot compute.

    * ``expectation = "exact"`` with more multisets of count types than ``max_terms``
      (default :data:`theorydyn.reduced.MAX_TERMS`): the solver would refuse it at run time;
    * a point whose memory estimate (:func:`point_memory`) exceeds the memory available
      (``available`` bytes, default :func:`theorydyn.infra.memory.available_memory`) divided by
      ``concurrent`` (points computed at the same time, e.g. the number of workers) — unless ``force``.

    Raises:
        ScanError: listing every such point (the first 8 and a count) with the parameter,
            the estimate and the limit.
    """
    if concurrent < 1:
        raise ValueError(f"concurrent must be >= 1, got concurrent={concurrent}")
    if available is None and not force:
        try:
            available, _ = resources.available_memory()
        except ValueError as e:  # $THEORYDYN_MEMORY_LIMIT that is not a size
            raise ScanError(str(e)) from None
    limit = None if available is None else available // concurrent
    problems: list[str] = []
    for p in points:
        if p.runner is not run_point:
            continue
        where = ", ".join(f"{k}={v}" for k, v in p.axes.items()) or f"D={p.setting.D}, C={p.setting.C}"
        if p.options["expectation"] == "exact":
            if max_terms is None:
                max_terms = MAX_TERMS  # the solver's own limit
            M = n_exact_terms(p.setting.D, p.setting.C, p.setting.q)
            if M > max_terms:
                problems.append(
                    f"expectation='exact' needs {M:,} multisets of count types at D={p.setting.D}, "
                    f"C={p.setting.C}, q={p.setting.q:g}, above the solver's limit {max_terms:,}; "
                    f"use expectation='mc' (at {where})"
                )
                continue
        est = point_memory(p)
        if limit is None or force or est is None:
            continue
        try:
            resources.check_memory(
                est,
                available=limit,
                force_name="force (--force)"
                if concurrent == 1
                else f"force (--force), or use fewer than {concurrent} workers",
            )
        except resources.ResourceError as e:
            problems.append(f"{e} (at {where})")
    if problems:
        uniq = list(dict.fromkeys(problems))
        head = uniq[:8] + ([f"… and {len(uniq) - 8} more"] if len(uniq) > 8 else [])
        raise ScanError(f"{len(uniq)} scan point(s) cannot be computed:\n  " + "\n  ".join(head))


# ---- rows of the results file ---------------------------------------------------------------------------
#: Kinds of the result columns (resultstore): a row whose value does not parse is rejected on loading.
SCAN_KINDS: dict[str, str] = {
    **{k: "num" for k in _INT_FIELDS + _REAL_FIELDS + _FLOAT_OPTIONS + _INT_OPTIONS},
    "simulate": "bool",
    "seed": "num",
    "numerics_version": "num",
    # the phase columns of both solvers come from the one detector: its fields, bare and prefixed sim_
    **{
        p + f.name: ("bool" if f.name == "gamma_ge_rho" else "num")
        for p in ("", "sim_")
        for f in dataclasses.fields(Phases)
    },
    **{
        k: "num"
        for k in (
            "final_gamma",
            "final_rho",
            "s_reached",
            "reduced_wall_s",
            "wall_s",
            "sim_wall_s",
            "sim_final_association",
            "sim_final_risk",
            "sim_final_err_y",
            "sim_final_err_f",
            "sim_final_cos_v",
            "prov_numerics_version",
            "final_association",
            "sim_s_reached",
        )
    },
}
#: Text columns of the default runner's rows (not checked beyond the key's hash).
SCAN_TEXT_COLUMNS = (
    "key",
    "partition",
    "feature",
    "method",
    "expectation",
    "dtype",
    "runner",
    "status",
    "sim_status",
    "message",
    "sim_message",
) + PROVENANCE_TEXT_COLUMNS

_INT_TEXT = re.compile(r"[+-]?\d+")


def _parse_param(name: str, text: str) -> Any:
    """The value a row's text stands for (the inverse of the store's writing of Point.params())."""
    if name in _INT_FIELDS or name in _INT_OPTIONS or name == "seed":
        if not _INT_TEXT.fullmatch(text):
            raise ValueError(f"{name}={text!r} is not an integer")
        return int(text)
    if name in _REAL_FIELDS or name in _FLOAT_OPTIONS:
        v = float(text)
        return v
    if name == "simulate":
        if text not in ("True", "False"):
            raise ValueError(f"simulate={text!r} is not True/False")
        return text == "True"
    if name == "partition":
        return json.loads(text) if text.startswith("[") else text
    if name == "feature":
        return int(text) if _INT_TEXT.fullmatch(text) else json.loads(text)
    return text


def _stale(row: dict[str, str]) -> str | None:
    """``stale``: written by other numerics (no or another ``numerics_version``); ``invalid``: a version
    that is not an integer. Checked first (:class:`~theorydyn.infra.keyed.KeyedStore`)."""
    version = row.get("numerics_version")
    if version is None or version == "":
        return f"stale: numerics_version=absent, current {NUMERICS_VERSION} (written before the salt; recomputed)"
    if not _INT_TEXT.fullmatch(version):
        return f"invalid: numerics_version={version[:20]!r} is not an integer"
    if int(version) != NUMERICS_VERSION:
        return f"stale: numerics_version={int(version)}, current {NUMERICS_VERSION} (recomputed under the new key)"
    return None


def row_payload(row: dict[str, str]) -> dict[str, Any]:
    """The payload a row's key is the hash of (module docstring), rebuilt from its parameter columns.

    Raises:
        KeyError: a column missing; ValueError: a parameter that does not parse.
    """
    setting = {k: _parse_param(k, row[k]) for k in SETTING_FIELDS}
    options = {k: _parse_param(k, row[k]) for k in OPTION_DEFAULTS if row.get(k, "") != ""}
    seed = _parse_param("seed", row["seed"])
    return _payload(setting, point_options(options), seed, row["runner"], NUMERICS_VERSION)


def row_problem(row: dict[str, str]) -> str | None:
    """Why a results row (text by column) cannot be trusted, or None: the validation of
    :func:`open_store`'s :class:`~theorydyn.infra.keyed.KeyedStore`.

    ``stale``: written by other numerics (no or another ``numerics_version``); ``invalid``: its
    parameters do not parse; ``key mismatch``: its key is not the hash of its own parameters,
    runner and numerics version (a garbage or hand-edited line).
    """
    return keyed.row_problem(row, row_payload, _stale)


def open_store(path: str | Path, warn: bool = True) -> KeyedStore:
    """The results file of a scan, with every row checked on loading (:func:`row_problem`, SCAN_KINDS)."""
    return KeyedStore(path, payload_of=row_payload, stale=_stale, kinds=SCAN_KINDS, warn=warn, create=True)


def load_scan(name: str, results_dir: str | Path | None = None) -> pd.DataFrame:
    """The rows of the scan ``name`` (its spec's name, or a TOML file's stem) as a typed DataFrame,
    read from the results folder (default: ``<run dir>/scans``, :mod:`theorydyn.infra.paths`), each row
    checked as the scan itself checks it on resuming (:func:`row_problem`; a row that fails is moved
    aside with a warning).

    Raises:
        theorydyn.infra.store.StoreError: no results store in ``results_dir``, or no row of ``name`` there.

    >>> import tempfile
    >>> from theorydyn.infra.store import StoreError
    >>> try:
    ...     load_scan("default", tempfile.mkdtemp())
    ... except StoreError as e:
    ...     print(str(e).split(":")[0])
    no scan 'default' in the results folder
    """
    from ..infra.store import DB_NAME, StoreError, scope_counts
    from .defaults import RESULTS_DIR

    folder = Path(results_dir) if results_dir is not None else RESULTS_DIR
    if not (folder / DB_NAME).is_file():
        raise StoreError(f"no scan {name!r} in the results folder: {str(folder)!r} holds no {DB_NAME}")
    store = open_store(folder / f"{name}.csv").load()
    if len(store) == 0:
        found = {k: n for k, n in scope_counts(folder / DB_NAME).items() if n}
        listed = ", ".join(f"{k} ({n} row{'s' * (n != 1)})" for k, n in sorted(found.items())) or "none"
        raise StoreError(
            f"no scan {name!r} in the results folder: {str(folder / DB_NAME)!r} has no row of it; "
            f"the scans there: {listed}"
        )
    return with_option_defaults(store.frame())
