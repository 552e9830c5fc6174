"""Toy claim that raises: a FAIL row, never stored."""

from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran


def checks(s, *, quick, progress):
    ran("broken")
    raise RuntimeError("kaboom")


def memory(s, quick):
    return MemoryEstimate("toy broken", (Term("nothing", 8, {"D": s.D}),))
