"""``theorydyn store merge TARGET SOURCE [SOURCE …]`` (also ``python -m theorydyn.stores merge …``): results stores.

``merge`` copies the rows of each SOURCE ``results.sqlite`` into TARGET
(:func:`theorydyn.infra.store_merge.merge_stores`:
a union by (scope, key); a row the target holds with other data is a conflict, kept as it was and
listed). Exit status 0; 1 when a conflict or an invalid row was found (the rest is merged); 2 on bad
input (a path that is not a results database, TARGET among the sources).
"""

from __future__ import annotations

import argparse
import sys

from ..cli.flags import add_path
from ..cli.runner import Command, Invocation
from ..cli.tools import ArgumentParser

PROG = "theorydyn store"


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Results stores (results.sqlite).")
    merge = ap.add_subparsers(dest="action", required=True, metavar="ACTION").add_parser(
        "merge",
        help="copy the rows of each SOURCE store into TARGET (created if missing); conflicting rows are kept "
        "as TARGET has them and listed",
        description="Copy the rows of each SOURCE results.sqlite into TARGET, one transaction per source.",
    )
    add_path(merge, "target", "the store that receives the rows (results.sqlite)")
    add_path(merge, "sources", "stores whose rows are copied", many=True)
    return ap


def run(inv: Invocation) -> int:
    from ..infra.store_merge import merge_stores

    target, sources, bad = inv.args.target, inv.args.sources, 0
    if any(str(s) == str(target) for s in sources):
        inv.fail(f"sources: {target} is the target; name it once, as TARGET")
    if target.exists() and not target.is_file():
        inv.fail(f"target: {target} exists and is not a file")
    inv.output_dir(target.parent, "target")
    for source in sources:
        if not source.is_file():
            inv.fail(f"sources: no store at {source}")
        r = merge_stores(target, source)
        counts = f"{r.added} rows added, {r.duplicate} already there, {r.conflict} conflicts"
        print(f"{source} -> {target}: {counts}, {r.rejected} invalid rows skipped")
        for scope, key in r.conflicts:
            print(f"  conflict: scope {scope!r} key {key[:16]}…: kept as {target} has it", file=sys.stderr)
        bad += r.conflict + r.rejected
    return 1 if bad else 0


COMMAND = Command(PROG, build_parser, run)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
