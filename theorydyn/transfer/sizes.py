"""The transfer experiment's methods and grids, in a module that imports nothing heavy
(``python -m theorydyn.transfer --help`` shows them without loading the solvers): the lists of methods,
the Ñ grid and the D's of the ledger's runs. The named sizes (QUICK and FULL) are instances of the
run's configuration, :data:`theorydyn.transfer.config.QUICK_RUN` and ``FULL_RUN``."""

from __future__ import annotations

#: Every method of the experiment (the one list: the runner, the CLI and the plots use it).
METHODS = ("pretrained", "pretrained-sim", "init", "other-partition", "scratch", "logreg", "oracle")
#: Methods whose attention is frozen and only ṽ is trained.
FROZEN = ("pretrained", "pretrained-sim", "init", "other-partition", "oracle")
#: The methods a run uses unless told otherwise (the CLI's default and the ledger's): all but ``oracle``.
DEFAULT_METHODS = tuple(m for m in METHODS if m != "oracle")
#: Methods whose attention comes from a cached pre-training.
CACHED = ("pretrained", "pretrained-sim", "other-partition")


def fine_grid(n_max: int) -> tuple[int, ...]:
    """The Ñ grid: every integer up to 4, then 4·√2^k rounded, up to ``n_max`` (included as its last
    point). Neighbours differ by a factor ≤ 1.5 from Ñ = 2 on (≤ 1.46, ≈ √2, from 8 on; 1 → 2 is
    the one factor 2 integers allow), so a crossing is pinned to within that factor before interpolation,
    and a need that grows like D^a over 16 ≤ D ≤ 256 moves across ≥ 8a grid points (powers of 2
    moved it across 4a, and a need below 2 at every D capped the slope at 0.25).
    """
    if n_max < 1:
        raise ValueError(f"n_max must be >= 1, got {n_max}")
    pts = {1, 2, 3, 4}
    k = 1
    while (n := round(4 * 2 ** (k / 2))) < n_max:
        pts.add(n)
        k += 1
    return tuple(sorted(p for p in pts if p < n_max)) + (n_max,)


# ---- the D of the named sizes (theorydyn.transfer.config.QUICK_RUN, FULL_RUN) ----------------------------
#: The D of the ledger's runs: the powers of 2 up to 256 inside the scope rule (glm.theorem_3_1_scope) at
#: K = q(D − C) = 8: D = 16 has q = 8/12 > 1/2; chosen by the rule before any run of the ε-level rows.
SCOPE_DS = (32, 64, 128, 256)
