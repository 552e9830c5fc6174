"""What a computation will need, against what the machine has: refuse before any work.

The generic machinery (:class:`Term`, :class:`MemoryEstimate`, :func:`check_memory`, …) is
:mod:`theorydyn.memory`; the estimates of the data and the two solvers sit beside their code
(:func:`theorydyn.data.sample_memory`, :func:`theorydyn.reduced.memory.reduced_memory` with the
count-type law :func:`~theorydyn.reduced.memory.n_count_types` / ``n_exact_terms``,
:func:`theorydyn.simulate.memory.simulate_memory`): import them from there. This base module holds
the estimates of the theorem checks, the vision model and the transfer experiment, and imports no
solver (the layers of pyproject.toml's import-linter contracts).

Each ``*_memory`` function returns a :class:`MemoryEstimate`: the arrays that dominate the peak
resident memory of one run, each a :class:`Term` with its formula in bytes and the parameters it
grows with. :func:`check_memory` compares the total with :func:`available_memory` and raises
:class:`ResourceError` (a ``ValueError``) naming the parameter of the largest term, the estimate
and the limit, unless ``force`` is set. The estimates are upper estimates of the *peak* (the
arrays alive at the same time, plus the temporaries of the step that allocates most); the tests
check each array term against ``nbytes`` of the real array and each total against the peak that
``tracemalloc`` measures at small sizes (the estimate lies between the measured peak and a small
multiple of it).

Shapes (docs/theory.md §1–§4): X: (N, D, d); the attention logits A: (D, D); the Monte Carlo
count vectors: (n_samples, L, 3) int64 with L = D/C; the exact expectation's multisets of count
types: M = C(L − 1 + K − 1, K − 1) rows over K = (C+1)(C+2)/2 types (fewer types when q ∈ {0, 1}).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .data import sample_memory
from .memory import (
    BOOL,
    F64,
    MEMORY_ENV,
    SMALL,
    MemoryEstimate,
    ResourceError,
    Term,
    available_memory,
    check_memory,
    format_bytes,
    parse_bytes,
)

if TYPE_CHECKING:  # resources sits below setting's users; the Setting is only read here
    from .setting import Setting

__all__ = [
    "ResourceError",
    "Term",
    "MemoryEstimate",
    "available_memory",
    "check_memory",
    "format_bytes",
    "parse_bytes",
    "sample_memory",
    "theorem_3_1_memory",
    "theorem_3_2_memory",
    "vit_batch_memory",
    "vit_train_memory",
    "MEMORY_ENV",
]


def theorem_3_2_memory(D: int, C: int, d: int | None = None, N: int = 20_000) -> MemoryEstimate:
    """:func:`theorydyn.claims.theorem32.check_theorem_3_2`: N samples (two seeds' worth at the
    hand-over between seeds) and a dozen D × D float64 matrices.

    The construction holds B, G, the eigenvectors, P, P⁻¹, W_Q, W_K and the Gram and logits
    matrices (≈ 12 live D × D float64 arrays with LAPACK work space), the boolean masks, and
    the N samples of :func:`sample_memory` plus their float64 projections (N, D) for f.
    """
    d = D if d is None else d
    data = sample_memory(D, C, d, N, 8, "N")
    return MemoryEstimate(
        "Theorem 3.2 check",
        data.terms[:-1]
        + (
            # the check loops over seeds: the previous seed's X is alive while the next one is drawn
            Term(f"the previous seed's X ({N}, {D}, {d}) float64", N * D * d * F64, {"N": N, "D": D, "d": d}),
            Term("D × D float64 matrices of the construction (12)", 12 * D * D * F64, {"D": D}),
            Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * BOOL, {"D": D}),
            Term(f"projections ⟨w*, X_j⟩ and labels ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N": N, "D": D}),
            SMALL,
        ),
    )


# ---- the theorem checks -----------------------------------------------------------------------------
def theorem_3_1_memory(s: Setting, N_fit: int = 100_000, N_test: int = 100_000, N_flat: int = 2_000):
    """Peak of :func:`theorydyn.claims.theorems.check_theorem_3_1` without the scan (one seed at a time), as a
    :class:`~theorydyn.resources.MemoryEstimate` (docs/theory.md §4).

    The exact route holds ≈ 5 float64 n × n grids, n = 2(L − 1)C + 1 (G, its rfft2, the power,
    the inverse and its shifted, clipped copies); the fitted GLMs hold z (N, D) int8 of the fit
    and test draws, their float64 copies, u (N, D) float64 and four (N, D) masks of the draw;
    the flattened fit holds X (N_flat, D, d) and a test X (min(N_test, 20000), D, d) float64.
    """

    n = 2 * (s.L - 1) * s.C + 1
    N_big = max(N_fit, N_test)
    flat = sample_memory(s.D, s.C, s.d, N_flat, 8, "N_flat")
    n_test_flat = min(N_test, 20_000)
    return MemoryEstimate(
        "Theorem 3.1 check",
        (
            Term(f"exact law: 5 float64 grids ({n}, {n})", 5 * n * n * 8, {"D": s.D}),
            Term(
                f"z of the fit and test draws ({N_fit}+{N_test}, {s.D}) int8 and float64 copies",
                (N_fit + N_test) * s.D * 9,
                {"D": s.D},
            ),
            Term(f"draw temporaries u, masks ({N_big}, {s.D})", N_big * s.D * (8 + 4), {"D": s.D}),
            Term(
                f"flattened X ({N_flat} + {n_test_flat}, {s.D}, {s.d}) float64",
                (N_flat + n_test_flat) * s.D * s.d * 8,
                {"D": s.D, "d": s.d},
            ),
            *flat.terms[1:],
        ),
    )


# ---- the vision benchmark ---------------------------------------------------------------------------
def vit_batch_memory(
    batch: int,
    width: int = 384,
    depth: int = 7,
    heads: int = 12,
    mlp: int | None = None,
    patch: int = 4,
    image_size: int = 32,
    channels: int = 3,
    itemsize: int = 4,
) -> MemoryEstimate:
    """One training step of :class:`theorydyn.vision.model.ViT` on a batch: input and saved activations.

    With T = (image_size / patch)² tokens, each block keeps for the backward pass
    T·(8·width + 2·mlp) values (norms, q, k, v, outputs, residuals, the MLP's hidden layer
    before and after its activation) and 2·heads·T² (scores and softmax), in ``itemsize`` bytes;
    times ``depth``, plus the input batch (batch, channels, size, size). Measured against the
    tensors autograd saves (tests/test_resources.py) this is 1.1–1.8× of them, the rest being
    the transients of the backward pass. Parameters and optimizer state (independent of the
    batch) are left out; on a GPU compare with the device's free memory (``available=``).
    """
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    per_image = depth * (T * (8 * width + 2 * mlp) + 2 * heads * T * T) + 2 * T * width
    return MemoryEstimate(
        f"ViT step (batch={batch})",
        (
            Term(
                f"input batch ({batch}, {channels}, {image_size}, {image_size}) float32",
                batch * channels * image_size * image_size * 4,
                {"batch": batch},
            ),
            Term(
                f"saved activations ({depth} blocks, {T} tokens, width {width})",
                batch * per_image * itemsize,
                {"batch": batch},
            ),
        ),
    )


def vit_train_memory(
    batch: int,
    width: int = 384,
    depth: int = 7,
    heads: int = 12,
    mlp: int | None = None,
    patch: int = 4,
    image_size: int = 32,
    channels: int = 3,
    classes: int = 10,
    itemsize: int = 4,
) -> MemoryEstimate:
    """:func:`vit_batch_memory` plus the weights of the ViT: parameters, gradients and AdamW's two
    moments (4 float32 copies) of ≈ depth·(4·width² + 2·width·mlp) block weights, the patch
    embedding (channels·patch²·width), the T·width positional encodings and the head (width·classes).
    A CLI refuses a network whose size alone would not fit (``--width 10**6``) with it."""
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    n = depth * (4 * width * width + 2 * width * mlp) + channels * patch * patch * width + T * width + width * classes
    return vit_batch_memory(batch, width, depth, heads, mlp, patch, image_size, channels, itemsize) + MemoryEstimate(
        "ViT weights",
        (
            Term(
                f"{n:,} parameters ×4 (weights, gradients, AdamW moments) float32",
                16 * n,
                {"width": width, "depth": depth},
            ),
        ),
    )
