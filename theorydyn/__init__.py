"""theorydyn — numerical verification of *Vision Transformers provably learn spatial
structure* (Jelassi, Sander, Li, NeurIPS 2022).

Modules, one idea each:
    setting    the parameters (Assumption 1, Simplification 3.1) as one frozen dataclass
    data       partitions, the sampler of Assumption 1, the labelling function f, SPEC §7 data
    model      model (T): forward, logistic risk, analytic gradients (SPEC §2)
    reduced    the idealized dynamics in (α, γ, ρ) (Lemmas 4.1–4.3), phases
    simulate   gradient descent on N samples with the full D×D attention (Theorem 4.2)
    transfer   downstream training of v with a frozen attention (Theorems 5.1, 5.2)
    theorems   numerical checks of Theorems 3.1, 3.2, 4.1, 4.2, Lemma 4.1, Figure 2
    scan       parameter scans; verify, figures: the report and the pictures
    vision     a slim PyTorch ViT for real images (Section 6)
"""

from .setting import Setting

__all__ = ["Setting"]
__version__ = "0.1.0"
