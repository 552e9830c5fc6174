"""``python -m theorydyn.figures [NAME…|all] [--out figures] [--quick] [--list]``: every figure, recomputed.

Exit status 0 when every asked figure was made, 1 when one failed (the others are still made),
2 on bad input.
"""

from __future__ import annotations

import argparse
import errno
import sys
import time
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from ..cli import ArgumentParser, fail, output_dir, write_output  # noqa: E402
from . import REGISTRY, available, make, readme  # noqa: E402

PROG = "python -m theorydyn.figures"
#: a full disk, a quota, a read-only file system: reported in one line, no traceback
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Every figure of theorydyn, recomputed into --out.")
    ap.add_argument("names", nargs="*", default=["all"], help=f"figures to make: all or any of {', '.join(REGISTRY)}")
    ap.add_argument(
        "--out",
        default="figures",
        help="output folder, created and proven writable before any work (default %(default)s)",
    )
    ap.add_argument("--quick", action="store_true", help="small sizes (what is committed)")
    ap.add_argument(
        "--list", action="store_true", help="list the figures and whether each can be made (writes nothing)"
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """Bad input exits 2 before any figure is computed: an unknown name, flags that --list would
    ignore, an output folder that cannot be created or written."""
    ap = build_parser()
    args = ap.parse_args(argv)
    names = list(REGISTRY) if (not args.names or "all" in args.names) else args.names
    bad = [n for n in names if n not in REGISTRY]
    if bad:
        fail(f"names: unknown figure(s) {bad}; known: all, {', '.join(REGISTRY)}", PROG)
    if args.list:
        # --list makes nothing: a flag that would only act on the figures is refused, not dropped
        for flag, given in (
            ("names", args.names not in ([], ["all"])),
            ("--quick", args.quick),
            ("--out", args.out != ap.get_default("out")),
        ):
            if given:
                fail(f"{flag}: has no effect with --list (it lists the figures and makes none)", PROG)
    else:
        if not str(args.out).strip():
            fail("--out: must be a folder path, got ''", PROG)
        out = output_dir(args.out)
    if args.list:
        for fig in REGISTRY.values():
            why = available(fig)
            print(f"{fig.name:10s} {'ready' if why is None else 'skipped: ' + why}  — {fig.title}")
        return 0
    made: dict[str, list[Path]] = {}
    failed = []
    for name in names:
        fig = REGISTRY[name]
        why = available(fig)
        if why is not None:
            print(f"[figures] {name}: skipped, {why}", file=sys.stderr)
            continue
        t = time.perf_counter()
        print(f"[figures] {name} …", file=sys.stderr, flush=True)
        try:
            made[name] = make(name, out, args.quick)
        except Exception as e:  # noqa: BLE001 — one broken figure must not stop the others
            failed.append(name)
            if isinstance(e, OSError) and e.errno in _DISK_ERRORS:  # the earlier files stay (atomic writes)
                print(f"[figures] {name}: FAILED: cannot write {out / name}.png/.pdf: {e.strerror}", file=sys.stderr)
                continue
            print(f"[figures] {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        print(
            f"[figures] {name}: {', '.join(str(p) for p in made[name])} ({time.perf_counter() - t:.0f} s)",
            file=sys.stderr,
        )
    text = readme(out)
    write_output(out / "README.md", lambda t: t.write_text(text), PROG)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
