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

Checked checkpoints and histories: :mod:`theorydyn.vision.checkpoint`.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from ..infra.atomic import set_aside, write_text
from .augment import random_affine, random_crop_flip
from .checkpoint import (
    CHECKPOINT,
    HISTORY,
    checked_state,
    history_problem,
    save_checkpoint,
    write_history,
)
from .config import TrainConfig
from .data import ImageData
from .grid import permute_tiles
from .model import member_state, members, stack_states


class Diverged(RuntimeError):
    """The training loss became NaN/inf; the history up to that epoch was kept."""


def lr_at(step: int, total: int, warmup: int, lr: float) -> float:
    """Linear warmup over ``warmup`` steps, then cosine decay to 0 at ``total``."""
    if step < warmup:
        return lr * (step + 1) / warmup
    return 0.5 * lr * (1.0 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices only (of each member: an ensemble's tensors carry one
    more axis); the fused kernel, one call per step (element by element the same update, and per
    member of an ensemble exactly the single network's)."""
    lead = 1 if members(model) > 1 else 0
    decay = [p for p in model.parameters() if p.ndim - lead >= 2]
    no_decay = [p for p in model.parameters() if p.ndim - lead < 2]
    groups = [dict(params=decay, weight_decay=cfg.weight_decay), dict(params=no_decay, weight_decay=0.0)]
    return torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.999), fused=True)


def member_opt_state(state: dict, k: int, K: int) -> dict:
    """Member ``k``'s part of an ensemble optimiser's ``state_dict()`` (the single network's form)."""
    if K == 1:
        return state
    return dict(
        param_groups=state["param_groups"],
        state={i: {n: v if n == "step" else v[k].clone() for n, v in st.items()} for i, st in state["state"].items()},
    )


def stack_opt_states(states: list[dict]) -> dict:
    """An ensemble optimiser's ``state_dict()`` from its members' (inverse of :func:`member_opt_state`)."""
    if len(states) == 1:
        return states[0]
    return dict(
        param_groups=states[0]["param_groups"],
        state={
            i: {n: v if n == "step" else torch.stack([s["state"][i][n] for s in states]) for n, v in st.items()}
            for i, st in states[0]["state"].items()
        },
    )


def epoch_generator(seed: int, epoch: int, device: torch.device) -> torch.Generator:
    return torch.Generator(device=device).manual_seed(1_000_003 * seed + epoch)


def prepare(data: ImageData, x: torch.Tensor, perm, s: int | None) -> torch.Tensor:
    """uint8 images (already augmented) → π_s applied → normalised float."""
    if perm is not None:
        if s is None:
            raise ValueError("prepare: a permutation needs its tile side s")
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
def accuracies(
    model: nn.Module, data: ImageData, perm=None, s: int | None = None, batch: int = 1000, amp: bool | None = None
) -> list[float]:
    """Test accuracy of each member (one for a single network), with π_s applied to the test images
    exactly as to the training images; every member sees the same test images."""
    was = model.training
    model.eval()
    K = members(model)
    dev = data.x_test.device
    correct = torch.zeros(K, dtype=torch.long, device=dev)
    amp = dev.type == "cuda" if amp is None else amp
    for i in range(0, len(data.x_test), batch):
        x = prepare(data, data.x_test[i : i + batch], perm, s)
        if K > 1:
            x = x.expand(K, *x.shape)
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=amp):
            correct += (model(x).argmax(-1) == data.y_test[i : i + batch]).sum(-1)
    model.train(was)
    return (correct.double() / len(data.x_test)).tolist()  # one host sync per evaluation


def evaluate(
    model: nn.Module, data: ImageData, perm=None, s: int | None = None, batch: int = 1000, amp: bool | None = None
) -> float:
    """Test accuracy of a single network (:func:`accuracies` of its one member)."""
    if members(model) != 1:
        raise ValueError("evaluate: an ensemble has one accuracy per member; use accuracies()")
    return accuracies(model, data, perm, s, batch, amp)[0]


#: a status callback: ``status(text, final)`` gets one status line; ``final`` is True for a line that is
#: complete (an epoch's end, with its test accuracies), False for an update that the next one replaces.
#: The command decides how to show it (:mod:`theorydyn.vision.__main__` redraws one line on stderr).
Status = Callable[[str, bool], None]


def _progress(
    bar, status, tag: str, epoch: int, epochs: int, step: int, steps: int, loss: float, ips: float, accs=None
) -> None:
    text = f"{tag} epoch {epoch + 1}/{epochs} step {step}/{steps} loss {loss:.4f} {ips:,.0f} img/s"
    if accs is not None:
        text += " test acc " + " ".join(f"{a:.4f}" for a in accs)
    if bar is not None:
        bar.set_postfix_str(text, refresh=False)
    elif status is not None:
        status(text, accs is not None)


def _outputs(out, seeds: Sequence[int] | None, cfg: TrainConfig, K: int) -> tuple[list[Path], list[int]]:
    """The members' output folders (created; a symbolic link among their files refused) and seeds."""
    outs = [Path(out)] if isinstance(out, (str, Path)) else [Path(o) for o in out]
    seeds = [cfg.seed] if seeds is None else [int(v) for v in seeds]
    if not (len(outs) == len(seeds) == K):
        raise ValueError(
            f"train: a model of {K} member(s) needs {K} seed(s) and output folder(s), got {len(seeds)} and {len(outs)}"
        )
    for o in outs:
        o.mkdir(parents=True, exist_ok=True)
        for name in (HISTORY, CHECKPOINT, CHECKPOINT + ".sha256", "run.json"):
            if (o / name).is_symlink():  # refused before any work: theorydyn never writes through a link
                raise ValueError(f"{o / name}: is a symbolic link; theorydyn does not write through links")
    return outs, seeds


def _resume(model, opt, ckpts: list[Path], records: list[dict], outs: list[Path], device) -> tuple[list, int]:
    """(histories, first epoch) from the members' verified checkpoints, the model and the optimiser loaded
    from them; ``([[]…], 0)`` when there is none (or one was damaged: all start again, the same numbers)."""
    K = len(ckpts)
    checked = [checked_state(c, device) for c in ckpts]
    if any(st is not None for st, _ in checked) and any(st is None for st, _ in checked):
        if not any(damaged for _, damaged in checked):
            raise ValueError("resume: some members have a checkpoint and others not; resume them apart")
        checked = []  # a member's checkpoint was damaged: all start again (exact resume: the same numbers)
    if not (checked and all(st is not None for st, _ in checked)):
        return [[] for _ in range(K)], 0
    states = [st for st, _ in checked if st is not None]
    for c, st, rec in zip(ckpts, states, records, strict=True):
        if st["record"] != rec:
            raise ValueError(
                f"--out: {c} was written by a different configuration: rerun with --fresh to start over (the "
                "earlier run is moved aside, not overwritten), or use another --out"
            )
    if len({st["epoch"] for st in states}) > 1:
        raise ValueError("resume: the members' checkpoints are at different epochs; resume them apart")
    model.load_state_dict(states[0]["model"] if K == 1 else stack_states([st["model"] for st in states]))
    opt.load_state_dict(stack_opt_states([st["opt"] for st in states]))
    histories, start = [st["history"] for st in states], states[0]["epoch"]
    for h, o in zip(histories, outs, strict=True):  # a torn history.csv is replaced by the checkpoint's
        if history_problem(o / HISTORY, h) is not None:
            write_history(h, o)
    return histories, start


class _Epochs:
    """The epochs of :func:`train` for K members: the steps of one epoch (:meth:`steps`), then its
    records, checkpoints and test accuracies (:meth:`finish`)."""

    def __init__(self, model, opt, data: ImageData, cfg: TrainConfig, perm, seeds, outs, ckpts, records, histories):
        self.model, self.opt, self.data, self.cfg, self.perm = model, opt, data, cfg, perm
        self.seeds, self.outs, self.ckpts, self.records, self.histories = seeds, outs, ckpts, records, histories
        self.K = len(seeds)
        self.device = data.x_train.device
        self.step_fn = torch.compile(model) if cfg.compile else model
        self.n = len(data.x_train)
        self.steps = self.n // cfg.batch_size
        if self.steps == 0:
            raise ValueError(f"batch size {cfg.batch_size} exceeds the {self.n} training images")
        self.total, self.warm = cfg.epochs * self.steps, max(1, round(cfg.warmup_epochs * self.steps))
        self.amp = use_amp(cfg, self.device)
        self.pad = data.pad if cfg.pad is None else cfg.pad
        self.flip = data.flip if cfg.flip is None else cfg.flip
        self.alive = [True] * self.K
        self.diverged: list[str] = []
        self.bar: tqdm | None = None
        self.status: Status | None = None
        self.show = False
        self.tag = ""

    def die(self, k: int, row: dict, where: str) -> None:
        """Member ``k``'s loss is not finite: write its history so far, stop it; raise once none is left."""
        self.alive[k] = False
        self.histories[k].append(row)
        write_history(self.histories[k], self.outs[k])
        self.diverged.append(
            f"training loss is not finite {where}; stopped there, history so far in {self.outs[k] / 'history.csv'}"
        )
        if not any(self.alive):
            raise Diverged("; ".join(self.diverged))

    def _losses(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """(K,) the members' mean cross-entropies of one batch."""
        cfg, K = self.cfg, self.K
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.amp):
            logits = self.step_fn(x)
            if K == 1:
                return F.cross_entropy(logits, y, label_smoothing=cfg.label_smoothing).unsqueeze(0)
            return (
                F.cross_entropy(
                    logits.flatten(0, 1), y.flatten(), reduction="none", label_smoothing=cfg.label_smoothing
                )
                .view(K, -1)
                .mean(1)
            )

    def steps_of(self, epoch: int) -> tuple[torch.Tensor, float, float]:
        """One epoch's steps: (the members' summed losses (K,), the last learning rate, the start time)."""
        cfg, K, data, device, steps = self.cfg, self.K, self.data, self.device, self.steps
        gens = [epoch_generator(seed, epoch, device) for seed in self.seeds]
        orders = [torch.randperm(self.n, generator=g, device=device) for g in gens]
        loss_sum = torch.zeros(K, device=device)
        sync(device)
        t0 = time.perf_counter()
        lr = cfg.lr
        for i in range(steps):
            t = epoch * steps + i
            lr = lr_at(t, self.total, self.warm, cfg.lr)
            for g in self.opt.param_groups:
                g["lr"] = lr
            idx = [order[i * cfg.batch_size : (i + 1) * cfg.batch_size] for order in orders]
            xs = []
            for ik, gen in zip(idx, gens, strict=True):  # each member draws its augmentation from its own generator
                x = random_crop_flip(data.x_train[ik], self.pad, self.flip, gen)
                xs.append(random_affine(x, *cfg.affine, gen) if cfg.affine is not None else x)
            x = prepare(data, xs[0] if K == 1 else torch.stack(xs), self.perm, cfg.shuffle_grid)
            y = data.y_train[idx[0]] if K == 1 else data.y_train[torch.stack(idx)]
            losses = self._losses(x, y)
            self.opt.zero_grad(set_to_none=True)
            losses.sum().backward()
            self.opt.step()
            loss_sum += losses.detach()
            # a host sync per step is free on a CPU; on a GPU check every 20 steps
            if device.type != "cuda" or i % 20 == 19:
                bad = [k for k, ok in enumerate(torch.isfinite(loss_sum).tolist()) if self.alive[k] and not ok]
                for k in bad:
                    row = dict(
                        epoch=epoch + 1,
                        train_loss=float("nan"),
                        test_acc=float("nan"),
                        lr=lr,
                        images_per_s=float("nan"),
                        seconds=(time.perf_counter() - t0) / K,
                    )
                    self.die(k, row, f"at step {t + 1} (epoch {epoch + 1})")
            if self.show and (i % 20 == 0 or i == steps - 1):
                ips = K * (i + 1) * cfg.batch_size / (time.perf_counter() - t0)
                _progress(self.bar, self.status, self.tag, epoch, cfg.epochs, i + 1, steps, losses.mean().item(), ips)
        return loss_sum, lr, t0

    def finish(self, epoch: int, loss_sum: torch.Tensor, lr: float, t0: float) -> None:
        """The epoch's rows, test accuracies and checkpoints, member by member."""
        K, steps, cfg = self.K, self.steps, self.cfg
        sync(self.device)
        secs = (time.perf_counter() - t0) / K  # each member's share
        train_loss = [v / steps for v in loss_sum.tolist()]
        rows = [
            dict(
                epoch=epoch + 1,
                train_loss=train_loss[k],
                test_acc=float("nan"),
                lr=lr,
                images_per_s=steps * cfg.batch_size / secs,
                seconds=secs,
            )
            for k in range(K)
        ]
        for k in range(K):
            if self.alive[k] and not np.isfinite(train_loss[k]):
                self.die(k, rows[k], f"in epoch {epoch + 1}")
        accs = accuracies(self.model, self.data, self.perm, cfg.shuffle_grid, amp=self.amp)
        state = self.model.state_dict() if K == 1 else None
        opt_state = self.opt.state_dict()
        for k in range(K):
            if not self.alive[k]:
                continue
            rows[k]["test_acc"] = accs[k]
            self.histories[k].append(rows[k])
            write_history(self.histories[k], self.outs[k])
            save_checkpoint(
                self.ckpts[k],
                dict(
                    model=state if K == 1 else member_state(self.model, k),
                    opt=member_opt_state(opt_state, k, K),
                    history=self.histories[k],
                    epoch=epoch + 1,
                    record=self.records[k],
                ),
            )
        if self.show:
            ips, loss = K * rows[0]["images_per_s"], float(np.nanmean(train_loss))
            _progress(self.bar, self.status, self.tag, epoch, cfg.epochs, steps, steps, loss, ips, accs)
        if self.bar is not None:
            self.bar.update(sum(self.alive))


def train(
    model: nn.Module,
    data: ImageData,
    cfg: TrainConfig,
    out: str | Path | Sequence[str | Path],
    *,
    perm=None,
    resume: bool = False,
    meta: dict | None = None,
    tag: str = "",
    progress: bool | tqdm | Status | None = None,
    stop_after: int | None = None,
    seeds: Sequence[int] | None = None,
):
    """Train ``model`` on ``data`` for ``cfg.epochs`` epochs; return the per-epoch history.

    Writes ``out/history.csv``, ``out/checkpoint.pt`` (each epoch) and ``out/run.json``
    (configuration, π_s). ``resume`` continues from the checkpoint if there is one (its
    configuration must match). A run trained from epoch 1 over an earlier ``history.csv`` (no
    ``resume``, or a damaged checkpoint moved aside) sets that history aside first
    (``history.csv.old-<UTC time>``): a history is never cut short by a rerun. ``stop_after`` ends
    after that many epochs as if interrupted (for the resume test). Raises :class:`Diverged` when the
    loss stops being finite.

    An ensemble of ``K`` members (:func:`theorydyn.vision.model.ensemble`) trains here too: ``seeds``
    names the seed of each member and ``out`` is a list of ``K`` folders. Member ``k`` is the single
    run of ``cfg`` with ``seed=seeds[k]``: its own shuffling generator (the same order and
    augmentation as that run), its own loss (the members' mean losses are summed, so no gradient
    crosses members), and its own folder, written exactly as the single run writes it (a single run
    can resume from it and the other way round). Returns one history per member. ``seconds`` of a
    member is its share of the wall time (the epoch's time / K) and ``images_per_s`` its images over
    that share. A member whose loss stops being finite stops there (history written); the others
    finish, then :class:`Diverged` is raised.

    ``progress``: a :data:`Status` function gets the run's status line (``status(text, final)``, every
    20 steps and at each epoch's end); an overall bar (a tqdm counting member-epochs,
    :func:`theorydyn.vision.experiments.overall_bar`) is advanced by the members alive after each epoch
    and shows the status in its postfix; None, False or True: silent (the library prints nothing).
    """
    status = progress if callable(progress) else None
    bar = None if status is not None or progress is None or isinstance(progress, bool) else progress
    K = members(model)
    single = isinstance(out, (str, Path))
    outs, seeds = _outputs(out, seeds, cfg, K)
    device = data.x_train.device
    cfgs = [replace(cfg, seed=seed) for seed in seeds]
    records = [
        dict(train=asdict(c), meta=meta or {}, perm=None if perm is None else [int(v) for v in perm]) for c in cfgs
    ]
    model.to(device)
    opt = make_optimizer(model, cfg)
    ckpts = [o / CHECKPOINT for o in outs]
    histories, start = _resume(model, opt, ckpts, records, outs, device) if resume else ([[] for _ in range(K)], 0)
    if start == 0:  # trained from epoch 1: an earlier history is set aside, never cut short by the new one
        for o in outs:
            if (o / HISTORY).is_file() and (o / HISTORY).stat().st_size:
                set_aside(o / HISTORY)
    for o, rec in zip(outs, records, strict=True):
        write_text(o / "run.json", json.dumps(rec, indent=1))
    loop = _Epochs(model, opt, data, cfg, perm, seeds, outs, ckpts, records, histories)
    loop.bar, loop.status, loop.show, loop.tag = bar, status, bar is not None or status is not None, tag
    model.train()
    for epoch in range(start, cfg.epochs if stop_after is None else min(cfg.epochs, stop_after)):
        loss_sum, lr, t0 = loop.steps_of(epoch)
        loop.finish(epoch, loss_sum, lr, t0)
    if loop.diverged:
        raise Diverged("; ".join(loop.diverged))
    frames = [pd.DataFrame(h) for h in histories]
    return frames[0] if single else frames
