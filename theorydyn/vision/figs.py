"""The three Section 6 figures on the bundled digits (registered in :mod:`theorydyn.figures` as
``vision_pos_similarity``, ``vision_compare``, ``vision_permuted``), from the same cached runs as the ledger rows of
``theorydyn/claims/vision.py`` (folders keyed by configuration under ``runs/vision/ledger``; a
missing run is trained, a finished one read back).

* ``similarity`` → ``vision_pos_similarity.png`` (Figure 1a with its quantitative companion):
  cosine-similarity mosaics of the learned positional encodings, positional and vanilla attention
  (seed 0), one colour scale with a labelled colorbar, query patches outlined; and the distance
  profile ρ(k) (mean ± std over seeds) of positional, vanilla and the untrained initialisation.
* ``compare`` → ``vision_compare.png`` (Figures 6/7): test accuracy and training loss per epoch.
* ``permuted`` → ``vision_permuted.png`` (Figure 5a, digits form): ViT and small CNN on original and
  π_s-permuted digits, s = 1 (ViT patch 1) and s = 2 (ViT patch 2): tiles of one patch, over seeds.

The ``*_figure`` functions return a :class:`matplotlib.figure.Figure` and pick no backend.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from matplotlib.figure import Figure

from ..core.plotting import figure
from ..infra.paths import vision_ledger_dir
from .checkpoint import read_history
from .experiments import (
    MAPS_OVERRIDES,
    ROBUSTNESS_DIGITS,
    ROBUSTNESS_SEEDS,
    RunSpec,
    cached_runs,
    compare_figure,
    initial_pos,
    load_pos,
    preset_configs,
    robustness,
    robustness_figure,
)
from .maps import cosine_similarity, distance_profile, similarity_figure

ROOT = vision_ledger_dir()
SEEDS = (0, 1, 2)


def _preset_runs(data, seeds, root, progress=False, **overrides) -> dict[str, list[dict]]:
    vit, tcfg = preset_configs(data, **overrides)
    # the seeds of each attention train together (one ensemble); cached runs are read back
    return {
        att: cached_runs(
            [RunSpec("vit", att, None, seed, vit.patch) for seed in seeds],
            data,
            dataclasses.replace(vit, attention=att),
            tcfg,
            root,
            progress=progress,
        )
        for att in ("positional", "vanilla")
    }


def similarity_figure_digits(data, seeds=SEEDS, root=ROOT) -> Figure:
    """Figure 1a and the distance profiles from the runs of ``seeds`` with P initialised as in the
    paper's ViT (:data:`~theorydyn.vision.experiments.MAPS_OVERRIDES`)."""
    overrides: dict = dict(MAPS_OVERRIDES)
    runs = _preset_runs(data, seeds, root, **overrides)
    vit, tcfg = preset_configs(data, **overrides)
    C = {att: [cosine_similarity(load_pos(r["folder"])) for r in rs] for att, rs in runs.items()}
    profiles = {
        "positional attention": np.array([distance_profile(c) for c in C["positional"]]),
        "vanilla attention": np.array([distance_profile(c) for c in C["vanilla"]]),
        "untrained initialisation": np.array([distance_profile(cosine_similarity(initial_pos(vit, s))) for s in seeds]),
    }
    acc = {att: np.mean([r["final_test_acc"] for r in rs]) for att, rs in runs.items()}
    title = (
        f"Positional-encoding similarity, ViT on 8×8 digits ({vit.tokens} patches of {vit.patch}×{vit.patch}, "
        f"width {vit.width}, depth {vit.depth}, P initialised at {vit.pos_std:g}, {tcfg.epochs} epochs; "
        f"test accuracy positional {acc['positional']:.3f}, vanilla {acc['vanilla']:.3f}, "
        f"mean of {len(seeds)} seeds); maps: seed {seeds[0]}"
    )
    return similarity_figure(C["positional"][0], C["vanilla"][0], profiles, title)


def compare_figure_digits(data, seeds=SEEDS, root=ROOT) -> Figure:
    """Figures 6/7 from the preset runs of ``seeds``."""
    runs = _preset_runs(data, seeds, root)
    hists = {att: [read_history(r["folder"]) for r in rs] for att, rs in runs.items()}
    return compare_figure(hists, "digits")


def permuted_figure_digits(data, seeds=None, root=ROOT) -> Figure:
    """Figure 5a (digits form) from the ledger's robustness runs: one panel per setting of
    :data:`~theorydyn.vision.experiments.ROBUSTNESS_DIGITS`, over ``seeds`` (default
    :data:`~theorydyn.vision.experiments.ROBUSTNESS_SEEDS`), each drawn by
    :func:`~theorydyn.vision.experiments.robustness_figure`."""
    seeds = ROBUSTNESS_SEEDS if seeds is None else seeds

    fig, axes = figure(1, len(ROBUSTNESS_DIGITS), figsize=(5.2 * len(ROBUSTNESS_DIGITS), 4.8), pyplot=False)
    for ax, setting in zip(np.atleast_1d(axes), ROBUSTNESS_DIGITS, strict=True):
        vit, tcfg = preset_configs(data, patch=setting["patch"])
        df = robustness(data, vit, tcfg, root, seeds=seeds, **setting)
        robustness_figure(
            df,
            f"Digits, π_{setting['s']} (Figure 5a form): ViT patch {vit.patch} "
            f"({vit.tokens} tokens, width {vit.width}, depth {vit.depth}), {tcfg.epochs} epochs, "
            f"{len(seeds)} seeds",
            ax=ax,
        )
    return fig
