"""Theorem 4.2 and N*(D) at the sizes a GPU reaches (docs/theory.md §4): the rows of
:mod:`theorydyn.claims.theorem4` and :mod:`theorydyn.claims.nstar`, judged the same way, on runs stepped
on CUDA by the torch simulator (:mod:`theorydyn.simulate.torch_step`, ``simulate(..., device="cuda")``).

Why a claim of its own: "N = poly(d)" is a trend in D, and the CPU ledger reaches D = 64–80 only. X has
N·D·d = N·D² numbers (d = D): at D = 128 and N = 2¹⁷ it is 8 GiB in float32, at D = 256 and N = 2¹⁸ 64 GiB
— one H200's memory, no 2-core machine's. The sizes (:data:`SIZES`) were fixed before any run:

* Theorem 4.2 (1) along the run and (2) at the end, with the Â-frozen control, at D = 128 (N = 2¹⁵ quick,
  2¹⁷ full) and D = 256 (N = 2¹⁸, full), the CPU rows' seeds, windows and step rule
  (:data:`theorydyn.claims.theorem4.SIZES`, :func:`~theorydyn.experiments.theorem4.run_plan`: the stated
  rule's step size) and run options (:data:`~theorydyn.experiments.theorem4.RUN`), the ledger's q, X in float32;
* N*(D) (full mode) at D = 64, 128, 256, N = 2¹²…2¹⁶, 3 seeds, N*(D)'s windows (k = 1.5 and 3), both q
  readings, common random numbers across N (:func:`theorydyn.experiments.nstar.nstar_runs`), no time budget.

A size whose training set does not fit the device's memory gives NOT_RUN rows saying how much it needs.
Without a CUDA device (CI and most machines) every row is NOT_RUN with the command that runs it.
The procedure is the CPU rows' own (their planted counter-cases flip it); the tests run this module on
torch's CPU device at small sizes (``device="cpu"``), which agrees with the Numba path to rounding.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from ..core.config import Seeds, option
from ..core.setting import Setting, setting_at
from ..experiments.nstar import KS, nstar_runs, q_readings
from ..experiments.theorem4 import RUN, run_plan, run_seeds
from ..infra.memory import MemoryEstimate, Term
from . import theorem4
from .check import Check, setting_params
from .nstar import check_n_star
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option


@dataclass(frozen=True)
class GpuSizes(ClaimSizes):
    """The sizes of the GPU rows (:func:`checks`): Theorem 4.2 at each (D, N) of ``D`` and ``N``, and N*(D)."""

    D: tuple[int, ...] = grid_option((128, 256), "the D of the Theorem 4.2 runs (d = D)", low=8)
    N: tuple[int, ...] = grid_option((1 << 17, 1 << 18), "training samples of the run at each D")
    nstar: bool = option(True, "also N*(D) over nstar_D (both q readings)", cli=False)
    nstar_D: tuple[int, ...] = grid_option((64, 128, 256), "the D grid of N*(D)", low=8)
    nstar_N: tuple[int, ...] = grid_option(tuple(2**k for k in range(12, 17)), "the N grid of N*(D) at each D")
    nstar_seeds: Seeds = seeds_option(3, "the seeds j of N*(D) (run seed 1000 j + D + 7)")
    nstar_ks: tuple[float, ...] = grid_option(
        KS, "the windows [T_a, k T_a] of N*(D)'s persistence", kind=float, low=1.0
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.N) != len(self.D):
            raise ValueError(f"N must give one size per D: D={self.D}, N={self.N}")


#: The sizes, fixed before any run (module docstring); quick: D = 128 at N = 2^15 only, no N*(D).
SIZES = Sizes(quick=GpuSizes(D=(128,), N=(1 << 15,), nstar=False), full=GpuSizes())
#: The device memory a run needs, as a multiple of its training set X (X, the test samples' X, the
#: temporaries of a chunk): fixed from the torch path's allocations, not tuned.
DEVICE_X_FACTOR = 1.25
NO_DEVICE = "no CUDA device on this machine (torch is absent or torch.cuda.is_available() is False)"


def cuda_device() -> str | None:
    """``"cuda"`` when torch is installed and sees a CUDA device, else None (no error: a machine without
    one gets NOT_RUN rows)."""
    try:
        import torch
    except ImportError:
        return None
    return "cuda" if torch.cuda.is_available() else None


def device_bytes(device: str) -> float:
    """Total memory of ``device`` in bytes (``inf`` for torch's CPU device: the host's guard applies)."""
    if not device.startswith("cuda"):
        return math.inf
    import torch

    return float(torch.cuda.get_device_properties(torch.device(device)).total_memory)


def x_bytes(D: int, N: int) -> int:
    """Bytes of the float32 training set X: (N, D, d = D)."""
    return 4 * N * D * D


def device_need(D: int, N: int) -> float:
    """Device bytes a run at (D, N) needs: :data:`DEVICE_X_FACTOR` times its training set X."""
    return DEVICE_X_FACTOR * x_bytes(D, N)


def command(s: Setting, quick: bool) -> str:
    """The command that runs these rows at the ledger's setting ``s`` on a machine with a CUDA device."""
    return f"python -m theorydyn.verify --D {s.D} --C {s.C} --q {s.q:g} --only gpu" + (" --quick" if quick else "")


def _not_run(s: Setting, D: int, N: int, why: str, quick: bool) -> list[Check]:
    """The two Theorem 4.2 rows of size (D, N), not run: ``why``, and the command."""
    seeds = len(theorem4.SIZES.pick(quick).seeds)
    return [
        Check.not_run(
            f"Theorem 4.2 {part} on CUDA [D = {D}, N = {N}]",
            quantity,
            threshold,
            why,
            command(s, quick),
            params=setting_params(setting_at(s, D), N=N, seeds=seeds),
        )
        for part, quantity, threshold in (
            ("(1)", "patch association of A_hat along the run (Definition 2.2)", "== 1 along [T_a, k T_a]"),
            ("(2)", "Pr[f F <= 0] on fresh samples (f = 0 an error)", "<= 0.05"),
        )
    ]


def _nstar_not_run(s: Setting, n: GpuSizes, why: str, quick: bool) -> list[Check]:
    return [
        Check.not_run(
            f"Theorem 4.2 (N = poly(d)) on CUDA [D = {'/'.join(map(str, n.nstar_D))}, "
            f"N = {n.nstar_N[0]}..{n.nstar_N[-1]}]",
            "N_50 per D and the exponent b of N_50(D) ~ D^b",
            "the power law passes through every N_50 interval (N = poly(d))",
            why,
            command(s, quick),
            params=setting_params(s, seeds=len(n.nstar_seeds), ks="/".join(f"{k:g}" for k in n.nstar_ks)),
        )
    ]


def _on(c: Check, device: str) -> Check:
    """The row with its device in the claim text, so that it is never read as a CPU row."""
    return dataclasses.replace(c, claim=c.claim.replace("Theorem 4.2", f"Theorem 4.2 on {device}", 1))


def checks(
    s: Setting,
    *,
    quick: bool = True,
    progress: Callable[[str], None] | None = None,
    device: str | None = None,
) -> list[Check]:
    """The rows of Theorem 4.2 and N*(D) on a GPU at :data:`SIZES` (module docstring), at the ledger's q
    and C; ``device`` (e.g. ``"cuda:1"``, or ``"cpu"`` in the tests) in place of the first CUDA device.
    NOT_RUN rows, with the command, where there is no device or a size does not fit it."""
    say = progress or (lambda msg: None)
    n, t4 = SIZES.pick(quick), theorem4.SIZES.pick(quick)
    device = device or cuda_device()
    out: list[Check] = []
    if device is None:
        for D, N in zip(n.D, n.N, strict=True):
            out += _not_run(s, D, N, NO_DEVICE, quick)
        return out + (_nstar_not_run(s, n, NO_DEVICE, quick) if n.nstar else [])
    total = device_bytes(device)
    for D, N in zip(n.D, n.N, strict=True):
        need = device_need(D, N)
        if need > total:
            out += _not_run(s, D, N, f"X needs {need / 2**30:.1f} GiB, {device} has {total / 2**30:.1f} GiB", quick)
            continue
        sg = setting_at(s, D)
        plan = run_plan(sg, t4)
        run = RUN.replace(N=N, steps=plan["steps"], eta=plan["eta"], device=device, dtype="float32")
        runs = run_seeds(sg, run, t4.seeds, progress=say, control=True, record_every=plan["record_every"])
        rows = theorem4.theorem_4_rows(runs, ledger_D=s.D, T_a=plan["T_a"], ks=plan["ks"])
        out += [_on(c, device) for c in rows]
    if n.nstar:
        out += _nstar_rows(s, n, device, t4.steps, say, quick)
    return out


def _nstar_rows(
    s: Setting, n: GpuSizes, device: str, preset: int, say: Callable[[str], None], quick: bool
) -> list[Check]:
    total = device_bytes(device)
    Ds = tuple(D for D in n.nstar_D if device_need(D, max(n.nstar_N)) <= total)
    if not Ds:
        return _nstar_not_run(s, n, f"no D of the grid fits {device}", quick)
    out: list[Check] = []
    for label, q_of in q_readings(s):
        runs = nstar_runs(s, Ds, q_of, n.nstar_N, n.nstar_seeds, n.nstar_ks, preset=preset, progress=say, device=device)
        out += [_on(c, device) for c in check_n_star(s, runs, f"{label}, on {device}", n.nstar_ks)]
    return out


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak host memory of :func:`checks`: the largest training set that fits the device, drawn on the host
    (float32) before it is moved; nothing where there is no CUDA device (the rows are NOT_RUN)."""
    device = cuda_device()
    if device is None:
        return MemoryEstimate("gpu claim", (Term("no CUDA device: NOT_RUN rows only", 0, {}),))
    n, total = SIZES.pick(quick), device_bytes(device)
    fits = [(D, N) for D, N in zip(n.D, n.N, strict=True) if device_need(D, N) <= total]
    D, N = max(fits, key=lambda dn: x_bytes(*dn), default=(0, 0))
    term = Term("the training set X on the host (float32)", x_bytes(D, N), {"D": D, "N": N})
    return MemoryEstimate("gpu claim", (term,))
