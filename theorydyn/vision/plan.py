"""What one invocation of ``python -m theorydyn.vision`` trains (:class:`Plan`): its
:class:`~theorydyn.vision.config.VisionConfig` resolved against the dataset's preset
(:data:`~theorydyn.vision.presets.PRESETS`) and checked before any work, the memory of one training
step, the images, the earlier outputs that ``--fresh`` sets aside, and the training of the
experiment (:mod:`theorydyn.vision.experiments`), which returns the summary and prints nothing.

Every refusal is a ``ValueError`` whose message starts with the flag it is about, or a
:class:`~theorydyn.vision.data.DataError` for images that cannot be had (the command reports either,
exit 2).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from ..core.config import Seeds, as_seeds
from ..infra.memory import MemoryEstimate
from ..infra.paths import run_dir
from . import experiments as ex
from .config import SHAPE_FLAGS, VisionConfig
from .data import ImageData, default_device, load
from .memory import vit_train_memory
from .model import ViTConfig
from .presets import configs, preset_of
from .threads import describe
from .train import Status, TrainConfig

#: where each option acts (experiments); given elsewhere it would do nothing, so it is refused
ONLY_IN = {
    "model": ("single",),
    "shuffle_grid": ("single", "robustness"),
    "seeds": ("compare", "robustness"),
    "first_seed": ("compare", "robustness"),
    "seed": ("single", "permuted", "demo"),
    "patch": ("single", "compare", "robustness", "demo"),
}
#: the flags that size a training step's memory (:meth:`Plan.memory`'s terms), for the memory guard's message
MEMORY_FLAGS = {"batch": "--batch-size", "width": "--width", "depth": "--depth"}
#: image channels and classes per dataset (for the memory estimate, before any data is read)
SHAPES = {"digits": (1, 10), "cifar10": (3, 10), "cifar100": (3, 100), "svhn": (3, 10)}


@dataclasses.dataclass(frozen=True)
class Plan:
    """One invocation: ``cfg``, the ``experiment`` that runs, ``pick`` (the dataset's preset with each
    entry given on the command line replaced: the ViT's shape and the schedule), the tile side
    ``shuffle_grid`` of π_s (None: unpermuted images), the ``seed`` of the one-run experiments and the
    ``attention`` of the experiments that train one ViT."""

    cfg: VisionConfig
    experiment: str
    pick: dict
    shuffle_grid: int | None
    seed: int

    @classmethod
    def of(cls, cfg: VisionConfig, flags: Mapping[str, Any], given: set[str]) -> Plan:
        """The plan of ``cfg`` and the training flags ``flags`` (TrainConfig's, by their flags' names;
        None: the preset's), checked: the values first, then whether each option given (``given``: the
        names of the options given explicitly) acts in this experiment.

        Raises:
            ValueError: a value or an option this experiment cannot use, the message naming its flag.
        """
        # the ViT's shape is the config's, the schedule the training flags'
        values = {**flags, **{k: getattr(cfg, k) for k in SHAPE_FLAGS}}
        pick = {k: values[k] if values.get(k) is not None else v for k, v in preset_of(cfg.dataset).items()}
        plan = cls(cfg, cfg.chosen_experiment, pick, flags.get("shuffle_grid"), flags.get("seed", 0))
        plan._check(given)
        return plan

    @property
    def attention(self) -> str:
        return self.cfg.attention or "positional"

    @property
    def seeds(self) -> Seeds:
        """The seeds of compare and robustness: ``seeds`` seeds from ``first_seed``."""
        return as_seeds(self.cfg.seeds, first=self.cfg.first_seed)

    def _check(self, given: set[str]) -> None:
        cfg, pick, experiment, s = self.cfg, self.pick, self.experiment, self.shuffle_grid
        image_size = cfg.image_size
        if experiment == "compare" and cfg.attention is not None:
            raise ValueError("--attention: the compare experiment trains both attentions; drop --attention")
        if s is not None and image_size % s:
            raise ValueError(
                f"--shuffle-grid: the grid size must divide the image size {image_size} of {cfg.dataset}, got {s}"
            )
        if image_size % pick["patch"]:
            raise ValueError(f"--patch: the patch size must divide the image size {image_size}, got {pick['patch']}")
        if pick["width"] % pick["heads"]:
            raise ValueError(f"--heads: must divide --width {pick['width']}, got {pick['heads']}")
        for k, where in ONLY_IN.items():
            if k in given and experiment not in where:
                raise ValueError(
                    f"--{k.replace('_', '-')}: does nothing in --experiment {experiment} (used by {', '.join(where)})"
                )
        if "perm_seed" in given and not (experiment in ("permuted", "robustness") or (experiment == "single" and s)):
            raise ValueError(
                "--perm-seed: only used where images are permuted (--shuffle-grid with single; permuted; robustness)"
            )
        if experiment == "single" and cfg.model != "vit":
            for k in ("attention", "width", "depth", "heads", "mlp", "patch", "init", "pos_std"):
                if k in given:
                    raise ValueError(
                        f"--{k.replace('_', '-')}: shapes only the ViT; --model {cfg.model} has its own architecture"
                    )
        if "warmup" in given and pick["warmup"] > pick["epochs"]:
            raise ValueError(
                f"--warmup: {pick['warmup']:g} warmup epochs exceed the {pick['epochs']} epochs of training"
            )
        tiles = f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels"
        if s is not None and cfg.model == "vit" and experiment == "single" and s % pick["patch"]:
            raise ValueError(tiles)
        if experiment == "robustness" and (s or pick["patch"]) % pick["patch"]:
            raise ValueError(tiles)
        if cfg.data_dir is not None and not Path(cfg.data_dir).is_dir():
            raise ValueError(f"--data-dir: {cfg.data_dir} is not an existing directory")

    def device(self) -> str:
        """Where the runs train: ``device``, else CUDA where torch sees it, else the CPU.

        Raises:
            ValueError: CUDA asked for and not available (``--device``).
        """
        device = self.cfg.device or default_device()
        if device == "cuda" and not torch.cuda.is_available():
            raise ValueError("--device: cuda requested but no CUDA device is available")
        return device

    def out(self, given: Path | None) -> Path:
        """The output folder: ``given``, else ``<run dir>/vision/<dataset>-<experiment>``."""
        return Path(given) if given is not None else run_dir("vision", f"{self.cfg.dataset}-{self.experiment}")

    def outputs(self, out: Path) -> list[Path]:
        """The files the experiment writes in ``out`` besides its run folders
        (:data:`~theorydyn.vision.experiments.EXPERIMENT_FILES`), for the command to probe before any training."""
        return [out / name for name in ex.EXPERIMENT_FILES[self.experiment]]

    def prepare(self, device: str) -> None:
        """torch for the runs: ``threads`` CPU threads (None: torch's choice); on CUDA, TF32 matrix products."""
        if self.cfg.threads:
            torch.set_num_threads(self.cfg.threads)
        if device == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True

    def describe(self, data: ImageData, device: str, out: Path) -> str:
        """One line: the images, where they train (the CPU's threads), the experiment and ``out``."""
        size, threads = self.cfg.image_size, f" ({describe(torch.get_num_threads())})" if device == "cpu" else ""
        return (
            f"{self.cfg.dataset}: {len(data.x_train)} train / {len(data.x_test)} test images {data.channels}×"
            f"{size}×{size} on {device}{threads}; experiment {self.experiment}; out {out}"
        )

    def memory(self) -> MemoryEstimate | None:
        """The memory of one training step of the largest ViT the plan trains; None where it trains
        only one of the other networks (their sizes are fixed, and small)."""
        if self.cfg.model != "vit" and self.experiment == "single":
            return None
        pick = self.pick
        channels, classes = SHAPES[self.cfg.dataset]
        patch = 2 if self.experiment == "permuted" else pick["patch"]
        return vit_train_memory(
            pick["batch_size"],
            pick["width"],
            pick["depth"],
            pick["heads"],
            pick["mlp"],
            patch,
            self.cfg.image_size,
            channels,
            classes,
        )

    def load(self, device: str) -> ImageData:
        """The images on ``device``.

        Raises:
            DataError: the images could not be had.
            ValueError: the batch is larger than the training set (``--batch-size``).
        """
        data = load(self.cfg.dataset, self.cfg.data_dir, device=device, download=not self.cfg.no_download)
        if self.pick["batch_size"] > len(data.x_train):
            raise ValueError(
                f"--batch-size: must not exceed the {len(data.x_train)} training images, got {self.pick['batch_size']}"
            )
        return data

    def configs(self, data: ImageData, device: str, *, compile: bool) -> tuple[ViTConfig, TrainConfig]:
        """The ViT and the training configuration of the plan's runs on ``data``, torch made ready for them
        on ``device`` (:meth:`prepare`)."""
        self.prepare(device)
        return configs(
            self.pick,
            image_size=self.cfg.image_size,
            channels=data.channels,
            classes=data.classes,
            attention=self.attention,
            seed=self.seed,
            compile=compile,
        )

    def _permuted_models(self) -> tuple[str, ...]:
        return ("vit", "cnn") if self.cfg.dataset == "digits" else ("vit", "resnet18", "vgg19")

    def _robustness_sizes(self) -> tuple[int, int, str]:
        """(s, patch, CNN) of the robustness experiment: tiles of one ViT patch by default (checked above)."""
        p = self.pick["patch"]
        return self.shuffle_grid or p, p, "cnn" if self.cfg.dataset == "digits" else "resnet18"

    def _attentions(self) -> tuple[str, ...]:
        return (self.cfg.attention,) if self.cfg.attention else ("positional", "vanilla")

    def earlier_outputs(self, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, out: Path):
        """(paths, store keys) that ``--fresh`` sets aside: the experiment's run folders, its files
        (:data:`~theorydyn.vision.experiments.EXPERIMENT_FILES`) and, for robustness, the cached runs'
        folders and their rows in the store of ``out``."""
        perm_seed, experiment = self.cfg.perm_seed, self.experiment
        files = [out / name for name in ex.EXPERIMENT_FILES[experiment]]
        if experiment == "robustness":
            s_r, p_r, cnn = self._robustness_sizes()
            rvit = dataclasses.replace(vit, patch=p_r)
            specs = ex.robustness_specs(self.seeds, vit.attention, s_r, p_r, cnn)
            folders = [ex.cache_folder(sp, data, rvit, tcfg, out, perm_seed) for sp in specs]
            keys = [ex.run_key(sp, data, rvit, tcfg, perm_seed) for sp in specs]
            return [*folders, out / f"robustness-s{s_r}-p{p_r}.csv", *files], keys
        if experiment == "single":
            specs = [ex.RunSpec(self.cfg.model, self.attention, self.shuffle_grid, self.seed, vit.patch)]
        elif experiment == "compare":
            specs = [sp for group in ex.compare_specs(self.seeds, vit.patch).values() for sp in group]
        elif experiment == "permuted":
            specs = ex.permuted_specs(data.image_size, self._permuted_models(), vit.attention, self.seed, 2)
        else:
            specs = ex.demo_specs(self._attentions(), self.seed, vit.patch)
        return [*(out / sp.name for sp in specs), *files], []

    def start_over(self, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, out: Path) -> list[Path]:
        """``--fresh``: the earlier outputs (:meth:`earlier_outputs`) renamed to ``<name>.old-<UTC time>``,
        never overwritten; the cached runs' rows moved to the store's rejected table. Returns where the
        outputs went."""
        from ..infra.atomic import set_aside_all
        from ..infra.store import DB_NAME

        paths, keys = self.earlier_outputs(data, vit, tcfg, out)
        moved = set_aside_all(paths)
        if keys and (out / DB_NAME).is_file():
            runs = ex.open_runs(out)
            try:
                runs.remove(keys)
                runs.export()
            finally:
                runs.close()
        return moved

    def train(
        self,
        data: ImageData,
        vit: ViTConfig,
        tcfg: TrainConfig,
        out: Path,
        *,
        plot_format: str,
        quiet: bool,
        status: Status | None,
    ) -> tuple[pd.DataFrame, list[str]]:
        """Train the runs of the experiment: their summary (also written to ``out/summary.csv``) and the
        lines that say what they showed (robustness: the accuracy drops). The runs resume from their
        checkpoints in ``out`` (a finished run is read back, not trained again); ``status``: the single
        run's status line (None: silent)."""
        from ..core.plotting import save

        s, seeds, perm_seed, progress = self.shuffle_grid, self.seeds, self.cfg.perm_seed, not quiet
        common: dict[str, Any] = dict(resume=True, perm_seed=perm_seed, plot_format=plot_format)
        if self.experiment == "single":
            spec = ex.RunSpec(self.cfg.model, self.attention, s, self.seed, vit.patch)
            row = ex.run(spec, data, vit, tcfg, out, **common, progress=None if quiet else status)
            return ex.write_summary([row], out), []
        if self.experiment == "compare":
            return ex.compare(data, vit, tcfg, out, seeds=seeds, **common, progress=progress), []
        if self.experiment == "permuted":
            vit2 = dataclasses.replace(vit, patch=2)
            models = self._permuted_models()
            df = ex.permuted(data, vit2, tcfg, out, models=models, seed=self.seed, patch=2, **common, progress=progress)
            return df, []
        if self.experiment == "robustness":
            s_r, p_r, cnn = self._robustness_sizes()
            rows = ex.robustness(
                data, vit, tcfg, out, seeds=seeds, s=s_r, patch=p_r, cnn=cnn, perm_seed=perm_seed, progress=progress
            )
            rows["run"] = rows["run"] + rows["permuted"].map({True: f" (π_{s_r})", False: ""})
            fig = ex.robustness_figure(rows, f"{self.cfg.dataset}: original vs permuted (s = {s_r})")
            save(fig, out / "robustness", plot_format)  # atomic, never through a link
            lines = [
                f"{m}: accuracy drop under π_{s_r} = {dr.mean():.4f} (per seed {', '.join(f'{v:.4f}' for v in dr)})"
                for m, dr in ex.robustness_drops(rows).items()
            ]
            return ex.write_summary(rows.to_dict("records"), out), lines
        df = ex.demo(data, vit, tcfg, out, seed=self.seed, attentions=self._attentions(), **common, progress=progress)
        return df, []


def summary_text(df: pd.DataFrame, experiment: str) -> str:
    """The summary of the runs as a table (and, for compare, the mean final test accuracy of each attention)."""
    cols = ["run", "grid", "epochs", "final_test_acc", "best_test_acc", "final_train_loss", "images_per_s", "seconds"]
    lines = [df[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}" if v < 10 else f"{v:,.0f}")]
    if experiment == "compare":
        for att, g in df.groupby("attention", sort=False):
            acc = g.final_test_acc
            lines.append(
                f"{att}: mean final test accuracy {acc.mean():.4f} over {len(acc)} seeds "
                f"({', '.join(f'{v:.4f}' for v in acc)})"
            )
    return "\n".join(lines)
