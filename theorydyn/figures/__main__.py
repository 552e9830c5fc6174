"""``python -m theorydyn.figures [NAME…|all] [--out DIR] [--format pdf|svg|png] [--quick] [--recompute] …``: every
figure recomputed into ``--out`` (:mod:`theorydyn.figures.config`), with its entry in ``--out/manifest.json``
(:mod:`theorydyn.figures.manifest`) and the README text in ``--out/README.generated.md`` (``--write-readme``:
``--out/README.md`` too). Exit status 0 when every asked figure was made, 1 when one failed (the others are
still made), 2 on bad input (an unknown name, flags that --list would ignore, an output folder that cannot be
created or written, a manifest that cannot be read), before any figure is computed.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

from ..cli.configs import add_config_flags
from ..cli.runner import Command, Invocation
from ..cli.tools import ArgumentParser, add_common_arguments, add_size_arguments
from ..infra.paths import run_dir
from . import manifest as mf
from .config import FULL_HELP, QUICK_HELP, FiguresConfig

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
    from .core import REGISTRY, listing, make_many, readme

    cfg = inv.config(FiguresConfig)
    with inv.refusing():
        names = cfg.selected(REGISTRY)
        cfg.check_list(inv.given())
    if cfg.listing:  # makes nothing, so creates no folder
        print("\n".join(listing(_manifest(inv, cfg.folder))))
        return 0
    out = inv.output_dir(cfg.folder)
    entries = _manifest(inv, out)
    with inv.refusing():
        cfg.check_out(out)
    failed = make_many(
        names,
        out,
        cfg.quick,
        entries,
        write=inv.write,
        recompute=cfg.recompute,
        format=cfg.format,
        progress=inv.progress,
    )
    text = readme(out, entries)
    for name in ("README.generated.md", "README.md") if cfg.write_readme else ("README.generated.md",):
        inv.write(out / name, lambda t: t.write_text(text))
    return 1 if failed else 0


def _manifest(inv: Invocation, out: Path) -> dict:
    """``out``'s manifest, or the committed one (:func:`~theorydyn.figures.manifest.load_or_committed`)."""
    try:
        return mf.load_or_committed(out)
    except ValueError as e:
        inv.fail(f"--out: {e}")


COMMAND = Command(PROG, build_parser, run, draws=mf.DEFAULT_FORMAT)
main = COMMAND.main

if __name__ == "__main__":
    sys.exit(main())
