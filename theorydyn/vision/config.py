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

from ..cli.tools import EPOCHS_MAX
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
