"""``python -m theorydyn.vision.bench`` — training throughput, positional against vanilla attention.

Images per second of one full training step (forward, backward, AdamW update; bf16 autocast on
CUDA) of two ViTs of equal size that differ only in the attention, at batch 128 and 1024 on
32×32×3 inputs. Positional attention computes its ``H`` score matrices ``(D, D)`` once per batch
from ``P`` and skips, per image, the ``Q``/``K`` projections (``2E²`` of the ``6E²`` multiply-adds
per token with MLP width ``E``) and the ``QKᵀ`` product; the ratio positional/vanilla is printed
for each batch size. Vanilla attention uses PyTorch's fused ``scaled_dot_product_attention``, the
strongest plain reference. On a GPU the paper's ViT (width 384, 7 layers, 12 heads) is timed;
on a CPU a narrower one (``--width 96 --depth 2``) with few steps, unless told otherwise.

``--smoke``: the GPU path end to end through the project's own training loop
(:func:`theorydyn.vision.train.train`) on synthetic 32×32×3 images: data moved to the device through
pinned memory with non-blocking copies, bf16 autocast, one epoch (``--smoke-images`` images, default
50 000 on CUDA) of the ViT with positional and with vanilla attention, then the test accuracy. It
writes one CSV row per attention (images/s, seconds, peak memory, final loss) and takes well under
5 minutes on one GPU. The same code runs with ``--device cpu`` (autocast then on the CPU), so
nothing of the path is CUDA-only except the pinning and the CUDA memory counter.

``--ensemble``: the digits networks of the ledger (the preset ViT with positional and vanilla
attention at patch 2, the positional ViT at patch 1, the small CNN), each trained through the
training loop for ``--epochs`` epochs alone and as ensembles of ``--members`` seeds (default 3 and 10,
:func:`theorydyn.vision.model.ensemble`); images/s counts the images of every member (K networks
trained on B images each make K·B), so it compares directly with the single network's. The member
counts alternate ``--repeats`` times (best kept), and the load average is printed beside the table:
on a shared machine the numbers move with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_out_argument,
    fail,
    given_flags,
    guard_memory,
    number,
    output_dir,
    positive,
)
from ..infra.paths import run_dir
from .threads import passive_wait

PROG = "python -m theorydyn.vision.bench"

if __name__ == "__main__":
    passive_wait()  # the command: before torch loads OpenMP (theorydyn.vision.threads)

try:  # the vision extra: run as a command without it, say how to install it instead of a traceback
    import torch
    import torch.nn.functional as F
except ImportError:
    if __name__ == "__main__":
        fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)", PROG)
    raise

# below the guard: these need torch
from ..infra.atomic import write_with  # noqa: E402
from ..infra.memory import MemoryEstimate, ResourceError, Term, check_memory  # noqa: E402
from .data import default_device, load, synthetic  # noqa: E402
from .experiments import preset_configs  # noqa: E402
from .memory import vit_train_memory  # noqa: E402
from .model import ViT, ViTConfig, ensemble  # noqa: E402
from .train import TrainConfig, prepare, train  # noqa: E402


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


def smoke(
    device, *, width: int, depth: int, heads: int, patch: int, images: int, batch: int, out_dir, compile: bool = False
) -> pd.DataFrame:
    """One epoch of the ViT per attention on synthetic 32×32×3 data through :func:`train` (amp on)."""
    data = synthetic(images, max(batch, images // 10), image_size=32, channels=3, classes=10, seed=0, device=device)
    rows = []
    for att in ("positional", "vanilla"):
        torch.manual_seed(0)
        model = ViT(ViTConfig(width=width, depth=depth, heads=heads, mlp=width, patch=patch, attention=att))
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
                width=width,
                depth=depth,
                heads=heads,
                patch=patch,
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


def ensemble_rates(device, *, member_counts, epochs: int, repeats: int, out_dir, say=None) -> pd.DataFrame:
    """Images/s of the ledger's digits networks trained alone (K = 1) and as K-member ensembles, through
    :func:`theorydyn.vision.train.train` on the bundled digits (preset of
    :data:`theorydyn.vision.experiments.PRESETS`), ``epochs`` epochs per measurement, best of ``repeats``
    alternations of the member counts.

    Beside each rate, its floor: the single network's matrix-product operations per training image
    (:func:`matmul_flops_per_image`, on one preset batch) against this machine's float32 matrix-product
    rate (:func:`gemm_peak_flops`, measured once before the runs), i.e. the images/s a step made of
    nothing but those products at that rate would reach; ``of_floor`` is the measured rate's share of it."""
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
    rows = []
    for label, (name, vcfg) in models.items():
        best = dict.fromkeys(counts, 0.0)
        loads = []
        # the work of one member: an ensemble's own layout (grouped convolutions, batched attention)
        # may count more, which is its overhead, not the network's
        flops = matmul_flops_per_image(
            ensemble(name, [0], channels=data.channels, classes=data.classes, vit=vcfg), xb, yb
        )
        for r in range(repeats):  # alternate, so that drifts of a shared machine hit every K alike
            for K in counts:
                seeds = list(range(K))
                model = ensemble(name, seeds, channels=data.channels, classes=data.classes, vit=vcfg)
                with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
                    hs = train(model, data, tcfg, [Path(tmp) / str(k) for k in seeds], seeds=seeds, progress=False)
                # a member's images_per_s is its images over its share of the time: K of them, the ensemble's
                best[K] = max(best[K], float(hs[0].images_per_s.iloc[-1]))
                loads.append(os.getloadavg()[0])
                if say:
                    say(f"{label}, {K} member(s), repeat {r + 1}/{repeats}: {best[K]:,.0f} img/s")
        for K in counts:
            rows.append(
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
            )
    return pd.DataFrame(rows)


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present, else cpu")
    p.add_argument(
        "--batches",
        type=number(int, "--batches", low=1),
        nargs="+",
        default=None,
        help="batch sizes (default 128 1024; --smoke: one, default 128)",
    )
    p.add_argument("--width", type=positive(int, "--width"), default=None, help="default 384 on cuda, 96 on cpu")
    p.add_argument("--depth", type=positive(int, "--depth"), default=None, help="default 7 on cuda, 2 on cpu")
    p.add_argument("--heads", type=positive(int, "--heads"), default=None, help="default 12 on cuda, 4 on cpu")
    p.add_argument("--patch", type=number(int, "--patch", low=1, high=32), default=4, help="divides 32 (default 4)")
    p.add_argument(
        "--steps",
        type=positive(int, "--steps"),
        default=None,
        help="timed steps (default 30 cuda, 2 cpu; not with --smoke)",
    )
    p.add_argument(
        "--warmup",
        type=positive(int, "--warmup", allow_zero=True),
        default=None,
        help="untimed steps first (default 10 cuda, 1 cpu; not with --smoke)",
    )
    p.add_argument(
        "--repeats",
        type=positive(int, "--repeats"),
        default=None,
        help="alternate the two models this many times, keep each one's best (default 3 cuda, 2 cpu; not with --smoke)",
    )
    p.add_argument("--compile", action="store_true", help="torch.compile both models")
    add_out_argument(
        p, None, "output file: also write the table to this CSV (default: none; --smoke: runs/vision/bench-smoke.csv)"
    )
    p.add_argument(
        "--smoke",
        action="store_true",
        help="one epoch per attention through the training loop on synthetic data (module docstring)",
    )
    p.add_argument(
        "--smoke-images",
        type=positive(int, "--smoke-images"),
        default=None,
        help="training images of --smoke (default 50000 on cuda, 512 on cpu)",
    )
    add_common_arguments(p, seed=None, quiet=False, force="device")  # no progress bar to silence
    p.add_argument(
        "--ensemble",
        action="store_true",
        help="the digits networks alone against ensembles of "
        "--members seeds, through the training loop (module docstring)",
    )
    p.add_argument(
        "--members",
        type=number(int, "--members", low=1),
        nargs="+",
        default=[3, 10],
        help="ensemble sizes of --ensemble (default 3 10; 1, the single network, always)",
    )
    p.add_argument("--epochs", type=positive(int, "--epochs"), default=1, help="epochs per --ensemble measurement")
    p.add_argument(
        "--threads", type=positive(int, "--threads"), default=None, help="CPU threads of torch (default torch's choice)"
    )
    return p


def guard_device_memory(est, *, force: bool, device, prog: str, flags: dict[str, str]):
    """:func:`theorydyn.cli.tools.guard_memory` against the memory of ``device``: the free memory of a CUDA
    device (``torch.cuda.mem_get_info``), else the machine's (``$THEORYDYN_MEMORY_LIMIT`` first)."""
    if device.type != "cuda":
        return guard_memory(est, force=force, prog=prog, flags=flags)
    free, _ = torch.cuda.mem_get_info(device)
    try:
        return check_memory(est, force=force, available=int(free), force_name="--force")
    except ResourceError as e:
        names = [f for k in est.largest.params for f in [flags.get(k, "--" + k.replace("_", "-"))] if f]
        fail(f"{'/'.join(names) or 'memory'}: {e} (free memory of {device})", prog)


def _out_path(path, default: str | None, prog: str):
    """The CSV path of ``--out`` (or ``default``), its folder proven writable before any work; None without one."""
    if path is None and default is None:
        return None
    given = str(path if path is not None else default)
    out = Path(given)
    if not given.strip() or out.is_dir():
        fail(f"--out: must be a CSV file path, got {str(path)!r}", prog)
    output_dir(out.parent, "--out")
    return out


def _run_ensemble(args: argparse.Namespace, device, prog: str) -> int:
    """``--ensemble``: training rates of the digits preset networks trained together as one ensemble
    (:func:`ensemble_rates`), printed and written to ``--out``."""
    out = _out_path(args.out, None, prog)
    repeats = args.repeats or 2
    where = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    print(
        f"ensemble: {where}; digits preset networks, {args.epochs} epoch(s) per measurement, best of {repeats}; "
        f"load average before {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )
    df = ensemble_rates(
        device,
        member_counts=args.members,
        epochs=args.epochs,
        repeats=repeats,
        out_dir=None if out is None else out.parent,
        say=lambda m: print(f"\r{m}   ", end="", file=sys.stderr, flush=True),
    )
    print(file=sys.stderr)
    print(df.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print(f"{where}; load average (1 min) during the runs {df.load_min.min():.2f}–{df.load_max.max():.2f}")
    print(
        f"floor: the matrix products alone at this machine's float32 rate, {df.gemm_peak_GFLOP_per_s.iloc[0]:.0f} "
        "GFLOP/s (torch.mm 2048³, measured before the runs); of_floor = images/s ÷ floor images/s"
    )
    if out is not None:
        write_with(out, lambda t: df.to_csv(t, index=False))
    return 0


def _run_smoke(
    args: argparse.Namespace, device, width: int, depth: int, heads: int, images: int, batch: int, out
) -> int:
    """``--smoke``: one epoch of ``images`` synthetic 32×32×3 images at ``batch`` (:func:`smoke`), printed
    and written to ``out``."""
    print(
        f"smoke: {device}, ViT width {width} depth {depth} heads {heads} patch {args.patch}, one epoch of "
        f"{images} synthetic 32×32×3 images at batch {batch}, bf16 autocast",
        file=sys.stderr,
    )
    df = smoke(
        device,
        width=width,
        depth=depth,
        heads=heads,
        patch=args.patch,
        images=images,
        batch=batch,
        out_dir=out.parent,
        compile=args.compile,
    )
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.3f}"))
    write_with(out, lambda t: df.to_csv(t, index=False))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def main(argv=None) -> int:
    """Every input is checked before any model is built (exit 2 naming the flag): shapes, flags that
    do nothing with or without --smoke, the memory of the largest batch on the device, --out."""
    p = build_parser()
    args = p.parse_args(argv)
    given = given_flags(build_parser(), argv)

    prog = PROG
    if args.ensemble:
        for k in ("smoke", "smoke_images", "batches", "width", "depth", "heads", "patch", "steps", "warmup", "compile"):
            if k in given:
                fail(f"--{k.replace('_', '-')}: not used by --ensemble (the ledger's digits networks)", prog)
    else:
        for k in ("members", "epochs"):
            if k in given:
                fail(f"--{k}: only used by --ensemble", prog)
    if args.smoke:
        for k in ("steps", "warmup", "repeats"):
            if k in given:
                fail(f"--{k}: not used by --smoke (one epoch through the training loop)", prog)
        if args.batches is not None and len(args.batches) > 1:
            fail(f"--batches: --smoke trains at one batch size, got {args.batches}", prog)
    elif "smoke_images" in given:
        fail("--smoke-images: only used by --smoke", prog)
    device = torch.device(args.device or default_device())
    if device.type == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available", prog)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.ensemble:
        return _run_ensemble(args, device, prog)
    gpu = device.type == "cuda"
    batches = args.batches or ([128] if args.smoke else [128, 1024])
    width, depth = args.width or (384 if gpu else 96), args.depth or (7 if gpu else 2)
    heads = args.heads or (12 if gpu else 4)
    if width % heads:
        fail(f"--heads: must divide --width {width}, got {heads}", prog)
    if 32 % args.patch:
        fail(f"--patch: must divide the image size 32, got {args.patch}", prog)
    steps, warmup = args.steps or (30 if gpu else 2), args.warmup if args.warmup is not None else (10 if gpu else 1)
    repeats = args.repeats or (3 if gpu else 2)
    flags = {"batch": "--batches", "width": "--width", "depth": "--depth"}
    if args.smoke:
        images = args.smoke_images or (50_000 if gpu else 512)
        batch = batches[0]
        if batch > images:
            fail(f"--batches: the smoke batch {batch} exceeds --smoke-images {images}", prog)
        test = max(batch, images // 10)
        est = vit_train_memory(batch, width, depth, heads, width, args.patch) + MemoryEstimate(
            "synthetic data",
            (
                Term(
                    f"{images} + {test} synthetic images 3×32×32 float32",
                    (images + test) * 3 * 32 * 32 * 4,
                    {"smoke_images": images},
                ),
            ),
        )
        guard_device_memory(est, force=args.force, device=device, prog=prog, flags=flags)
        out = _out_path(args.out, str(run_dir("vision", "bench-smoke.csv")), prog)
    else:
        # the two models of a batch size live together
        est = vit_train_memory(max(batches), width, depth, heads, width, args.patch)
        est = est + MemoryEstimate("second model", tuple(t for t in est.terms if "parameters" in t.what))
        guard_device_memory(est, force=args.force, device=device, prog=prog, flags=flags)
        out = _out_path(args.out, None, prog)
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = True
    if args.smoke:
        return _run_smoke(args, device, width, depth, heads, images, batch, out)
    name = torch.cuda.get_device_name(device) if gpu else f"CPU, {torch.get_num_threads()} threads"
    print(
        f"device: {name}; ViT width {width}, depth {depth}, heads {heads}, MLP {width}, patch {args.patch} "
        f"({(32 // args.patch) ** 2} tokens); {steps} timed steps after {warmup}, best of {repeats}",
        file=sys.stderr,
    )
    rows = []
    for batch in batches:
        models: dict[str, Any] = {}
        for att in ("positional", "vanilla"):
            torch.manual_seed(0)
            vcfg = ViTConfig(width=width, depth=depth, heads=heads, mlp=width, patch=args.patch, attention=att)
            m = ViT(vcfg).to(device)
            models[att] = torch.compile(m) if args.compile else m
        best = {att: 0.0 for att in models}
        for r in range(repeats):  # alternate, so that drifts of a shared machine hit both alike
            for att, m in models.items():
                best[att] = max(best[att], step_rate(m, batch, steps, warmup if r == 0 else 0, device))
                print(
                    f"\rbatch {batch} repeat {r + 1}/{repeats} {att}: {best[att]:,.0f} img/s   ",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
        print(file=sys.stderr)
        for att in models:
            rows.append(
                dict(
                    device=name,
                    batch=batch,
                    attention=att,
                    images_per_s=best[att],
                    ms_per_step=1e3 * batch / best[att],
                    ratio_vs_vanilla=best[att] / best["vanilla"],
                )
            )
        del models
        if gpu:
            torch.cuda.empty_cache()
    df = pd.DataFrame(rows)
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    for batch in batches:
        r = df[(df.batch == batch) & (df.attention == "positional")].ratio_vs_vanilla.item()
        print(f"batch {batch}: positional/vanilla images per second = {r:.2f}x")
    if out is not None:
        write_with(out, lambda t: df.to_csv(t, index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
