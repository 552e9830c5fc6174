"""A figure's record (:class:`Figure`) and the one registry of figures (:data:`REGISTRY`, filled by
:func:`register` as each topic module is imported by :mod:`theorydyn.figures.core`): apart from the
driver, so the topic modules import it and the driver imports them, with no circle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..core.plotting import styled
from .manifest import COMMITTED_FORMAT, COMMITTED_OUT, DEFAULT_FORMAT


@dataclass(frozen=True)
class Figure:
    """One registered figure: what it shows, how to compute, draw and summarise it.

    Attributes:
        name: registry key and the stem of its files (``file``, default ``NAME``).
        title: one line for the listing.
        claim: what the figure shows, stated with the numbers it shows (the README's column).
        requires: the optional extras (their top-level modules, ``("torch",)``) the figure needs: it is
            skipped where one is not installed.
        compute, draw, setting, numbers: see the module docstring.
        inputs: ``inputs(quick) -> Path | None``: the cache folder the figure reads (transfer, vision),
            None when it computes everything itself.
        file: the stem of its files when it is not ``name`` (``NAME.pdf``, ``NAME.svg`` …).
        note: why the figure is not regenerated where it is not, or another caveat for the README.
        inputs_cost: what computing absent inputs costs (shown by ``--list`` when they are absent),
            e.g. the measured cold seconds of the ledger runs a vision figure reads; "" if unknown.
        holds: for a figure whose numbers repeat only on the CPU that made them (torch training:
            its kernels dispatch per instruction set), ``holds(numbers) -> [failures]`` checks the
            figure's claim itself (its stated thresholds) where the exact numbers cannot be compared;
            None for figures that repeat on any CPU.
    """

    name: str
    title: str
    claim: str
    requires: tuple[str, ...]
    compute: Callable[..., Any]
    draw: Callable[..., Any]
    setting: Callable[[bool], dict] = field(default=lambda quick: {})
    numbers: Callable[[Any], dict] = field(default=lambda data: {})
    inputs: Callable[[bool], Path | None] = field(default=lambda quick: None)
    file: str = ""
    note: str = ""
    holds: Callable[[dict], list[str]] | None = None
    inputs_cost: str = ""

    @property
    def stem(self) -> str:
        return self.file or self.name

    def filename(self, format: str = COMMITTED_FORMAT) -> str:
        """The name of its file in ``format`` (``phases.svg``)."""
        return f"{self.stem}.{format}"

    def command(self, quick: bool, format: str = COMMITTED_FORMAT, out: str | None = COMMITTED_OUT) -> str:
        """The exact command that remakes this figure in ``format`` into ``out`` (default: the committed
        SVG in ``figures/``; ``out=None``: the default folder, ``<run dir>/figures``)."""
        cmd = f"python -m theorydyn.figures {self.name}" + (" --quick" if quick and self.has_quick else "")
        if format != DEFAULT_FORMAT:
            cmd += f" --format {format}"
        return cmd + (f" --out {out}" if out else "")

    @property
    def has_quick(self) -> bool:
        return self.setting(True) != self.setting(False)


REGISTRY: dict[str, Figure] = {}


def register(name: str, title: str, claim: str, requires: tuple[str, ...], draw, setting, numbers, **kw):
    """Decorator registering ``compute(quick, recompute=False) -> data`` with its draw (run under the one
    style, :func:`theorydyn.core.plotting.styled`), setting and numbers."""

    def deco(compute: Callable[..., Any]):
        REGISTRY[name] = Figure(name, title, claim, requires, compute, styled(draw), setting, numbers, **kw)
        return compute

    return deco


def _num(x) -> float | None:
    """A finite float, or None (a phase not reached, a missing value)."""
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else None


def _fmt(v) -> str:
    return "—" if v is None else f"{v:.3g}"
