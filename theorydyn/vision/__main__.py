"""``python -m theorydyn.vision {digits,cifar10,cifar100,svhn} [options]`` — Section 6 on real images.

Without ``--experiment``: ``digits`` runs the demo (positional and vanilla ViT, one seed each,
about a minute on a 2-core CPU); the other datasets train one network. ``--attention`` picks the
attention of every mode that trains one ViT (single, permuted, robustness; the demo then trains only
that one); ``compare`` trains both and refuses the flag. See :mod:`theorydyn.vision.experiments`
for what each experiment writes.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from ..cli import fail as _cli_fail
from ..cli import positive

PROG = "python -m theorydyn.vision"


def fail(message: str):
    _cli_fail(message, PROG)



def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("dataset", nargs="?", default="digits", choices=("digits", "cifar10", "cifar100", "svhn"))
    p.add_argument("--experiment", choices=("single", "compare", "permuted", "robustness", "demo"), default=None,
                   help="default: demo for digits, single otherwise")
    p.add_argument("--model", choices=("vit", "resnet18", "vgg19", "cnn"), default="vit")
    p.add_argument("--attention", choices=("positional", "vanilla"), default=None,
                   help="default positional (the demo: both); refused by --experiment compare")
    p.add_argument("--shuffle-grid", type=positive(int, "--shuffle-grid"), default=None, metavar="S",
                   help="permute the S×S tiles with π_S (S must divide the image size)")
    p.add_argument("--epochs", type=positive(int, "--epochs"), default=None)
    p.add_argument("--batch-size", type=positive(int, "--batch-size"), default=None)
    p.add_argument("--lr", type=positive(float, "--lr"), default=None)
    p.add_argument("--weight-decay", type=positive(float, "--weight-decay", allow_zero=True), default=0.05)
    p.add_argument("--warmup", type=positive(float, "--warmup", allow_zero=True), default=None, help="warmup epochs")
    p.add_argument("--label-smoothing", type=positive(float, "--label-smoothing", allow_zero=True), default=None,
                   help="default: 0 on digits, 0.1 on 32×32 images")
    p.add_argument("--pad", type=positive(int, "--pad", allow_zero=True), default=None,
                   help="random-crop padding (default: 0 on digits, 4 on 32×32 images)")
    g = p.add_argument_group("ViT shape (defaults depend on the dataset)")
    for k in ("width", "depth", "heads", "mlp", "patch"):
        g.add_argument(f"--{k}", type=positive(int, f"--{k}"), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=positive(int, "--seeds"), default=3, help="seeds of compare and robustness")
    p.add_argument("--perm-seed", type=int, default=0, help="seed of the grid permutation π_s")
    p.add_argument("--data-dir", default=None, help="folder of the official archives (default ./data)")
    p.add_argument("--no-download", action="store_true", help="never try the network")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present")
    p.add_argument("--compile", action="store_true", help="torch.compile the network")
    p.add_argument("--threads", type=positive(int, "--threads"), default=None, help="CPU threads of torch (CPU results are bit-identical for the same seed *and* the same thread "
                        "count: reductions are split by thread; default torch's choice)")
    p.add_argument("--out", default=None, help="output folder (default runs/vision/<dataset>-<experiment>)")
    p.add_argument("--resume", action="store_true", help="continue the runs in --out from their checkpoints")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        import torch
    except ImportError:
        fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)")
    from .data import DataError, load
    from .experiments import (PRESETS, RunSpec, compare, demo, permuted, robustness, robustness_drops,
                              robustness_figure, run)
    from .model import ViTConfig
    from .train import Diverged, TrainConfig

    d = PRESETS["digits" if args.dataset == "digits" else "cifar"]
    image_size = 8 if args.dataset == "digits" else 32
    pick = {k: getattr(args, k) if getattr(args, k, None) is not None else d[k] for k in d if k != "warmup"}
    warmup = args.warmup if args.warmup is not None else d["warmup"]
    experiment = args.experiment or ("demo" if args.dataset == "digits" else "single")
    if experiment == "compare" and args.attention is not None:
        fail("--attention: the compare experiment trains both attentions; drop --attention")
    attention = args.attention or "positional"
    s = args.shuffle_grid
    if s is not None and image_size % s:
        fail(f"--shuffle-grid: the grid size must divide the image size {image_size} of {args.dataset}, got {s}")
    if image_size % pick["patch"]:
        fail(f"--patch: the patch size must divide the image size {image_size}, got {pick['patch']}")
    if pick["width"] % pick["heads"]:
        fail(f"--heads: must divide --width {pick['width']}, got {pick['heads']}")
    if s is not None and args.model == "vit" and experiment == "single" and s % pick["patch"]:
        fail(f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels")
    if args.data_dir is not None and not Path(args.data_dir).is_dir():
        fail(f"--data-dir: {args.data_dir} is not an existing directory")
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available")
    if args.threads:
        torch.set_num_threads(args.threads)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    try:
        data = load(args.dataset, args.data_dir, device=device, download=not args.no_download)
    except DataError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    vit = ViTConfig(image_size=image_size, patch=pick["patch"], channels=data.channels, classes=data.classes,
                    width=pick["width"], depth=pick["depth"], heads=pick["heads"], mlp=pick["mlp"],
                    attention=attention)
    tcfg = TrainConfig(epochs=pick["epochs"], batch_size=pick["batch_size"], lr=pick["lr"], weight_decay=args.weight_decay,
                       warmup_epochs=warmup, label_smoothing=pick["label_smoothing"], seed=args.seed,
                       compile=args.compile, pad=pick["pad"],
                       affine=tuple(pick["affine"]) if pick["affine"] is not None else None)
    if tcfg.batch_size > len(data.x_train):
        fail(f"--batch-size: must not exceed the {len(data.x_train)} training images, got {tcfg.batch_size}")
    out = Path(args.out or f"runs/vision/{args.dataset}-{experiment}")
    out.mkdir(parents=True, exist_ok=True)
    common = dict(resume=args.resume, perm_seed=args.perm_seed)
    print(f"{args.dataset}: {len(data.x_train)} train / {len(data.x_test)} test images "
          f"{data.channels}×{image_size}×{image_size} on {device}; experiment {experiment}; out {out}", file=sys.stderr)
    try:
        if experiment == "single":
            df = pd_frame([run(RunSpec(args.model, attention, s, args.seed, vit.patch), data, vit, tcfg, out, **common)], out)
        elif experiment == "compare":
            df = compare(data, vit, tcfg, out, seeds=range(args.seed, args.seed + args.seeds), **common)
        elif experiment == "permuted":
            models = ("vit", "cnn") if args.dataset == "digits" else ("vit", "resnet18", "vgg19")
            vit2 = dataclasses.replace(vit, patch=2)
            df = permuted(data, vit2, tcfg, out, models=models, seed=args.seed, patch=2, **common)
        elif experiment == "robustness":
            s_r, p_r = s or pick["patch"], pick["patch"]  # default: tiles of one ViT patch
            if s_r % p_r:
                fail(f"--shuffle-grid: tiles of {s_r} pixels must hold whole ViT patches of {p_r} pixels")
            cnn = "cnn" if args.dataset == "digits" else "resnet18"
            rows = robustness(data, vit, tcfg, out, seeds=range(args.seed, args.seed + args.seeds), s=s_r, patch=p_r,
                              cnn=cnn, perm_seed=args.perm_seed, progress=True)
            rows["run"] = rows["run"] + rows["permuted"].map({True: f" (π_{s_r})", False: ""})
            robustness_figure(rows, f"{args.dataset}: original vs permuted (s = {s_r})").savefig(out / "robustness.png", dpi=120)
            for m, dr in robustness_drops(rows).items():
                print(f"{m}: accuracy drop under π_{s_r} = {dr.mean():.4f} (per seed {', '.join(f'{v:.4f}' for v in dr)})")
            df = pd_frame(rows.to_dict("records"), out)
        else:
            atts = (args.attention,) if args.attention else ("positional", "vanilla")
            df = demo(data, vit, tcfg, out, seed=args.seed, attentions=atts, **common)
    except Diverged as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # e.g. --resume into a folder of another configuration
        fail(str(e))
    cols = ["run", "grid", "epochs", "final_test_acc", "best_test_acc", "final_train_loss", "images_per_s", "seconds"]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}" if v < 10 else f"{v:,.0f}"))
    print(f"wrote {out}/summary.csv and one folder per run (history.csv, checkpoint.pt, run.json, maps)", file=sys.stderr)
    return 0


def pd_frame(rows, out):
    import pandas as pd

    df = pd.DataFrame(rows)
    df.to_csv(out / "summary.csv", index=False)
    return df


if __name__ == "__main__":
    sys.exit(main())
