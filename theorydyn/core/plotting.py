"""The one look of every theorydyn figure: its rcParams, palette, words and file formats, in one place.

Every plot function of the toolkit draws under :data:`STYLE` (the :func:`styled` decorator, or a figure
made by :func:`figure`), so that a figure of the ledger, a scan, a solver or the vision runs reads alike:

* **colours** from the Okabe–Ito palette (:data:`OKABE_ITO`: told apart under the common colour-vision
  deficiencies), one per quantity in every figure (:data:`COLORS`), with a marker each (:data:`MARKERS`)
  so that nothing rests on colour alone; colour maps are viridis (sequential) and RdBu (signed);
* **words** of the paper in legends (:data:`LABELS`: "T₁: γ > max|ρ| (Event II)", not a column name);
* **layout**: constrained (titles, labels, colour bars and legends placed outside the axes never overlap
  the data: :func:`legend_outside`);
* **censored values**: a phase not reached within the horizon is drawn as an open upward triangle at the
  horizon (:func:`mark_censored`), with its own legend entry (:func:`censored_handle`), never left out;
* **files**: :data:`FORMATS` (PNG at 150 dpi for screens; PDF or SVG, vector, for print), written
  atomically and with no time stamp in them, so the same figure gives the same bytes (:func:`save`).

A command's ``--format`` flag is declared once, by the command runner (:mod:`theorydyn.cli.runner`),
with these formats. Plot functions draw into axes they are given (``ax=`` / ``axes=``) or, when given none,
into a new figure that they return; none of them picks a matplotlib backend (only the command runner
calls ``matplotlib.use("Agg")``). This module imports matplotlib only inside its functions, so that the
formats and the palette can be read without it.

>>> save.__name__, FORMATS, DEFAULT_FORMAT, with_format("runs/phases.png", "svg").name
('save', ('png', 'pdf', 'svg'), 'png', 'phases.svg')
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..infra.atomic import write_with

#: The file formats a figure is written in: raster PNG, vector PDF and SVG (GitHub and the docs show
#: PNG and SVG inline, PDF not).
FORMATS: tuple[str, ...] = ("png", "pdf", "svg")
#: The format of a command's figures when it does not say (``python -m theorydyn.figures``: PDF).
DEFAULT_FORMAT = "png"
#: What ``--format`` says in every command's help.
FORMAT_HELP = "file format of the figures: png (raster, 150 dpi), pdf or svg (vector)"

#: The Okabe–Ito palette (Okabe & Ito, *Color Universal Design*, 2008).
OKABE_ITO: dict[str, str] = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "green": "#009E73",
    "orange": "#E69F00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "black": "#000000",
    "yellow": "#F0E442",
}
#: The colour cycle of every axes: the palette, yellow last (faint on white).
PALETTE: tuple[str, ...] = tuple(OKABE_ITO.values())
#: References (bounds, targets, chance levels) and seeds' dots: greys, not palette colours.
GREY, LIGHT_GREY = "0.35", "0.7"

#: rcParams of every figure, applied inside :func:`figure`, :func:`styled` and :func:`save` (a context:
#: the user's global settings are untouched). Keyed by rcParams names (typed Any: matplotlib types its
#: keys as one long Literal).
STYLE: dict[Any, Any] = {
    "axes.prop_cycle": f"cycler('color', {list(PALETTE)!r})",
    "image.cmap": "viridis",
    "figure.dpi": 100,
    "figure.constrained_layout.use": True,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.04,
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 7.5,
    "legend.title_fontsize": 7.5,
    "legend.framealpha": 0.92,
    "figure.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "lines.linewidth": 1.4,
    "lines.markersize": 5,
    "errorbar.capsize": 2.5,
    "pdf.fonttype": 42,  # TrueType in the PDF: text stays text (editable, searchable), as journals ask
    "svg.fonttype": "path",  # no font needed to show the SVG, offline or on GitHub
    "svg.hashsalt": "theorydyn",  # the SVG's element ids fixed: the same figure, the same bytes
}

_C = OKABE_ITO
#: One colour per quantity, the same in every figure; a phase time has the colour of the quantity whose
#: crossing defines it (T0: α, T1: γ, T1_mass: the in-set mass, T2: the error vs f).
COLORS: dict[str, str] = {
    "alpha": _C["blue"],
    "gamma": _C["orange"],
    "rho": _C["green"],
    "in_mass": _C["purple"],
    "T0": _C["blue"],
    "T1": _C["orange"],
    "T1_mass": _C["purple"],
    "T2": _C["vermillion"],
    "T_assoc": _C["green"],
    "risk": _C["black"],
    "err_y": _C["sky"],
    "err_f": _C["vermillion"],
    "association": _C["green"],
    "assoc_peak": _C["purple"],
    "final_association": _C["green"],
    "final_err_f": _C["vermillion"],
    "final_err_y": _C["sky"],
    "cos_v": _C["black"],
}
#: One marker per quantity (open ^ is kept for censored values, :func:`mark_censored`).
MARKERS: dict[str, str] = {
    "T0": "o",
    "T1": "s",
    "T1_mass": "D",
    "T2": "P",
    "T_assoc": "X",
    "assoc_peak": "*",
    "final_association": "o",
    "final_err_f": "s",
    "final_err_y": "D",
}
#: Legend words: the paper's names of the quantities (docs/theory.md §3.8), not column names.
LABELS: dict[str, str] = {
    "T0": "$T_0$, end of Event I (α plateau)",
    "T1": "$T_1$, Event II: γ > max$_t$|ρ|",
    "T1_mass": "in-set attention mass ½",
    "T2": "$T_2$, Event III: error vs f < 2%",
    "T_assoc": "patch association ≥ 0.9",
    "assoc_peak": "peak patch association",
    "final_association": "final patch association",
    "final_err_f": "final test error vs f",
    "final_err_y": "final test error vs y",
    "alpha": "α = ⟨v, w*⟩",
    "gamma": "γ (in-set logit)",
    "rho": "ρ (cross-set logit)",
    "in_mass": "in-set attention mass",
    "risk": "logistic risk",
    "err_y": "test error vs y",
    "err_f": "test error vs f",
    "association": "patch association (Def. 2.2)",
    "cos_v": "cos(v̂, w*)",
}
#: The marker of a value censored at the horizon (an open upward triangle: "later than this").
CENSORED_MARKER = "^"

F = TypeVar("F", bound=Callable[..., Any])


def styled(fn: F) -> F:
    """Run the plot function ``fn`` under :data:`STYLE`: its lines, texts and legends take the style,
    in a notebook as in a command; the rcParams outside the call are left as they were."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import matplotlib as mpl

        with mpl.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def figure(nrows: int = 1, ncols: int = 1, *, pyplot: bool = True, **kw: Any):
    """``plt.subplots`` under :data:`STYLE` (constrained layout unless ``layout`` says otherwise); with
    ``pyplot=False`` a :class:`matplotlib.figure.Figure` that pyplot does not hold (no backend state,
    freed with its last reference). Returns (Figure, axes)."""
    import matplotlib as mpl

    with mpl.rc_context(STYLE):
        if not pyplot:
            from matplotlib.figure import Figure

            fig_kw = {k: kw.pop(k) for k in ("figsize", "layout", "dpi") if k in kw}
            fig = Figure(**fig_kw)
            return fig, fig.subplots(nrows, ncols, **kw)
        import matplotlib.pyplot as plt

        return plt.subplots(nrows, ncols, **kw)


def axes_or_new(axes, nrows: int = 1, ncols: int = 1, **kw: Any):
    """(Figure, axes): the given axes and their figure, or a new styled figure (:func:`figure`)."""
    if axes is not None:
        first = axes.flat[0] if hasattr(axes, "flat") else (axes[0] if isinstance(axes, (list, tuple)) else axes)
        return first.figure, axes
    return figure(nrows, ncols, **kw)


def with_format(path: str | Path, format: str | None) -> Path:
    """``path`` with the suffix of ``format`` (one of :data:`FORMATS`; None: ``path`` as given).

    Raises:
        ValueError: a format that is not one of :data:`FORMATS`.
    """
    path = Path(path)
    if format is None:
        return path
    if format not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got format={format!r}")
    return path.with_suffix(f".{format}")


#: Metadata left out of each format: a time stamp would make every save differ.
_NO_STAMP = {"png": {}, "pdf": {"CreationDate": None}, "svg": {"Date": None}}


def save(fig, path: str | Path, format: str | None = None, close: bool = True) -> Path:
    """Write ``fig`` to ``path`` (its suffix replaced by ``format``'s when given, :func:`with_format`)
    atomically and under :data:`STYLE`; close it unless asked not to. Returns the path written.

    No time stamp goes into the file, so the same figure gives the same bytes. A failed write leaves
    any earlier file at the path as it was (:mod:`theorydyn.infra.atomic`).

    Raises:
        ValueError: a format (or suffix) that is not one of :data:`FORMATS`.
    """
    import matplotlib as mpl

    path = with_format(path, format)
    fmt = path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got a file ending in {path.suffix!r}")
    with mpl.rc_context(STYLE):
        write_with(path, lambda tmp: fig.savefig(tmp, format=fmt, metadata=_NO_STAMP[fmt]))
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return path


def legend_outside(ax, handles=None, labels=None, where: str = "right", **kw: Any):
    """A legend beside the axes (``where="right"``) or under them (``"below"``), never over the data;
    constrained layout makes room for it. Returns the Legend (None when there is nothing to list)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    elif labels is None:
        labels = [h.get_label() for h in handles]
    if not handles:
        return None
    if where == "right":
        kw = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0, **kw}
    elif where == "below":
        kw = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.16), "ncol": 2, **kw}
    else:
        raise ValueError(f"where must be 'right' or 'below', got where={where!r}")
    return ax.legend(handles, labels, **kw)


def mark_censored(ax, x, y, color, shift: float = 0.0, **kw: Any):
    """Values not reached within their horizon: an open upward triangle of ``color`` at (``x``, ``y`` =
    the horizon), shifted ``shift`` points sideways (so that several quantities censored at one x stay
    apart). Returns the scatter (no legend entry: :func:`censored_handle` gives the one entry)."""
    import numpy as np
    from matplotlib.transforms import offset_copy

    tr = offset_copy(ax.transData, fig=ax.figure, x=shift, y=0.0, units="points")
    ax.update_datalim(np.column_stack([np.ravel(x), np.ravel(y)]))  # drawn off transData: not counted else
    ax.autoscale_view()
    return ax.scatter(
        x, y, marker=CENSORED_MARKER, s=42, facecolors="none", edgecolors=color, linewidths=1.2, transform=tr, **kw
    )


def censored_handle(label: str = "not reached within the horizon (drawn at it)", color: str = GREY):
    """The legend entry of :func:`mark_censored`'s triangles (one per axes, whatever their colours; or one
    quantity's, in its ``color``)."""
    from matplotlib.lines import Line2D

    return Line2D([], [], marker=CENSORED_MARKER, ls="", mfc="none", mec=color, mew=1.2, ms=7, color=color, label=label)


__all__ = [
    "CENSORED_MARKER",
    "COLORS",
    "DEFAULT_FORMAT",
    "FORMATS",
    "FORMAT_HELP",
    "GREY",
    "LABELS",
    "LIGHT_GREY",
    "MARKERS",
    "OKABE_ITO",
    "PALETTE",
    "STYLE",
    "axes_or_new",
    "censored_handle",
    "figure",
    "legend_outside",
    "mark_censored",
    "save",
    "styled",
    "with_format",
]
