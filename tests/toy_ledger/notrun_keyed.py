"""Toy claim with a NOT_RUN row that declares its inputs (whether $TOY_LEDGER_DATA is set: its "data"),
so that its stored result is reused while they are the same."""

import os

from theorydyn.claims.check import Check
from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran


def inputs(s, quick):
    return {"data": os.environ.get("TOY_LEDGER_DATA")}


def checks(s, *, quick, progress):
    ran("notrun_keyed")
    if os.environ.get("TOY_LEDGER_DATA"):
        return [Check.exact("Toy 5", "data", 1.0, "== 1", True)]
    return [Check.not_run("Toy 5", "data", "== 1", "no data", "export TOY_LEDGER_DATA=1")]


def memory(s, quick):
    return MemoryEstimate("toy notrun_keyed", (Term("nothing", 8, {"D": s.D}),))
