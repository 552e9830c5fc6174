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

from ..cli import (
    EPOCHS_MAX,
    SEEDS_MAX,
    ArgumentParser,
    add_common_arguments,
    add_out_argument,
    number,
    output_dir,
    path_arg,
    positive,
)
from ..cli import fail as _cli_fail
from ..paths import run_dir
from ..runner import Command, Invocation
from .threads import describe, passive_wait

PROG = "python -m theorydyn.vision"


def fail(message: str):
    _cli_fail(message, PROG)


def _add_model_and_seed_arguments(p: argparse.ArgumentParser) -> None:
    """The ViT's shape and initialisation (defaults from the dataset's preset) and the seeds of the runs and of π_s."""
    g = p.add_argument_group("ViT shape (defaults depend on the dataset)")
    for k in ("width", "depth", "heads", "mlp", "patch"):
        g.add_argument(f"--{k}", type=positive(int, f"--{k}"), default=None, help="default: the dataset's preset")
    g.add_argument(
        "--init",
        choices=("vit", "torch"),
        default=None,
        help="linear layers: vit = N(0, 0.02²) weights, zero biases; torch = PyTorch's U(±1/√fan_in) "
        "(default: torch on digits, vit on 32×32 images)",
    )
    g.add_argument(
        "--pos-std",
        type=positive(float, "--pos-std"),
        default=None,
        help="std σ of P's initialisation N(0, σ²), truncated at ±2σ (default: 1 on digits, 0.02 on 32×32)",
    )
    p.add_argument(
        "--seed",
        type=number(int, "--seed", low=0, high=SEED_MAX),
        default=0,
        help=f"seed of the initialisation and the data order of the one run per configuration, 0..{SEED_MAX} "
        "(single, permuted, demo)",
    )
    p.add_argument(
        "--seeds",
        type=number(int, "--seeds", low=1, high=SEEDS_MAX),
        default=3,
        metavar="K",
        help="number of seeds of compare and robustness, an integer >= 1: seeds --first-seed F … F+K-1",
    )
    p.add_argument(
        "--first-seed",
        type=number(int, "--first-seed", low=0, high=SEED_MAX),
        default=0,
        metavar="F",
        help="the first of the --seeds seeds (compare, robustness)",
    )
    p.add_argument(
        "--perm-seed",
        type=number(int, "--perm-seed", low=0, high=SEED_MAX),
        default=0,
        help="seed of the grid permutation π_s (where images are permuted)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument(
        "dataset", nargs="?", default="digits", choices=("digits", "cifar10", "cifar100", "svhn"), help="the images"
    )
    p.add_argument(
        "--experiment",
        choices=("single", "compare", "permuted", "robustness", "demo"),
        default=None,
        help="what to train (default: demo for digits, single otherwise)",
    )
    p.add_argument(
        "--model",
        choices=("vit", "resnet18", "vgg19", "cnn"),
        default="vit",
        help="the network of --experiment single (the other experiments fix theirs)",
    )
    p.add_argument(
        "--attention",
        choices=("positional", "vanilla"),
        default=None,
        help="default positional (the demo: both); refused by --experiment compare",
    )
    p.add_argument(
        "--shuffle-grid",
        type=positive(int, "--shuffle-grid"),
        default=None,
        metavar="S",
        help="permute the S×S tiles with π_S (S must divide the image size; single and robustness)",
    )
    p.add_argument(
        "--epochs",
        type=number(int, "--epochs", low=1, high=EPOCHS_MAX),
        default=None,
        help=f"1..{EPOCHS_MAX} (default: the dataset's preset)",
    )
    p.add_argument(
        "--batch-size", type=positive(int, "--batch-size"), default=None, help="default: the dataset's preset"
    )
    p.add_argument(
        "--lr", type=positive(float, "--lr"), default=None, help="AdamW learning rate (default: the dataset's preset)"
    )
    p.add_argument(
        "--weight-decay",
        type=positive(float, "--weight-decay", allow_zero=True),
        default=None,
        help="AdamW weight decay of the matrices (default 0.05)",
    )
    p.add_argument(
        "--warmup",
        type=number(float, "--warmup", low=0),
        default=None,
        help="warmup epochs, at most --epochs (default: the dataset's preset)",
    )
    p.add_argument(
        "--label-smoothing",
        type=number(float, "--label-smoothing", low=0, high=1, high_open=True),
        default=None,
        help="in [0, 1) (default: 0 on digits, 0.1 on 32×32 images)",
    )
    p.add_argument(
        "--pad",
        type=positive(int, "--pad", allow_zero=True),
        default=None,
        help="random-crop padding (default: 0 on digits, 4 on 32×32 images)",
    )
    _add_model_and_seed_arguments(p)
    p.add_argument(
        "--data-dir", type=path_arg("--data-dir"), default=None, help="folder of the official archives (default ./data)"
    )
    p.add_argument("--no-download", action="store_true", help="never try the network")
    p.add_argument("--device", choices=("cuda", "cpu"), default=None, help="default: cuda if present, else cpu")
    p.add_argument("--compile", action="store_true", help="torch.compile the network")
    p.add_argument(
        "--threads",
        type=positive(int, "--threads"),
        default=None,
        help="CPU threads of torch (CPU results are bit-identical for the same seed *and* the same thread "
        "count: reductions are split by thread; default torch's choice)",
    )
    add_out_argument(
        p,
        None,
        "output folder (default <run dir>/vision/<dataset>-<experiment>; the run dir is $THEORYDYN_HOME or runs/)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue the runs in --out from their checkpoints (robustness always reuses finished runs)",
    )
    add_common_arguments(p, seed=None, force="device")
    return p


#: the largest seed (numpy's and torch's seeds both accept 0 … 2³² − 1)
SEED_MAX = 2**32 - 1
parser = build_parser  # the former name


#: where each flag acts (experiments); given elsewhere it would do nothing, so it is refused
ONLY_IN = {
    "model": ("single",),
    "shuffle_grid": ("single", "robustness"),
    "seeds": ("compare", "robustness"),
    "first_seed": ("compare", "robustness"),
    "seed": ("single", "permuted", "demo"),
    "resume": ("single", "compare", "permuted", "demo"),
    "patch": ("single", "compare", "robustness", "demo"),
}
#: image channels and classes per dataset (for the memory estimate, before any data is read)
SHAPES = {"digits": (1, 10), "cifar10": (3, 10), "cifar100": (3, 100), "svhn": (3, 10)}


def _remove_new(folders) -> None:
    """Remove the folders a refused run created (only empty ones, deepest first)."""
    for q in sorted(set(folders), key=lambda q: -len(q.parts)):
        try:
            q.rmdir()
        except OSError:
            pass


def run(inv: Invocation) -> int:
    """Every input is checked before any training (exit 2 naming the flag): ranges, flags that do
    nothing in the chosen experiment, shapes, the memory of one training step on the device, --out
    (created and proven writable before the data is read; removed again if the run is refused)."""
    args, given = inv.args, inv.given()
    passive_wait()  # before torch loads OpenMP (theorydyn.vision.threads)
    try:
        import torch
    except ImportError:
        fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)")
    from ..resources import vit_train_memory
    from .bench import guard_device_memory
    from .data import DataError, default_device, load
    from .experiments import (
        RunSpec,
        compare,
        configs,
        demo,
        permuted,
        preset_of,
        robustness,
        robustness_drops,
        robustness_figure,
    )
    from .experiments import run as train_run
    from .train import Diverged

    image_size = 8 if args.dataset == "digits" else 32
    # the preset, with each entry that has a flag replaced by the flag's value when given
    pick = {
        k: getattr(args, k) if getattr(args, k, None) is not None else v for k, v in preset_of(args.dataset).items()
    }
    warmup = pick["warmup"]
    experiment = args.experiment or ("demo" if args.dataset == "digits" else "single")
    if experiment == "compare" and args.attention is not None:
        fail("--attention: the compare experiment trains both attentions; drop --attention")
    s = args.shuffle_grid
    # the values first, then whether each flag acts in this experiment
    if s is not None and image_size % s:
        fail(f"--shuffle-grid: the grid size must divide the image size {image_size} of {args.dataset}, got {s}")
    if image_size % pick["patch"]:
        fail(f"--patch: the patch size must divide the image size {image_size}, got {pick['patch']}")
    if pick["width"] % pick["heads"]:
        fail(f"--heads: must divide --width {pick['width']}, got {pick['heads']}")
    for k, where in ONLY_IN.items():
        if k in given and experiment not in where:
            fail(f"--{k.replace('_', '-')}: does nothing in --experiment {experiment} (used by {', '.join(where)})")
    if "perm_seed" in given and not (experiment in ("permuted", "robustness") or (experiment == "single" and s)):
        fail("--perm-seed: only used where images are permuted (--shuffle-grid with single; permuted; robustness)")
    if experiment == "single" and args.model != "vit":
        for k in ("attention", "width", "depth", "heads", "mlp", "patch", "init", "pos_std"):
            if k in given:
                fail(f"--{k.replace('_', '-')}: shapes only the ViT; --model {args.model} has its own architecture")
    if "warmup" in given and warmup > pick["epochs"]:
        fail(f"--warmup: {warmup:g} warmup epochs exceed the {pick['epochs']} epochs of training")
    attention = args.attention or "positional"
    if s is not None and args.model == "vit" and experiment == "single" and s % pick["patch"]:
        fail(f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels")
    if experiment == "robustness" and (s or pick["patch"]) % pick["patch"]:
        fail(f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels")
    if args.data_dir is not None and not Path(args.data_dir).is_dir():
        fail(f"--data-dir: {args.data_dir} is not an existing directory")
    device = args.device or default_device()
    if device == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available")
    channels, classes = SHAPES[args.dataset]
    if args.model == "vit" or experiment != "single":  # the other networks' sizes are fixed (and small)
        patch = 2 if experiment == "permuted" else pick["patch"]
        est = vit_train_memory(
            pick["batch_size"],
            pick["width"],
            pick["depth"],
            pick["heads"],
            pick["mlp"],
            patch,
            image_size,
            channels,
            classes,
        )
        guard_device_memory(
            est,
            force=args.force,
            device=torch.device(device),
            prog=PROG,
            flags={"batch": "--batch-size", "width": "--width", "depth": "--depth"},
        )
    out = Path(args.out) if args.out is not None else run_dir("vision", f"{args.dataset}-{experiment}")
    if args.out is not None and not str(args.out).strip():
        fail("--out: must be a folder path, got ''")
    new = [q for q in (out.absolute(), *out.absolute().parents) if not q.exists()]
    output_dir(out, "--out")
    try:
        try:
            data = load(args.dataset, args.data_dir, device=device, download=not args.no_download)
        except DataError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            _remove_new(new)
            return 2
        if pick["batch_size"] > len(data.x_train):
            fail(f"--batch-size: must not exceed the {len(data.x_train)} training images, got {pick['batch_size']}")
    except SystemExit:
        _remove_new(new)
        raise
    if args.threads:
        torch.set_num_threads(args.threads)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    vit, tcfg = configs(
        pick,
        image_size=image_size,
        channels=data.channels,
        classes=data.classes,
        attention=attention,
        seed=args.seed,
        compile=args.compile,
    )
    common = dict(resume=args.resume, perm_seed=args.perm_seed)
    print(
        f"{args.dataset}: {len(data.x_train)} train / {len(data.x_test)} test images "
        f"{data.channels}×{image_size}×{image_size} on {device}"
        f"{f' ({describe(torch.get_num_threads())})' if device == 'cpu' else ''}; experiment {experiment}; out {out}",
        file=sys.stderr,
    )
    try:
        if experiment == "single":
            spec = RunSpec(args.model, attention, s, args.seed, vit.patch)
            df = pd_frame([train_run(spec, data, vit, tcfg, out, **common, progress=not args.quiet)], out)
        elif experiment == "compare":
            seeds = range(args.first_seed, args.first_seed + args.seeds)
            df = compare(data, vit, tcfg, out, seeds=seeds, **common, progress=not args.quiet)
        elif experiment == "permuted":
            models = ("vit", "cnn") if args.dataset == "digits" else ("vit", "resnet18", "vgg19")
            vit2 = dataclasses.replace(vit, patch=2)
            df = permuted(
                data, vit2, tcfg, out, models=models, seed=args.seed, patch=2, **common, progress=not args.quiet
            )
        elif experiment == "robustness":
            s_r, p_r = s or pick["patch"], pick["patch"]  # default: tiles of one ViT patch (checked above)
            cnn = "cnn" if args.dataset == "digits" else "resnet18"
            rows = robustness(
                data,
                vit,
                tcfg,
                out,
                seeds=range(args.first_seed, args.first_seed + args.seeds),
                s=s_r,
                patch=p_r,
                cnn=cnn,
                perm_seed=args.perm_seed,
                progress=not args.quiet,
            )
            rows["run"] = rows["run"] + rows["permuted"].map({True: f" (π_{s_r})", False: ""})
            fig = robustness_figure(rows, f"{args.dataset}: original vs permuted (s = {s_r})")
            fig.savefig(out / "robustness.png", dpi=120)
            for m, dr in robustness_drops(rows).items():
                print(
                    f"{m}: accuracy drop under π_{s_r} = {dr.mean():.4f} (per seed {', '.join(f'{v:.4f}' for v in dr)})"
                )
            df = pd_frame(rows.to_dict("records"), out)
        else:
            atts = (args.attention,) if args.attention else ("positional", "vanilla")
            df = demo(data, vit, tcfg, out, seed=args.seed, attentions=atts, **common, progress=not args.quiet)
    except Diverged as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # e.g. --resume into a folder of another configuration
        fail(str(e))
    cols = ["run", "grid", "epochs", "final_test_acc", "best_test_acc", "final_train_loss", "images_per_s", "seconds"]
    print(df[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}" if v < 10 else f"{v:,.0f}"))
    if experiment == "compare":
        for att, g in df.groupby("attention", sort=False):
            acc = g.final_test_acc
            print(
                f"{att}: mean final test accuracy {acc.mean():.4f} over {len(acc)} seeds "
                f"({', '.join(f'{v:.4f}' for v in acc)})"
            )
    print(
        f"wrote {out}/summary.csv and one folder per run (history.csv, checkpoint.pt, run.json, maps)", file=sys.stderr
    )
    return 0


def pd_frame(rows, out):
    import pandas as pd

    df = pd.DataFrame(rows)
    df.to_csv(out / "summary.csv", index=False)
    return df


COMMAND = Command(PROG, build_parser, run)


def main(argv=None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
