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

The measurements are :mod:`theorydyn.vision.throughput` (they return tables and print nothing); this
module is the command, a :class:`theorydyn.cli.runner.Command`: its flags, the checks made before any
model is built (exit 2 naming the flag), the printing and the CSV. It imports nothing heavy: ``--help``
loads no torch, pandas or Matplotlib; the run imports them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..cli.configs import add_config_flags, config_from_args
from ..cli.runner import Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_out_argument,
    fail,
    guard_memory,
    output_dir,
)
from ..infra.atomic import write_with
from ..infra.memory import MemoryEstimate, ResourceError, Term, check_memory
from ..infra.paths import run_dir
from .config import BenchConfig
from .memory import vit_train_memory
from .threads import passive_wait

PROG = "python -m theorydyn.vision.bench"


def build_parser() -> argparse.ArgumentParser:
    """The flags: :class:`~theorydyn.vision.config.BenchConfig`'s fields, ``--out`` and ``--force``."""
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    shape = ("device", "batches", "width", "depth", "heads", "patch", "steps", "warmup", "repeats", "compile")
    add_config_flags(p, BenchConfig, only=shape)
    add_out_argument(
        p, None, "output file: also write the table to this CSV (default: none; --smoke: runs/vision/bench-smoke.csv)"
    )
    add_config_flags(p, BenchConfig, only=("smoke", "smoke_images"))
    add_common_arguments(p, seed=None, quiet=False, force="device")  # no progress bar to silence
    add_config_flags(p, BenchConfig, only=("ensemble", "members", "epochs", "threads"))
    return p


def guard_device_memory(est, *, force: bool, device, prog: str, flags: dict[str, str]):
    """:func:`theorydyn.cli.tools.guard_memory` against the memory of ``device``: the free memory of a CUDA
    device (``torch.cuda.mem_get_info``), else the machine's (``$THEORYDYN_MEMORY_LIMIT`` first)."""
    if device.type != "cuda":
        return guard_memory(est, force=force, prog=prog, flags=flags)
    import torch

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


def _status(text: str, final: bool) -> None:
    """A measurement's progress (:data:`theorydyn.vision.train.Status`) on stderr: each update redraws
    the line, a final one ends it."""
    print(f"\r{text}   " + ("\n" if final else ""), end="", file=sys.stderr, flush=True)


def _run_ensemble(cfg: BenchConfig, out_flag, device) -> int:
    """``--ensemble``: training rates of the digits preset networks trained together as one ensemble
    (:func:`theorydyn.vision.throughput.ensemble_rates`), printed and written to ``--out``."""
    from .throughput import device_label, ensemble_rates

    out = _out_path(out_flag, None, PROG)
    repeats = cfg.repeats or 2
    where = device_label(device)
    print(
        f"ensemble: {where}; digits preset networks, {cfg.epochs} epoch(s) per measurement, best of {repeats}; "
        f"load average before {os.getloadavg()[0]:.2f}",
        file=sys.stderr,
    )
    df = ensemble_rates(
        device,
        member_counts=cfg.members,
        epochs=cfg.epochs,
        repeats=repeats,
        out_dir=None if out is None else out.parent,
        report=_status,
    )
    print(df.to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    print(f"{where}; load average (1 min) during the runs {df.load_min.min():.2f}–{df.load_max.max():.2f}")
    print(
        f"floor: the matrix products alone at this machine's float32 rate, {df.gemm_peak_GFLOP_per_s.iloc[0]:.0f} "
        "GFLOP/s (torch.mm 2048³, measured before the runs); of_floor = images/s ÷ floor images/s"
    )
    if out is not None:
        write_with(out, lambda t: df.to_csv(t, index=False))
    return 0


def _run_smoke(cfg: BenchConfig, device, shape: dict[str, Any], images: int, batch: int, out) -> int:
    """``--smoke``: one epoch of ``images`` synthetic 32×32×3 images at ``batch`` through the ViT of
    ``shape`` (width, depth, heads, patch; :func:`theorydyn.vision.throughput.smoke`), printed and
    written to ``out``."""
    from .throughput import smoke

    print(
        f"smoke: {device}, ViT width {shape['width']} depth {shape['depth']} heads {shape['heads']} patch "
        f"{shape['patch']}, one epoch of {images} synthetic 32×32×3 images at batch {batch}, bf16 autocast",
        file=sys.stderr,
    )
    df = smoke(device, **shape, images=images, batch=batch, out_dir=out.parent, compile=cfg.compile)
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.3f}"))
    write_with(out, lambda t: df.to_csv(t, index=False))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _run_rates(
    cfg: BenchConfig, device, batches, shape: dict[str, Any], steps: int, warmup: int, repeats: int, out
) -> int:
    """The main table: positional against vanilla attention at each batch size, the ViT of ``shape``
    (:func:`theorydyn.vision.throughput.attention_rates`), the ratios printed, written to ``out``."""
    from .throughput import attention_rates, device_label

    width, patch = shape["width"], shape["patch"]
    print(
        f"device: {device_label(device)}; ViT width {width}, depth {shape['depth']}, heads {shape['heads']}, "
        f"MLP {width}, patch {patch} ({(32 // patch) ** 2} tokens); {steps} timed steps after {warmup}, "
        f"best of {repeats}",
        file=sys.stderr,
    )
    df = attention_rates(
        device, batches, **shape, steps=steps, warmup=warmup, repeats=repeats, compile=cfg.compile, report=_status
    )
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    for batch in batches:
        r = df[(df.batch == batch) & (df.attention == "positional")].ratio_vs_vanilla.item()
        print(f"batch {batch}: positional/vanilla images per second = {r:.2f}x")
    if out is not None:
        write_with(out, lambda t: df.to_csv(t, index=False))
    return 0


def _check_modes(cfg: BenchConfig, given: set[str]) -> None:
    """Refuse a flag that does nothing in the chosen mode (--ensemble, --smoke or the main table)."""
    if cfg.ensemble:
        for k in ("smoke", "smoke_images", "batches", "width", "depth", "heads", "patch", "steps", "warmup", "compile"):
            if k in given:
                fail(f"--{k.replace('_', '-')}: not used by --ensemble (the ledger's digits networks)", PROG)
    else:
        for k in ("members", "epochs"):
            if k in given:
                fail(f"--{k}: only used by --ensemble", PROG)
    if cfg.smoke:
        for k in ("steps", "warmup", "repeats"):
            if k in given:
                fail(f"--{k}: not used by --smoke (one epoch through the training loop)", PROG)
        if cfg.batches is not None and len(cfg.batches) > 1:
            fail(f"--batches: --smoke trains at one batch size, got {list(cfg.batches)}", PROG)
    elif "smoke_images" in given:
        fail("--smoke-images: only used by --smoke", PROG)


def run(inv: Invocation) -> int:
    """Every input is checked before any model is built (exit 2 naming the flag): shapes, flags that
    do nothing with or without --smoke, the memory of the largest batch on the device, --out."""
    args = inv.args
    try:
        cfg = config_from_args(BenchConfig, args)
    except ValueError as e:
        fail(str(e), PROG)
    passive_wait()  # before torch loads OpenMP (theorydyn.vision.threads)
    try:  # the vision extra: say how to install it instead of a traceback
        import torch
    except ImportError:
        fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)", PROG)
    from .data import default_device

    _check_modes(cfg, inv.given())
    device = torch.device(cfg.device or default_device())
    if device.type == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available", PROG)
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    if cfg.ensemble:
        return _run_ensemble(cfg, args.out, device)
    gpu = device.type == "cuda"
    on = cfg.on(device.type)  # the defaults of this device where a flag was not given
    batches, width, depth, heads = on["batches"], on["width"], on["depth"], on["heads"]
    if width % heads:
        fail(f"--heads: must divide --width {width}, got {heads}", PROG)
    if 32 % cfg.patch:
        fail(f"--patch: must divide the image size 32, got {cfg.patch}", PROG)
    steps, warmup, repeats = on["steps"], on["warmup"], on["repeats"]
    flags = {"batch": "--batches", "width": "--width", "depth": "--depth"}
    if cfg.smoke:
        images = on["smoke_images"]
        batch = batches[0]
        if batch > images:
            fail(f"--batches: the smoke batch {batch} exceeds --smoke-images {images}", PROG)
        test = max(batch, images // 10)
        est = vit_train_memory(batch, width, depth, heads, width, cfg.patch) + MemoryEstimate(
            "synthetic data",
            (
                Term(
                    f"{images} + {test} synthetic images 3×32×32 float32",
                    (images + test) * 3 * 32 * 32 * 4,
                    {"smoke_images": images},
                ),
            ),
        )
        guard_device_memory(est, force=args.force, device=device, prog=PROG, flags=flags)
        out = _out_path(args.out, str(run_dir("vision", "bench-smoke.csv")), PROG)
    else:
        # the two models of a batch size live together
        est = vit_train_memory(max(batches), width, depth, heads, width, cfg.patch)
        est = est + MemoryEstimate("second model", tuple(t for t in est.terms if "parameters" in t.what))
        guard_device_memory(est, force=args.force, device=device, prog=PROG, flags=flags)
        out = _out_path(args.out, None, PROG)
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = True
    shape = dict(width=width, depth=depth, heads=heads, patch=cfg.patch)
    if cfg.smoke:
        return _run_smoke(cfg, device, shape, images, batch, out)
    return _run_rates(cfg, device, batches, shape, steps, warmup, repeats, out)


COMMAND = Command(PROG, build_parser, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
