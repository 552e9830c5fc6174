"""theorydyn — numerical verification of *Vision Transformers provably learn spatial
structure* (Jelassi, Sander, Li, NeurIPS 2022).

Modules, one idea each:
    setting          the parameters (Assumption 1, Simplification 3.1) as one frozen dataclass
    data             partitions, the sampler of Assumption 1, f, SPEC §7 data, population enumeration
    model            model (T): forward, logistic risk, analytic gradients (SPEC §2)
    reduced          the idealized dynamics in (α, γ, ρ) (Lemmas 4.1–4.3): risk, recursion, flow, CLI
    reduced_kernels  the tabulated Numba evaluation of ℓ_red over set-count types (SPEC §3)
    reduced_phases   the phase times T0, T1, T2 and the Lemma 4.3 ratio (Section 4.1)
    simulate         gradient descent on N samples with the full D×D attention (Theorem 4.2), CLI
    gdkernel         the fused one-pass Numba GD step over X
    simcompare       the semi-realistic comparison: simulator against the reduced dynamics
    transfer         downstream training of v with a frozen attention (Theorems 5.1, 5.2)
    logreg           L2 logistic regression (the linear baselines of Theorems 3.1 and 5.2)
    theorems         numerical checks of Theorems 3.1, 3.2, 4.1, 4.2, Lemma 4.1, Figure 2
    checks, verify   the record of one check; the verification table
    scan             parameter scans (with scangrid, scanexec, scanpoint, resultstore, scanplots)
    figures          every figure, recomputed
    bench            benchmarks against a reference measured in the same run
    vision           a slim PyTorch ViT for real images (Section 6)
"""

from .setting import Setting

__all__ = ["Setting"]
__version__ = "0.1.0"
