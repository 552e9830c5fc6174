"""Toy claim two: an exact row and an OUT_OF_SCOPE row whose note is long (the printed ledger wraps it)."""

from theorydyn.claims.check import Check, Verdict
from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran

NOTE = (
    "the toy assumption C^2 < D does not hold at this setting, so the claim says nothing here; this note is "
    "long on purpose, as the notes of the real ledger are, to show that it is printed in full and wrapped"
)


def checks(s, *, quick, progress):
    ran("two")
    return [
        Check.exact("Toy 2", "C / D, exactly", s.C / s.D, "<= 1/2", s.C / s.D <= 0.5, params=dict(D=s.D, C=s.C)),
        Check.exact("Toy 2 (scope)", "C^2 / D", s.C**2 / s.D, "< 1", Verdict.OUT_OF_SCOPE, note=NOTE),
    ]


def memory(s, quick):
    return MemoryEstimate("toy two", (Term("two floats", 16, {"D": s.D}),))
