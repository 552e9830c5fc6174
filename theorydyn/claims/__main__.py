"""``python -m theorydyn.claims``: the theorem rows alone (:mod:`.theorem31`, :mod:`.theorem32`, :mod:`.lemma41`,
:mod:`.theorem4`, :mod:`.nstar`; :class:`~theorydyn.claims.theorem_checks.TheoremChecksConfig`), or ``--figure31``.

Exit status 0 unless a row is FAIL (1); 2 on bad input (before any work).
"""

from __future__ import annotations

from ..cli import flags
from ..cli import tools as cli
from ..cli.configs import add_config_flags
from ..cli.runner import Command, Invocation
from .theorem_checks import TheoremChecksConfig as Checks

PROG = "python -m theorydyn.claims"


def build_parser():
    """The flags (shared by the fuzz test of every CLI; ``theorydyn theorems`` is ``verify --only theorems``)."""
    ap = cli.ArgumentParser(
        prog=PROG,
        description="Numerical checks of Theorems 3.1, 3.2, 4.2 and Lemma 4.1 "
        "(quick by default; --full for docs/theory.md §9 sizes).",
    )
    cli.add_setting_arguments(ap)
    full = Checks.help_of("full")
    cli.add_size_arguments(ap, dest="full", quick_help="the quick sizes (the default)", full_help=full)
    add_config_flags(ap, Checks, only=("only", "out"))
    flags.add_optional_path(ap, "--figure31", "FILE", Checks.help_of("figure31"))
    cli.add_common_arguments(ap, seed=None, force="machine")
    return ap


def run(inv: Invocation) -> int:
    """The table of checks; every input (its memory included) is checked before any work, exit 2 naming the flag."""
    from ..infra.terminal import check_rows_text
    from .theorem_checks import theorem_table, theorems_memory

    cfg = inv.config(Checks)
    if cfg.figure31 is not None:
        return _figure31(inv, cfg)
    s = inv.setting()
    with inv.refusing():
        cfg.check(s)
    inv.guard_memory(theorems_memory(s, cfg.selected, cfg.full), flags={"N": None, "N_flat": None, "n_test": None})
    out = inv.output_file(cfg.out, "--out") if cfg.out is not None else None
    df, failed = theorem_table(s, cfg.selected, cfg.full, progress=inv.progress)
    print(check_rows_text(df))  # wrapped to the terminal (theorydyn.infra.terminal); every column is in the CSV
    if out is not None:
        inv.write(out, lambda p: df.to_csv(p, index=False))  # atomic, refuses a link (theorydyn.infra.atomic)
        print(f"wrote {out}")
    return 1 if failed else 0


def _figure31(inv: Invocation, cfg: Checks) -> int:
    """``--figure31``: the Theorem 3.1 scan drawn (:func:`theorydyn.experiments.theorem31.draw_scan`); a flag
    of the checks changes nothing there, so one given is refused."""
    from ..experiments.theorem31 import draw_scan

    for dest in ("full", "only", "out", "force", "quiet", *cli.SETTING_FLAGS):
        if getattr(inv.args, dest) != inv.parser.get_default(dest):
            flag = cli.SETTING_FLAGS.get(dest, "--" + dest)
            inv.fail(f"{flag}: has no effect with --figure31 (the scan runs at its own sizes)")
    path = inv.output_file(cfg.figure31_path, "--figure31")
    print(draw_scan(str(path)).to_string(index=False))
    print(f"wrote {path}")
    return 0


COMMAND = Command(PROG, build_parser, run)
main = COMMAND.main

if __name__ == "__main__":
    raise SystemExit(main())
