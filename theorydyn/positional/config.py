"""The configuration of Figure 2's training (:class:`PositionalConfig`), in a module that imports neither
torch nor the models: :func:`theorydyn.positional.train` and :func:`~theorydyn.positional.run` take their
defaults and rules from here.

Two named instances: :data:`QUICK_RUN` (the ledger default and ``figures/figure2.svg``: N = 4096, 1000
Adam steps, the horizon of the paper's Figure 2; the library's defaults) and :data:`FULL_RUN` (N = 8192,
4000 steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import Config, option

#: the storage of the training and test data (the data are drawn in float64 either way)
DTYPES = ("float32", "float64")


@dataclass(frozen=True)
class PositionalConfig(Config):
    """One training run of Figure 2 (docs/theory.md §7): full-batch Adam of learning rate ``lr`` for
    ``steps`` steps on N samples, the curves recorded every ``record_every`` steps on ``N_test`` fresh
    samples; the initialisation scales ``omega`` (v, and Â's off-diagonal for model (T)) and ``p_std``
    (the entries of P), the width ``d_p`` of the positional encodings (None: d), the storage ``dtype``."""

    N: int = option(4096, "training samples", positive=True)
    N_test: int = option(8192, "test samples", positive=True)
    steps: int = option(1000, "Adam steps (full batch)", low=0)
    lr: float = option(0.01, "Adam's learning rate", low=0.0, low_open=True)
    record_every: int = option(10, "record the curves every k steps", positive=True)
    omega: float = option(
        0.1, "initialisation scale ω of v (and of Â's off-diagonal for model (T))", low=0.0, low_open=True
    )
    p_std: float = option(1.0, "standard deviation of the entries of P at initialisation", low=0.0, low_open=True)
    d_p: int | None = option(
        None, "width of the positional encodings and of W_Q, W_K (None: d)", kind=int, low=1, optional=True
    )
    dtype: str = option(
        "float32", "storage of the data and parameters (float32: half the time of float64 on CPU)", choices=DTYPES
    )


#: The library's defaults (:func:`~theorydyn.positional.train`'s, the initialisation's): one object.
POSITIONAL_DEFAULTS = PositionalConfig()
#: The quick sizes (the ledger default and the committed figure): the library's defaults.
QUICK_RUN = POSITIONAL_DEFAULTS
#: The full sizes.
FULL_RUN = PositionalConfig(N=8192, N_test=16384, steps=4000, record_every=40)

#: The sizes the named runs set (the keys of the former QUICK/FULL dictionaries).
SIZE_FIELDS = ("N", "N_test", "steps", "lr", "record_every")
#: Compatibility aliases: the named sizes as the dictionaries they were (claims.figure2 and the figures
#: read them); new code uses :data:`QUICK_RUN` / :data:`FULL_RUN`.
QUICK: dict[str, Any] = {k: getattr(QUICK_RUN, k) for k in SIZE_FIELDS}
FULL: dict[str, Any] = {k: getattr(FULL_RUN, k) for k in SIZE_FIELDS}
