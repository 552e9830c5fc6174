"""``python -m theorydyn.claims``: the
theorem rows alone (:mod:`.theorem31`, :mod:`.theorem32`, :mod:`.lemma41`, :mod:`.theorem4`, :mod:`.nstar`).

Exit status 0 unless a row is FAIL (1); 2 on bad input (before any work).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..cli.runner import Command, Invocation
from ..cli.tools import (
    SETTING_FLAGS,
    ArgumentParser,
    add_common_arguments,
    add_out_argument,
    add_setting_arguments,
    add_size_arguments,
    fail,
)

if TYPE_CHECKING:
    from ..core.setting import Setting
    from ..infra.memory import MemoryEstimate

PROG = "python -m theorydyn.claims"


def theorems_memory(s: Setting, only: list[str], full: bool) -> MemoryEstimate:
    """The largest peak among the theorem checks that ``python -m theorydyn.claims`` will run (they run one
    after the other): with ``only`` (a subset of "3.1", "3.2") those checks at their functions' default sizes,
    else every theorem claim's ``memory`` at its quick or (``full``) full :data:`SIZES`."""
    from . import theorem31, theorem32

    if not only:
        parts = [m.memory(s, not full) for m in theorem_claims()]
    else:
        parts = [theorem31.sizes_memory(s, theorem31.Theorem31Sizes())] if "3.1" in only else []
        parts += [theorem32.memory(s, quick=True)] if "3.2" in only else []
    return max(parts, key=lambda e: e.total)


def theorem_claims() -> tuple:
    """The claim modules whose rows this command prints, in ledger order (imported now)."""
    from . import lemma41, nstar, theorem4, theorem31, theorem32

    return (theorem31, theorem32, lemma41, theorem4, nstar)


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
    ap.add_argument(
        "--only",
        nargs="+",
        choices=("3.1", "3.2"),
        default=None,
        help="run only these checks (the cheap ones; default: every theorem check)",
    )
    add_out_argument(
        ap, None, "output file: the checks as CSV (its folder is proven writable first; default: none, print only)"
    )
    ap.add_argument(
        "--figure31",
        nargs="?",
        const="",
        default=None,
        metavar="FILE",
        help="only draw the Theorem 3.1 scan (exact error of the equal-weight GLM with the best link against "
        "q(D-C)/C^2, D in 64..256, C in 4..16) to FILE (.png, .pdf or .svg; default the run directory's "
        "figures/theorem31_glm.svg, never the checkout) and print the crossings",
    )
    add_common_arguments(ap, seed=None, force="machine")
    return ap


def run(inv: Invocation) -> int:
    """``python -m theorydyn.claims [--full] [--only ...] [--out FILE.csv]``: the table of checks.

    Every input is checked before any work (exit 2 naming the flag): the setting, ``--only``,
    flags that would do nothing in the chosen mode, the output folder (created and proven
    writable), and the memory estimate of the checks against the machine's (``--force`` skips it).
    """
    import pandas as pd

    from ..core.glm import save_theorem_3_1_figure
    from ..core.setting import setting_at
    from ..infra.terminal import check_rows_text
    from . import lemma41, theorem4
    from .check import Verdict
    from .theorem31 import check_theorem_3_1
    from .theorem32 import check_theorem_3_2

    prog = PROG
    ap, args = build_parser(), inv.args
    if args.figure31 is not None:
        # the scan has its own fixed sizes: a flag of the checks would do nothing here
        given = [f for f in ("full", "only", "out", "force", "quiet") if getattr(args, f) != ap.get_default(f)]
        given += [flag for k, flag in SETTING_FLAGS.items() if getattr(args, k) != ap.get_default(k)]
        if given:
            name = given[0] if given[0].startswith("--") else "--" + given[0]
            fail(f"{name}: has no effect with --figure31 (the scan runs at its own sizes)", prog)
        from ..infra.paths import run_dir

        png = inv.output_file(args.figure31 or str(run_dir("figures", "theorem31_glm.svg")), "--figure31")
        cross = save_theorem_3_1_figure(str(png))
        print(cross.to_string(index=False))
        print(f"wrote {png}")
        return 0
    s = inv.setting()
    only = list(dict.fromkeys(args.only or ()))  # choices checked by the parser
    if only and args.full:
        fail("--full: has no effect with --only (Theorems 3.1 and 3.2 run at their own sample sizes)", prog)
    if not only:
        # lemma41.checks and theorem4.checks move the setting to smaller D for the GD checks: refuse here
        # what they would refuse there
        quick = not args.full
        for D2, what in (
            (lemma41.SIZES.pick(quick).start_D(s.D), "Lemma 4.1 scaling"),
            (theorem4.SIZES.pick(quick).run_D(s.D), "Theorem 4.2"),
        ):
            try:
                setting_at(s, D2)
            except ValueError as e:
                mode = "--full" if args.full else "quick"
                fail(
                    f"--C: the {what} checks run at D={D2} ({mode} mode) and the setting "
                    f"does not move there: {e}; use --only 3.1,3.2 or a C dividing {D2}",
                    prog,
                )
    inv.guard_memory(
        theorems_memory(s, only, args.full),
        force=args.force,
        flags={"N": None, "N_flat": None, "n_test": None},
    )  # sample sizes fixed by the mode
    out = inv.output_file(args.out, "--out") if args.out is not None else None
    say = None if args.quiet else lambda m: print(f"[theorems] {m}", file=sys.stderr, flush=True)  # noqa: E731
    if only:
        checks = (check_theorem_3_1(s, scan=False) if "3.1" in only else []) + (
            check_theorem_3_2(s) if "3.2" in only else []
        )
    else:
        checks = [c for mod in theorem_claims() for c in mod.checks(s, quick=not args.full, progress=say)]
    df = pd.DataFrame([c.row() for c in checks])
    print(check_rows_text(df))  # wrapped to the terminal (theorydyn.infra.terminal); every column is in the CSV
    if out is not None:
        inv.write(out, lambda p: df.to_csv(p, index=False))  # atomic, refuses a link (theorydyn.infra.atomic)
        print(f"wrote {out}")
    return 1 if any(c.verdict is Verdict.FAIL for c in checks) else 0


COMMAND = Command(PROG, build_parser, run)


main = COMMAND.main


if __name__ == "__main__":
    raise SystemExit(main())
