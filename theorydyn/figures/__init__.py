"""Every figure of theorydyn, recomputed: a registry of (compute, draw, numbers) triples.

Each registered :class:`Figure` has ``compute(quick, recompute=False) -> data`` (the toolkit's own
solvers, a scan, the transfer experiment …), ``draw(data, axes=None) -> matplotlib Figure`` (into
the given axes, or a new figure), ``setting(quick) -> dict`` (every size and seed it depends on) and
``numbers(data) -> dict`` (the key numbers it shows: phase times, fitted exponents, final
association …). In a notebook::

    from theorydyn import figures
    fig = figures.REGISTRY["phases"]
    data = fig.compute(quick=True)
    fig.draw(data, axes=my_axes)          # or: fig.draw(data) for a new figure
    fig.numbers(data)                     # what figures/manifest.json records

:func:`make` computes, draws, writes ``out/FILE.png`` and ``.pdf`` and returns the figure's
:mod:`manifest <theorydyn.figures.manifest>` entry; ``python -m theorydyn.figures`` does it for any
or all figures and updates ``out/manifest.json``. ``quick`` uses smaller sizes (the committed PNGs
are the quick versions, except ``figure4_d64``, which has one size). Scans behind a figure go
through :func:`theorydyn.scan.run_scan`, so their points are cached in ``<run dir>/scans/``
(:mod:`theorydyn.infra.paths`);
``recompute=True`` ignores every cache (scan rows, the transfer folder, the vision runs).
"""

from typing import TYPE_CHECKING

from ..infra._lazy import lazy_exports

if TYPE_CHECKING:  # the exports, for type checkers; at run time .core (every solver) loads on first use
    from .core import (
        REGISTRY,
        Figure,
        available,
        claim_text,
        cost_text,
        inputs_text,
        make,
        mf,
        readme,
        record_existing,
        register,
    )

__all__ = [
    "REGISTRY",
    "Figure",
    "available",
    "claim_text",
    "cost_text",
    "inputs_text",
    "make",
    "mf",
    "readme",
    "record_existing",
    "register",
]
__getattr__, __dir__ = lazy_exports(__name__)
