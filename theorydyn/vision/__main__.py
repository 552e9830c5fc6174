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

from ..cli.configs import add_config_flags, as_seeds
from ..cli.runner import Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_fresh_argument,
    add_out_argument,
    output_dir,
)
from ..cli.tools import fail as _cli_fail
from ..infra.paths import run_dir
from .config import SHAPE_FLAGS, TRAIN_FLAGS, TrainConfig, VisionConfig
from .threads import describe, passive_wait

PROG = "python -m theorydyn.vision"


def fail(message: str):
    _cli_fail(message, PROG)


def build_parser() -> argparse.ArgumentParser:
    """The flags: :class:`~theorydyn.vision.config.VisionConfig`'s fields, the training flags of
    :class:`~theorydyn.vision.config.TrainConfig` (None: the dataset's preset), ``--out``, ``--fresh``,
    ``--quiet`` and ``--force``."""
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_config_flags(p, VisionConfig, only=("dataset", "experiment", "model", "attention"))
    # the training flags are TrainConfig's fields (rules and help written there); None: the dataset's preset
    preset = "default: the dataset's preset"
    add_config_flags(
        p,
        TrainConfig,
        only=TRAIN_FLAGS,
        defaults={k: None for k in TRAIN_FLAGS},
        notes={
            **dict.fromkeys(("epochs", "batch_size", "lr", "warmup_epochs"), preset),
            "label_smoothing": "default: 0 on digits, 0.1 on 32×32 images",
            "pad": "default: 0 on digits, 4 on 32×32 images",
        },
    )
    add_config_flags(p.add_argument_group("ViT shape (defaults depend on the dataset)"), VisionConfig, only=SHAPE_FLAGS)
    add_config_flags(p, TrainConfig, only=("seed",))
    add_config_flags(p, VisionConfig, only=("seeds", "first_seed", "perm_seed", "data_dir", "no_download", "device"))
    add_config_flags(p, TrainConfig, only=("compile",))
    add_config_flags(p, VisionConfig, only=("threads",))
    add_out_argument(
        p,
        None,
        "output folder (default <run dir>/vision/<dataset>-<experiment>; the run dir is $THEORYDYN_HOME or runs/)",
    )
    add_fresh_argument(
        p,
        "the experiment's run folders in --out (history.csv, checkpoint.pt, run.json, maps), its summary.csv and "
        "figure (robustness: its cached runs and their stored rows)",
    )
    add_config_flags(p, VisionConfig, only=("resume",))
    add_common_arguments(p, seed=None, force="device")
    return p


parser = build_parser  # the former name


#: where each flag acts (experiments); given elsewhere it would do nothing, so it is refused
ONLY_IN = {
    "model": ("single",),
    "shuffle_grid": ("single", "robustness"),
    "seeds": ("compare", "robustness"),
    "first_seed": ("compare", "robustness"),
    "seed": ("single", "permuted", "demo"),
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


def _check_flags(args: argparse.Namespace, given: set[str], pick: dict, experiment: str, image_size: int) -> None:
    """The values first, then whether each flag acts in this experiment (exit 2 naming the flag)."""
    s = args.shuffle_grid
    warmup = pick["warmup"]
    if experiment == "compare" and args.attention is not None:
        fail("--attention: the compare experiment trains both attentions; drop --attention")
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
    if s is not None and args.model == "vit" and experiment == "single" and s % pick["patch"]:
        fail(f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels")
    if experiment == "robustness" and (s or pick["patch"]) % pick["patch"]:
        fail(f"--shuffle-grid: tiles of {s} pixels must hold whole ViT patches of {pick['patch']} pixels")
    if args.data_dir is not None and not Path(args.data_dir).is_dir():
        fail(f"--data-dir: {args.data_dir} is not an existing directory")


def _guard_memory(args: argparse.Namespace, pick: dict, experiment: str, image_size: int, device) -> None:
    """Refuse (exit 2) a training step whose memory estimate exceeds the device's, unless --force."""
    from .bench import guard_device_memory
    from .memory import vit_train_memory

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
            device=device,
            prog=PROG,
            flags={"batch": "--batch-size", "width": "--width", "depth": "--depth"},
        )


def _load(args: argparse.Namespace, out: Path, pick: dict, device: str, source: str = "--out"):
    """The images on ``device``, or None (the data could not be had: the message printed); --out is
    created first and removed again (its new, empty folders) when the run is refused. ``source``: what
    names --out's folder in a message (``THEORYDYN_HOME`` for the default, :meth:`Invocation.source`)."""
    from .data import DataError, load

    new = [q for q in (out.absolute(), *out.absolute().parents) if not q.exists()]
    output_dir(out, source)
    try:
        try:
            data = load(args.dataset, args.data_dir, device=device, download=not args.no_download)
        except DataError as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            _remove_new(new)
            return None
        if pick["batch_size"] > len(data.x_train):
            fail(f"--batch-size: must not exceed the {len(data.x_train)} training images, got {pick['batch_size']}")
    except SystemExit:
        _remove_new(new)
        raise
    return data


def _permuted_models(dataset: str) -> tuple[str, ...]:
    return ("vit", "cnn") if dataset == "digits" else ("vit", "resnet18", "vgg19")


def _robustness_sizes(args, pick: dict) -> tuple[int, int, str]:
    """(s, patch, CNN) of the robustness experiment: tiles of one ViT patch by default (checked above)."""
    return args.shuffle_grid or pick["patch"], pick["patch"], "cnn" if args.dataset == "digits" else "resnet18"


def _earlier_outputs(args, experiment: str, data, vit, tcfg, out: Path, pick: dict, attention: str):
    """(paths, store keys) that ``--fresh`` sets aside: the experiment's run folders, its files
    (:data:`~theorydyn.vision.experiments.EXPERIMENT_FILES`) and, for robustness, the cached runs'
    folders and their rows in the store of --out."""
    from . import experiments as ex

    seeds = as_seeds(args.seeds, first=args.first_seed)
    files = [out / name for name in ex.EXPERIMENT_FILES[experiment]]
    if experiment == "robustness":
        s_r, p_r, cnn = _robustness_sizes(args, pick)
        rvit = dataclasses.replace(vit, patch=p_r)
        specs = ex.robustness_specs(seeds, vit.attention, s_r, p_r, cnn)
        folders = [ex.cache_folder(sp, data, rvit, tcfg, out, args.perm_seed) for sp in specs]
        keys = [ex.run_key(sp, data, rvit, tcfg, args.perm_seed) for sp in specs]
        return [*folders, out / f"robustness-s{s_r}-p{p_r}.csv", *files], keys
    if experiment == "single":
        specs = [ex.RunSpec(args.model, attention, args.shuffle_grid, args.seed, vit.patch)]
    elif experiment == "compare":
        specs = [sp for group in ex.compare_specs(seeds, vit.patch).values() for sp in group]
    elif experiment == "permuted":
        specs = ex.permuted_specs(data.image_size, _permuted_models(args.dataset), vit.attention, args.seed, 2)
    else:
        specs = ex.demo_specs((args.attention,) if args.attention else ("positional", "vanilla"), args.seed, vit.patch)
    return [*(out / sp.name for sp in specs), *files], []


def _start_over(args, experiment: str, data, vit, tcfg, out: Path, pick: dict, attention: str) -> None:
    """``--fresh``: the earlier outputs (:func:`_earlier_outputs`) renamed to ``<name>.old-<UTC time>``,
    never overwritten; the cached runs' rows moved to the store's rejected table."""
    from ..infra.atomic import set_aside_all
    from ..infra.store import DB_NAME
    from .experiments import open_runs

    paths, keys = _earlier_outputs(args, experiment, data, vit, tcfg, out, pick, attention)
    moved = set_aside_all(paths)
    if keys and (out / DB_NAME).is_file():
        runs = open_runs(out)
        try:
            runs.remove(keys)
            runs.export()
        finally:
            runs.close()
    if moved:
        print(f"{PROG}: --fresh: {len(moved)} earlier output(s) moved aside, e.g. {moved[0]}", file=sys.stderr)


def _train(args, experiment: str, data, vit, tcfg, out: Path, pick: dict, attention: str):
    """Train the runs of ``experiment``; their summary as a DataFrame (also written to out/summary.csv).
    The runs resume from their checkpoints in --out (a finished run is read back, not trained again)."""
    from ..core.plotting import save
    from .experiments import RunSpec, compare, demo, permuted, robustness, robustness_drops, robustness_figure
    from .experiments import run as train_run

    if args.fresh:
        _start_over(args, experiment, data, vit, tcfg, out, pick, attention)
    s = args.shuffle_grid
    common = dict(resume=True, perm_seed=args.perm_seed, plot_format=args.format)
    seeds = as_seeds(args.seeds, first=args.first_seed)
    if experiment == "single":
        spec = RunSpec(args.model, attention, s, args.seed, vit.patch)
        status = None if args.quiet else _status
        return pd_frame([train_run(spec, data, vit, tcfg, out, **common, progress=status)], out)
    if experiment == "compare":
        return compare(data, vit, tcfg, out, seeds=seeds, **common, progress=not args.quiet)
    if experiment == "permuted":
        vit2 = dataclasses.replace(vit, patch=2)
        models = _permuted_models(args.dataset)
        return permuted(
            data, vit2, tcfg, out, models=models, seed=args.seed, patch=2, **common, progress=not args.quiet
        )
    if experiment == "robustness":
        s_r, p_r, cnn = _robustness_sizes(args, pick)
        rows = robustness(
            data, vit, tcfg, out, seeds=seeds, s=s_r, patch=p_r, cnn=cnn, perm_seed=args.perm_seed,
            progress=not args.quiet,
        )  # fmt: skip
        rows["run"] = rows["run"] + rows["permuted"].map({True: f" (π_{s_r})", False: ""})
        fig = robustness_figure(rows, f"{args.dataset}: original vs permuted (s = {s_r})")
        save(fig, out / "robustness", args.format)  # atomic, never through a link
        for m, dr in robustness_drops(rows).items():
            print(f"{m}: accuracy drop under π_{s_r} = {dr.mean():.4f} (per seed {', '.join(f'{v:.4f}' for v in dr)})")
        return pd_frame(rows.to_dict("records"), out)
    atts = (args.attention,) if args.attention else ("positional", "vanilla")
    return demo(data, vit, tcfg, out, seed=args.seed, attentions=atts, **common, progress=not args.quiet)


def _status(text: str, final: bool) -> None:
    """The training's status line (:data:`theorydyn.vision.train.Status`) on stderr: an update within an
    epoch redraws the line, an epoch's last line stays."""
    print("\r" + text + ("\n" if final else "   "), end="", file=sys.stderr, flush=True)


def _report(df, experiment: str, out: Path) -> None:
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
    from .data import default_device
    from .experiments import configs, preset_of
    from .train import Diverged

    image_size = 8 if args.dataset == "digits" else 32
    # the preset, with each entry that has a flag replaced by the flag's value when given
    pick = {
        k: getattr(args, k) if getattr(args, k, None) is not None else v for k, v in preset_of(args.dataset).items()
    }
    experiment = args.experiment or ("demo" if args.dataset == "digits" else "single")
    _check_flags(args, given, pick, experiment, image_size)
    attention = args.attention or "positional"
    device = args.device or default_device()
    if device == "cuda" and not torch.cuda.is_available():
        fail("--device: cuda requested but no CUDA device is available")
    _guard_memory(args, pick, experiment, image_size, torch.device(device))
    out = Path(args.out) if args.out is not None else run_dir("vision", f"{args.dataset}-{experiment}")
    if args.out is not None and not str(args.out).strip():
        fail("--out: must be a folder path, got ''")
    data = _load(args, out, pick, device, inv.source("--out"))
    if data is None:
        return 2
    from .experiments import EXPERIMENT_FILES

    for name in EXPERIMENT_FILES[experiment]:  # a link, a folder or a full disk there: refused before any training
        inv.probe(out / name, "--out")
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
    print(
        f"{args.dataset}: {len(data.x_train)} train / {len(data.x_test)} test images "
        f"{data.channels}×{image_size}×{image_size} on {device}"
        f"{f' ({describe(torch.get_num_threads())})' if device == 'cpu' else ''}; experiment {experiment}; out {out}",
        file=sys.stderr,
    )
    try:
        df = _train(args, experiment, data, vit, tcfg, out, pick, attention)
    except Diverged as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    except ValueError as e:  # e.g. a folder of another configuration, or an output that is a link
        fail(str(e))
    _report(df, experiment, out)
    return 0


def pd_frame(rows, out):
    """``rows`` as a DataFrame, written to ``out/summary.csv`` atomically (never through a link)."""
    import pandas as pd

    from ..infra.atomic import write_with

    df = pd.DataFrame(rows)
    write_with(out / "summary.csv", lambda t: df.to_csv(t, index=False))
    return df


COMMAND = Command(
    PROG,
    build_parser,
    run,
    on_interrupt="the epochs finished so far are saved in each run's checkpoint.pt: the same command, rerun, "
    "resumes from them (--fresh starts over, moving them aside)",
    draws="png",
)


def main(argv=None) -> int:
    return COMMAND.main(argv)


if __name__ == "__main__":
    sys.exit(main())
