"""The theorem checks as one table, without the ledger's store (``python -m theorydyn.claims``): the claims
of the group ``theorems`` (:data:`theorydyn.claims.GROUPS`: Theorems 3.1, 3.2, Lemma 4.1, Theorem 4.2 and
N*) at their quick or full sizes, or the cheap checks of Theorems 3.1 and 3.2 alone (:data:`CHEAP`) at
their functions' default sizes. The command's options are :class:`TheoremChecksConfig` (its flags come from
the fields, :func:`theorydyn.cli.configs.add_config_flags`). The functions raise and return (the checks'
progress messages aside, on stderr); the command prints the table."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..core.config import Config, option
from ..infra.paths import run_dir
from . import judge, load, select

if TYPE_CHECKING:
    import pandas as pd

    from ..core.setting import Setting
    from ..infra.memory import MemoryEstimate
    from .check import Check

#: The cheap checks that may run alone (``--only``): Theorems 3.1 and 3.2
CHEAP = ("3.1", "3.2")


@dataclass(frozen=True)
class TheoremChecksConfig(Config):
    """One run of ``python -m theorydyn.claims``: every theorem check at the quick sizes or (``full``) the
    full ones, or ``only`` some of the cheap ones (:data:`CHEAP`), the rows printed and (``out``) written as
    CSV; or, with ``figure31`` (a file, or ``""``: :attr:`figure31_path`), only the Theorem 3.1 scan drawn."""

    full: bool = option(False, "GD checks at the given D with N=16384, 1200 steps (default: quick)", cli=False)
    only: tuple[str, ...] | None = option(
        None,
        "run only these checks (the cheap ones; default: every theorem check)",
        choices=CHEAP,
        many=True,
        optional=True,
    )
    out: Path | None = option(
        None,
        "output file: the checks as CSV (its folder is proven writable first; default: none, print only)",
        kind=object,
        optional=True,
        parse="path",
    )
    figure31: str | None = option(
        None,
        "only draw the Theorem 3.1 scan (exact error of the equal-weight GLM with the best link against "
        "q(D-C)/C^2, D in 64..256, C in 4..16) to FILE (.png, .pdf or .svg; default the run directory's "
        "figures/theorem31_glm.svg, never the checkout) and print the crossings",
        kind=str,
        optional=True,
        cli=False,
    )

    @property
    def selected(self) -> list[str]:
        """The checks of ``only``, once each (empty: every theorem check)."""
        return list(dict.fromkeys(self.only or ()))

    @property
    def figure31_path(self) -> str:
        """Where ``figure31`` draws: the file given, else the run directory's ``figures/theorem31_glm.svg``."""
        return self.figure31 or str(run_dir("figures", "theorem31_glm.svg"))

    def check(self, s: Setting) -> None:
        """Raises ValueError naming the flag when ``full`` would do nothing (with ``only``: Theorems 3.1 and 3.2
        run at their own sample sizes) or the setting ``s`` does not move where the GD checks run
        (:func:`check_moves`)."""
        if self.only and self.full:
            raise ValueError("--full: has no effect with --only (Theorems 3.1 and 3.2 run at their own sample sizes)")
        if not self.only:
            check_moves(s, self.full)


def theorem_claims() -> tuple[ModuleType, ...]:
    """The claim modules of the group ``theorems``, in ledger order (imported now)."""
    return tuple(load(name) for name in select(["theorems"]))


def theorems_memory(s: Setting, only: Sequence[str], full: bool) -> MemoryEstimate:
    """The largest peak among the theorem checks that :func:`theorem_checks` runs (one after the other):
    with ``only`` (a subset of :data:`CHEAP`) those checks at their functions' default sizes, else every
    theorem claim's ``memory`` at its quick or (``full``) full sizes."""
    from . import theorem31, theorem32

    if not only:
        parts = [m.memory(s, not full) for m in theorem_claims()]
    else:
        parts = [theorem31.sizes_memory(s, theorem31.Theorem31Sizes())] if "3.1" in only else []
        parts += [theorem32.memory(s, quick=True)] if "3.2" in only else []
    return max(parts, key=lambda e: e.total)


def check_moves(s: Setting, full: bool) -> None:
    """Raises ValueError (``--C: …``) when the setting does not move to the smaller D at which the Lemma 4.1
    scaling and Theorem 4.2 checks run (:func:`theorydyn.core.setting.setting_at`): refused here, before any
    check, what those checks would refuse."""
    from ..core.setting import setting_at
    from . import lemma41, theorem4

    quick = not full
    for D2, what in (
        (lemma41.SIZES.pick(quick).start_D(s.D), "Lemma 4.1 scaling"),
        (theorem4.SIZES.pick(quick).run_D(s.D), "Theorem 4.2"),
    ):
        try:
            setting_at(s, D2)
        except ValueError as e:
            mode = "--full" if full else "quick"
            raise ValueError(
                f"--C: the {what} checks run at D={D2} ({mode} mode) and the setting "
                f"does not move there: {e}; use --only 3.1,3.2 or a C dividing {D2}"
            ) from None


def theorem_checks(
    s: Setting, only: Sequence[str], full: bool, progress: Callable[[str], None] | None = None
) -> list[Check]:
    """The rows: with ``only`` (a subset of :data:`CHEAP`) those checks, else every theorem claim's checks
    at its quick or (``full``) full sizes, in ledger order (``progress`` gets their messages)."""
    from .theorem31 import check_theorem_3_1
    from .theorem32 import check_theorem_3_2

    if only:
        return (check_theorem_3_1(s, scan=False) if "3.1" in only else []) + (
            check_theorem_3_2(s) if "3.2" in only else []
        )
    return [c for mod in theorem_claims() for c in judge(mod, s, quick=not full, progress=progress)]


def theorem_table(s: Setting, only: Sequence[str], full: bool, progress: bool = False) -> tuple[pd.DataFrame, bool]:
    """The rows of :func:`theorem_checks` as a table (one row per check: :meth:`~theorydyn.claims.check.Check.row`)
    and whether one of them is FAIL; ``progress``: the checks' messages on stderr, ``[theorems] …``."""
    import pandas as pd

    from .check import Verdict

    say = (lambda m: print(f"[theorems] {m}", file=sys.stderr, flush=True)) if progress else None
    checks = theorem_checks(s, only, full, progress=say)
    return pd.DataFrame([c.row() for c in checks]), any(c.verdict is Verdict.FAIL for c in checks)
