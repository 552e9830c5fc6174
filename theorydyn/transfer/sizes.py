"""The transfer experiment's named sizes and methods, in a module that imports nothing heavy
(``python -m theorydyn.transfer --help`` shows them without loading the solvers): the Ñ grid, the
QUICK and FULL sizes (the CLI's default and ``--full``; the ledger's quick and full runs) and the
lists of methods."""

from __future__ import annotations

from typing import Any

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


# ---- named sizes (the CLI's default and --full; the ledger's quick and full runs) -------------------
#: The D of the ledger's runs: the powers of 2 up to 256 inside the scope rule (glm.theorem_3_1_scope) at
#: K = q(D − C) = 8: D = 16 has q = 8/12 > 1/2; chosen by the rule before any run of the ε-level rows.
SCOPE_DS = (32, 64, 128, 256)
# Every cap below is a compute cap (a need above it is censored at the cap, never a measurement); the
# quick sizes keep the ledger's transfer source near 2 minutes cold on 2 cores. logreg stops at D = 64
# in quick (its CV fit on Ñ·D·d features costs ~13 s per seed at D = 128, Ñ = 128). scratch does not reach
# test error ε within Ñ ≤ 256 (upstream N* ~ 2^15 at D = 64), so it runs its whole grid (~D³): D ≤ 32 quick.
#: Each size once, as (quick, full); the full sizes are those of the reported run (pre-trained Â are
#: cached under OUT/upstream_cache).
_SIZES: dict[str, tuple[Any, Any]] = {
    "Ds": (SCOPE_DS, SCOPE_DS),
    "Ns": (fine_grid(1024), fine_grid(4096)),
    "kernel_max_N": (1024, 4096),
    "seeds": (5, 5),
    "N_test": (4096, 8192),
    "upstream_N": (4096, 8192),
    "upstream_steps": (2000, 2000),
    "logreg_max_N": (256, 1024),
    "scratch_max_N": (256, 256),
    "baseline_max_N": (256, 1024),
    "budget": (1 << 20, 1 << 26),
    "budget_scratch": (1 << 20, 1 << 22),
    "sim_max_D": (32, 64),
    "scratch_max_D": (32, 64),
    "logreg_max_D": (64, 256),
}
#: The quick sizes (the CLI's default, the ledger's quick run).
QUICK: dict[str, Any] = {k: quick for k, (quick, _) in _SIZES.items()}
#: The full sizes (``--full``, the ledger's full run).
FULL: dict[str, Any] = {k: full for k, (_, full) in _SIZES.items()}
