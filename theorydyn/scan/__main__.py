"""``python -m theorydyn.scan``: the command line of :mod:`theorydyn.scan` (see its docstring); its flags,
read from the run configurations, and the scan they describe are :mod:`theorydyn.scan.flags`.

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import sys

from ..cli.runner import RESUMES, Command, Invocation
from .defaults import PROG
from .flags import run_options, scan_from_args, scan_parser
from .schema import ScanError


def build_parser():
    return scan_parser()  # the Setting's axes, the options of the configurations' scanned fields, the scan's own


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def run(inv: Invocation) -> int:
    """Every input is checked before any point runs (exit 2 naming the flag): flags, the spec file,
    every point of the grid (its setting, options and memory estimate), the runner, the results folder."""
    from .run import ROWS_KEPT, run_scan_report

    with inv.refusing(ScanError):
        spec = scan_from_args(inv.args)
    inv.output_dir(inv.args.out, "--out")
    try:
        with inv.refusing(ScanError):
            done = run_scan_report(spec, **run_options(inv.args), plot_format=inv.figure_format, report=_stderr)
    except OSError as e:
        _stderr(f"{PROG}: error: {e}; {ROWS_KEPT}")
        return 1
    print(done.summary)
    for note in done.notes:
        _stderr(f"{PROG}: {note}")
    return done.outcome.exit_code


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the points computed so far are stored: {RESUMES}", draws="png"
)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
