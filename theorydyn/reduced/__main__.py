"""``python -m theorydyn.reduced``: integrate the idealized dynamics, print the phases, write CSV and PNG.

Exit status: 0 on success, 1 when the run diverged or the ODE solver failed (the trajectory up
to there is written all the same) or an output could not be written (a full disk: the earlier
file is left as it was; every file is written atomically), 2 on bad input (nothing is computed).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..cli import (
    SETTING_FLAGS,
    ArgumentParser,
    add_common_arguments,
    add_setting_arguments,
    fail,
    format_time,
    number,
    positive,
    run_stem,
    setting_from_args,
    setting_name_params,
)
from ..limits import N_POINTS_MAX, S_MAX_MAX, S_MAX_MIN, STEPS_MAX
from ..paths import run_dir
from ..phases import ERR_TOL, Phases
from ..runner import Command, Invocation
from .defaults import N_SAMPLES, S_MAX, SOLVERS

PROG = "python -m theorydyn.reduced"


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(
        prog=PROG,
        description="Idealized dynamics of (alpha, gamma, rho) (Lemmas 4.1-4.3, docs/theory.md §3): phases I-III.",
    )
    add_setting_arguments(ap)
    g = ap.add_argument_group("solver")
    g.add_argument(
        "--method", choices=("flow", "gd"), default="flow", help="gradient flow in s = eta*t, or the GD recursion"
    )
    g.add_argument("--eta", type=positive(float, "--eta"), default=None, help="GD step (s = eta*step; default 1)")
    g.add_argument(
        "--steps",
        type=number(int, "--steps", low=1, high=STEPS_MAX),
        default=None,
        help=f"GD steps, 1..{STEPS_MAX:.0e} (default s_max/eta)",
    )
    g.add_argument(
        "--s-max",
        type=number(float, "--s-max", low=S_MAX_MIN, high=S_MAX_MAX),
        default=S_MAX,
        help=f"final time s, in [{S_MAX_MIN:g}, {S_MAX_MAX:g}] (default %(default)g, as the library's integrate)",
    )
    g.add_argument(
        "--n-samples",
        type=positive(int, "--n-samples"),
        default=None,
        help=f"Monte Carlo bank size, >= 2 (default {N_SAMPLES}; --expectation mc only)",
    )
    g.add_argument(
        "--expectation", choices=("mc", "exact"), default="mc", help="Monte Carlo bank or the exact expectation"
    )
    g.add_argument(
        "--n-points",
        type=number(int, "--n-points", low=2, high=N_POINTS_MAX),
        default=200,
        help=f"rows of the trajectory, 2..{N_POINTS_MAX:.0e} (default %(default)s)",
    )
    g.add_argument("--solver", choices=SOLVERS, default=None, help="ODE solver of --method flow (default LSODA)")
    g.add_argument(
        "--err-tol",
        type=positive(float, "--err-tol", below=1.0),
        default=ERR_TOL,
        help="T2 tolerance on err_f, in (0, 1) (default %(default)s)",
    )
    g.add_argument("--no-plot", action="store_true", help="skip the PNG")
    add_common_arguments(
        ap,
        seed=0,
        seed_help="seed of the Monte Carlo bank, an integer >= 0 (--expectation mc)",
        out=str(run_dir("reduced")),
        out_help="output folder: reduced_<method>_D<D>_C<C>[_<each parameter that differs from its default>]"
        ".csv/.json/.png, so runs that differ never overwrite each other",
        force="machine",
    )
    return ap


#: flags left out of the name: they change no number of the run (where and how it is written, the memory
#: override), or :func:`output_stem` adds their value as the mode resolves it
NOT_IN_NAME = ("out", "quiet", "no_plot", "force", "method", "eta", "n_samples", "solver", "steps", "s_max")


def output_stem(ap: argparse.ArgumentParser, args: argparse.Namespace, s, **resolved) -> str:
    """``reduced_<method>_D<D>_C<C>`` and every parameter that differs from its default: the Setting's
    fields against the default Setting at this D, C (and d: σ², ν follow it), the solver's flags
    against the parser's defaults (:func:`~theorydyn.cli.run_stem`), so ``--q 0.3`` or ``--seed 1``
    never overwrite the default run."""
    params, defaults = setting_name_params(s)
    solver = {a.dest: getattr(args, a.dest) for a in ap._actions if a.option_strings and a.dest in vars(args)}
    solver = {k: v for k, v in solver.items() if k not in NOT_IN_NAME and k not in SETTING_FLAGS and k != "help"}
    params.update(solver)
    defaults.update({k: ap.get_default(k) for k in solver})
    # the resolved values of the flags whose default is None (the mode picks them)
    if args.method == "gd":
        params.update(eta=resolved["eta"], steps=args.steps)
        defaults.update(eta=1.0, steps=None)
        if args.steps is None:  # the steps are s_max/eta
            params["s_max"], defaults["s_max"] = args.s_max, ap.get_default("s_max")
    else:
        params.update(s_max=args.s_max, solver=resolved["solver"])
        defaults.update(s_max=ap.get_default("s_max"), solver="LSODA")
    if args.expectation == "mc":
        params["n_samples"], defaults["n_samples"] = resolved["n_samples"], N_SAMPLES
    else:  # the exact expectation draws nothing
        params.pop("seed", None)
    return run_stem(f"reduced_{args.method}_D{s.D}_C{s.C}", params, defaults)


def run(inv: Invocation) -> int:
    from ..plotting import save
    from .bank import MAX_TERMS, n_exact_terms
    from .memory import reduced_memory
    from .plot import plot_trajectory
    from .solve import integrate

    args = inv.args
    # a flag that does nothing in this mode is an error, not silently dropped
    if args.method == "flow":
        for flag, v in (("--steps", args.steps), ("--eta", args.eta)):
            if v is not None:
                fail(f"{flag}: only used by --method gd (the flow is integrated in s = eta*t up to --s-max)", PROG)
    elif args.solver is not None:
        fail("--solver: only used by --method flow (the GD recursion is not an ODE solve)", PROG)
    if args.expectation == "exact" and args.n_samples is not None:
        fail("--n-samples: only used by --expectation mc (the exact expectation draws no samples)", PROG)
    eta = 1.0 if args.eta is None else args.eta
    n_samples = N_SAMPLES if args.n_samples is None else args.n_samples
    solver = args.solver or "LSODA"
    s = setting_from_args(args, PROG)
    if n_samples < 2:
        fail("--n-samples: must be >= 2 (a standard error needs two samples)", PROG)
    if args.n_points < 2:
        fail("--n-points: must be >= 2", PROG)
    if args.method == "gd" and args.steps is None and args.s_max / eta > STEPS_MAX:
        fail(f"--s-max / --eta: {args.s_max / eta:.3g} GD steps is more than {STEPS_MAX:.0e}", PROG)
    if args.expectation == "exact" and n_exact_terms(s) > MAX_TERMS:
        fail(
            f"--expectation exact: {n_exact_terms(s):.3g} multisets of count types at D={s.D}, C={s.C} "
            f"(the limit is {MAX_TERMS:.3g}); use --expectation mc",
            PROG,
        )
    inv.guard_memory(reduced_memory(s.D, s.C, s.q, n_samples, args.expectation), force=args.force)
    out = inv.output_dir(args.out)
    stem = output_stem(build_parser(), args, s, eta=eta, n_samples=n_samples, solver=solver)
    csv, js, png = out / f"{stem}.csv", out / f"{stem}.json", out / f"{stem}.png"
    for path in (csv, js) + (() if args.no_plot else (png,)):
        inv.probe(path)  # a link, a folder or a full disk is refused before any work
    try:
        res = integrate(
            s,
            args.method,
            eta=eta,
            steps=args.steps,
            s_max=args.s_max if (args.method == "flow" or args.steps is None) else None,
            n_samples=n_samples,
            seed=args.seed,
            expectation=args.expectation,
            n_points=args.n_points,
            solver=solver,
            err_tol=args.err_tol,
            progress=not args.quiet,
        )
    except ValueError as e:
        fail(str(e), PROG)
    # each file atomically: a kill or a full disk leaves the earlier file or the new one, never a torn one
    inv.write(csv, lambda t: res.trajectory.to_csv(t, index=False))
    summary = json.dumps(res.summary(), indent=2, default=str)
    inv.write(js, lambda t: t.write_text(summary))
    print(f"setting: {s}")
    print(f"status: {res.status}{' — ' + res.message if res.message else ''}")
    horizon = float(res.trajectory["s"].iloc[-1]) if len(res.trajectory) else args.s_max
    print(format_phases(res.phases.as_dict(), horizon))
    print(f"trajectory: {csv}")
    if not args.no_plot and len(res.trajectory):
        fig = plot_trajectory(res)
        inv.write(png, lambda t: save(fig, t))
        print(f"plot: {png}")
    return 0 if res.ok else 1


def format_phases(ph: dict, horizon: float) -> str:
    """A human-readable phase summary (one line per quantity; times in s = ηt, ``horizon`` the run's
    last s: a time at the first instant is printed as such, :func:`~theorydyn.cli.format_time`)."""

    def f(k, v):
        if k in Phases.TIMES or k.endswith("_s"):
            return format_time(v, horizon)
        if v is None:
            return "not reached"
        if isinstance(v, bool):
            return str(v)
        return f"{v:.4g}"

    # the simulator-only diagnostics (the cos(v̂, w*) dip, the entrywise T1) do not exist here
    shown = {k: v for k, v in ph.items() if not (v is None and (k.startswith("cos_v") or k == "T1_entrywise"))}
    return "\n".join(["phases (times in s = eta*t):"] + [f"  {k:22s} {f(k, v)}" for k, v in shown.items()])


COMMAND = Command(PROG, build_parser, run)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
