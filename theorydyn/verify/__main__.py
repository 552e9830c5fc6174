"""``python -m theorydyn.verify``: the claims ledger (see :mod:`theorydyn.verify`); its options are the fields
of :class:`~theorydyn.verify.config.LedgerConfig`.

Exit status: 0 unless a row is FAIL (1); 2 on bad input; 1 when the disk fills under the store; 130 on
Ctrl-C (the claims finished so far are stored: rerun to resume). NOT_RUN and SKIP rows never make it non-zero.
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial

from .. import claims
from ..cli import flags as cli_flags
from ..cli import tools as cli
from ..cli.configs import add_config_flags
from ..cli.runner import RESUMES, Command, Invocation
from .config import LedgerConfig
from .defaults import PROG

#: Where the help sends a reader for the ledger's times (stated once, with the machine and the load)
TIMES = "Times (quick and full, cold and warm, with the machine and its load): docs/benchmarks.md, section Times."


def build_parser() -> argparse.ArgumentParser:
    ap = cli.ArgumentParser(
        prog=PROG,
        description="The claims ledger: one verdict per claim of the paper. Each finished claim is stored at "
        "once (OUT/results.sqlite), so an interrupted ledger resumes where it stopped. " + TIMES,
    )
    flags, helps = partial(add_config_flags, ap, LedgerConfig), LedgerConfig.help_of
    cli.add_setting_arguments(ap)
    quick, full = f"{helps('quick')} (default: the full ledger)", "the full ledger (the default)"
    cli.add_size_arguments(ap, dest="quick", quick_help=quick, full_help=full)
    groups = claims.groups_text()
    only = f"run only these claims (theorydyn.claims.CLAIMS), or the groups {groups} (default: every claim)"
    cli_flags.add_selection(ap, "--only", claims.names(), only)
    flags(only=(*LedgerConfig.REDUCED, "out"))
    for mode in ("markdown", "report"):  # a flag with an optional value: absent None, bare "" (config.py)
        cli_flags.add_optional_path(ap, f"--{mode}", "CSV", helps(mode))
    flags(only=("detail",))
    cli.add_fresh_argument(ap, helps("fresh"), aliases=("--recompute",))
    flags(only=("scheduler",))
    cli.add_common_arguments(ap, seed=None, quiet=True, force="machine")
    return ap


def run(inv: Invocation) -> int:
    """Every input is checked before any check runs (exit 2 naming the flag): the setting, flags that would
    do nothing (the reduced flow's options without the reduced source, run options with --markdown or
    --report), the output folder, the scheduler, the store, and the memory estimate (``--force`` skips it).
    Prints :func:`~theorydyn.verify.summary.format_glance` (``--detail``: every row and the table of
    seconds before it, :func:`~theorydyn.verify.core.format_detail`)."""
    from ..vision.threads import passive_wait

    # before torch loads (the vision claim trains): waiting OpenMP threads sleep, as in the vision commands
    # (a spinning one held the core its team-mate needed: ~30x slower epochs beside other work)
    passive_wait()
    from ..infra.store import DB_NAME, StoreError
    from . import files
    from .core import format_detail, terminal_width
    from .run import ledger_frame, ledger_memory, open_cluster, run_ledger
    from .summary import format_glance

    s, cfg = inv.setting(), inv.config(LedgerConfig)
    if (mode := cfg.saved) is not None:
        return _saved(inv, s, cfg, *mode)
    with inv.refusing():
        cfg.check_selection()
        folder, out = files.outputs(cfg.out, s, cfg)
    est = ledger_memory(s, cfg)
    if est is not None:  # the sample sizes of the checks are fixed by --quick: only the setting's flags are named
        inv.guard_memory(est, flags={"N": None, "N_flat": None, "n_test": None})
    inv.output_dir(folder, "--out")
    inv.probe(out, "--out")  # a link, a name too long, a full disk: refused before any check
    for line in files.start_over(out, folder) if cfg.fresh else ():  # the rows: collect sets them aside
        print(f"{PROG}: {line}", file=sys.stderr)
    with inv.refusing():
        cluster = open_cluster(cfg.scheduler)
    t = time.perf_counter()
    try:
        df = run_ledger(s, cfg, folder, progress=inv.progress, cluster=cluster)
    except StoreError as e:  # named --out here; elsewhere theorydyn.cli.runner.known_error maps it
        inv.fail(f"--out: {e}")
    except OSError as e:  # a full disk under the store: the claims committed so far stay
        stays = f"the claims stored so far stay in {folder / DB_NAME}: free space and rerun the same command to resume"
        print(f"{PROG}: error: {e}; {stays}", file=sys.stderr)
        return 1
    inv.write(out, lambda p: ledger_frame(df).to_csv(p, index=False))  # atomic: the old ledger or the new one
    seconds, width = time.perf_counter() - t, terminal_width()
    if cfg.detail:
        print(format_detail(df, s, width))
    print(format_glance(df, s, quick=cfg.quick, seconds=seconds, csv=out, times=not cfg.detail, width=width))
    return 1 if (df["verdict"] == "FAIL").any() else 0


def _saved(inv: Invocation, s, cfg: LedgerConfig, flag: str, value: str) -> int:
    """``--markdown``: print a saved ledger as Markdown; ``--report``: write it as one HTML page."""
    from . import files
    from .core import format_markdown, terminal_width
    from .summary import MAX_WIDTH, format_summary_markdown, path_line, summarize

    with inv.refusing():
        path = files.saved_ledger(s, cfg, force=inv.args.force, quiet=inv.args.quiet)
        saved = files.read_ledger(path, flag)  # a torn or foreign CSV: exit 2 before any folder is made
        page = files.report_path(value, cfg.out, path) if flag == "--report" else None
    if page is None:
        print(format_summary_markdown(summarize(saved)) + "\n\n" + format_markdown(saved))
        return 0
    from .report import html_report

    inv.output_dir(page.parent, "--out")
    inv.probe(page, "--out")
    # the flags name the ledger (no CSV given): its whole setting is known; else the rows tell D, C, q
    text = html_report(saved, source=str(path), setting=None if value else str(s))
    inv.write(page, lambda t: t.write_text(text, encoding="utf-8"))
    print(path_line("report:", page, min(terminal_width(), MAX_WIDTH)))
    return 0


COMMAND = Command(PROG, build_parser, run, on_interrupt=f"the claims finished so far are stored: {RESUMES}")
main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
