"""The shared look of every theorydyn figure, and the two helpers plot functions use.

Plot functions in theorydyn draw into axes they are given (``ax=`` / ``axes=``) or, when given
none, into a new Figure that they return; none of them picks a matplotlib backend, so they work
in a notebook as well as under a CLI (only ``__main__`` modules call ``matplotlib.use("Agg")``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt

from ..infra.atomic import write_with

#: rcParams applied inside :func:`figure` (a context: the user's global settings are untouched).
#: Keyed by rcParams names (typed Any: matplotlib types its keys as one long Literal).
STYLE: dict[Any, Any] = {
    "figure.dpi": 110,
    "savefig.dpi": 120,
    "savefig.bbox": "tight",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "lines.linewidth": 1.4,
}

#: One colour per quantity, the same in every figure.
COLORS = {
    "alpha": "C0",
    "gamma": "C1",
    "rho": "C2",
    "T0": "C0",
    "T1": "C1",
    "T1_mass": "C4",
    "T2": "C3",
    "risk": "k",
    "err_y": "C3",
    "err_f": "C5",
    "association": "C4",
    "cos_v": "C9",
}


def figure(nrows: int = 1, ncols: int = 1, **kw):
    """``plt.subplots`` under :data:`STYLE`. Returns (Figure, axes)."""
    with mpl.rc_context(STYLE):
        return plt.subplots(nrows, ncols, **kw)


def axes_or_new(axes, nrows: int = 1, ncols: int = 1, **kw):
    """(Figure, axes): the given axes and their figure, or a new styled figure."""
    if axes is not None:
        first = axes.flat[0] if hasattr(axes, "flat") else (axes[0] if isinstance(axes, (list, tuple)) else axes)
        return first.figure, axes
    return figure(nrows, ncols, **kw)


def save(fig, path: str | Path, close: bool = True) -> Path:
    """Write ``fig`` to ``path`` atomically (format from the suffix) under :data:`STYLE`; close it unless
    asked not to. A failed write leaves any earlier file at ``path`` as it was (:mod:`theorydyn.infra.atomic`)."""
    path = Path(path)
    with mpl.rc_context(STYLE):
        write_with(path, fig.savefig)
    if close:
        plt.close(fig)
    return path
