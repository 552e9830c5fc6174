"""``python -m theorydyn.simulate``: GD on N samples with the full D×D attention (Theorem 4.2).

Writes ``<stem>.csv`` (the trajectory), ``<stem>.json`` (the summary) and ``<stem>.png`` (Figure 4;
``--format pdf|svg``: vector) into ``--out``, the stem naming every parameter that differs from its
default (:func:`output_stem`). Exit status 0 on success, 1 when the run diverged (what was recorded up
to there is written all the same; the message names the step) or an output could not be written (a
full disk: every file is written atomically, so the earlier one is left as it was), 2 on bad input
(before any work).
"""

from __future__ import annotations

import argparse
import sys

from ..cli.phases import format_gd_phases
from ..cli.runner import Command, Invocation, solver_parser
from .config import CLI_FLAGS, SimConfig, output_stem

PROG = "python -m theorydyn.simulate"


def build_parser() -> argparse.ArgumentParser:
    # the flags of SimConfig's fields (CLI_FLAGS: defaults, rules and help are the library's)
    return solver_parser(
        PROG,
        "GD on N samples with the full D×D attention (Theorem 4.2); writes the trajectory (CSV), "
        "the summary (JSON) and Figure 4 (PNG), named by every parameter that differs from its default.",
        SimConfig,
        **CLI_FLAGS,
    )


def run(inv: Invocation) -> int:
    from .memory import simulate_memory
    from .plot import plot_figure4
    from .run import simulate, symmetry_breaking

    args, cfg = inv.args, inv.config(SimConfig)  # the library's SimConfig, with this CLI's flags
    s = inv.setting()
    inv.guard_memory(simulate_memory(s.D, s.C, s.d, cfg.N, cfg.n_test, cfg.dtype))
    files = inv.output_files(args.out, output_stem(build_parser(), args, s), (".csv", ".json", f".{inv.figure_format}"))
    with inv.refusing(ValueError, ImportError):
        res = simulate(s, config=cfg, progress=inv.progress)
    inv.write_run(
        files[0], files[1], res.trajectory, {**res.summary(), "symmetry_breaking_final": symmetry_breaking(s, res.A)}
    )
    inv.write_figure(files[2], plot_figure4(res))
    print(
        f"{res.status}{' — ' + res.message if res.message else ''}; {len(res.trajectory)} records in "
        f"{res.seconds:.1f} s -> {', '.join(str(f) for f in files)}"
    )
    print(format_gd_phases(res.phases, float(cfg.eta), cfg.steps))
    return 0 if res.ok else 1


COMMAND = Command(PROG, build_parser, run, draws="png")
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
