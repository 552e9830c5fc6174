"""One training loop for every network of Section 6.

AdamW (weight decay on matrices only), learning rate ``lr·t/T_w`` for the first ``T_w`` steps and
``lr·½(1 + cos(π (t−T_w)/(T−T_w)))`` after, cross-entropy with label smoothing, bf16 autocast on
CUDA, optional ``torch.compile``. Every epoch: augment on the device (crop + flip, each optional:
a 1-pixel shift of an 8×8 digit moves an eighth of the image and costs accuracy), apply the
grid permutation π_s *after* augmentation (and identically to the test images), write a
checkpoint and one CSV row (train loss, test accuracy, learning rate, images/s).

Exact resume: the shuffling and augmentation of epoch ``e`` come from a generator seeded by
``(seed, e)`` alone, the learning rate is a function of the step alone, and the checkpoint holds
the model, the optimiser and the history; so a run stopped after any epoch and resumed with
``resume=True`` gives the same numbers as an uninterrupted run (bit-for-bit on a CPU).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from .augment import random_affine, random_crop_flip
from .data import ImageData
from .grid import permute_tiles


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 10
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.05
    warmup_epochs: float = 1.0
    label_smoothing: float = 0.1
    seed: int = 0
    shuffle_grid: int | None = None  # tile side s of π_s; None: no permutation
    compile: bool = False
    pad: int | None = None  # random-crop padding in pixels; None: the dataset's (0: no crop)
    flip: bool | None = None  # horizontal flips; None: the dataset's
    affine: tuple[float, float, float] | None = None  # (shift px, rotation deg, scale) of random_affine
    amp: bool | None = None  # bf16 autocast; None: on for CUDA only (True on a CPU runs the same code path)


class Diverged(RuntimeError):
    """The training loss became NaN/inf; the history up to that epoch was kept."""


def lr_at(step: int, total: int, warmup: int, lr: float) -> float:
    """Linear warmup over ``warmup`` steps, then cosine decay to 0 at ``total``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    return 0.5 * lr * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [dict(params=decay, weight_decay=cfg.weight_decay), dict(params=no_decay, weight_decay=0.0)]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.999))


def epoch_generator(seed: int, epoch: int, device: torch.device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(1_000_003 * seed + epoch)


def prepare(data: ImageData, x: torch.Tensor, perm, s: int | None) -> torch.Tensor:
    """uint8 images (already augmented) → π_s applied → normalised float."""
    if perm is not None:
        x = permute_tiles(x, perm, s)
    return data.normalize(x)


def use_amp(cfg: TrainConfig, device: torch.device) -> bool:
    """The one switch of the accelerated path: bf16 autocast (default: on CUDA only)."""
    return device.type == "cuda" if cfg.amp is None else bool(cfg.amp)


def sync(device: torch.device) -> None:
    """Wait for queued device work (timings); a no-op on a CPU."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def evaluate(model: nn.Module, data: ImageData, perm=None, s: int | None = None, batch: int = 1000,
             amp: bool | None = None) -> float:
    """Test accuracy with π_s applied to the test images exactly as to the training images."""
    was = model.training
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=data.x_test.device)
    dev = data.x_test.device
    amp = dev.type == "cuda" if amp is None else amp
    for i in range(0, len(data.x_test), batch):
        x = prepare(data, data.x_test[i : i + batch], perm, s)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
            correct += (model(x).argmax(1) == data.y_test[i : i + batch]).sum()
    model.train(was)
    return correct.item() / len(data.x_test)  # one host sync per evaluation


def _progress(tag: str, epoch: int, epochs: int, step: int, steps: int, loss: float, ips: float) -> None:
    print(f"\r{tag} epoch {epoch + 1}/{epochs} step {step}/{steps} loss {loss:.4f} {ips:,.0f} img/s   ",
          end="", file=sys.stderr, flush=True)


def train(
    model: nn.Module,
    data: ImageData,
    cfg: TrainConfig,
    out: str | Path,
    *,
    perm=None,
    resume: bool = False,
    meta: dict | None = None,
    tag: str = "",
    progress: bool = True,
    stop_after: int | None = None,
) -> pd.DataFrame:
    """Train ``model`` on ``data`` for ``cfg.epochs`` epochs; return the per-epoch history.

    Writes ``out/history.csv``, ``out/checkpoint.pt`` (each epoch) and ``out/run.json``
    (configuration, π_s). ``resume`` continues from the checkpoint if there is one (its
    configuration must match). ``stop_after`` ends after that many epochs as if interrupted
    (for the resume test). Raises :class:`Diverged` when the loss stops being finite.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    device = data.x_train.device
    s = cfg.shuffle_grid
    record = dict(train=asdict(cfg), meta=meta or {}, perm=None if perm is None else [int(v) for v in perm])
    model.to(device)
    opt = make_optimizer(model, cfg)
    history: list[dict] = []
    start = 0
    ckpt = out / "checkpoint.pt"
    if resume and ckpt.exists():
        state = torch.load(ckpt, map_location=device, weights_only=True)
        if state["record"] != record:
            raise ValueError(f"--resume: {ckpt} was written by a different configuration; use another --out")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        history, start = state["history"], state["epoch"]
    (out / "run.json").write_text(json.dumps(record, indent=1))
    step_fn = torch.compile(model) if cfg.compile else model
    n = len(data.x_train)
    steps = n // cfg.batch_size
    if steps == 0:
        raise ValueError(f"batch size {cfg.batch_size} exceeds the {n} training images")
    total, warm = cfg.epochs * steps, max(1, round(cfg.warmup_epochs * steps))
    amp = use_amp(cfg, device)
    pad = data.pad if cfg.pad is None else cfg.pad
    flip = data.flip if cfg.flip is None else cfg.flip
    model.train()
    for epoch in range(start, cfg.epochs if stop_after is None else min(cfg.epochs, stop_after)):
        gen = epoch_generator(cfg.seed, epoch, device)
        order = torch.randperm(n, generator=gen, device=device)
        loss_sum = torch.zeros((), device=device)
        sync(device)
        t0 = time.perf_counter()
        for i in range(steps):
            t = epoch * steps + i
            lr = lr_at(t, total, warm, cfg.lr)
            for g in opt.param_groups:
                g["lr"] = lr
            idx = order[i * cfg.batch_size : (i + 1) * cfg.batch_size]
            x = random_crop_flip(data.x_train[idx], pad, flip, gen)
            if cfg.affine is not None:
                x = random_affine(x, *cfg.affine, gen)
            x = prepare(data, x, perm, s)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                loss = F.cross_entropy(step_fn(x), data.y_train[idx], label_smoothing=cfg.label_smoothing)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum += loss.detach()
            # a host sync per step is free on a CPU; on a GPU check every 20 steps
            if (device.type != "cuda" or i % 20 == 19) and not torch.isfinite(loss_sum):
                history.append(dict(epoch=epoch + 1, train_loss=float("nan"), test_acc=float("nan"), lr=lr,
                                    images_per_s=float("nan"), seconds=time.perf_counter() - t0))
                pd.DataFrame(history).to_csv(out / "history.csv", index=False)
                raise Diverged(f"training loss is not finite at step {t + 1} (epoch {epoch + 1}); "
                               f"stopped there, history so far in {out / 'history.csv'}")
            if progress and (i % 20 == 0 or i == steps - 1):
                _progress(tag, epoch, cfg.epochs, i + 1, steps, loss.item(), (i + 1) * cfg.batch_size / (time.perf_counter() - t0))
        sync(device)
        secs = time.perf_counter() - t0
        train_loss = loss_sum.item() / steps
        row = dict(epoch=epoch + 1, train_loss=train_loss, test_acc=float("nan"), lr=lr,
                   images_per_s=steps * cfg.batch_size / secs, seconds=secs)
        if not np.isfinite(train_loss):
            history.append(row)
            pd.DataFrame(history).to_csv(out / "history.csv", index=False)
            raise Diverged(f"training loss is not finite in epoch {epoch + 1}; stopped there, history so far in {out / 'history.csv'}")
        row["test_acc"] = evaluate(model, data, perm, s, amp=amp)
        history.append(row)
        pd.DataFrame(history).to_csv(out / "history.csv", index=False)
        tmp = ckpt.with_name("checkpoint.pt.tmp")
        torch.save(dict(model=model.state_dict(), opt=opt.state_dict(), history=history, epoch=epoch + 1, record=record), tmp)
        os.replace(tmp, ckpt)
        if progress:
            _progress(tag, epoch, cfg.epochs, steps, steps, train_loss, row["images_per_s"])
            print(f"test acc {row['test_acc']:.4f}", file=sys.stderr, flush=True)
    return pd.DataFrame(history)
