"""Toy claim one: a mean over five seeded draws that depend on D (floats that must round-trip exactly)."""

import numpy as np

from theorydyn.claims.check import Check
from theorydyn.infra.memory import MemoryEstimate, Term
from toy_ledger import ran


def checks(s, *, quick, progress):
    ran("one")
    if progress:
        progress("drawing")
    values = [float(np.random.default_rng(seed).normal(s.D, 1.0)) for seed in range(5)]
    return [Check.over_seeds("Toy 1", f"a draw around D = {s.D}", values, f"> {s.D - 3}", min(values) > s.D - 3)]


def memory(s, quick):
    return MemoryEstimate("toy one", (Term("five floats", 40, {"D": s.D}),))
