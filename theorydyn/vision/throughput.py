"""Training throughput of the vision networks: the measurements of ``python -m theorydyn.vision.bench``.

Images per second of one full training step (forward, backward, AdamW update; bf16 autocast on
CUDA) of two ViTs of equal size that differ only in the attention (:func:`attention_rates`): positional
attention computes its ``H`` score matrices ``(D, D)`` once per batch from ``P`` and skips, per image,
the ``Q``/``K`` projections (``2E²`` of the ``6E²`` multiply-adds per token with MLP width ``E``) and
the ``QKᵀ`` product; vanilla attention uses PyTorch's fused ``scaled_dot_product_attention``, the
strongest plain reference. :func:`smoke`: one epoch per attention through the project's training loop
(:func:`theorydyn.vision.train.train`) on synthetic 32×32×3 images. :func:`ensemble_rates`: the
ledger's digits networks alone against ensembles of seeds, with the floor of the matrix products.

Each function returns its table (a DataFrame) and prints nothing: its progress goes to ``report``, a
:data:`theorydyn.vision.train.Status` function (``report(text, final)``; default None: silent). The
command, its flags, their checks and the printing are :mod:`theorydyn.vision.bench`.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import torch
import torch.nn.functional as F

from .data import load, synthetic
from .experiments import preset_configs
from .model import ViT, ViTConfig, ensemble
from .train import Status, TrainConfig, prepare, train


def device_label(device) -> str:
    """The device as the tables name it: the CUDA device's name, or ``CPU, <n> threads`` (torch's count now)."""
    return torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"


def step_rate(model, batch: int, steps: int, warmup: int, device) -> float:
    """Images per second of ``steps`` timed training steps after ``warmup`` untimed ones."""
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(batch, 3, 32, 32, device=device, generator=g)
    y = torch.randint(0, 10, (batch,), device=device, generator=g)
    amp = device.type == "cuda"

    def one():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        one()
    if amp:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        one()
    if amp:
        torch.cuda.synchronize()
    return steps * batch / (time.perf_counter() - t0)


def matmul_flops_per_image(model, x: torch.Tensor, y: torch.Tensor) -> float:
    """Floating-point operations of the matrix products (mm, bmm, addmm, convolutions, attention) in one
    training step's forward and backward pass of ``model`` on the batch ``x`` with labels ``y``
    (``x: (B, …)``, ``y: (B,)``; an ensemble of K members takes ``x: (K, B, …)``), per image and per
    member, as :class:`torch.utils.flop_counter.FlopCounterMode` counts them (2 per multiply-add).
    Elementwise work (LayerNorm, GELU, softmax, the optimiser) is not counted: the number bounds the
    step from below, it does not predict it."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter:
        logits = model(x)
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.expand(logits.shape[:-1]).reshape(-1)).backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / logits[..., 0].numel()


def gemm_peak_flops(device, n: int = 2048, repeats: int = 5) -> float:
    """The machine's float32 matrix-product rate in FLOP/s: best of ``repeats`` ``torch.mm`` of two
    n × n matrices (2n³ operations each) at torch's current thread count."""
    g = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(n, n, device=device, generator=g)
    b = torch.randn(n, n, device=device, generator=g)
    best = float("inf")
    for _ in range(repeats + 1):  # the first call is a warm-up
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        torch.mm(a, b)
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best


def peak_memory_mb(device) -> float:
    """Peak memory in MiB: CUDA allocator peak on a GPU, the process's peak resident set on a CPU."""
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    import resource  # Unix only: imported on the CPU path that reads it

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def bench_vit(shape: dict[str, Any], attention: str) -> ViT:
    """The benchmarks' ViT on 32×32×3 images: ``shape`` gives width, depth, heads and patch, the MLP is
    as wide as the tokens; its initialisation drawn after ``torch.manual_seed(0)``."""
    torch.manual_seed(0)
    return ViT(ViTConfig(**shape, mlp=shape["width"], attention=attention))


def best_of(
    repeats: int,
    keys: list,
    measure: Callable[[int, Any], float],
    say: Callable[[int, Any, float], str],
    report: Status | None,
    final: bool = True,
) -> dict:
    """The best rate of each key: ``measure(r, key)`` for r = 0 … ``repeats`` − 1, the keys alternated
    within each repeat so that drifts of a shared machine hit every key alike. After each measurement,
    ``report(say(r, key, best so far), last)``, ``last`` true for the last measurement when ``final``."""
    best = dict.fromkeys(keys, 0.0)
    for r in range(repeats):
        for i, key in enumerate(keys):
            best[key] = max(best[key], measure(r, key))
            if report is not None:
                report(say(r, key, best[key]), final and r == repeats - 1 and i == len(keys) - 1)
    return best


def smoke(
    device, *, width: int, depth: int, heads: int, patch: int, images: int, batch: int, out_dir, compile: bool = False
) -> pd.DataFrame:
    """One epoch of the ViT per attention on synthetic 32×32×3 data through :func:`train` (amp on)."""
    data = synthetic(images, max(batch, images // 10), image_size=32, channels=3, classes=10, seed=0, device=device)
    shape = dict(width=width, depth=depth, heads=heads, patch=patch)
    rows = []
    for att in ("positional", "vanilla"):
        model = bench_vit(shape, att)
        cfg = TrainConfig(
            epochs=1,
            batch_size=batch,
            lr=1e-3,
            warmup_epochs=0.1,
            label_smoothing=0.0,
            pad=0,
            flip=False,
            amp=True,
            compile=compile,
        )
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            h = train(model, data, cfg, Path(tmp), progress=False)
        r = h.iloc[-1]
        rows.append(
            dict(
                device=torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
                attention=att,
                **shape,
                images=images,
                batch=batch,
                amp="bf16",
                images_per_s=float(r.images_per_s),
                seconds=float(r.seconds),
                train_loss=float(r.train_loss),
                test_acc=float(r.test_acc),
                peak_memory_mb=peak_memory_mb(device),
            )
        )
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)


def ensemble_rates(
    device, *, member_counts, epochs: int, repeats: int, out_dir, report: Status | None = None
) -> pd.DataFrame:
    """Images/s of the ledger's digits networks trained alone (K = 1) and as K-member ensembles, through
    :func:`theorydyn.vision.train.train` on the bundled digits (preset of
    :data:`theorydyn.vision.experiments.PRESETS`), ``epochs`` epochs per measurement, best of ``repeats``
    alternations of the member counts.

    Beside each rate, its floor: the single network's matrix-product operations per training image
    (:func:`matmul_flops_per_image`, on one preset batch) against this machine's float32 matrix-product
    rate (:func:`gemm_peak_flops`, measured once before the runs), i.e. the images/s a step made of
    nothing but those products at that rate would reach; ``of_floor`` is the measured rate's share of it.
    ``out_dir``: where the temporary run folders go (None: the system's). ``report``: the best rate so
    far after each run (the last one final)."""
    data = load("digits", device=device, download=False)
    vit, tcfg = preset_configs(data, epochs=epochs)
    peak = gemm_peak_flops(device)
    xb = prepare(data, data.x_train[: tcfg.batch_size], None, None)
    yb = data.y_train[: tcfg.batch_size]
    models = {
        "ViT positional, patch 2": ("vit", dataclasses.replace(vit, attention="positional")),
        "ViT vanilla, patch 2": ("vit", dataclasses.replace(vit, attention="vanilla")),
        "ViT positional, patch 1": ("vit", dataclasses.replace(vit, attention="positional", patch=1)),
        "small CNN": ("cnn", vit),
    }
    counts = sorted(set([1, *member_counts]))
    last_label = list(models)[-1]

    def rows_of(label: str, name: str, vcfg) -> list[dict]:
        loads = []
        # the work of one member: an ensemble's own layout (grouped convolutions, batched attention)
        # may count more, which is its overhead, not the network's
        flops = matmul_flops_per_image(
            ensemble(name, [0], channels=data.channels, classes=data.classes, vit=vcfg), xb, yb
        )

        def rate(r: int, K: int) -> float:
            seeds = list(range(K))
            model = ensemble(name, seeds, channels=data.channels, classes=data.classes, vit=vcfg)
            with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
                hs = train(model, data, tcfg, [Path(tmp) / str(k) for k in seeds], seeds=seeds, progress=False)
            loads.append(os.getloadavg()[0])
            # a member's images_per_s is its images over its share of the time: K of them, the ensemble's
            return float(hs[0].images_per_s.iloc[-1])

        def say(r: int, K: int, b: float) -> str:
            return f"{label}, {K} member(s), repeat {r + 1}/{repeats}: {b:,.0f} img/s"

        best = best_of(repeats, counts, rate, say, report, final=label == last_label)
        return [
            dict(
                model=label,
                members=K,
                images_per_s=best[K],
                ratio_vs_single=best[K] / best[1],
                matmul_MFLOP_per_image=flops / 1e6,
                floor_images_per_s=peak / flops,
                of_floor=best[K] * flops / peak,
                gemm_peak_GFLOP_per_s=peak / 1e9,
                load_min=min(loads),
                load_max=max(loads),
            )
            for K in counts
        ]

    return pd.DataFrame([row for label, (name, vcfg) in models.items() for row in rows_of(label, name, vcfg)])


def attention_rates(
    device,
    batches,
    *,
    width: int,
    depth: int,
    heads: int,
    patch: int,
    steps: int,
    warmup: int,
    repeats: int,
    compile: bool = False,
    report: Status | None = None,
) -> pd.DataFrame:
    """Images/s of a training step (:func:`step_rate`) of the ViT (``width``, ``depth``, ``heads``, MLP
    ``width``, ``patch`` on 32×32×3 inputs) with positional and with vanilla attention, at each batch
    size of ``batches``: ``steps`` timed steps after ``warmup`` untimed ones (the first repeat only),
    the two models alternated ``repeats`` times (best kept, so that drifts of a shared machine hit
    both alike). One row per batch and attention: ``images_per_s``, ``ms_per_step`` and
    ``ratio_vs_vanilla`` (1 for vanilla). ``report``: the best rate so far after each timing (the
    last of a batch size final)."""
    name = device_label(device)
    shape = dict(width=width, depth=depth, heads=heads, patch=patch)

    def rows_at(batch: int) -> list[dict]:
        models: dict[str, Any] = {}
        for att in ("positional", "vanilla"):
            m = bench_vit(shape, att).to(device)
            models[att] = torch.compile(m) if compile else m

        def rate(r: int, att: str) -> float:
            return step_rate(models[att], batch, steps, warmup if r == 0 else 0, device)

        def say(r: int, att: str, b: float) -> str:
            return f"batch {batch} repeat {r + 1}/{repeats} {att}: {b:,.0f} img/s"

        best = best_of(repeats, list(models), rate, say, report)
        return [
            dict(
                device=name,
                batch=batch,
                attention=att,
                images_per_s=best[att],
                ms_per_step=1e3 * batch / best[att],
                ratio_vs_vanilla=best[att] / best["vanilla"],
            )
            for att in models
        ]

    rows = []
    for batch in batches:
        rows += rows_at(batch)  # its models freed on return, before the cache is emptied
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return pd.DataFrame(rows)
