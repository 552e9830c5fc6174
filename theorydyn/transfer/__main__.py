"""``python -m theorydyn.transfer``: the transfer experiment (Theorems 5.1, 5.2), resumable.

The same command, rerun, computes only the rows not stored yet in ``--out``; ``--fresh`` starts over.

Exit status 0 on success, 2 on bad input (before any work), 130 interrupted (the rows finished so far
are stored).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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
    fail,
    number,
    output_dir,
    path_arg,
)
from ..infra.paths import run_dir
from .sizes import CACHED, DEFAULT_METHODS, FROZEN, FULL, METHODS, QUICK

PROG = "python -m theorydyn.transfer"
#: where the ledger rows of Theorems 5.1/5.2 come from (this command no longer prints them: it sits below claims/)
VERIFY_COMMAND = "python -m theorydyn.verify --only transfer"


def _add_upstream_arguments(ap: argparse.ArgumentParser) -> None:
    """The finite-sample pre-training (method pretrained-sim) and the largest D of the costly methods."""
    add_positive(
        ap,
        "--upstream-N",
        int,
        default=None,
        help=f"finite-sample pre-training samples (method pretrained-sim; default {QUICK['upstream_N']}; "
        f"--full: {FULL['upstream_N']})",
    )
    add_positive(
        ap,
        "--upstream-steps",
        int,
        default=None,
        help=f"finite-sample pre-training steps (method pretrained-sim; default {QUICK['upstream_steps']})",
    )
    add_positive(
        ap,
        "--scratch-max-D",
        int,
        default=None,
        help=f"train 'scratch' only up to this D (default {QUICK['scratch_max_D']}; --full: {FULL['scratch_max_D']})",
    )
    add_positive(
        ap,
        "--sim-max-D",
        int,
        default=None,
        help=f"finite-sample pre-training only up to this D (default {QUICK['sim_max_D']}; "
        f"--full: {FULL['sim_max_D']})",
    )


def _add_method_arguments(ap: argparse.ArgumentParser) -> None:
    """The flags of the methods after pre-training: GD's η and ω, ṽ's fine-tuning, the method subset, the
    cache of pre-trained attentions (and the removed --checks)."""
    add_positive(ap, "--eta", float, default=10.0, help="GD step size (default 10)")
    add_positive(ap, "--omega", float, default=1e-3, help="initialisation scale ω (default 1e-3)")
    add_positive(
        ap,
        "--steps-v",
        int,
        default=None,
        help="fine-tuning steps for ṽ (default 300; frozen-attention methods)",
    )
    ap.add_argument(
        "--method", choices=("gd", "lbfgs"), default=None, help="optimiser of ṽ (default gd; frozen-attention methods)"
    )
    ap.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=None,
        metavar="METHOD",
        help=f"a subset of {' '.join(METHODS)} (default {' '.join(DEFAULT_METHODS)})",
    )
    ap.add_argument(
        "--cache",
        type=path_arg("--cache"),
        default=None,
        help="folder of pre-trained attentions (.npz; default OUT/upstream_cache)",
    )
    ap.add_argument(
        "--checks",
        action="store_true",
        help=f"removed: the ledger rows (Theorems 5.1, 5.2) are '{VERIFY_COMMAND}' (add --quick for the QUICK sizes)",
    )


def build_parser() -> argparse.ArgumentParser:
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
        ap,
        "--count",
        float,
        default=None,
        help="K = q(D − C), kept across D (default 8); not with --keep-q",
    )
    ap.add_argument(
        "--keep-q",
        action="store_true",
        help="keep --q fixed across D instead (the old, censored rule); "
        "--q and --D (default q = min(1, C²/D)) act only with it",
    )
    add_number(
        ap,
        "--eps",
        float,
        low=0,
        high=0.5,
        low_open=True,
        high_open=True,
        default=0.05,
        help="theorem level of the pre-trained Â: accuracy a*(D) − eps, in (0, 0.5) (default 0.05)",
    )
    ap.add_argument(
        "--target",
        type=_target_arg,
        default=0.75,
        help="common target accuracy of every method, in (0.5, 1), below every baseline's ceiling; "
        "'none': a*(D) − eps for every method (default 0.75)",
    )
    add_number(
        ap,
        "--Ds",
        int,
        low=1,
        nargs="+",
        default=None,
        help=f"D values, each a multiple of C (default {' '.join(map(str, QUICK['Ds']))})",
    )
    add_number(
        ap,
        "--Ns",
        int,
        low=1,
        nargs="+",
        default=None,
        help=f"increasing Ñ grid (default powers of 2: 1 … {QUICK['Ns'][-1]}; --full: … {FULL['Ns'][-1]})",
    )
    add_seeds(
        ap,
        None,
        f"number of seeds per Ñ, an integer >= 1: seeds 0 … K-1 (default {QUICK['seeds']})",
    )
    add_positive(
        ap,
        "--n-test",
        int,
        dest="N_test",
        default=None,
        help=f"fresh test samples (default {QUICK['N_test']}; --full: {FULL['N_test']})",
    )
    # the former spelling, still read (one spelling in --help: --n-test, as simulate's)
    add_positive(ap, "--N-test", int, dest="N_test", default=None, help=argparse.SUPPRESS)
    _add_upstream_arguments(ap)
    _add_method_arguments(ap)
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


def memory(base, Ds, opts, methods, rule: str):
    """The largest :func:`~theorydyn.infra.memory.transfer_memory` over the D's of the run (they run in turn)."""
    from ..core.setting import setting_at
    from .memory import transfer_memory
    from .task import downstream_setting

    ests = []
    for D in Ds:
        s_up = setting_at(base, D, rule)
        sd = downstream_setting(s_up)
        run_at = [
            m
            for m in methods
            if not (
                (m == "scratch" and D > opts.scratch_max_D)
                or (m == "logreg" and D > opts.logreg_max_D)
                or (m == "pretrained-sim" and D > opts.sim_max_D)
            )
        ]
        n_train = max((opts.max_N(m, sd) for m in run_at), default=min(opts.Ns))
        sim = "pretrained-sim" in methods and D <= opts.sim_max_D
        ests.append(
            transfer_memory(
                D,
                s_up.C,
                s_up.d,
                s_up.q,
                opts.N_test,
                n_train,
                ceiling_samples=opts.ceiling_samples,
                flow_n_samples=opts.flow_n_samples if set(methods) & {"pretrained", "other-partition"} else None,
                upstream_N=opts.upstream_N if sim else None,
            )
        )
    return max(ests, key=lambda e: e.total)


def _target_arg(text: str) -> float | None:
    """``--target``: a float in (0.5, 1), or ``none``."""
    if text.strip().lower() == "none":
        return None
    return number(float, "--target", low=0.5, high=1, low_open=True, high_open=True)(text)


def _refuse_idle_flags(args: argparse.Namespace, given, methods: tuple[str, ...]) -> None:
    """A flag that does nothing in this mode (with these --methods, with or without --keep-q) is an error
    (exit 2 naming it), not silently dropped."""
    if args.keep_q and "count" in given:
        fail("--count: not used with --keep-q (q stays at --q across D)", PROG)
    if not args.keep_q:
        if "q" in given:
            fail("--q: only used with --keep-q (otherwise q = K/(D − C) follows --count)", PROG)
    if "D" in given and (not args.keep_q or "q" in given):
        fail("--D: the experiment runs at each D of --Ds; --D only sets the default q = min(1, C²/D) of --keep-q", PROG)
    uses = {
        "upstream_N": "pretrained-sim",
        "upstream_steps": "pretrained-sim",
        "sim_max_D": "pretrained-sim",
        "scratch_max_D": "scratch",
    }
    for k, m in uses.items():
        if k in given and m not in methods:
            fail(f"--{k.replace('_', '-')}: only used by method {m}, which --methods leaves out", PROG)
    for k in ("steps_v", "method"):
        if k in given and not set(methods) & set(FROZEN):
            fail(
                f"--{k.replace('_', '-')}: only used by the frozen-attention methods ({', '.join(FROZEN)}), "
                f"which --methods leaves out",
                PROG,
            )
    for k in ("eta", "omega"):
        if k in given and set(methods) <= {"logreg"}:
            fail(f"--{k}: not used by logreg (L2 logistic regression, λ by cross-validation)", PROG)
    if "cache" in given and not set(methods) & set(CACHED):
        fail(f"--cache: only used by the pre-trained methods ({', '.join(CACHED)}), which --methods leaves out", PROG)


#: the files of a transfer run in --out that --fresh sets aside (the store's rows are set aside row by row)
OUTPUT_GLOBS = ("transfer_*.csv", "transfer_*.png", "transfer_*.pdf", "transfer_*.svg")


def _start_over(out: Path) -> None:
    """``--fresh``: the earlier transfer tables and figures of ``out`` renamed to ``<name>.old-<UTC time>``
    (never overwritten), a damaged results store moved aside; the rows of this run are set aside in
    the store's rejected table as they are computed again (``recompute``)."""
    from ..infra.atomic import set_aside_all
    from ..infra.store import DB_NAME, StoreDamaged, connect, move_aside

    moved = set_aside_all(sorted({q for g in OUTPUT_GLOBS for q in out.glob(g)}))
    if moved:
        print(f"{PROG}: --fresh: {len(moved)} earlier file(s) moved aside, e.g. {moved[0]}", file=sys.stderr)
    if (out / DB_NAME).is_file():
        try:
            connect(out / DB_NAME).close()
        except StoreDamaged:
            print(f"{PROG}: --fresh: the damaged store moved to {move_aside(out / DB_NAME)}", file=sys.stderr)


def run(inv: Invocation) -> int:
    """Every input is checked before any work (exit 2 naming the flag): the setting at each D, flags that
    do nothing in the chosen mode, the memory of the largest D, then the --out and --cache folders."""
    import pandas as pd

    from ..core.setting import setting_at
    from .experiment import options_from
    from .experiment import run as run_experiment
    from .plot import describe_slope
    from .task import with_count

    ap, args, given = inv.parser, inv.args, inv.given()
    cfg = dict(FULL if args.full else QUICK)
    if args.checks:
        for a in ap._actions:
            if a.dest in given and a.dest not in ("checks", "full", "out"):
                fail(
                    f"{a.option_strings[-1]}: has no effect with --checks (the ledger runs at fixed sizes; "
                    f"only --full and --out apply)",
                    PROG,
                )
        fail(
            f"--checks: the ledger rows of Theorems 5.1 and 5.2 are printed by "
            f"'{VERIFY_COMMAND}{'' if args.full else ' --quick'}'; this command runs the experiment only",
            PROG,
        )
    methods = tuple(dict.fromkeys(args.methods or DEFAULT_METHODS))  # choices checked by the parser
    _refuse_idle_flags(args, given, methods)
    for k in ("Ds", "Ns", "seeds", "N_test", "upstream_N", "upstream_steps", "scratch_max_D", "sim_max_D"):
        if getattr(args, k) is not None:
            cfg[k] = getattr(args, k)
    if len(set(cfg["Ds"])) != len(cfg["Ds"]):  # found here, not after the whole run (while plotting)
        fail(f"--Ds: each D at most once, got {' '.join(map(str, cfg['Ds']))}", PROG)
    if list(cfg["Ns"]) != sorted(set(cfg["Ns"])):
        fail(f"--Ns: must be increasing, got {' '.join(map(str, cfg['Ns']))}", PROG)
    cfg["Ds"], cfg["Ns"] = tuple(cfg["Ds"]), tuple(cfg["Ns"])
    s = inv.setting(nu=args.nu if args.nu is not None else 1 / 64)
    count = None if args.keep_q else (8.0 if args.count is None else args.count)
    try:
        base = with_count(s, count) if count is not None else s
    except ValueError as e:
        fail(f"--count: K = {count:g} at D={s.D}, C={s.C}: {e}", PROG)
    for D in cfg["Ds"]:
        if D % s.C or D <= s.C:
            fail(f"--Ds: each D must be a multiple of C={s.C} and larger than it, got D={D}", PROG)
        try:
            setting_at(base, D, "keep" if count is None else "count")
        except ValueError as e:
            fail(f"--Ds: D={D}: {e}", PROG)
    opts = options_from(
        cfg,
        omega=args.omega,
        eta=args.eta,
        steps_v=300 if args.steps_v is None else args.steps_v,
        method=args.method or "gd",
        count=count,
        eps=args.eps,
        target=args.target,
    )
    inv.guard_memory(
        memory(base, cfg["Ds"], opts, methods, "keep" if count is None else "count"),
        force=args.force,
        flags=MEMORY_FLAGS,
    )
    _output_dirs([(args.out, inv.source("--out"))] + ([(args.cache, "--cache")] if args.cache is not None else []))
    if args.fresh:
        _start_over(Path(args.out))
    raw, summary, tgt, slopes, upstream = run_experiment(
        s,
        cfg["Ds"],
        opts,
        methods=methods,
        out=args.out,
        cache=args.cache,
        progress=None,
        bar=not args.quiet,
        recompute=args.fresh,
        plot_format=inv.figure_format,
    )
    levels = pd.read_csv(args.out / "transfer_levels.csv")
    with pd.option_context("display.width", 200, "display.max_rows", 400):
        print(levels.to_string(index=False, float_format=lambda x: f"{x:.4f}"))
        show = tgt.assign(
            N_target=[
                f"{r.lo:.3g} [{r.ci_low:.3g}, {r.ci_high:.3g}]"
                if r.kind == "value"
                else (f"> {r.lo:g}" if r.kind == "lower" else f"<= {r.hi:g}")
                for r in tgt.itertuples()
            ]
        )
        print(show[["D", "method", "level", "target", "N_target", "kind", "N_max", "max_acc"]].to_string(index=False))
        if len(slopes):
            print(
                slopes.assign(slope=[describe_slope(r) for _, r in slopes.iterrows()])[
                    ["method", "level", "x", "slope", "censored", "n_D", "rms"]
                ].to_string(index=False)
            )
        else:  # one D (--Ds 16): the table had no columns and printing it raised a KeyError traceback
            print("no slope against D: it needs two or more values of --Ds")
    fmt = inv.figure_format
    print(f"wrote {args.out}/transfer_*.csv, transfer_curves.{fmt}, transfer_target.{fmt}")
    return 0


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the rows finished so far are stored in --out: {RESUMES}", draws="png"
)


main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
