"""Toy claim with a NOT_RUN row: it could not run here, so its stored result is never reused."""

from theorydyn.claims.check import Check
from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran


def checks(s, *, quick, progress):
    ran("notrun")
    return [Check.not_run("Toy 4", "data", "on par", "toy.tar.gz not in data/", "python -m toy --download")]


def memory(s, quick):
    return MemoryEstimate("toy notrun", (Term("nothing", 8, {"D": s.D}),))
