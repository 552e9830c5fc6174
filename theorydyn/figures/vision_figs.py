"""Figures of the real images (Section 6, the vision extra): ``vision_pos_similarity``,
``vision_compare`` and ``vision_permuted``, drawn from the ledger's cached runs. Registered in
:data:`theorydyn.figures.REGISTRY` on import by :mod:`theorydyn.figures.core`."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace

from ..claims import expected_seconds
from ..infra.paths import vision_ledger_dir
from .record import register

# ---- real images (Section 6), the vision extra ----------------------------------------------------------
_VISION_ROOT = vision_ledger_dir()


def digits(quick: bool, recompute: bool = False):
    """The bundled 8×8 digits (scikit-learn; no download); the figures train or read the cached runs
    under ``<run dir>/vision/ledger`` that the ledger's Section 6 rows use, at the ledger's torch threads
    (:func:`theorydyn.vision.experiments.ledger_threads`)."""
    v = _vision()
    return SimpleNamespace(data=v.data.load("digits", download=False), recompute=recompute)


def _vision() -> SimpleNamespace:
    """The modules of :mod:`theorydyn.vision` used here (``data``, ``experiments``, ``figs``)."""
    # the vision extra (torch): imported only when these figures are made, so the other figures run without it
    from ..vision import data, experiments, figs

    return SimpleNamespace(data=data, figs=figs, experiments=experiments)


def _vision_drawer(name: str):
    def draw(d, axes=None):
        v = _vision()
        with v.experiments.ledger_threads():  # the runs are the ledger's: trained as the ledger trains them
            if d.recompute:
                with tempfile.TemporaryDirectory() as tmp:
                    return getattr(v.figs, name)(d.data, root=Path(tmp))
            return getattr(v.figs, name)(d.data, root=_VISION_ROOT)

    return draw


_VISION_NOTE = (
    "Not regenerated in CI: it trains a ViT (or reads the cached runs under <run dir>/vision/ledger); the numbers "
    "are in the figure, not recomputed here."
)
#: the cold cost of the runs the three vision figures share: the quick ledger's vision source
_VISION_COST = (
    f"the ledger's vision runs, shared by the three vision figures: {expected_seconds('vision', quick=True):.0f} s "
    "cold on the 2-core CI-class machine"
)

for _name, _fn, _title, _claim, _seeds in (
    (
        "vision_pos_similarity",
        "similarity_figure_digits",
        "Section 6 / Figure 1a: cosine similarity of the learned positional encodings (P initialised at 0.02 as "
        "in the paper's ViT), and its profile against grid distance (positional, vanilla, untrained; bands over "
        "3 seeds)",
        "Section 6: positional encodings learn spatial structure. On the 8×8 digits the similarity *rises* with "
        "grid distance: the patches of the border ring, nearly blank in every digit, learn alike encodings (the "
        "ledger's DEVIATES row).",
        3,
    ),
    (
        "vision_compare",
        "compare_figure_digits",
        "Section 6 / Figures 6–7: positional against vanilla attention, test accuracy and loss per epoch (3 seeds)",
        "Section 6: positional attention performs about as well as vanilla attention (the ledger's row).",
        3,
    ),
    (
        "vision_permuted",
        "permuted_figure_digits",
        "Section 6 / Figure 5a (digits form): ViT and a small CNN on original and π_s-permuted digits, s = 1 "
        "(ViT patch 1) and s = 2 (ViT patch 2), 10 seeds",
        "Figure 5a: a ViT is insensitive to a fixed permutation of patches while a CNN degrades. On the digits "
        "the ViT does not drop measurably and the CNN loses 0.9 (π_2) and 1.5 points (π_1): the contrast shows, "
        "small (the ledger's two rows).",
        10,
    ),
):
    register(
        _name,
        _title,
        _claim,
        ("torch", "sklearn"),
        _vision_drawer(_fn),
        (lambda n: lambda quick: dict(data="sklearn digits 8×8", seeds=n, runs=str(_VISION_ROOT)))(_seeds),
        lambda d: {},
        inputs=lambda quick: _VISION_ROOT,
        note=_VISION_NOTE,
        inputs_cost=_VISION_COST,
    )(digits)
