"""A run's phases as the solver commands print them (``python -m theorydyn.reduced``, ``python -m
theorydyn.simulate``): one line per quantity, times in s = ηt (:func:`~theorydyn.cli.tools.format_time`: a
time at the run's first instant is printed as such)."""

from __future__ import annotations

from typing import Any

from ..core.phases import Phases
from .tools import START_FRACTION, format_time


def format_phases(ph: dict[str, Any], horizon: float) -> str:
    """The phases of the reduced dynamics (:meth:`~theorydyn.core.phases.Phases.as_dict`), ``horizon`` the
    run's last s; the simulator-only diagnostics (the cos(v̂, w*) dip, the entrywise T1) left out when absent."""

    def f(k: str, v: Any) -> str:
        if k in Phases.TIMES or k.endswith("_s"):
            return format_time(v, horizon)
        if v is None:
            return "not reached"
        if isinstance(v, bool):
            return str(v)
        return f"{v:.4g}"

    shown = {k: v for k, v in ph.items() if not (v is None and (k.startswith("cos_v") or k == "T1_entrywise"))}
    return "\n".join(["phases (times in s = eta*t):"] + [f"  {k:22s} {f(k, v)}" for k, v in shown.items()])


def format_gd_phases(ph: Phases, eta: float, steps: int) -> str:
    """The phases of GD of step ``eta`` run for ``steps`` steps: each time in s = ηt (the unit of the
    summary JSON and of the reduced dynamics) with its GD step in brackets, then the association's peak
    and the dip of cos(v̂, w*), each with its time."""
    horizon = eta * steps

    def at(v: float | None) -> str:
        return format_time(v, horizon) + ("" if v is None or v < START_FRACTION * horizon else f" (step {v / eta:.4g})")

    def value(v: float | None) -> str:
        return "—" if v is None else f"{v:.4g}"

    return "\n".join(
        ["phases (times in s = eta*t, GD step in brackets):"]
        + [f"  {k:22s} {at(getattr(ph, k))}" for k in ph.TIMES]
        + [
            f"  {'assoc_peak':22s} {value(ph.assoc_peak)} at s = {at(ph.assoc_peak_s)}",
            f"  {'cos_v_min':22s} {value(ph.cos_v_min)} at s = {at(ph.cos_v_min_s)}",
        ]
    )
