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

from ..cli.runner import Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_out_argument,
    fail,
    guard_memory,
    number,
    output_dir,
    positive,
)
from ..infra.atomic import write_with
from ..infra.memory import MemoryEstimate, ResourceError, Term, check_memory
from ..infra.paths import run_dir
from .memory import vit_train_memory
from .threads import passive_wait

PROG = "python -m theorydyn.vision.bench"


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])

    def count(flag: str, text: str, *, zero: bool = False) -> None:
        """An integer flag >= 1 (>= 0 with ``zero``) whose default (None) depends on the device or mode."""
        p.add_argument(flag, type=positive(int, flag, allow_zero=zero), default=None, help=text)

    def counts(flag: str, default: list[int] | None, text: str) -> None:
        """A list of integers >= 1."""
        p.add_argument(flag, type=number(int, flag, low=1), nargs="+", default=default, help=text)

    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present, else cpu")
    counts("--batches", None, "batch sizes (default 128 1024; --smoke: one, default 128)")
    count("--width", "default 384 on cuda, 96 on cpu")
    count("--depth", "default 7 on cuda, 2 on cpu")
    count("--heads", "default 12 on cuda, 4 on cpu")
    p.add_argument("--patch", type=number(int, "--patch", low=1, high=32), default=4, help="divides 32 (default 4)")
    count("--steps", "timed steps (default 30 cuda, 2 cpu; not with --smoke)")
    count("--warmup", "untimed steps first (default 10 cuda, 1 cpu; not with --smoke)", zero=True)
    count(
        "--repeats",
        "alternate the two models this many times, keep each one's best (default 3 cuda, 2 cpu; not with --smoke)",
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
    count("--smoke-images", "training images of --smoke (default 50000 on cuda, 512 on cpu)")
    add_common_arguments(p, seed=None, quiet=False, force="device")  # no progress bar to silence
    p.add_argument(
        "--ensemble",
        action="store_true",
        help="the digits networks alone against ensembles of "
        "--members seeds, through the training loop (module docstring)",
    )
    counts("--members", [3, 10], "ensemble sizes of --ensemble (default 3 10; 1, the single network, always)")
    p.add_argument("--epochs", type=positive(int, "--epochs"), default=1, help="epochs per --ensemble measurement")
    count("--threads", "CPU threads of torch (default torch's choice)")
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


def _run_ensemble(args: argparse.Namespace, device) -> int:
    """``--ensemble``: training rates of the digits preset networks trained together as one ensemble
    (:func:`theorydyn.vision.throughput.ensemble_rates`), printed and written to ``--out``."""
    from .throughput import device_label, ensemble_rates

    out = _out_path(args.out, None, PROG)
    repeats = args.repeats or 2
    where = device_label(device)
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


def _run_smoke(args: argparse.Namespace, device, shape: dict[str, Any], images: int, batch: int, out) -> int:
    """``--smoke``: one epoch of ``images`` synthetic 32×32×3 images at ``batch`` through the ViT of
    ``shape`` (width, depth, heads, patch; :func:`theorydyn.vision.throughput.smoke`), printed and
    written to ``out``."""
    from .throughput import smoke

    print(
        f"smoke: {device}, ViT width {shape['width']} depth {shape['depth']} heads {shape['heads']} patch "
        f"{shape['patch']}, one epoch of {images} synthetic 32×32×3 images at batch {batch}, bf16 autocast",
        file=sys.stderr,
    )
    df = smoke(device, **shape, images=images, batch=batch, out_dir=out.parent, compile=args.compile)
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.3f}"))
    write_with(out, lambda t: df.to_csv(t, index=False))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def _run_rates(
    args: argparse.Namespace, device, batches, shape: dict[str, Any], steps: int, warmup: int, repeats: int, out
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
        device, batches, **shape, steps=steps, warmup=warmup, repeats=repeats, compile=args.compile, report=_status
    )
    print(df.drop(columns="device").to_string(index=False, float_format=lambda v: f"{v:,.2f}"))
    for batch in batches:
        r = df[(df.batch == batch) & (df.attention == "positional")].ratio_vs_vanilla.item()
        print(f"batch {batch}: positional/vanilla images per second = {r:.2f}x")
    if out is not None:
        write_with(out, lambda t: df.to_csv(t, index=False))
    return 0


def _check_modes(args: argparse.Namespace, given: set[str]) -> None:
    """Refuse a flag that does nothing in the chosen mode (--ensemble, --smoke or the main table)."""
    if args.ensemble:
        for k in ("smoke", "smoke_images", "batches", "width", "depth", "heads", "patch", "steps", "warmup", "compile"):
            if k in given:
                fail(f"--{k.replace('_', '-')}: not used by --ensemble (the ledger's digits networks)", PROG)
    else:
        for k in ("members", "epochs"):
            if k in given:
                fail(f"--{k}: only used by --ensemble", PROG)
    if args.smoke:
        for k in ("steps", "warmup", "repeats"):
            if k in given:
                fail(f"--{k}: not used by --smoke (one epoch through the training loop)", PROG)
        if args.batches is not None and len(args.batches) > 1:
            fail(f"--batches: --smoke trains at one batch size, got {args.batches}", PROG)
    elif "smoke_images" in given:
        fail("--smoke-images: only used by --smoke", PROG)


def run(inv: Invocation) -> int:
    """Every input is checked before any model is built (exit 2 naming the flag): shapes, flags that
    do nothing with or without --smoke, the memory of the largest batch on the device, --out."""
    args = inv.args
    passive_wait()  # before torch loads OpenMP (theorydyn.vision.threads)
    try:  # the vision extra: say how to install it instead of a traceback
        import torch
    except ImportError:
        fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)", PROG)
    from .data import default_device

    _check_modes(args, inv.given())
    device = torch.device(args.device or default_device())
    if device.type == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available", PROG)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.ensemble:
        return _run_ensemble(args, device)
    gpu = device.type == "cuda"
    batches = args.batches or ([128] if args.smoke else [128, 1024])
    width, depth = args.width or (384 if gpu else 96), args.depth or (7 if gpu else 2)
    heads = args.heads or (12 if gpu else 4)
    if width % heads:
        fail(f"--heads: must divide --width {width}, got {heads}", PROG)
    if 32 % args.patch:
        fail(f"--patch: must divide the image size 32, got {args.patch}", PROG)
    steps, warmup = args.steps or (30 if gpu else 2), args.warmup if args.warmup is not None else (10 if gpu else 1)
    repeats = args.repeats or (3 if gpu else 2)
    flags = {"batch": "--batches", "width": "--width", "depth": "--depth"}
    if args.smoke:
        images = args.smoke_images or (50_000 if gpu else 512)
        batch = batches[0]
        if batch > images:
            fail(f"--batches: the smoke batch {batch} exceeds --smoke-images {images}", PROG)
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
        guard_device_memory(est, force=args.force, device=device, prog=PROG, flags=flags)
        out = _out_path(args.out, str(run_dir("vision", "bench-smoke.csv")), PROG)
    else:
        # the two models of a batch size live together
        est = vit_train_memory(max(batches), width, depth, heads, width, args.patch)
        est = est + MemoryEstimate("second model", tuple(t for t in est.terms if "parameters" in t.what))
        guard_device_memory(est, force=args.force, device=device, prog=PROG, flags=flags)
        out = _out_path(args.out, None, PROG)
    if gpu:
        torch.backends.cuda.matmul.allow_tf32 = True
    shape = dict(width=width, depth=depth, heads=heads, patch=args.patch)
    if args.smoke:
        return _run_smoke(args, device, shape, images, batch, out)
    return _run_rates(args, device, batches, shape, steps, warmup, repeats, out)


COMMAND = Command(PROG, build_parser, run)


def main(argv: Sequence[str] | None = None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
