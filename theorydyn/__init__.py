"""theorydyn — numerical verification of *Vision Transformers provably learn spatial
structure* (Jelassi, Sander, Li, NeurIPS 2022). The mathematics: ``docs/theory.md``.

The package is the paper's map; imports point downward only:

    setting      the parameters (Assumption 1, Simplification 3.1): one frozen, validated dataclass
    data         the sampler of Assumption 1 (X: (N, D, d)), the labelling function f, Figure 2's data
    model        model (T): softmax attention, forward, logistic risk, analytic gradients
    stats        intervals over seeds, power-law fits with intervals
    phases       the one phase detector of Section 4.1 (T0, T1, T1_mass, T2, Lemma 4.3's ratio)
    result       the one result type and trajectory schema of both solvers
    reduced/     N = ∞: the idealized dynamics in (α, γ, ρ) (Lemmas 4.1–4.3), GD recursion and flow
    simulate/    finite N: GD with the full D×D attention (Theorem 4.2)
    transfer/    downstream sample complexity with a frozen attention (Theorems 5.1, 5.2)
    scan/        resumable parameter scans, local or on Dask
    positional/  Figure 2's torch models (positional-attention ViT, model (T)), training, plots
    claims/      one module per claim, one protocol, one registry; the ledger's record type (Check, Verdict)
    verify       the claims ledger: collects every registered claim's rows
    figures/     every figure, as compute + draw-into-axes pairs
    bench/       benchmarks against the physical floor and what a user would write instead
    vision/      a slim PyTorch ViT for real images (Section 6), apart from the rest

Every command: ``theorydyn --help`` (or ``python -m theorydyn.<command>``).

The few names a notebook needs are here, each loaded on first use (``import theorydyn`` stays
cheap): :class:`Setting`, :func:`integrate` (N = ∞), :func:`simulate` (finite N), :class:`Result`,
:func:`ledger` (the claims ledger as a DataFrame) and :func:`load_scan` (a scan's rows by name).
"""

from typing import TYPE_CHECKING

from ._version import __version__
from .infra._lazy import lazy_exports

if TYPE_CHECKING:  # the exports: Setting too loads on first use (NumPy), so `theorydyn --help` imports none
    from .core.result import Result
    from .core.setting import Setting
    from .reduced.solve import integrate
    from .scan.grid import load_scan
    from .simulate.run import simulate
    from .verify.api import ledger

__all__ = ["Result", "Setting", "__version__", "integrate", "ledger", "load_scan", "simulate"]
__getattr__, __dir__ = lazy_exports(__name__)
