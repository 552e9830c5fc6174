"""``python -m theorydyn.figures [NAME…|all] [--out DIR] [--format pdf|svg|png] [--quick] [--recompute] …``: every
figure recomputed into ``--out`` (:class:`~theorydyn.figures.config.FiguresConfig`), each with its entry in
``--out/manifest.json``, and the README text in ``--out/README.generated.md`` (``--write-readme``: in
``--out/README.md`` too). Exit status 0 when every asked figure was made, 1 when one failed (the others are still
made), 2 on bad input, before any figure is computed.
"""

from __future__ import annotations

import sys
from functools import partial

from ..cli.configs import add_config_flags
from ..cli.runner import Command, Invocation
from ..cli.tools import ArgumentParser, add_common_arguments, add_size_arguments
from ..infra.paths import run_dir
from .config import FULL_HELP, QUICK_HELP, FiguresConfig
from .manifest import DEFAULT_FORMAT

PROG = "python -m theorydyn.figures"


def build_parser() -> ArgumentParser:
    ap = ArgumentParser(prog=PROG, description="Every figure of theorydyn, recomputed into --out.")
    flags = partial(add_config_flags, ap, FiguresConfig)
    flags(only=("figures", "out"), defaults={"out": run_dir("figures")})
    add_size_arguments(ap, dest="quick", quick_help=QUICK_HELP, full_help=FULL_HELP)
    flags(only=("recompute", "write_readme", "readme_only"))
    add_common_arguments(ap, seed=None, quiet=True)
    flags(only=("listing",))
    return ap


def run(inv: Invocation) -> int:
    from .core import REGISTRY, listing, make_many

    cfg = inv.config(FiguresConfig)
    with inv.refusing():
        names = cfg.selected(REGISTRY)
        cfg.check_list(inv.given())
        out = cfg.folder if cfg.listing else inv.output_dir(cfg.folder)  # --list writes nothing
        entries = cfg.manifest(out)
        cfg.check_out(out)
    if cfg.listing:
        print("\n".join(listing(entries)))
        return 0
    failed = make_many(names, out, entries, cfg, write=inv.write, progress=inv.progress)
    return 1 if failed else 0


COMMAND = Command(PROG, build_parser, run, draws=DEFAULT_FORMAT)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
