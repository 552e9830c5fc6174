"""Toy claim three: a DEVIATES row (with its note) and an INFO row (whose note is not printed)."""

from theorydyn.claims.check import Check, Verdict
from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran


def checks(s, *, quick, progress):
    ran("three")
    return [
        Check.exact("Toy 3", "1/3 in floating point", 1 / 3, "== 1/3", Verdict.DEVIATES, note="0.333… is not 1/3"),
        Check.exact("Toy 3", "quick", float(quick), "—", Verdict.INFO, note="an INFO note, not printed"),
    ]


def memory(s, quick):
    return MemoryEstimate("toy three", (Term("a float", 8, {"D": s.D}),))
