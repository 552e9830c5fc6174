"""``python -m theorydyn.figures [NAME…|all] [--out DIR] [--format pdf|svg|png] [--quick] [--recompute] …``.

Every figure, recomputed into ``--out`` (default ``<run dir>/figures``: ``$THEORYDYN_HOME`` or
``runs/``, :mod:`theorydyn.infra.paths`) as ``--format`` (default PDF, vector), with its entry in
``--out/manifest.json`` (command, setting, key numbers, measured cost, commit, the file's hash). The
committed figures of a checkout change only when asked: ``--out figures --format svg`` (they are SVG,
which GitHub and the docs show inline; another format there is refused). Where ``--out`` has no
manifest yet, the measured costs (the ETA, ``--list``) come from the checkout's committed
``figures/manifest.json``. The generated README text goes to
``--out/README.generated.md``; only ``--write-readme`` replaces ``--out/README.md`` (the tracked
``figures/README.md`` is never rewritten unasked).

Exit status 0 when every asked figure was made, 1 when one failed (the others are still made),
2 on bad input.
"""

from __future__ import annotations

import argparse
import errno
import sys
import traceback
from pathlib import Path

from ..cli.runner import Command, Invocation
from ..cli.tools import ArgumentParser, add_common_arguments, add_out_argument, add_size_arguments, fail
from ..infra._progress import progress_bar
from ..infra.atomic import UnsafeTarget
from ..infra.paths import committed_figures, run_dir
from . import manifest as mf

PROG = "python -m theorydyn.figures"
#: a full disk, a quota, a read-only file system: reported in one line, no traceback
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)
#: expected seconds of a figure never measured (the overall bar's ETA weighs figures by cost)
_UNKNOWN_COST_S = 30.0


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Every figure of theorydyn, recomputed into --out.")
    ap.add_argument(
        "names",
        nargs="*",
        default=["all"],
        help="figures to make, space-separated: all, or any of the names --list shows (default %(default)s)",
    )
    add_out_argument(
        ap,
        str(run_dir("figures")),
        "output folder (the committed figures: --out figures --format svg), created and proven writable "
        "before any work; holds the figures, manifest.json and README.generated.md (default %(default)s)",
    )
    add_size_arguments(
        ap,
        dest="quick",
        quick_help="small sizes, what is committed (default off: docs/theory.md §9 sizes)",
        full_help="docs/theory.md §9 sizes (the default)",
    )
    ap.add_argument(
        "--recompute",
        action="store_true",
        help="ignore every cache (scan rows, the transfer folder, the vision runs); the cost is then "
        "measured cold (default off)",
    )
    ap.add_argument(
        "--write-readme",
        action="store_true",
        help="also rewrite --out/README.md from the registry and the manifest (default off: the text goes "
        "to --out/README.generated.md only)",
    )
    ap.add_argument(
        "--readme-only",
        action="store_true",
        help="make no figure: only write the README text from the registry and --out/manifest.json "
        "(with --write-readme: into --out/README.md) (default off)",
    )
    add_common_arguments(ap, seed=None, quiet=True)
    ap.add_argument(
        "--list",
        action="store_true",
        help="list the figures with their measured cost (from --out/manifest.json) and whether their "
        "cached inputs are present; writes nothing (default off)",
    )
    return ap


def _entries(out: Path) -> dict:
    """``out``'s manifest; where ``out`` has none yet, the committed one (measured costs, for the ETA)."""
    path = out / mf.NAME
    shipped = committed_figures()
    if not path.is_file() and shipped is not None:
        path = shipped / mf.NAME
    try:
        return mf.load(path)
    except ValueError as e:
        fail(f"--out: {e}", PROG)


def _list(out: Path) -> int:
    from . import REGISTRY, available, cost_text, inputs_text

    entries = _entries(out)
    for fig in REGISTRY.values():
        why = available(fig)
        entry = entries.get(fig.name)
        cost = "cost unknown (not in the manifest)" if entry is None else cost_text(entry)
        state = "can be made" if why is None else f"cannot be made: {why}"
        print(f"{fig.name:22s} {cost}; {inputs_text(fig)}; {state} — {fig.title}")
    return 0


def run(inv: Invocation) -> int:
    """Bad input exits 2 before any figure is computed: an unknown name, flags that --list would
    ignore, an output folder that cannot be created or written, a manifest that cannot be read."""
    from . import REGISTRY, available, make, readme

    args = inv.args
    names = list(REGISTRY) if (not args.names or "all" in args.names) else list(dict.fromkeys(args.names))
    bad = [n for n in names if n not in REGISTRY]
    if bad:
        fail(f"names: unknown figure(s) {bad}; known: all, {', '.join(REGISTRY)}", PROG)
    if not str(args.out).strip():
        fail("--out: must be a folder path, got ''", PROG)
    if args.list:
        # --list makes nothing: a flag that would only act on the figures is refused, not dropped
        given = inv.given()
        for flag in ("quick", "recompute", "write_readme", "readme_only", "quiet", "format"):
            if flag in given:
                fail(
                    f"--{flag.replace('_', '-')}: has no effect with --list (it lists the figures and makes none)", PROG
                )
        if args.names not in ([], ["all"]):
            fail("names: have no effect with --list (it lists every figure)", PROG)
        return _list(Path(args.out))
    out = inv.output_dir(args.out)
    entries = _entries(out)
    if args.readme_only:
        if args.names not in ([], ["all"]) or args.quick or args.recompute:
            fail("--readme-only: makes no figure, so takes no names, --quick or --recompute", PROG)
        names = []
    fmt = inv.figure_format
    shipped = committed_figures()
    if shipped is not None and out.resolve() == shipped.resolve() and fmt != mf.COMMITTED_FORMAT and names:
        fail(
            f"--format: the committed figures are {mf.COMMITTED_FORMAT.upper()} (GitHub and the docs show them "
            f"inline); use --format {mf.COMMITTED_FORMAT} with --out {args.out}, or another --out for {fmt}",
            PROG,
        )
    runnable = []
    for name in names:
        why = available(REGISTRY[name])
        if why is None:
            runnable.append(name)
        else:
            print(f"[figures] {name}: skipped, {why}", file=sys.stderr)
    # one bar over every figure, weighed by each one's last measured cost, so its ETA is in seconds
    expected = {n: float(entries.get(n, {}).get("cost_s") or _UNKNOWN_COST_S) for n in runnable}
    failed = []
    with progress_bar(not args.quiet and bool(runnable), round(sum(expected.values()), 1), "figures", unit="s") as bar:
        for name in runnable:
            bar.set_postfix_str(name)
            try:
                entry = make(name, out, args.quick, recompute=args.recompute, format=fmt)
            except Exception as e:  # noqa: BLE001 — one broken figure must not stop the others
                failed.append(name)
                if isinstance(e, OSError) and e.errno in _DISK_ERRORS:  # the earlier files stay (atomic writes)
                    bar.write(f"[figures] {name}: FAILED: cannot write into {out}: {e.strerror}", file=sys.stderr)
                elif isinstance(e, UnsafeTarget):  # a link or a folder at its file: never written through
                    bar.write(f"[figures] {name}: FAILED: {e}", file=sys.stderr)
                else:
                    bar.write(f"[figures] {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
                    traceback.print_exc(limit=3, file=sys.stderr)
                bar.update(expected[name])
                continue
            old = entries.get(name)
            if not entry["cold"] and old is not None and old.get("cold") and old.get("cost_s") is not None:
                # a warm run (cached inputs) says nothing about the cold cost: keep the measured one
                entry.update(
                    cost_s=old["cost_s"],
                    load_avg_1m=old["load_avg_1m"],
                    cold=True,
                    regenerated_in_ci=old["regenerated_in_ci"],
                )
            entries[name] = entry
            # after every figure: a later failure or a kill keeps the entries of the figures already made
            inv.write(out / mf.NAME, lambda t: t.write_text(mf.dumps(entries)))
            bar.write(f"[figures] {name}: {out / entry['file']} ({entry['cost_s']:g} s)", file=sys.stderr)
            bar.update(expected[name])
    text = readme(out, entries)
    inv.write(out / "README.generated.md", lambda t: t.write_text(text))
    if args.write_readme:
        inv.write(out / "README.md", lambda t: t.write_text(text))
    return 1 if failed else 0


COMMAND = Command(PROG, build_parser, run, draws=mf.DEFAULT_FORMAT)


main = COMMAND.main


if __name__ == "__main__":
    sys.exit(main())
