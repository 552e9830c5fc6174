"""One run of the Section 6 experiments (:class:`RunSpec`), the torch threads of the cached ledger runs
(:func:`ledger_threads`) and the keys of a cached run: the hash of its folder (:func:`config_key`) and
its store key (:func:`run_key`, of :func:`run_params`: the full configuration and the numerics version)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json

import torch

from ..infra.paths import run_name
from ..infra.provenance import NUMERICS_VERSION
from ..infra.store import content_key
from .data import ImageData
from .model import ViTConfig
from .train import TrainConfig


@dataclasses.dataclass(frozen=True)
class RunSpec:
    model: str
    attention: str
    s: int | None  # tile side of π_s, None for unpermuted images
    seed: int
    patch: int

    @property
    def name(self) -> str:
        att = self.attention if self.model == "vit" else "na"
        return run_name("vision", f"{self.model}-{att}", {"s": self.s or 0, "seed": self.seed})


#: torch threads of every cached ledger run (the ledger rows and the vision figures, which share
#: ``runs/vision/ledger``): at most this many. The cache key leaves threads aside, and a run trained
#: at another thread count rounds differently: measured on the digits preset after 3 epochs, 1 against
#: 2 threads, the weights differ by ≤ 1.2e-7, and the key biases (whose gradient is zero up to
#: rounding, which AdamW scales to steps of the learning rate) by up to 1.5e-3. One policy for both
#: readers keeps the cache's numbers independent of which of them trained a run first.
LEDGER_THREADS = 2


@contextlib.contextmanager
def ledger_threads():
    """torch at min(its threads, :data:`LEDGER_THREADS`) inside, restored on exit."""
    threads = torch.get_num_threads()
    torch.set_num_threads(min(threads, LEDGER_THREADS))
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _config(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, perm_seed: int) -> dict:
    cfg = dict(
        spec=dataclasses.asdict(spec),
        data=[data.name, len(data.x_train), len(data.x_test)],
        vit=vit.to_dict() if spec.model == "vit" else None,
        train=dataclasses.asdict(tcfg),
        perm_seed=perm_seed,
        torch=torch.__version__.split("+")[0],
    )
    device = data.x_train.device.type
    if device != "cpu":  # a GPU run is another run (other kernels, bf16); CPU keys predate this field
        cfg["device"] = device
    return cfg


def config_key(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, perm_seed: int) -> str:
    """A 10-hex-digit hash of everything that determines a run's numbers (threads aside)."""
    blob = json.dumps(_config(spec, data, vit, tcfg, perm_seed), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def run_params(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, perm_seed: int) -> dict:
    """Everything a cached run's row depends on (:func:`config_key`'s configuration and the numerics version)."""
    cfg = json.loads(json.dumps(_config(spec, data, vit, tcfg, perm_seed), default=str))
    return dict(cfg, numerics=NUMERICS_VERSION)


def run_key(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, perm_seed: int) -> str:
    """The store key of a cached run's row: :func:`theorydyn.infra.store.content_key` of :func:`run_params`."""
    return content_key(run_params(spec, data, vit, tcfg, perm_seed))
