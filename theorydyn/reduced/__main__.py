"""``python -m theorydyn.reduced``: integrate the idealized dynamics, print the phases, write CSV and PNG.

Exit status: 0 on success, 1 when the run diverged or the ODE solver failed (the trajectory up
to there is written all the same) or an output could not be written (a full disk: the earlier
file is left as it was; every file is written atomically), 2 on bad input (nothing is computed).
"""

from __future__ import annotations

import argparse
import sys

from ..cli.configs import config_from_args
from ..cli.phases import format_phases
from ..cli.runner import Command, Invocation, solver_parser
from ..cli.tools import name_params, run_stem
from ..infra.limits import STEPS_MAX
from .config import FLOW_DEFAULTS, FlowConfig

PROG = "python -m theorydyn.reduced"


def build_parser() -> argparse.ArgumentParser:
    # the flags of FlowConfig's fields (their defaults, rules and help are the library's); the mode picks
    # eta, n_samples and solver, so a flag given in the other mode is refused, not silently dropped
    return solver_parser(
        PROG,
        "Idealized dynamics of (alpha, gamma, rho) (Lemmas 4.1-4.3, docs/theory.md §3): phases I-III.",
        FlowConfig,
        title="solver",
        only=("method", "eta", "steps", "s_max", "n_samples", "expectation", "n_points", "solver", "err_tol"),
        defaults=dict(eta=None, n_samples=None, solver=None),
        notes=dict(
            eta=f"default {FLOW_DEFAULTS.eta:g}; --method gd only",
            n_samples=f"default {FLOW_DEFAULTS.n_samples}; --expectation mc only",
            solver=f"default {FLOW_DEFAULTS.solver}; --method flow only",
            s_max="default %(default)g, as the library's integrate",
        ),
        switches={"--no-plot": "skip the PNG"},
        run="reduced",
        out_help="output folder: reduced_<method>_D<D>_C<C>[_<each parameter that differs from its default>]"
        ".csv/.json/.png (or --format), so runs that differ never overwrite each other",
    )


#: flags left out of the name: they change no number of the run (where and how it is written, the memory
#: override), or :func:`output_stem` adds their value as the mode resolves it
NOT_IN_NAME = ("out", "quiet", "no_plot", "force", "method", "eta", "n_samples", "solver", "steps", "s_max")


def output_stem(ap: argparse.ArgumentParser, args: argparse.Namespace, s, **resolved) -> str:
    """``reduced_<method>_D<D>_C<C>`` and every parameter that differs from its default: the Setting's
    fields against the default Setting at this D, C (and d: σ², ν follow it), the solver's flags
    against the parser's defaults (:func:`~theorydyn.cli.tools.run_stem`), so ``--q 0.3`` or ``--seed 1``
    never overwrite the default run."""
    params, defaults = name_params(s, ap, args, NOT_IN_NAME)
    # the resolved values of the flags whose default is None (the mode picks them)
    if args.method == "gd":
        params.update(eta=resolved["eta"], steps=args.steps)
        defaults.update(eta=FLOW_DEFAULTS.eta, steps=None)
        if args.steps is None:  # the steps are s_max/eta
            params["s_max"], defaults["s_max"] = args.s_max, ap.get_default("s_max")
    else:
        params.update(s_max=args.s_max, solver=resolved["solver"])
        defaults.update(s_max=ap.get_default("s_max"), solver=FLOW_DEFAULTS.solver)
    if args.expectation == "mc":
        params["n_samples"], defaults["n_samples"] = resolved["n_samples"], FLOW_DEFAULTS.n_samples
    else:  # the exact expectation draws nothing
        params.pop("seed", None)
    return run_stem(f"reduced_{args.method}_D{s.D}_C{s.C}", params, defaults)


def flow_config(args: argparse.Namespace) -> FlowConfig:
    """The :class:`~theorydyn.reduced.config.FlowConfig` the parsed flags describe (the CLI's resolution: a
    flag left out takes the field's default, the same object as :func:`~theorydyn.reduced.integrate`'s).

    Raises:
        ValueError: a flag given where it does nothing (``--steps`` with the flow, ``--n-samples`` with
            the exact expectation, …) or a value that breaks its rule, the message starting with the flag.
    """
    if args.method == "flow":
        for flag, v in (("--steps", args.steps), ("--eta", args.eta)):
            if v is not None:
                raise ValueError(
                    f"{flag}: only used by --method gd (the flow is integrated in s = eta*t up to --s-max)"
                )
    elif args.solver is not None:
        raise ValueError("--solver: only used by --method flow (the GD recursion is not an ODE solve)")
    if args.expectation == "exact" and args.n_samples is not None:
        raise ValueError("--n-samples: only used by --expectation mc (the exact expectation draws no samples)")
    cfg = config_from_args(FlowConfig, args)
    if cfg.method == "gd" and cfg.steps is None and cfg.s_max / cfg.eta > STEPS_MAX:
        raise ValueError(f"--s-max / --eta: {cfg.s_max / cfg.eta:.3g} GD steps is more than {STEPS_MAX:.0e}")
    return cfg


def run(inv: Invocation) -> int:
    from .bank import MAX_TERMS, n_exact_terms
    from .memory import reduced_memory
    from .plot import plot_trajectory
    from .solve import integrate

    args = inv.args
    with inv.refusing():
        cfg = flow_config(args)
    s = inv.setting()
    if cfg.expectation == "exact" and n_exact_terms(s) > MAX_TERMS:
        inv.fail(
            f"--expectation exact: {n_exact_terms(s):.3g} multisets of count types at D={s.D}, C={s.C} "
            f"(the limit is {MAX_TERMS:.3g}); use --expectation mc"
        )
    inv.guard_memory(reduced_memory(s.D, s.C, s.q, cfg.n_samples, cfg.expectation))
    stem = output_stem(build_parser(), args, s, eta=cfg.eta, n_samples=cfg.n_samples, solver=cfg.solver)
    plot = () if args.no_plot else (f".{inv.figure_format}",)
    csv, js, *png = inv.output_files(args.out, stem, (".csv", ".json", *plot))
    with inv.refusing():
        res = integrate(s, config=cfg, progress=inv.progress)
    inv.write_run(csv, js, res.trajectory, res.summary())
    print(f"setting: {s}")
    print(f"status: {res.status}{' — ' + res.message if res.message else ''}")
    horizon = float(res.trajectory["s"].iloc[-1]) if len(res.trajectory) else args.s_max
    print(format_phases(res.phases.as_dict(), horizon))
    print(f"trajectory: {csv}")
    if png and len(res.trajectory):
        inv.write_figure(png[0], plot_trajectory(res))
        print(f"plot: {png[0]}")
    return 0 if res.ok else 1


COMMAND = Command(PROG, build_parser, run, draws="png")
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
