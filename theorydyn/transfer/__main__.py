"""``python -m theorydyn.transfer``: the transfer experiment (Theorems 5.1, 5.2), resumable.

The same command, rerun, computes only the rows not stored yet in ``--out``; ``--fresh`` starts over.
The options are :class:`~theorydyn.transfer.config.TransferConfig`'s (defaults: its ``QUICK_RUN``; ``--full``:
``FULL_RUN``); their help texts and ranges are the fields'.

Exit status 0 on success, 2 on bad input (before any work), 130 interrupted (the rows finished so far
are stored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..cli.configs import add_config_flags, flag_of
from ..cli.flags import add_choice_list, add_number_or_none, add_path, add_switch
from ..cli.runner import RESUMES, Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_fresh_argument,
    add_number,
    add_positive,
    add_seeds,
    add_setting_arguments,
    add_size_arguments,
    output_dir,
)
from ..infra.paths import run_dir
from .config import FULL_RUN as F
from .config import QUICK_RUN as Q
from .config import TransferConfig, idle_option, short
from .sizes import DEFAULT_METHODS, METHODS

PROG = "python -m theorydyn.transfer"
#: where the ledger rows of Theorems 5.1/5.2 come from (this command no longer prints them: it sits below claims/)
VERIFY_COMMAND = "python -m theorydyn.verify --only transfer"
#: the fields set by flags whose default is the named run's (QUICK_RUN, or FULL_RUN with --full)
SIZE_FLAGS = ("Ds", "Ns", "seeds", "N_test", "upstream_N", "upstream_steps", "scratch_max_D", "sim_max_D")
#: the flags left None unless given (the named run's value then stands)
RUN_FLAGS = (*SIZE_FLAGS, "steps_v", "method")
#: what the help of those flags says beside the field's own text: the QUICK and FULL values
NOTES = dict(
    N_test=f"default {Q.N_test}; --full: {F.N_test}",
    upstream_N=f"method pretrained-sim; default {Q.upstream_N}; --full: {F.upstream_N}",
    upstream_steps=f"method pretrained-sim; default {Q.upstream_steps}",
    scratch_max_D=f"default {Q.scratch_max_D}; --full: {F.scratch_max_D}",
    sim_max_D=f"default {Q.sim_max_D}; --full: {F.sim_max_D}",
    eta=f"default {short(Q.eta)}",
    omega=f"default {short(Q.omega)}",
    steps_v=f"default {Q.steps_v}; frozen-attention methods",
    method=f"default {Q.method}; frozen-attention methods",
)


def build_parser() -> argparse.ArgumentParser:
    help_of, target = TransferConfig.help_of, TransferConfig.rule("target")
    ap = ArgumentParser(
        prog=PROG,
        description="Transfer with a frozen attention: accuracy against Ñ and Ñ_target against D "
        "(Theorems 5.1, 5.2), resumable. Quick by default; --full for the report sizes.",
    )
    add_setting_arguments(ap, D=64, C=4)
    for a in ap._actions:
        if a.dest == "nu":  # the transfer setting's ν (experiment.base_setting), not 1/d
            a.help = "linear part of the activation > 0 (default 1/64, the transfer setting's)"
    add_size_arguments(
        ap,
        dest="full",
        quick_help="the QUICK sizes (the default)",
        full_help="the sizes of the reported run (FULL) (default: QUICK)",
    )
    add_positive(
        ap, "--count", float, default=None, help=f"{help_of('count')} (default {Q.count:g}); not with --keep-q"
    )
    add_switch(
        ap,
        "--keep-q",
        "keep --q fixed across D instead (the old, censored rule); "
        "--q and --D (default q = min(1, C²/D)) act only with it",
    )
    add_config_flags(ap, TransferConfig, only=("eps",))
    add_number_or_none(ap, "--target", target, default=Q.target, help=f"{help_of('target')} (default {Q.target:g})")
    add_number(
        ap, "--Ds", int, low=1, nargs="+", default=None, help=f"{help_of('Ds')} (default {' '.join(map(str, Q.Ds))})"
    )
    add_number(
        ap,
        "--Ns",
        int,
        low=1,
        nargs="+",
        default=None,
        help=f"{help_of('Ns')} (default powers of 2: 1 … {Q.Ns[-1]}; --full: … {F.Ns[-1]})",
    )
    add_seeds(ap, None, f"{help_of('seeds')} (default {Q.seeds})")
    # the flags whose default is the named run's (None: resolved in transfer_config), then GD's η and ω
    add_config_flags(
        ap,
        TransferConfig,
        only=SIZE_FLAGS[3:] + ("eta", "omega", "steps_v", "method"),
        defaults=dict.fromkeys(RUN_FLAGS),
        notes=NOTES,
    )
    add_choice_list(
        ap,
        "--methods",
        METHODS,
        metavar="METHOD",
        help=f"a subset of {' '.join(METHODS)} (default {' '.join(DEFAULT_METHODS)})",
    )
    add_path(ap, "--cache", help="folder of pre-trained attentions (.npz; default OUT/upstream_cache)")
    add_switch(
        ap,
        "--checks",
        f"removed: the ledger rows (Theorems 5.1, 5.2) are '{VERIFY_COMMAND}' (add --quick for the QUICK sizes)",
    )
    add_common_arguments(
        ap,
        seed=None,
        out=str(run_dir("transfer")),
        out_help="output folder (rows, CSVs, PNGs); rerunning with the same folder resumes",
        force="machine",
    )
    add_fresh_argument(
        ap,
        "--out's stored transfer rows of this run and its transfer_* tables and figures (the pre-trained "
        "attentions of --cache are kept: they are validated on use)",
        aliases=("--recompute",),
    )
    return ap


#: what the memory estimate's parameters are called on this command line
MEMORY_FLAGS: dict[str, Any] = {
    "D": "--Ds",
    "N": "--Ns",
    "N_test": "--n-test",
    "upstream_N": "--upstream-N",
    "d": "--d",
    "n_samples": None,
    "n_test": None,
}


def _output_dirs(paths) -> None:
    """:func:`~theorydyn.cli.tools.output_dir` for each (path, flag); when one fails, the folders created for the
    others are removed again (only empty ones, deepest first), so that a refused run leaves nothing."""
    created: list[Path] = []
    try:
        for path, flag in paths:
            p = Path(path).absolute()
            created += [q for q in (p, *p.parents) if not q.exists()]
            output_dir(path, flag)
    except SystemExit:
        for q in sorted(set(created), key=lambda q: -len(q.parts)):
            try:
                q.rmdir()
            except OSError:
                pass
        raise


def _refuse_checks(inv: Invocation, given: set[str]) -> None:
    """``--checks`` is removed: exit 2 naming the command that prints the ledger rows (first any flag
    given with it that the ledger's fixed sizes would ignore)."""
    full = inv.args.full
    for a in inv.parser._actions:
        if a.dest in given and a.dest not in ("checks", "full", "out"):
            inv.fail(
                f"{a.option_strings[-1]}: has no effect with --checks (the ledger runs at fixed sizes; "
                f"only --full and --out apply)"
            )
    inv.fail(
        f"--checks: the ledger rows of Theorems 5.1 and 5.2 are printed by "
        f"'{VERIFY_COMMAND}{'' if full else ' --quick'}'; this command runs the experiment only"
    )


def transfer_config(args: argparse.Namespace) -> TransferConfig:
    """The run's :class:`TransferConfig`: the named run (``--full``: FULL_RUN, else QUICK_RUN) with the
    flags given. Raises ValueError starting with the field that breaks its rule."""
    over = {k: getattr(args, k) for k in RUN_FLAGS if getattr(args, k) is not None}
    over.update({k: tuple(over[k]) for k in ("Ds", "Ns") if k in over})
    count = None if args.keep_q else (Q.count if args.count is None else args.count)
    return (F if args.full else Q).replace(
        **over, omega=args.omega, eta=args.eta, count=count, eps=args.eps, target=args.target
    )


def _flagged(e: ValueError) -> str:
    """A config's message (``Ns must …``, ``Ds: …``) starting with the flag of its field instead."""
    text = str(e)
    name = text.split(" ", 1)[0].rstrip(":")
    if name not in TransferConfig.names():
        return text
    rest = text[len(name) + 2 :] if text.startswith(f"{name}: ") else text
    return f"{flag_of(TransferConfig, name)}: {rest}"


def run(inv: Invocation) -> int:
    """Every input is checked before any work (exit 2 naming the flag): flags that do nothing in the chosen
    mode, the options, the setting at each D, the memory of the largest D, then the --out and --cache folders."""
    import pandas as pd

    from .analysis import console_tables
    from .experiment import run as run_experiment
    from .experiment import start_over
    from .memory import run_memory

    args, given = inv.args, inv.given()
    if args.checks:
        _refuse_checks(inv, given)
    methods = tuple(dict.fromkeys(args.methods or DEFAULT_METHODS))  # choices checked by the parser
    idle = idle_option(given, methods, args.keep_q)
    if idle:
        inv.fail(idle)
    try:
        opts = transfer_config(args)
        s = inv.setting(nu=args.nu if args.nu is not None else 1 / 64)
        base, rule = opts.upstream_base(s)
    except ValueError as e:
        inv.fail(_flagged(e))
    inv.guard_memory(run_memory(base, opts, methods, rule), force=args.force, flags=MEMORY_FLAGS)
    _output_dirs([(args.out, inv.source("--out"))] + ([(args.cache, "--cache")] if args.cache is not None else []))
    if args.fresh:
        for line in start_over(Path(args.out)):
            print(f"{PROG}: --fresh: {line}", file=sys.stderr)
    _raw, _summary, tgt, slopes, _up = run_experiment(
        s,
        opts.Ds,
        opts,
        methods=methods,
        out=args.out,
        cache=args.cache,
        progress=None,
        bar=not args.quiet,
        recompute=args.fresh,
        plot_format=inv.figure_format,
    )
    print(console_tables(pd.read_csv(args.out / "transfer_levels.csv"), tgt, slopes))
    fmt = inv.figure_format
    print(f"wrote {args.out}/transfer_*.csv, transfer_curves.{fmt}, transfer_target.{fmt}")
    return 0


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the rows finished so far are stored in --out: {RESUMES}", draws="png"
)


main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
