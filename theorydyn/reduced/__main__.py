"""``python -m theorydyn.reduced``: integrate the idealized dynamics, print the phases, write CSV and PNG.

Exit status: 0 on success, 1 when the run diverged or the ODE solver failed (the trajectory up
to there is written all the same) or an output could not be written (a full disk: the earlier
file is left as it was; every file is written atomically), 2 on bad input (nothing is computed).
"""

from __future__ import annotations

import argparse
import sys

from ..cli.phases import format_phases
from ..cli.runner import Command, Invocation, solver_parser
from .config import CLI_FLAGS, FlowConfig, check_setting, flow_config, output_stem

PROG = "python -m theorydyn.reduced"


def build_parser() -> argparse.ArgumentParser:
    # the flags of FlowConfig's fields (CLI_FLAGS: their defaults, rules and help are the library's)
    return solver_parser(
        PROG,
        "Idealized dynamics of (alpha, gamma, rho) (Lemmas 4.1-4.3, docs/theory.md §3): phases I-III.",
        FlowConfig,
        **CLI_FLAGS,
    )


def run(inv: Invocation) -> int:
    from .memory import reduced_memory
    from .plot import plot_trajectory
    from .solve import integrate

    args = inv.args
    with inv.refusing():
        cfg = flow_config(args)
    s = inv.setting()
    with inv.refusing():
        check_setting(cfg, s)
    inv.guard_memory(reduced_memory(s.D, s.C, s.q, cfg.n_samples, cfg.expectation))
    plot = () if args.no_plot else (f".{inv.figure_format}",)
    csv, js, *png = inv.output_files(args.out, output_stem(build_parser(), args, s, cfg), (".csv", ".json", *plot))
    with inv.refusing():
        res = integrate(s, config=cfg, progress=inv.progress)
    inv.write_run(csv, js, res.trajectory, res.summary())
    horizon = float(res.trajectory["s"].iloc[-1]) if len(res.trajectory) else cfg.s_max
    print(f"setting: {s}\nstatus: {res.status}{' — ' + res.message if res.message else ''}")
    print(f"{format_phases(res.phases.as_dict(), horizon)}\ntrajectory: {csv}")
    if png and len(res.trajectory):
        inv.write_figure(png[0], plot_trajectory(res))
        print(f"plot: {png[0]}")
    return 0 if res.ok else 1


COMMAND = Command(PROG, build_parser, run, draws="png")
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
