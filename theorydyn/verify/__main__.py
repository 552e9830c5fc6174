"""``python -m theorydyn.verify``: the claims ledger (see :mod:`theorydyn.verify`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input; 1 when the disk fills under the store; 130 on
Ctrl-C (the claims finished so far are stored: rerun to resume). NOT_RUN and SKIP rows never make it non-zero.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import claims
from ..cli.runner import RESUMES, Command, Invocation
from ..cli.tools import (
    ArgumentParser,
    add_common_arguments,
    add_fresh_argument,
    add_number,
    add_out_argument,
    add_positive,
    add_setting_arguments,
    add_size_arguments,
    fail,
)
from ..core.setting import Setting
from ..infra.limits import S_MAX_MAX, S_MAX_MIN
from .defaults import DEFAULT_DIR, PROG

if TYPE_CHECKING:
    import pandas as pd

    from ..infra.memory import MemoryEstimate

#: The ledger CSV of the default flags (``ledger_name(Setting(), True)``, checked by tests/test_cli_help.py),
#: named in --help without loading the ledger's code
DEFAULT_LEDGER = "verify_D64_C4_quick.csv"

#: Where the help sends a reader for the ledger's times (stated once, with the machine and the load)
TIMES = "Times (quick and full, cold and warm, with the machine and its load): docs/benchmarks.md, section Times."


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(
        prog=PROG,
        description="The claims ledger: one verdict per claim of the paper. Each finished claim is stored at "
        "once (OUT/results.sqlite), so an interrupted ledger resumes where it stopped. " + TIMES,
    )
    add_setting_arguments(ap)
    add_size_arguments(
        ap,
        dest="quick",
        quick_help="the quick ledger: the smaller sizes of every claim (default: the full ledger)",
        full_help="the full ledger (the default)",
    )
    ap.add_argument(
        "--only",
        nargs="+",
        choices=claims.names(),
        default=None,
        help=f"run only these claims (theorydyn.claims.CLAIMS), or the groups {claims.groups_text()} "
        "(default: every claim)",
    )
    add_number(
        ap,
        "--s-max",
        float,
        low=S_MAX_MIN,
        high=S_MAX_MAX,
        default=None,
        help="horizon of the reduced flow (default reduced.default_horizon(D) = 2e4·max(1, D/64)^1.5)",
    )
    add_number(
        ap,
        "--n-samples",
        int,
        low=2,
        default=None,
        help="Monte Carlo samples of the reduced risk per seed, >= 2 (default 4000; 1500 with --quick)",
    )
    add_positive(
        ap,
        "--seed",
        int,
        allow_zero=True,
        default=None,
        help="first seed of the reduced flows (seeds seed … seed+4; default 0)",
    )
    add_out_argument(
        ap,
        None,
        f"output folder (default {DEFAULT_DIR}): the ledger CSV is OUT/{DEFAULT_LEDGER} "
        "(named by every parameter that differs from the default, the selection and quick/full), the stored "
        "claims OUT/results.sqlite. A path ending in .csv names the CSV itself, its folder holding the store. "
        "Created and proven writable before any check",
    )
    ap.add_argument(
        "--markdown",
        nargs="?",
        const="",
        default=None,
        metavar="CSV",
        help="print a ledger CSV as Markdown, the summary (one line per claim) then every row (default: the CSV "
        "these flags would write) and exit, without running any check",
    )
    ap.add_argument(
        "--report",
        nargs="?",
        const="",
        default=None,
        metavar="CSV",
        help="write a ledger CSV as one self-contained HTML page (the summary, each claim's committed figures and "
        "rows, the setting and provenance; it loads nothing from the network) and exit, without running any "
        "check. CSV: default the one these flags would write, the page beside it; a CSV given: the page goes "
        f"to --out (a folder, or a path ending in .html; default {DEFAULT_DIR})",
    )
    ap.add_argument(
        "--detail",
        action="store_true",
        help="also print every row (the ledger's table, wrapped to the terminal) and the seconds of each claim "
        "before the summary (default: the summary alone, one line per claim; every row is in the CSV)",
    )
    add_fresh_argument(
        ap,
        "the selected claims' stored results (reused by default when their setting, options, code and library "
        "versions match) and the ledger CSV",
        aliases=("--recompute",),
    )
    ap.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the claims on a Dask cluster, one task per claim, e.g. tcp://HOST:8786, as scan --scheduler "
        "does (needs the dask extra; default: one after the other in this process)",
    )
    add_common_arguments(ap, seed=None, quiet=True, force="machine")
    return ap


def _memory(
    s: Setting, quick: bool, only: list[str] | None, options: dict[str, dict[str, Any]]
) -> MemoryEstimate | None:
    """The largest peak among the selected claims' ``memory`` (with the options their ``checks`` get):
    they run one after the other, each freeing its arrays before the next starts. Claims that are
    not installed are left out (a SKIP row, nothing allocated)."""
    parts = []
    for name in claims.select(only):
        try:
            mod = claims.load(name)
        except ImportError:
            continue  # a SKIP row, nothing allocated
        parts.append(mod.memory(s, quick, **options.get(name, {})))
    return max(parts, key=lambda e: e.total) if parts else None


def _stat_ok(path: Path, flag: str) -> Path:
    """``path``, after checking that the system can look it up (a 256-byte name: ENAMETOOLONG, exit 2)."""
    try:
        path.exists()
    except OSError as e:
        fail(f"{flag}: cannot use {str(path)!r}: {e.strerror or e}", PROG)
    return path


def _whole_ledger(path: Path) -> pd.DataFrame:
    """A ledger CSV, refused (ValueError) when torn: a last line without its newline, a row without
    a claim or verdict, or fewer rows than its ``ledger_rows`` column says were written."""
    import pandas as pd

    if not path.read_bytes().endswith(b"\n"):
        raise ValueError("the last line is cut (no newline at the end): a torn ledger")
    df = pd.read_csv(path)
    if df[["claim", "verdict"]].isna().any(axis=None):
        raise ValueError("a row has no claim or verdict: a torn ledger")
    if "ledger_rows" in df and not (df["ledger_rows"] == len(df)).all():
        raise ValueError(f"{len(df)} rows, but the ledger was written with {df['ledger_rows'].iloc[0]}: a torn ledger")
    return df


def _outputs(args: argparse.Namespace, s: Setting, extra: dict[str, Any]) -> tuple[Path, Path]:
    """(results folder, ledger CSV) of ``--out`` (module docstring of :mod:`theorydyn.verify`); exit 2
    for a blank path, or a file where a folder is meant."""
    from .core import default_out

    if args.out is None:
        return DEFAULT_DIR, default_out(s, args.quick, args.only, extra)
    if not str(args.out).strip():
        fail(f"--out: must be a folder (or a .csv file path), got {args.out!r}", PROG)
    out = _stat_ok(Path(args.out), "--out")
    if out.suffix.lower() == ".csv":
        if out.is_dir():
            fail(f"--out: {str(out)!r} is a folder; a path ending in .csv names the ledger CSV", PROG)
        return out.parent, out
    if out.exists() and not out.is_dir():
        fail(f"--out: {str(out)!r} exists and is not a folder (give a folder, or a path ending in .csv)", PROG)
    return out, default_out(s, args.quick, args.only, extra, folder=out)


def _print(text: str, width: int) -> None:
    from .core import wrap

    print("\n".join(line for para in text.split("\n") for line in wrap(para, width, "    ")))


def _print_path(label: str, path: Path, width: int) -> None:
    """``label path`` on one line when it fits, else the label (wrapped) and the path on a line of its
    own: a path is never broken, so that it pastes whole (a path wider than the terminal is its only
    line that may be)."""
    line = f"{label} {path}"
    if len(line) <= width:
        print(line)
    else:
        _print(label, width)
        print(f"  {path}")


def _saved_ledger(args: argparse.Namespace, s: Setting, extra: dict[str, Any], flag: str) -> Path:
    """The ledger CSV that --markdown or --report reads (given, or the one these flags would write), after
    refusing the flags that would do nothing there (exit 2 naming the flag)."""
    value = getattr(args, flag.lstrip("-"))
    run_only = (
        ("--force", args.force),
        ("--fresh/--recompute", args.fresh),
        ("--scheduler", args.scheduler),
        ("--quiet", args.quiet),
        ("--detail", args.detail),
    )
    for other, v in run_only + (("--markdown" if flag == "--report" else "--report", _given(args, flag)),):
        if v:
            fail(f"{other}: has no effect with {flag} (it reads a saved ledger and runs nothing)", PROG)
    if value:
        reduced = (("--s-max", args.s_max), ("--n-samples", args.n_samples), ("--seed", args.seed))
        given = reduced + (("--only", args.only),) + ((("--out", args.out),) if flag == "--markdown" else ())
        for other, v in given:
            if v is not None:
                fail(f"{other}: has no effect with {flag} CSV (the rows are read from that CSV)", PROG)
    path = Path(value) if value else _outputs(args, s, extra)[1]
    if not _stat_ok(path, flag).is_file():
        fail(f"{flag}: no ledger at {path} (run {PROG} with the same flags first, or give the CSV path)", PROG)
    return path


def _given(args: argparse.Namespace, flag: str) -> bool:
    """Whether the other one of --markdown / --report was given too."""
    other = "report" if flag == "--markdown" else "markdown"
    return getattr(args, other) is not None


def _report_path(args: argparse.Namespace, csv: Path) -> Path:
    """Where --report writes: beside the ledger CSV these flags name, or, for a CSV given, in --out (a
    folder, or a path ending in .html; default the ledger's folder of the run directory)."""
    if not args.report:
        return csv.with_suffix(".html")
    if args.out is None:
        return DEFAULT_DIR / (csv.stem + ".html")
    out = _stat_ok(Path(args.out), "--out")
    if out.suffix.lower() == ".html":
        return out
    if out.exists() and not out.is_dir():
        fail(f"--out: {str(out)!r} exists and is not a folder (give a folder, or a path ending in .html)", PROG)
    return out / (csv.stem + ".html")


def _read_ledger(path: Path, flag: str) -> pd.DataFrame:
    try:
        return _whole_ledger(path)
    except Exception as e:  # noqa: BLE001 — any unreadable file is bad input, not a crash
        fail(f"{flag}: cannot read a ledger from {str(path)!r}: {type(e).__name__}: {e}", PROG)


def _times_line(info: list[dict[str, Any]]) -> str:
    """The seconds of each claim in one paragraph (``--detail`` prints the table)."""
    import math

    parts = [
        f"{r['name']} {r['seconds']:.1f}" + (" stored" if r["source"] == "stored" else "")
        if math.isfinite(r["seconds"])
        else f"{r['name']} {r['source']}"
        for r in info
    ]
    ran = sum(r["seconds"] for r in info if r["source"] != "stored" and math.isfinite(r["seconds"]))
    stored = sum(r["source"] == "stored" for r in info)
    return (
        f"seconds per claim: {' · '.join(parts)}; computed now {ran:.1f} s, read from the store: {stored} of "
        f"{len(info)} claims"
    )


def _start_over(ledger_csv: Path, folder: Path) -> None:
    """``--fresh``: the earlier ledger CSV renamed to ``<name>.old-<UTC time>``; a damaged results store
    moved aside (``results.sqlite.damaged-<UTC time>``). The selected claims' stored rows are set aside
    by :func:`~theorydyn.verify.collect` (``recompute``: each is replaced, the old row kept in the
    store's rejected table)."""
    from ..infra.atomic import set_aside
    from ..infra.store import DB_NAME, StoreDamaged, connect, move_aside

    moved = set_aside(ledger_csv)
    if moved is not None:
        print(f"{PROG}: --fresh: the earlier ledger moved to {moved}", file=sys.stderr)
    if (folder / DB_NAME).is_file():
        try:
            connect(folder / DB_NAME).close()
        except StoreDamaged:
            print(f"{PROG}: --fresh: the damaged store moved to {move_aside(folder / DB_NAME)}", file=sys.stderr)


def run(inv: Invocation) -> int:
    """Every input is checked before any check runs (exit 2 naming the flag): the setting, flags
    that would do nothing (the reduced flow's options without the reduced source, run options with
    --markdown or --report), the output folder, the scheduler, the store, and the memory estimate
    (``--force`` skips it). Prints the summary, one line per claim (:mod:`theorydyn.verify.summary`),
    the verdict counts, the seconds per claim and the ledger CSV's path; ``--detail`` prints every row
    and the table of seconds before it."""
    from ..vision.threads import passive_wait

    # before torch loads (the vision claim trains): waiting OpenMP threads sleep, as in the vision commands
    # (a spinning one held the core its team-mate needed: ~30x slower epochs beside other work)
    passive_wait()
    from ..claims.check import Verdict
    from ..infra.provenance import attach_to_frame, provenance
    from ..infra.store import DB_NAME, StoreError
    from .core import collect, format_markdown, format_table, format_times, terminal_width
    from .summary import MAX_WIDTH, PRECEDENCE, format_summary, format_summary_markdown, summarize

    def verdict_order(v: str) -> tuple[int, str]:
        return (PRECEDENCE.index(v) if v in PRECEDENCE else len(PRECEDENCE), v)

    args = inv.args
    s = inv.setting()
    reduced_flags = (("--s-max", args.s_max), ("--n-samples", args.n_samples), ("--seed", args.seed))
    # the reduced flow's flags given: they name the ledger's file (a default --seed 0 is the default ledger)
    extra = dict(s_max=args.s_max, n_samples=args.n_samples, seed=args.seed or None)
    if args.markdown is not None:
        path = _saved_ledger(args, s, extra, "--markdown")
        saved = _read_ledger(path, "--markdown")
        print(format_summary_markdown(summarize(saved)) + "\n\n" + format_markdown(saved))
        return 0
    if args.report is not None:
        from .report import html_report

        path = _saved_ledger(args, s, extra, "--report")
        saved = _read_ledger(path, "--report")  # a torn or foreign CSV: exit 2 before any folder is made
        page = _report_path(args, path)
        inv.output_dir(page.parent, "--out")
        inv.probe(page, "--out")
        # the flags name the ledger (no CSV given): its whole setting is known; else the rows tell D, C, q
        text = html_report(saved, source=str(path), setting=None if args.report else str(s))
        inv.write(page, lambda t: t.write_text(text, encoding="utf-8"))
        _print_path("report:", page, min(terminal_width(), MAX_WIDTH))
        return 0
    if "dynamics" not in claims.select(args.only):
        for flag, v in reduced_flags:
            if v is not None:
                fail(
                    f"{flag}: only used by the reduced dynamics (dynamics, or the group reduced), which --only "
                    "leaves out",
                    PROG,
                )
    folder, out = _outputs(args, s, extra)
    # the reduced flow's flags are options of the dynamics claim, for its checks and its memory alike
    options = {"dynamics": dict(s_max=args.s_max, n_samples=args.n_samples, seed=args.seed or 0)}
    est = _memory(s, args.quick, args.only, options)
    if est is not None:  # the sample sizes of the checks are fixed by --quick: only the setting's flags are named
        inv.guard_memory(est, force=args.force, flags={"N": None, "N_flat": None, "n_test": None})
    inv.output_dir(folder, "--out")
    inv.probe(out, "--out")  # a link, a name too long, a full disk: refused before any check
    if args.fresh:  # start over: the earlier ledger is renamed, never overwritten (the rows: collect)
        _start_over(out, folder)
    handle = None
    if args.scheduler is not None:
        from ..scan.executor import make_executor
        from ..scan.grid import ScanError

        try:
            handle = make_executor(scheduler=args.scheduler)
        except ScanError as e:
            fail(str(e) if str(e).startswith("--scheduler") else f"--scheduler: {e}", PROG)
    t = time.perf_counter()
    try:
        df = collect(
            s,
            quick=args.quick,
            only=args.only,
            progress=not args.quiet,
            options=options,
            store=folder,
            recompute=args.fresh,
            executor=handle.executor if handle is not None else None,
        )
    except StoreError as e:  # named --out here; elsewhere theorydyn.cli.runner.known_error maps it
        fail(f"--out: {e}", PROG)
    except OSError as e:  # a full disk under the store: the claims committed so far stay
        print(
            f"{PROG}: error: {e}; the claims stored so far stay in {folder / DB_NAME}: free space and rerun the "
            "same command to resume",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:  # the runner reports it (exit 130); the claims finished so far are stored
        if handle is not None:  # the claims still queued on the cluster are cancelled, not left running
            handle.close(cancel=True)
            handle = None
        raise
    finally:
        if handle is not None:
            handle.close()
    ledger_df = attach_to_frame(df, provenance()).assign(ledger_rows=len(df))  # lets --markdown see a torn ledger
    inv.write(out, lambda t: ledger_df.to_csv(t, index=False))  # atomic: the old ledger or the new one
    seconds = time.perf_counter() - t
    width = terminal_width()
    if args.detail:
        _print(f"theorydyn verify at {s}\n", width)
        print(format_table(df.assign(claim=[f"{i}. {c}" for i, c in enumerate(df["claim"], 1)]), width))
        print()
        if df.attrs.get("claims"):
            print(format_times(df.attrs["claims"], width))
        print()
    width = min(width, MAX_WIDTH)
    asked = {"D": s.D, "C": s.C, "q": round(s.q, 6)}
    _print(
        f"the ledger at a glance, D={s.D} C={s.C} q={s.q:g} ({'quick' if args.quick else 'full'}): one line per claim, "
        "the verdict of its deciding row (decides=True, else FAIL > DEVIATES > PASS > OUT_OF_SCOPE > NOT_RUN > INFO)",
        width,
    )
    print(format_summary(summarize(df, asked), width))
    counts = df["verdict"].value_counts().to_dict()
    _print(
        f"{' · '.join(f'{k} {counts[k]}' for k in sorted(counts, key=verdict_order))} · {len(df)} rows · "
        f"{seconds:.0f} s",
        width,
    )
    if df.attrs.get("claims") and not args.detail:
        _print(_times_line(df.attrs["claims"]), width)
    if counts.get("NOT_RUN", 0):
        _print(
            f"NOT_RUN: {counts['NOT_RUN']} rows did not run here (not a pass); each note gives the command that "
            "would run it",
            width,
        )
    _print_path("every row (--detail prints them; --report makes a page):", out, width)
    return 1 if counts.get(str(Verdict.FAIL), 0) else 0


COMMAND = Command(PROG, build_parser, run, on_interrupt=f"the claims finished so far are stored: {RESUMES}")


main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
