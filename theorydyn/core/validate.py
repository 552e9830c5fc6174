"""Argument checks of the public solvers, the same rules as the command line's (issue 33, item 9).

:func:`check_integrate` and :func:`check_simulate` run first in
:func:`theorydyn.reduced.integrate` and :func:`theorydyn.simulate.simulate` (and
:func:`~theorydyn.simulate.simulate_replicas`): a bad argument raises before any work, naming the
parameter and the rule, with the value as the user wrote it (``eta=0``, never ``array([0.])``).

* ``TypeError``: the wrong kind of object where a structure is expected (a dict for the Setting).
* ``ValueError``: a value of the right kind outside its range, text where a number is expected,
  a decreasing time grid, a non-finite start.

The ranges of the options of a run are the fields' rules of :class:`theorydyn.reduced.config.FlowConfig`
and :class:`theorydyn.simulate.config.SimConfig` (issue 29: written once, read by the library and the
CLI; :mod:`theorydyn.core.config` words their messages with :func:`check_int` / :func:`check_real`); here
are the checks of the rest (the setting, the start, the time grid, the per-replica lists).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..infra.limits import SIM_STEPS_MAX
from .setting import Setting


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (numbers.Real, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def check_setting(s: Any, where: str, name: str = "s") -> None:
    """``s`` must be a :class:`~theorydyn.core.setting.Setting` (a dict is refused with how to make one)."""
    if not isinstance(s, Setting):
        hint = f"; build one with Setting(**{name})" if isinstance(s, dict) else ""
        raise TypeError(f"{where}: {name} must be a theorydyn.Setting, got {type(s).__name__}{hint}")


def check_int(name: str, v: Any, low: int, high: int | None = None) -> None:
    """An integer (not bool, not float, not text) in [low, high]."""
    if not _is_int(v):
        raise ValueError(f"{name} must be an integer, got {name}={v!r}")
    if v < low or (high is not None and v > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high:g}]"
        raise ValueError(f"{name} must be an integer {rng}, got {name}={int(v)}")


def check_real(name: str, v: Any, *, low: float, high: float | None = None, open_low: bool = False) -> None:
    """A finite real number (not bool, not text) with ``low`` < or <= v <= ``high``."""
    if not _is_real(v):
        raise ValueError(f"{name} must be a real number, got {name}={v!r}")
    x = float(v)
    too_low = x <= low if open_low else x < low
    if not np.isfinite(x) or too_low or (high is not None and x > high):
        op = ">" if open_low else ">="
        rng = f"finite and {op} {low:g}" + (f" and <= {high:g}" if high is not None else "")
        raise ValueError(f"{name} must be {rng}, got {name}={v!r}")


def gd_steps(s_max: float, eta: float, high: int) -> int:
    """⌈s_max/η⌉, the GD steps to the horizon s_max (s = η·step): a derived quantity, checked where it is
    derived. Each of ``s_max`` and ``eta`` may be valid alone (η = 5e-324 is > 0) while their ratio
    is no run: ValueError naming ``eta`` and ``s_max`` when it is not finite or exceeds ``high``.

    >>> gd_steps(2e4, 10.0, 10**7)
    2000
    >>> try:
    ...     gd_steps(2e4, 5e-324, 10**7)
    ... except ValueError as e:
    ...     print(str(e).split(";")[0])
    eta must give at most 1e+07 GD steps to s_max (steps = ceil(s_max/eta) = inf)
    """
    with np.errstate(over="ignore", divide="ignore"):
        ratio = float(s_max) / float(eta) if float(eta) > 0 else float("inf")
    if not (np.isfinite(ratio) and ratio <= high):
        raise ValueError(
            f"eta must give at most {high:.0e} GD steps to s_max (steps = ceil(s_max/eta) = {ratio:.3g}); raise eta "
            f"or lower s_max, got eta={eta!r}, s_max={s_max:g}"
        )
    return int(np.ceil(ratio))


def check_seed(name: str, v: Any) -> None:
    check_int(name, v, 0)


def check_init(init: Any) -> None:
    """``init`` = (α, γ, ρ): three finite real numbers."""
    if init is None:
        return
    if isinstance(init, (str, bytes)) or not isinstance(init, (Sequence, np.ndarray)) or len(init) != 3:
        raise ValueError(f"init must be three numbers (alpha, gamma, rho), got init={init!r}")
    for label, v in zip(("alpha", "gamma", "rho"), init, strict=True):
        if not _is_real(v) or not np.isfinite(float(v)):
            raise ValueError(f"init must be three finite numbers (alpha, gamma, rho), got {label}={v!r}")


def check_s_grid(s_grid: Any) -> None:
    """Times s ≥ 0, finite, strictly increasing (a decreasing or repeated grid is refused, not sorted)."""
    if s_grid is None:
        return
    if isinstance(s_grid, (str, bytes)):
        raise ValueError(f"s_grid must be an array of times, got s_grid={s_grid!r}")
    try:
        g = np.asarray(s_grid, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"s_grid must be an array of real times, got s_grid={s_grid!r}") from None
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"s_grid must be a non-empty one-dimensional array of times, got shape {g.shape}")
    if not np.all(np.isfinite(g)) or g[0] < 0:
        raise ValueError("s_grid must hold finite times >= 0")
    if np.any(np.diff(g) <= 0):
        i = int(np.argmax(np.diff(g) <= 0))
        pair = f"s_grid[{i}]={g[i]:g} then s_grid[{i + 1}]={g[i + 1]:g}"
        raise ValueError(f"s_grid must be strictly increasing (it is not sorted for you), got {pair}")


def check_err_tol(err_tol: Any) -> None:
    check_real("err_tol", err_tol, low=0.0, high=1.0, open_low=True)
    if float(err_tol) >= 1.0:
        raise ValueError(f"err_tol must be in (0, 1), got err_tol={err_tol!r}")


def check_integrate(
    s: Any,
    *,
    s_min: Any,
    init: Any,
    max_terms: Any,
    s_grid: Any,
    **_: Any,
) -> None:
    """The arguments of :func:`theorydyn.reduced.integrate` that are not options of a run: the setting,
    ``s_min``, ``init``, ``max_terms``, ``s_grid``. The options (η, steps, s_max, n_samples, seed,
    n_points, rtol, atol, err_tol, method, solver) are checked by the rules of their fields in
    :class:`theorydyn.reduced.config.FlowConfig` (the same words as here)."""
    check_setting(s, "integrate")
    if s_min is not None:
        check_real("s_min", s_min, low=0.0, open_low=True)
    check_init(init)
    check_int("max_terms", max_terms, 1)
    check_s_grid(s_grid)


def check_simulate(
    s: Any,
    *,
    N: Any,
    eta: Any,
    steps: Any,
    s_max: Any,
    init: Any,
    s_grid: Any,
    n_test: Any,
    fields: Any,
    train: Any = None,
    test: Any = None,
    init_seeds: Any = None,
    replicas: Any = None,
    min_steps: int = 1,
    **kw: Any,
) -> None:
    """The arguments of :func:`theorydyn.simulate.simulate` (``min_steps`` = 1: a run of 0 steps is
    refused there) and of :func:`~theorydyn.simulate.simulate_replicas` (``min_steps`` = 0: the
    initialisation alone, evaluated). The options of one run (ω, seed, record_every, dense_until,
    err_tol, and N, n_test, s_max where they are used) are checked by the rules of their fields in
    ``fields``, :class:`theorydyn.simulate.config.SimConfig` (the same words as here); η may be one per
    replica and steps may be 0 (the start alone) only in ``simulate_replicas``."""
    where = "simulate"
    check_setting(s, where)
    if train is None:
        fields.check_values(N=N)
    if isinstance(eta, (Sequence, np.ndarray)) and not isinstance(eta, (str, bytes)):
        etas = list(np.asarray(eta, dtype=object).ravel())
        if not etas:
            raise ValueError("eta must be a number or a non-empty sequence of numbers, got eta=[]")
        for i, e in enumerate(etas):
            check_real(f"eta[{i}]", e, low=0.0, open_low=True)
    else:
        fields.check_values(eta=eta)
    if steps is not None:
        check_int("steps", steps, min_steps, SIM_STEPS_MAX)
    if s_max is not None:
        fields.check_values(s_max=s_max)
    fields.check_values(**{k: kw[k] for k in ("omega", "seed", "record_every", "dense_until", "err_tol")})
    if test is None:
        fields.check_values(n_test=n_test)
    check_init(init)
    check_s_grid(s_grid)
    if replicas is not None:
        check_int("replicas", replicas, 1)
    if init_seeds is not None:
        if isinstance(init_seeds, (str, bytes)) or not isinstance(init_seeds, (Sequence, np.ndarray)):
            raise ValueError(f"init_seeds must be a sequence of integers >= 0, got init_seeds={init_seeds!r}")
        for i, v in enumerate(init_seeds):
            check_seed(f"init_seeds[{i}]", v)
