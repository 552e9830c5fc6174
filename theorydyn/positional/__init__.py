"""Figure 2's experiment (docs/theory.md §7): a one-layer ViT with learned positional encodings and
model (T), trained in torch on Gaussian data labelled by a convolution.

* :mod:`.config` — :class:`~.config.PositionalConfig`, the sizes and hyper-parameters of one training run,
  and its named runs ``QUICK_RUN`` and ``FULL_RUN``;
* :mod:`.model` — the two models, their initialisation, and the structure measures of a Gram matrix;
* :mod:`.train` — the data, full-batch Adam, :class:`~.train.TrainRun` (one run's curves and matrices);
* :mod:`.plot` — the figure (curves over seeds, Gram matrices).

The ledger rows (verdicts) are :mod:`theorydyn.claims.figure2`; ``python -m theorydyn.verify --only figure2``
prints them and ``python -m theorydyn.figures figure2`` draws the figure. torch is imported on use.
"""

from .config import FULL_RUN, QUICK_RUN, PositionalConfig
from .model import (
    FIGURE2_SETTING,
    KINDS,
    TorchParams,
    block_contrast,
    chance_association,
    figure2_setting,
    init_torch_params,
    positional_logits,
    readout,
    set_rows,
    t_logits,
)
from .train import FULL, QUICK, TrainRun, run, sample, train

__all__ = [
    "FIGURE2_SETTING",
    "FULL",
    "FULL_RUN",
    "KINDS",
    "PositionalConfig",
    "QUICK",
    "QUICK_RUN",
    "TorchParams",
    "TrainRun",
    "block_contrast",
    "chance_association",
    "figure2_setting",
    "init_torch_params",
    "positional_logits",
    "readout",
    "run",
    "sample",
    "set_rows",
    "t_logits",
    "train",
]
