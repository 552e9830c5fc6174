"""The configuration of one training run of Section 6 (:class:`TrainConfig`), in a module that imports
neither torch nor the training loop: :func:`theorydyn.vision.train.train` reads it, and
``python -m theorydyn.vision`` makes its training flags from its fields
(:func:`theorydyn.cli.configs.add_config_flags`), so ``--help`` stays light.

The fields, their names and their order are those of the cache keys of the trained runs
(:func:`theorydyn.vision.runspec.config_key` hashes ``dataclasses.asdict`` of it): a field added or
renamed here is a new key for every cached run. Help texts and rules live in the fields' metadata,
which the keys do not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli.tools import EPOCHS_MAX, SEEDS_MAX
from ..core.config import Config, option

#: the largest seed (numpy's and torch's seeds both accept 0 … 2³² − 1)
SEED_MAX = 2**32 - 1


@dataclass(frozen=True)
class TrainConfig(Config):
    """AdamW for ``epochs`` epochs of batches of ``batch_size``: learning rate ``lr`` after a linear warmup
    of ``warmup_epochs`` epochs, then a cosine; weight decay on the matrices; cross-entropy with label
    smoothing; the data order and augmentation of epoch e from ``(seed, e)`` alone
    (:mod:`theorydyn.vision.train`)."""

    epochs: int = option(10, f"passes over the training images, 1..{EPOCHS_MAX}", low=1, high=EPOCHS_MAX)
    batch_size: int = option(128, "images per step", positive=True)
    lr: float = option(1e-3, "AdamW learning rate", low=0.0, low_open=True)
    weight_decay: float = option(0.05, "AdamW weight decay of the matrices", low=0.0)
    warmup_epochs: float = option(1.0, "warmup epochs, at most --epochs", low=0.0, flag="--warmup", dest="warmup")
    label_smoothing: float = option(0.1, "label smoothing, in [0, 1)", low=0.0, high=1.0, high_open=True)
    seed: int = option(
        0,
        f"seed of the initialisation and the data order of the one run per configuration, 0..{SEED_MAX} "
        "(single, permuted, demo)",
        low=0,
        high=SEED_MAX,
    )
    shuffle_grid: int | None = option(
        None,
        "permute the S×S tiles with π_S (S must divide the image size; single and robustness)",
        kind=int,
        positive=True,
        optional=True,
        metavar="S",
    )  # tile side s of π_s; None: no permutation
    compile: bool = option(False, "torch.compile the network")
    pad: int | None = option(
        None, "random-crop padding in pixels (0: no crop)", kind=int, low=0, optional=True
    )  # None: the dataset's
    flip: bool | None = option(None, "horizontal flips (None: the dataset's)", kind=bool, optional=True, cli=False)
    affine: tuple[float, float, float] | None = option(
        None, "(shift px, rotation deg, scale) of random_affine", kind=object, optional=True, cli=False
    )
    amp: bool | None = option(
        None,
        "bf16 autocast (None: on for CUDA only; True on a CPU runs the same code path)",
        kind=bool,
        optional=True,
        cli=False,
    )


#: the datasets of ``python -m theorydyn.vision`` (digits: 8×8 grey; the others 32×32 colour)
DATASETS = ("digits", "cifar10", "cifar100", "svhn")
#: what ``python -m theorydyn.vision`` trains (:mod:`theorydyn.vision.experiments`)
EXPERIMENTS = ("single", "compare", "permuted", "robustness", "demo")
#: the networks of ``--experiment single``
MODELS = ("vit", "resnet18", "vgg19", "cnn")
#: the training flags of ``python -m theorydyn.vision``: TrainConfig's fields whose default on the command
#: line is the dataset's preset (None: not given)
TRAIN_FLAGS = ("shuffle_grid", "epochs", "batch_size", "lr", "weight_decay", "warmup_epochs", "label_smoothing", "pad")
#: what the help of those flags says of their default (the dataset's preset: :data:`~theorydyn.vision.presets.PRESETS`)
TRAIN_NOTES = {
    **dict.fromkeys(("epochs", "batch_size", "lr", "warmup_epochs"), "default: the dataset's preset"),
    "label_smoothing": "default: 0 on digits, 0.1 on 32×32 images",
    "pad": "default: 0 on digits, 4 on 32×32 images",
}
#: the ViT's shape flags of ``python -m theorydyn.vision`` (VisionConfig's fields; None: the dataset's preset)
SHAPE_FLAGS = ("width", "depth", "heads", "mlp", "patch", "init", "pos_std")
_PRESET = "default: the dataset's preset"
#: ``--out`` of ``python -m theorydyn.vision`` (:meth:`theorydyn.vision.plan.Plan.out`)
OUT_HELP = "output folder (default <run dir>/vision/<dataset>-<experiment>; the run dir is $THEORYDYN_HOME or runs/)"
#: what a Ctrl-C of ``python -m theorydyn.vision`` leaves (:attr:`theorydyn.cli.runner.Command.on_interrupt`)
ON_INTERRUPT = (
    "the epochs finished so far are saved in each run's checkpoint.pt: the same command, rerun, resumes from them "
    "(--fresh starts over, moving them aside)"
)
#: what ``--fresh`` sets aside (:meth:`theorydyn.vision.plan.Plan.earlier_outputs`)
FRESH_WHAT = (
    "the experiment's run folders in --out (history.csv, checkpoint.pt, run.json, maps), its summary.csv and "
    "figure (robustness: its cached runs and their stored rows)"
)


@dataclass(frozen=True)
class VisionConfig(Config):
    """One invocation of ``python -m theorydyn.vision``: the images (``dataset``), the ``experiment`` and
    its network (``model``, ``attention``), the ViT's shape where it is not the dataset's preset (None:
    the preset's, :data:`theorydyn.vision.presets.PRESETS`), the seeds of the experiments that train
    several runs (``seeds`` seeds from ``first_seed``) and of π_s (``perm_seed``), where the data come
    from and where the training runs. The training itself is a :class:`TrainConfig`; the store key of a
    run is made of that, the ViT's configuration and the run's spec (:mod:`theorydyn.vision.runspec`),
    never of these fields."""

    dataset: str = option("digits", "the images", choices=DATASETS, flag="dataset", nargs="?", flag_help=True)
    experiment: str | None = option(
        None, "what to train (default: demo for digits, single otherwise)", choices=EXPERIMENTS, optional=True
    )
    model: str = option(
        "vit",
        "the network of --experiment single (the other experiments fix theirs)",
        choices=MODELS,
        flag_help=True,
    )
    attention: str | None = option(
        None,
        "default positional (the demo: both); refused by --experiment compare",
        choices=("positional", "vanilla"),
        optional=True,
    )
    width: int | None = option(
        None, "the ViT's width (token size)", kind=int, positive=True, optional=True, flag_help=_PRESET
    )
    depth: int | None = option(None, "the ViT's layers", kind=int, positive=True, optional=True, flag_help=_PRESET)
    heads: int | None = option(
        None, "the ViT's attention heads", kind=int, positive=True, optional=True, flag_help=_PRESET
    )
    mlp: int | None = option(None, "the ViT's MLP width", kind=int, positive=True, optional=True, flag_help=_PRESET)
    patch: int | None = option(
        None, "the ViT's patch side in pixels", kind=int, positive=True, optional=True, flag_help=_PRESET
    )
    init: str | None = option(
        None,
        "linear layers: vit = N(0, 0.02²) weights, zero biases; torch = PyTorch's U(±1/√fan_in) "
        "(default: torch on digits, vit on 32×32 images)",
        choices=("vit", "torch"),
        optional=True,
    )
    pos_std: float | None = option(
        None,
        "std σ of P's initialisation N(0, σ²), truncated at ±2σ (default: 1 on digits, 0.02 on 32×32)",
        kind=float,
        low=0.0,
        low_open=True,
        optional=True,
    )
    seeds: int = option(
        3,
        "number of seeds of compare and robustness, an integer >= 1: seeds --first-seed F … F+K-1",
        low=1,
        high=SEEDS_MAX,
        metavar="K",
        flag_help=True,
    )
    first_seed: int = option(
        0,
        "the first of the --seeds seeds (compare, robustness)",
        low=0,
        high=SEED_MAX,
        metavar="F",
        flag_help=True,
    )
    perm_seed: int = option(
        0,
        "seed of the grid permutation π_s (where images are permuted)",
        low=0,
        high=SEED_MAX,
        flag_help=True,
    )
    data_dir: Path | None = option(
        None,
        "folder of the official archives (default <run dir>/data: $THEORYDYN_HOME/data, or runs/data)",
        kind=object,
        parse="path",
        optional=True,
    )
    no_download: bool = option(False, "never try the network")
    device: str | None = option(None, "default: cuda if present, else cpu", choices=("cuda", "cpu"), optional=True)
    threads: int | None = option(
        None,
        "CPU threads of torch (CPU results are bit-identical for the same seed *and* the same thread "
        "count: reductions are split by thread; default torch's choice)",
        kind=int,
        positive=True,
        optional=True,
    )
    # resuming is what the same command, rerun, does: the old flag is accepted and changes nothing
    resume: bool = option(False, "accepted, changes nothing (a rerun resumes)", hidden=True)

    @property
    def chosen_experiment(self) -> str:
        """The experiment that runs: ``experiment``, else the demo on digits and a single run elsewhere."""
        return self.experiment or ("demo" if self.dataset == "digits" else "single")

    @property
    def image_size(self) -> int:
        """The side of the images in pixels: 8 (digits) or 32."""
        return 8 if self.dataset == "digits" else 32


#: what :class:`BenchConfig`'s fields left None are on each device: the paper's ViT (width 384, 7 layers, 12 heads)
#: and enough steps on a GPU, a narrower ViT and few steps on a CPU
BENCH_DEVICE_DEFAULTS = {
    "cuda": dict(width=384, depth=7, heads=12, steps=30, warmup=10, repeats=3, smoke_images=50_000),
    "cpu": dict(width=96, depth=2, heads=4, steps=2, warmup=1, repeats=2, smoke_images=512),
}
#: the batch sizes of the main table (``--smoke``: the first alone)
BENCH_BATCHES = (128, 1024)
_GPU, _CPU = BENCH_DEVICE_DEFAULTS["cuda"], BENCH_DEVICE_DEFAULTS["cpu"]


def _on(k: str, sep: str = " on ") -> str:
    return f"{_GPU[k]}{sep}cuda, {_CPU[k]}{sep}cpu"


@dataclass(frozen=True)
class BenchConfig(Config):
    """One invocation of ``python -m theorydyn.vision.bench`` (its module docstring: the main table,
    ``--smoke`` and ``--ensemble``). None: the device's or the mode's default, resolved by the command."""

    device: str | None = option(None, "default: cuda if present, else cpu", choices=("cuda", "cpu"), optional=True)
    batches: tuple[int, ...] | None = option(
        None,
        f"batch sizes (default {BENCH_BATCHES[0]} {BENCH_BATCHES[1]}; --smoke: one, default {BENCH_BATCHES[0]})",
        kind=int,
        many=True,
        low=1,
        optional=True,
    )
    width: int | None = option(None, f"default {_on('width')}", kind=int, positive=True, optional=True)
    depth: int | None = option(None, f"default {_on('depth')}", kind=int, positive=True, optional=True)
    heads: int | None = option(None, f"default {_on('heads')}", kind=int, positive=True, optional=True)
    patch: int = option(4, "divides 32", low=1, high=32)
    steps: int | None = option(
        None, f"timed steps (default {_on('steps', ' ')}; not with --smoke)", kind=int, positive=True, optional=True
    )
    warmup: int | None = option(
        None, f"untimed steps first (default {_on('warmup', ' ')}; not with --smoke)", kind=int, low=0, optional=True
    )
    repeats: int | None = option(
        None,
        "alternate the two models this many times, keep each one's best "
        f"(default {_on('repeats', ' ')}; not with --smoke)",
        kind=int,
        positive=True,
        optional=True,
    )
    compile: bool = option(False, "torch.compile both models")
    smoke: bool = option(
        False, "one epoch per attention through the training loop on synthetic data (module docstring)"
    )
    smoke_images: int | None = option(
        None, f"training images of --smoke (default {_on('smoke_images')})", kind=int, positive=True, optional=True
    )
    ensemble: bool = option(
        False,
        "the digits networks alone against ensembles of --members seeds, through the training loop (module docstring)",
    )
    members: tuple[int, ...] = option(
        (3, 10),
        "ensemble sizes of --ensemble",
        kind=int,
        many=True,
        low=1,
        flag_help="ensemble sizes of --ensemble (default 3 10; 1, the single network, always)",
    )
    epochs: int = option(1, "epochs per --ensemble measurement", positive=True, flag_help=True)
    threads: int | None = option(
        None, "CPU threads of torch (default torch's choice)", kind=int, positive=True, optional=True
    )

    def on(self, device_type: str) -> dict[str, Any]:
        """The run's values on ``device_type`` (``"cuda"`` or ``"cpu"``): every field, those left None at the
        device's default (:data:`BENCH_DEVICE_DEFAULTS`), ``batches`` at :data:`BENCH_BATCHES` (``smoke``:
        the first alone)."""
        values = self.to_dict()
        for k, v in BENCH_DEVICE_DEFAULTS[device_type].items():
            if values[k] is None:
                values[k] = v
        if values["batches"] is None:
            values["batches"] = BENCH_BATCHES[:1] if self.smoke else BENCH_BATCHES
        return values
