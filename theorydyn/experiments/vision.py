"""The runs of Section 6 the ledger reads (docs/theory.md §9): the ViTs of :mod:`theorydyn.vision` on digits and,
when their files are there, on the paper's datasets, with the measurements the rows judge.

The models, data and training are :mod:`theorydyn.vision` (it keeps its package); this module runs them at the
sizes a claim declares and returns plain numbers:

* :func:`run` — the four Section 6 experiments on 8×8 digits (:class:`DigitsResults`): final test
  accuracies of the positional and vanilla ViT (Figures 6/7), the contrasts ρ(1) − ρ(g−1) of the learned
  positional encodings (Figure 1a, :func:`contrast`) with the untrained ones and the images' border ink
  (:func:`ring_ink`), those learned on π_s-permuted images before and after π_s⁻¹ (Figure 5c), and the
  accuracy drops under π_s of a ViT and a CNN (Figure 5a, :class:`RobustnessResult`);
* :func:`real_accuracies` — Figures 6/7 on one of the paper's datasets (:func:`expected_files`: the official
  files it reads);
* :func:`memory` — one ViT training step at the digits preset.

Every run is cached under ``root`` (default :func:`theorydyn.infra.paths.vision_ledger_dir`) in folders keyed by
a hash of its whole configuration (:func:`theorydyn.vision.experiments.cached_runs`): a second call with the
same configuration trains nothing. torch (the vision extra) is imported on first use only, so that the ledger
imports without it. :mod:`theorydyn.claims.vision` turns the results into rows and runs nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..core.config import Seeds, as_seeds
from ..infra.memory import MemoryEstimate
from ..infra.paths import vision_ledger_dir
from ..vision.memory import vit_train_memory

__all__ = [
    "DigitsResults",
    "RobustnessResult",
    "contrast",
    "expected_files",
    "memory",
    "real_accuracies",
    "ring_ink",
    "run",
]


def _vision() -> SimpleNamespace:
    """torch and the modules of :mod:`theorydyn.vision` used here (``data``, ``experiments``, ``grid``, ``maps``)."""
    # the vision extra (torch): imported on first use only, so that the ledger imports and runs without it
    import torch

    from ..vision import data, experiments, grid, maps

    return SimpleNamespace(torch=torch, data=data, experiments=experiments, grid=grid, maps=maps)


def expected_files(name: str) -> list[str]:
    """The official files of a dataset that :func:`theorydyn.vision.data.load` reads."""
    d = _vision().data
    return [str(d.CIFAR[name]["archive"])] if name in d.CIFAR else [str(v[0]) for v in d.SVHN.values()]


def ring_ink(x, patch: int) -> tuple[float, float]:
    """Mean pixel (0…1) of the patches on the border ring of the ``g×g`` patch grid and of the others,
    over images ``x: (N, c, n, n)`` uint8 (``g = n/patch ≥ 3``)."""
    torch = _vision().torch
    n = x.shape[-1]
    g = n // patch
    per_patch = x.double().mean(dim=(0, 1)).reshape(g, patch, g, patch).mean(dim=(1, 3)) / 255  # (g, g)
    ring = torch.ones(g, g, dtype=torch.bool)
    ring[1:-1, 1:-1] = False
    return float(per_patch[ring].mean()), float(per_patch[~ring].mean())


def contrast(C: np.ndarray) -> float:
    """``ρ(1) − ρ(g−1)`` of a similarity matrix ``C: (g², g²)`` (:func:`theorydyn.vision.maps.distance_profile`)."""
    rho = _vision().maps.distance_profile(C)
    return float(rho[0] - rho[-1])


def memory(overrides: Mapping[str, Any]) -> MemoryEstimate:
    """Peak of :func:`run`: one ViT training step of the digits preset with ``overrides``
    (:func:`theorydyn.vision.memory.vit_train_memory`, 8 × 8 grey images, 10 classes); nothing when the
    vision extra is absent (then the ledger gives a SKIP row)."""
    try:
        ex = _vision().experiments
    except ImportError:
        return MemoryEstimate("Section 6 rows (vision extra absent)", ())
    p = {**ex.preset_of("digits"), **overrides}
    return vit_train_memory(p["batch_size"], p["width"], p["depth"], p["heads"], p["mlp"], p["patch"], 8, 1, 10)


def real_accuracies(name: str, data_dir: Path, *, quick: bool, seeds, root, progress=None):
    """Final test accuracies of the positional and the vanilla ViT at the preset of ``name`` (the
    CIFAR preset: 300 epochs), one cached run per seed (:func:`theorydyn.vision.experiments.cached_run`),
    the path of the digits rows; returns (acc_pos, acc_van, params)."""
    v = _vision()
    ex = v.experiments
    say = progress or (lambda msg: None)
    data = v.data.load(name, data_dir, device=v.data.default_device(), download=False)
    vit, tcfg = ex.preset_configs(data)
    acc: dict[str, list[float]] = {}
    for att in ("positional", "vanilla"):
        for seed in seeds:
            say(f"vision: {name} ViT {att} seed {seed} ({tcfg.epochs} epochs)")
            r = ex.cached_run(
                ex.RunSpec("vit", att, None, seed, vit.patch),
                data,
                dataclasses.replace(vit, attention=att),
                tcfg,
                Path(root) if root is not None else vision_ledger_dir(),
            )
            acc.setdefault(att, []).append(r["final_test_acc"])
    return (
        acc["positional"],
        acc["vanilla"],
        dict(patch=vit.patch, width=vit.width, depth=vit.depth, epochs=tcfg.epochs, seeds=len(seeds), quick=quick),
    )


def _params(vit, tcfg, n_seeds: int, quick: bool, on: dict, **first) -> dict:
    """The params of a digits row: the dataset, ``first``, the ViT's patch, width and depth, the
    epochs, the number of seeds, the mode and the device (``on``: empty on the CPU)."""
    shape = {k: getattr(vit, k) for k in ("patch", "width", "depth")}
    return dict(dataset="digits", **first, **shape, epochs=tcfg.epochs, seeds=n_seeds, quick=quick, **on)


@dataclass(frozen=True)
class RobustnessResult:
    """Figure 5a at one setting of :data:`theorydyn.vision.experiments.ROBUSTNESS_DIGITS` (π_s, the ViT's patch).

    Attributes:
        vit_drop, cnn_drop: (n_seeds,) per seed δ_m = acc_m(original) − acc_m(π_s-permuted) of the ViT and
            the CNN (:func:`theorydyn.vision.experiments.robustness_drops`).
        baseline: "<model> original|permuted" → the mean final test accuracy over seeds.
        params: the params of its row (``s``, the ViT's shape, epochs, seeds, mode, device).
    """

    vit_drop: np.ndarray
    cnn_drop: np.ndarray
    baseline: dict[str, float]
    params: dict


@dataclass(frozen=True)
class DigitsResults:
    """The Section 6 experiments on digits (:func:`run`), each list per seed in seed order.

    Attributes:
        acc: "positional" / "vanilla" → final test accuracies of the ViT at the digits preset (Figures 6/7).
        contrasts: "positional" / "vanilla" → ρ(1) − ρ(g−1) of the learned encodings' cosine similarity, on
            runs whose P starts as in the paper's ViT (``MAPS_OVERRIDES``; Figure 1a).
        init: the same contrast of the untrained encodings of those runs.
        ink: mean pixel of the border-ring patches and of the inner ones (:func:`ring_ink`).
        before, after: the contrast of encodings learned on π_s-permuted images (tiles of one patch), on the
            network's positions and once π_s⁻¹ is applied (Figure 5c).
        robustness: one :class:`RobustnessResult` per setting of ``ROBUSTNESS_DIGITS`` (Figure 5a).
        params: the params of the rows (:func:`_params` at the preset); ``pos_std``: P's initial scale of the
            Figure 1a/5c runs; ``s5c``: the s of Figure 5c (one patch).
    """

    acc: dict[str, list[float]]
    contrasts: dict[str, list[float]]
    init: list[float]
    ink: tuple[float, float]
    before: list[float]
    after: list[float]
    robustness: list[RobustnessResult]
    params: dict
    pos_std: float
    s5c: int


def run(
    *,
    quick: bool,
    seeds: Seeds,
    overrides: Mapping[str, Any],
    progress: Callable[[str], None] | None = None,
    root: str | Path | None = None,
    data=None,
    robustness_seeds=None,
) -> DigitsResults:
    """The four Section 6 experiments on digits at the CLI's digits preset with ``overrides``
    (:class:`DigitsResults`). ``data`` defaults to the bundled digits (on a GPU where there is one, as the
    vision CLI does); the Figure 5a runs are over ``robustness_seeds`` (default
    :data:`~theorydyn.vision.experiments.ROBUSTNESS_SEEDS`), the others over ``seeds``; every run is cached
    under ``root`` (default :func:`~theorydyn.infra.paths.vision_ledger_dir`), the seeds of one configuration
    still to train trained together (one ensemble), all at the ledger's torch threads."""
    v = _vision()
    ex = v.experiments
    say = progress or (lambda msg: None)
    seeds = as_seeds(seeds)
    with ex.ledger_threads():
        # a GPU where there is one, as the vision CLI does (its runs are cached apart from the CPU's)
        data = data if data is not None else v.data.load("digits", device=v.data.default_device(), download=False)
        on = {} if data.x_train.device.type == "cpu" else dict(device=data.x_train.device.type)
        over = dict(overrides)
        vit, tcfg = ex.preset_configs(data, **over)
        # folders are keyed by the configuration: quick and full share what they can
        root = Path(root) if root is not None else vision_ledger_dir()
        mvit, mcfg = ex.preset_configs(data, **{**over, **ex.MAPS_OVERRIDES})

        def runs(att, perm_s, cfg, train):  # the seeds of one configuration, cached (trained together)
            specs = [ex.RunSpec("vit", att, perm_s, seed, cfg.patch) for seed in seeds]
            return ex.cached_runs(specs, data, dataclasses.replace(cfg, attention=att), train, root)

        acc, contrasts = {}, {}
        for att in ("positional", "vanilla"):  # the seeds of one configuration train together (an ensemble)
            say(f"vision: ViT {att}, seeds {', '.join(map(str, seeds))} ({tcfg.epochs} epochs)")
            rs = runs(att, None, vit, tcfg)
            acc[att] = [r["final_test_acc"] for r in rs]
            say(f"vision: ViT {att}, seeds {', '.join(map(str, seeds))}, P initialised at {mvit.pos_std:g} (Figure 1a)")
            rs = runs(att, None, mvit, mcfg)
            contrasts[att] = [contrast(v.maps.cosine_similarity(ex.load_pos(r["folder"]))) for r in rs]
        init = [contrast(v.maps.cosine_similarity(ex.initial_pos(mvit, seed))) for seed in seeds]
        # Figure 5c: the Figure 1a runs' configuration on π_s-permuted images, tiles of one patch
        s5c = mvit.patch
        say(f"vision: ViT positional on π_{s5c}-permuted images, seeds {', '.join(map(str, seeds))} (Figure 5c)")
        rs = runs("positional", s5c, mvit, mcfg)
        perm5c = v.grid.grid_permutation(data.image_size, s5c, 0)
        as_learned = [v.maps.cosine_similarity(ex.load_pos(r["folder"])) for r in rs]
        before = [contrast(C) for C in as_learned]
        after = [contrast(v.maps.unpermuted(C, perm5c, s5c, mvit.patch)) for C in as_learned]
        ink = ring_ink(data.x_train.cpu(), vit.patch)

        robustness = []
        for setting in ex.ROBUSTNESS_DIGITS:
            rvit, rcfg = ex.preset_configs(data, **{**over, "patch": setting["patch"]})  # the CNN trains on rcfg too
            say(f"vision: permutation robustness, π_{setting['s']}, ViT patch {rvit.patch} and small CNN")
            rseeds = tuple(ex.ROBUSTNESS_SEEDS if robustness_seeds is None else robustness_seeds)
            df = ex.robustness(data, rvit, rcfg, root, seeds=rseeds, **setting)
            drops = ex.robustness_drops(df)
            base = {
                f"{m} {'permuted' if p else 'original'}": float(g.final_test_acc.mean())
                for (m, p), g in df.groupby(["model", "permuted"])
            }
            robustness.append(
                RobustnessResult(
                    drops["vit"],
                    drops[str(setting["cnn"])],
                    base,
                    _params(rvit, rcfg, len(rseeds), quick, on, s=setting["s"]),
                )
            )
        return DigitsResults(
            acc=acc,
            contrasts=contrasts,
            init=init,
            ink=ink,
            before=before,
            after=after,
            robustness=robustness,
            params=_params(vit, tcfg, len(seeds), quick, on),
            pos_std=mvit.pos_std,
            s5c=s5c,
        )
