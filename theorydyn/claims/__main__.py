"""``python -m theorydyn.claims``: the
theorem rows alone (:mod:`.theorem31`, :mod:`.theorem32`, :mod:`.lemma41`, :mod:`.theorem4`, :mod:`.nstar`).

Exit status 0 unless a row is FAIL (1); 2 on bad input (before any work).
"""

from __future__ import annotations

import sys

from ..cli.runner import Command, Invocation
from ..cli.tools import (
    SETTING_FLAGS,
    ArgumentParser,
    add_common_arguments,
    add_optional_path,
    add_out_argument,
    add_selection,
    add_setting_arguments,
    add_size_arguments,
)
from .theorem_checks import CHEAP

PROG = "python -m theorydyn.claims"


def build_parser():
    """The flags of ``python -m theorydyn.claims`` (shared by the fuzz test of every CLI; ``theorydyn theorems``
    is now ``verify --only theorems``, :mod:`theorydyn.theorems`)."""
    ap = ArgumentParser(
        prog=PROG,
        description="Numerical checks of Theorems 3.1, 3.2, 4.2 and Lemma 4.1 "
        "(quick by default; --full for docs/theory.md §9 sizes).",
    )
    add_setting_arguments(ap)
    add_size_arguments(
        ap,
        dest="full",
        quick_help="the quick sizes (the default)",
        full_help="GD checks at the given D with N=16384, 1200 steps (default: quick)",
    )
    add_selection(ap, "--only", CHEAP, "run only these checks (the cheap ones; default: every theorem check)")
    add_out_argument(
        ap, None, "output file: the checks as CSV (its folder is proven writable first; default: none, print only)"
    )
    add_optional_path(
        ap,
        "--figure31",
        "FILE",
        "only draw the Theorem 3.1 scan (exact error of the equal-weight GLM with the best link against "
        "q(D-C)/C^2, D in 64..256, C in 4..16) to FILE (.png, .pdf or .svg; default the run directory's "
        "figures/theorem31_glm.svg, never the checkout) and print the crossings",
    )
    add_common_arguments(ap, seed=None, force="machine")
    return ap


def run(inv: Invocation) -> int:
    """``python -m theorydyn.claims [--full] [--only ...] [--out FILE.csv]``: the table of checks
    (:mod:`theorydyn.claims.theorem_checks`).

    Every input is checked before any work (exit 2 naming the flag): the setting, ``--only``,
    flags that would do nothing in the chosen mode, the output folder (created and proven
    writable), and the memory estimate of the checks against the machine's (``--force`` skips it).
    """
    import pandas as pd

    from ..infra.terminal import check_rows_text
    from .check import Verdict
    from .theorem_checks import check_moves, theorem_checks, theorems_memory

    args = inv.args
    if args.figure31 is not None:
        return _figure31(inv)
    s = inv.setting()
    only = list(dict.fromkeys(args.only or ()))  # choices checked by the parser
    if only and args.full:
        inv.fail("--full: has no effect with --only (Theorems 3.1 and 3.2 run at their own sample sizes)")
    if not only:  # the GD checks move the setting to smaller D: refused here, before any check
        with inv.refusing():
            check_moves(s, args.full)
    flags = {"N": None, "N_flat": None, "n_test": None}  # sample sizes fixed by the mode
    inv.guard_memory(theorems_memory(s, only, args.full), flags=flags)
    out = inv.output_file(args.out, "--out") if args.out is not None else None
    say = (lambda m: print(f"[theorems] {m}", file=sys.stderr, flush=True)) if inv.progress else None
    checks = theorem_checks(s, only, args.full, progress=say)
    df = pd.DataFrame([c.row() for c in checks])
    print(check_rows_text(df))  # wrapped to the terminal (theorydyn.infra.terminal); every column is in the CSV
    if out is not None:
        inv.write(out, lambda p: df.to_csv(p, index=False))  # atomic, refuses a link (theorydyn.infra.atomic)
        print(f"wrote {out}")
    return 1 if any(c.verdict is Verdict.FAIL for c in checks) else 0


def _figure31(inv: Invocation) -> int:
    """``--figure31``: the Theorem 3.1 scan drawn, at its own fixed sizes (a flag of the checks is refused)."""
    from ..core.glm import save_theorem_3_1_figure
    from ..infra.paths import run_dir

    ap, args = build_parser(), inv.args
    given = [f for f in ("full", "only", "out", "force", "quiet") if getattr(args, f) != ap.get_default(f)]
    given += [flag for k, flag in SETTING_FLAGS.items() if getattr(args, k) != ap.get_default(k)]
    if given:
        name = given[0] if given[0].startswith("--") else "--" + given[0]
        inv.fail(f"{name}: has no effect with --figure31 (the scan runs at its own sizes)")
    png = inv.output_file(args.figure31 or str(run_dir("figures", "theorem31_glm.svg")), "--figure31")
    cross = save_theorem_3_1_figure(str(png))
    print(cross.to_string(index=False))
    print(f"wrote {png}")
    return 0


COMMAND = Command(PROG, build_parser, run)


main = COMMAND.main


if __name__ == "__main__":
    raise SystemExit(main())
