"""``python -m theorydyn.vision {digits,cifar10,cifar100,svhn} [options]`` — Section 6 on real images.

Without ``--experiment``: ``digits`` runs the demo (positional and vanilla ViT, one seed each,
about a minute on a 2-core CPU); the other datasets train one network. ``--attention`` picks the
attention of every mode that trains one ViT (single, permuted, robustness; the demo then trains only
that one); ``compare`` trains both and refuses the flag. See :mod:`theorydyn.vision.experiments`
for what each experiment writes.
"""

from __future__ import annotations

import sys

from ..cli import tools as cli
from ..cli.configs import add_config_flags
from ..cli.runner import Command, Invocation
from .config import FRESH_WHAT, ON_INTERRUPT, OUT_HELP, SHAPE_FLAGS, TRAIN_FLAGS, TRAIN_NOTES, TrainConfig, VisionConfig
from .threads import passive_wait

PROG = "python -m theorydyn.vision"


def build_parser() -> cli.ArgumentParser:
    """VisionConfig's fields, TrainConfig's (None: the dataset's preset), --out, --fresh, --quiet, --force."""
    p = cli.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    add_config_flags(p, VisionConfig, only=("dataset", "experiment", "model", "attention"))
    add_config_flags(p, TrainConfig, only=TRAIN_FLAGS, defaults=dict.fromkeys(TRAIN_FLAGS), notes=TRAIN_NOTES)
    add_config_flags(p.add_argument_group("ViT shape (defaults depend on the dataset)"), VisionConfig, only=SHAPE_FLAGS)
    add_config_flags(p, TrainConfig, only=("seed",))
    add_config_flags(p, VisionConfig, only=("seeds", "first_seed", "perm_seed", "data_dir", "no_download", "device"))
    add_config_flags(p, TrainConfig, only=("compile",))
    add_config_flags(p, VisionConfig, only=("threads",))
    cli.add_out_argument(p, None, OUT_HELP)
    cli.add_fresh_argument(p, FRESH_WHAT)
    add_config_flags(p, VisionConfig, only=("resume",))
    cli.add_common_arguments(p, seed=None, force="device")
    return p


def run(inv: Invocation) -> int:
    """Every input is checked before any training (exit 2 naming the flag): ranges, flags that do
    nothing in the chosen experiment, shapes, the memory of one training step on the device, --out
    (created and proven writable before the data is read; removed again if the run is refused)."""
    args = inv.args
    passive_wait()  # before torch loads OpenMP (theorydyn.vision.threads)
    try:
        import torch
    except ImportError:
        inv.fail("torch is missing: install the vision extra (pip install torch==2.13.0 scikit-learn)")
    from .bench import guard_device_memory
    from .data import DataError
    from .plan import MEMORY_FLAGS, Plan, summary_text
    from .train import Diverged

    try:
        with inv.refusing():  # every input checked before any work; --out made last, and unmade if refused
            plan = Plan.of(inv.config(VisionConfig), vars(args), inv.given())
            device, out = plan.device(), plan.out(args.out)
            if (est := plan.memory()) is not None:
                guard_device_memory(est, force=args.force, device=torch.device(device), prog=PROG, flags=MEMORY_FLAGS)
            with cli.unmade_if_refused(out):
                inv.output_dir(out)
                data = plan.load(device)
    except DataError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    for path in plan.outputs(out):  # a link, a folder or a full disk: refused before any training
        inv.probe(path)
    vit, tcfg = plan.configs(data, device, compile=args.compile)
    print(plan.describe(data, device, out), file=sys.stderr)
    try:
        with inv.refusing():  # e.g. a folder of another configuration, or an output that is a link
            if args.fresh and (moved := plan.start_over(data, vit, tcfg, out)):
                print(f"{PROG}: --fresh: {len(moved)} earlier output(s) moved aside, e.g. {moved[0]}", file=sys.stderr)
            df, lines = plan.train(
                data, vit, tcfg, out, plot_format=inv.figure_format, quiet=args.quiet, status=cli.status
            )
    except Diverged as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 1
    print("\n".join([*lines, summary_text(df, plan.experiment)]))
    print(
        f"wrote {out}/summary.csv and one folder per run (history.csv, checkpoint.pt, run.json, maps)", file=sys.stderr
    )
    return 0


COMMAND = Command(PROG, build_parser, run, on_interrupt=ON_INTERRUPT, draws="png")
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
