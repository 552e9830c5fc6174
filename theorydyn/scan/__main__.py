"""``python -m theorydyn.scan``: the command line of :mod:`theorydyn.scan` (see its docstring); its flags,
read from the run configurations, and the scan they describe are :mod:`theorydyn.scan.flags`.

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from ..cli.runner import RESUMES, Command, Invocation
from .defaults import PROG
from .flags import scan_from_args, scan_parser
from .schema import ScanError


def build_parser() -> argparse.ArgumentParser:
    """The scan's flags: the Setting's axes, the solver options read from the configurations' fields
    (:func:`theorydyn.scan.flags.scan_parser`)."""
    return scan_parser()


def run(inv: Invocation) -> int:
    """Every input is checked before any point runs (exit 2 naming the flag): flags, the spec file,
    every point of the grid (its setting, options and memory estimate), the runner, the results folder."""
    from ..infra.store import RejectedRowsWarning
    from .run import check_results_folder, run_scan
    from .summary import summary_text

    args = inv.args
    try:
        spec = scan_from_args(args)
    except ScanError as e:
        inv.fail(str(e))
    inv.output_dir(args.out, "--out")
    try:
        check_results_folder(args.out, spec, fresh=args.fresh)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RejectedRowsWarning)
            outcome = run_scan(
                spec,
                results_dir=args.out,
                workers=args.workers,
                scheduler=args.scheduler,
                force=args.fresh,
                force_memory=args.force,
                progress=not args.quiet,
                plots=not args.no_plots,
                plot_format=inv.figure_format,
                report=lambda message: print(message, file=sys.stderr),
            )
            # inside the warnings block, as when run_scan printed it: the summary's warnings stay caught
            summary = summary_text(spec, outcome)
    except ScanError as e:
        inv.fail(str(e))
    except OSError as e:  # a full disk under the store or an output: the rows committed so far stay
        print(
            f"{PROG}: error: {e}; the rows committed so far stay in the store: free space and rerun the same "
            "command to resume",
            file=sys.stderr,
        )
        return 1
    print(summary)
    for w in caught:
        if issubclass(w.category, RejectedRowsWarning):
            print(f"{PROG}: warning: {w.message}", file=sys.stderr)
    if not len(outcome.frame):  # the summary lists failures only beside finished points; --quiet hid the bar
        for key, err in outcome.failed:
            print(f"{PROG}: FAILED {key[:12]}: {err}", file=sys.stderr)
    return outcome.exit_code


COMMAND = Command(
    PROG, build_parser, run, on_interrupt=f"the points computed so far are stored: {RESUMES}", draws="png"
)
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
