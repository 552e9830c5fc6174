"""``python -m theorydyn.transfer``: the transfer experiment (Theorems 5.1, 5.2), resumable.

The same command, rerun, computes only the rows not stored yet in ``--out``; ``--fresh`` starts over. The
options are the fields of :class:`~theorydyn.transfer.config.TransferConfig` (defaults: its ``QUICK_RUN``;
``--full``: ``FULL_RUN``) and :class:`~theorydyn.transfer.config.TransferCommand`, checked by
:meth:`~theorydyn.transfer.config.TransferCommand.plan`. Exit status 0 on success, 2 on bad input (before any
work), 130 interrupted (the rows finished so far are stored).
"""

from __future__ import annotations

import sys

from ..cli import tools as cli
from ..cli.configs import add_config_flags
from ..cli.flags import add_number_or_none, restate
from ..cli.runner import RESUMES, Command, Invocation
from ..infra.paths import run_dir
from .config import HELP, LATER_FLAGS, MEMORY_FLAGS, NOTES, QUICK_RUN, RUN_FLAGS, TransferCommand, TransferConfig

PROG = "python -m theorydyn.transfer"


def build_parser() -> cli.ArgumentParser:
    ap, none = cli.ArgumentParser(prog=PROG, description=HELP["description"]), dict.fromkeys(RUN_FLAGS)
    cli.add_setting_arguments(ap, D=64, C=4)
    restate(ap, "--nu", default=None, help=HELP["nu"])
    cli.add_size_arguments(ap, dest="full", quick_help=HELP["quick"], full_help=HELP["full"])
    add_config_flags(ap, TransferConfig, only=("count",), defaults=none)
    add_config_flags(ap, TransferCommand, only=("keep_q",))
    add_config_flags(ap, TransferConfig, only=("eps",))
    add_number_or_none(ap, "--target", TransferConfig.rule("target"), default=QUICK_RUN.target, help=HELP["target"])
    add_config_flags(ap, TransferConfig, only=LATER_FLAGS, defaults=none, notes=NOTES)
    add_config_flags(ap, TransferCommand, only=("methods", "cache", "checks"))
    cli.add_common_arguments(ap, seed=None, out=str(run_dir("transfer")), out_help=HELP["out"], force="machine")
    cli.add_fresh_argument(ap, HELP["fresh"], aliases=("--recompute",))
    return ap


def run(inv: Invocation) -> int:
    """Every input is checked before any work (exit 2 naming the flag): flags that do nothing in the chosen
    mode, the options, the setting at each D, the memory of the largest D, then the --out and --cache folders."""
    import pandas as pd

    from .analysis import console_tables
    from .experiment import run as run_experiment
    from .experiment import start_over
    from .memory import run_memory

    args, given, cmd = inv.args, inv.given(), inv.config(TransferCommand)
    with inv.refusing():
        opts, s, base, rule = cmd.plan(vars(args), given, cli.shown_flags(inv.parser, given))
    inv.guard_memory(run_memory(base, opts, cmd.chosen, rule), flags=MEMORY_FLAGS)
    with cli.unmade_if_refused(args.out, cmd.cache):
        inv.output_dir(args.out)
        if cmd.cache is not None:
            inv.output_dir(cmd.cache, "--cache")
    for line in start_over(args.out) if args.fresh else ():
        print(f"{PROG}: --fresh: {line}", file=sys.stderr)
    fmt, methods = inv.figure_format, cmd.chosen
    _raw, _summary, tgt, slopes, _up = run_experiment(
        s, opts.Ds, opts, methods=methods, out=args.out, cache=cmd.cache, progress=None, bar=inv.progress,
        recompute=args.fresh, plot_format=fmt,
    )  # fmt: skip
    print(console_tables(pd.read_csv(args.out / "transfer_levels.csv"), tgt, slopes))
    print(f"wrote {args.out}/transfer_*.csv, transfer_curves.{fmt}, transfer_target.{fmt}")
    return 0


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the rows finished so far are stored in --out: {RESUMES}", draws="png"
)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
