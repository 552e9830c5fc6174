"""What a computation will need, against what the machine has: refuse before any work.

The generic machinery (:class:`Term`, :class:`MemoryEstimate`, :func:`check_memory`, …) is
:mod:`theorydyn.memory`; the estimates of the data and the two solvers sit beside their code
(:func:`theorydyn.data.sample_memory`, :func:`theorydyn.reduced.memory.reduced_memory` with the
count-type law :func:`~theorydyn.reduced.memory.n_count_types` / ``n_exact_terms``,
:func:`theorydyn.simulate.memory.simulate_memory`). This module gathers them under their old
names, and holds the estimates of the theorem checks, the vision model and the transfer experiment.

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

import importlib
from typing import TYPE_CHECKING, Any

from .data import sample_memory
from .memory import (
    BOOL,
    F64,
    I8,
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
    from .reduced.memory import n_count_types, n_exact_terms, reduced_memory
    from .setting import Setting
    from .simulate.memory import simulate_memory

__all__ = ["ResourceError", "Term", "MemoryEstimate", "available_memory", "check_memory", "format_bytes",
           "parse_bytes", "n_count_types", "n_exact_terms", "reduced_memory", "sample_memory", "simulate_memory",
           "theorem_3_2_memory", "transfer_memory", "vit_batch_memory", "vit_train_memory", "MEMORY_ENV"]

#: The estimates that live beside a solver, loaded on first use: importing theorydyn.reduced or
#: theorydyn.simulate (Numba, scipy, pandas) takes ≈ 3-4 s against ≈ 0.4 s for this module, which
#: every CLI imports before parsing its flags (measured with ``python -c "import theorydyn.X"``).
_LAZY = {"n_count_types": "theorydyn.reduced.memory", "n_exact_terms": "theorydyn.reduced.memory",
         "reduced_memory": "theorydyn.reduced.memory", "simulate_memory": "theorydyn.simulate.memory"}


def _estimate(name: str) -> Any:
    """The estimate ``name`` of :data:`_LAZY`, its module imported on first use."""
    return getattr(importlib.import_module(_LAZY[name]), name)


def __getattr__(name: str) -> Any:
    """``resources.reduced_memory`` and the other names of :data:`_LAZY` (PEP 562)."""
    if name in _LAZY:
        return _estimate(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def theorem_3_2_memory(D: int, C: int, d: int | None = None, N: int = 20_000) -> MemoryEstimate:
    """:func:`theorydyn.claims.theorems.check_theorem_3_2`: N samples (two seeds' worth at the
    hand-over between seeds) and a dozen D × D float64 matrices.

    The construction holds B, G, the eigenvectors, P, P⁻¹, W_Q, W_K and the Gram and logits
    matrices (≈ 12 live D × D float64 arrays with LAPACK work space), the boolean masks, and
    the N samples of :func:`sample_memory` plus their float64 projections (N, D) for f.
    """
    d = D if d is None else d
    data = sample_memory(D, C, d, N, 8, "N")
    return MemoryEstimate("Theorem 3.2 check", data.terms[:-1] + (
        # the check loops over seeds: the previous seed's X is alive while the next one is drawn
        Term(f"the previous seed's X ({N}, {D}, {d}) float64", N * D * d * F64, {"N": N, "D": D, "d": d}),
        Term("D × D float64 matrices of the construction (12)", 12 * D * D * F64, {"D": D}),
        Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * BOOL, {"D": D}),
        Term(f"projections ⟨w*, X_j⟩ and labels ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N": N, "D": D}),
        SMALL,
    ))


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
    return MemoryEstimate("Theorem 3.1 check", (
        Term(f"exact law: 5 float64 grids ({n}, {n})", 5 * n * n * 8, {"D": s.D}),
        Term(f"z of the fit and test draws ({N_fit}+{N_test}, {s.D}) int8 and float64 copies",
             (N_fit + N_test) * s.D * 9, {"D": s.D}),
        Term(f"draw temporaries u, masks ({N_big}, {s.D})", N_big * s.D * (8 + 4), {"D": s.D}),
        Term(f"flattened X ({N_flat} + {n_test_flat}, {s.D}, {s.d}) float64", (N_flat + n_test_flat) * s.D * s.d * 8,
             {"D": s.D, "d": s.d}),
        *flat.terms[1:],
    ))


def theorems_memory(s: Setting, only: list[str], full: bool) -> MemoryEstimate:
    """The largest peak among the theorem checks that ``python -m theorydyn.theorems`` (``only``: a subset
    of "3.1", "3.2"; ``full``: the full sizes) or the ledger will run (they run one after the other)."""

    parts = []
    if not only or "3.1" in only:
        parts.append(theorem_3_1_memory(s) if only else
                     theorem_3_1_memory(s, *((200_000, 200_000, 8_000) if full else (50_000, 50_000, 2_000))))
    if not only or "3.2" in only:
        parts.append(theorem_3_2_memory(s.D, s.C, s.d, N=50_000 if (full and not only) else 5_000))
    if not only:
        D = s.D if full else min(s.D, 32)
        parts.append(_estimate("simulate_memory")(D, s.C, s.d if (full or s.d != s.D) else D, N=16384))
    return max(parts, key=lambda e: e.total)


# ---- the vision benchmark ---------------------------------------------------------------------------
def vit_batch_memory(batch: int, width: int = 384, depth: int = 7, heads: int = 12, mlp: int | None = None,
                     patch: int = 4, image_size: int = 32, channels: int = 3, itemsize: int = 4) -> MemoryEstimate:
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
    return MemoryEstimate(f"ViT step (batch={batch})", (
        Term(f"input batch ({batch}, {channels}, {image_size}, {image_size}) float32",
             batch * channels * image_size * image_size * 4, {"batch": batch}),
        Term(f"saved activations ({depth} blocks, {T} tokens, width {width})", batch * per_image * itemsize,
             {"batch": batch}),
    ))


# ---- the transfer experiment -------------------------------------------------------------------------
def transfer_memory(D: int, C: int, d: int | None, q: float, N_test: int, N_train: int, *,
                    ceiling_samples: int = 20000, flow_n_samples: int | None = 2000,
                    upstream_N: int | None = None) -> MemoryEstimate:
    """Peak of :func:`theorydyn.transfer.experiment.run` at one D (the D's run one after the other).

    The phases at D run in turn, so the peak is the largest of them (the D × D attentions, ≈ 8
    float64 matrices, live throughout):

    * the population references (``ceiling``, ``linear_reference``): feature values of
      ``ceiling_samples`` samples, u (n, D) float64, z (n, D) int8 and three (n, D) boolean masks;
    * the idealized pre-training (``flow_n_samples`` not None): the reduced Monte Carlo bank
      (:func:`reduced_memory`);
    * the finite-sample pre-training (``upstream_N`` not None): :func:`simulate_memory` in float32
      with its default 8192 test samples;
    * the rows: the test set in projected form (z, g: (N_test, D) float64, and its draw's
      u, int8 z and masks) with the (N_test, D) float64 outputs of one evaluation (u, u Sᵀ, σ: 3),
      and the ``N_train`` downstream samples X: (N_train, D, d) (:func:`sample_memory`).
    """
    d = D if d is None else d
    attn = Term("D × D float64 attentions and scores (≈ 8)", 8 * D * D * F64, {"D": D})
    n = int(ceiling_samples)
    phases = [MemoryEstimate(f"transfer references at D={D}", (
        Term(f"feature values of {n} samples: u ({n}, {D}) float64, z int8, 3 masks",
             n * D * (F64 + I8 + 3 * BOOL), {"D": D}), attn, SMALL))]
    if flow_n_samples is not None:
        phases.append(_estimate("reduced_memory")(D, C, q, flow_n_samples) + MemoryEstimate("attentions", (attn,)))
    if upstream_N is not None:
        sim = _estimate("simulate_memory")(D, C, d, upstream_N, 8192, "float32")
        # its N is the upstream sample size (named so that a caller can tell it from the downstream Ñ)
        terms = tuple(Term(t.what, t.nbytes, {("upstream_N" if k == "N" else k): v for k, v in t.params.items()})
                      for t in sim.terms)
        phases.append(MemoryEstimate(f"finite-sample pre-training at D={D}", terms + (attn,)))
    N = int(N_test)
    train = sample_memory(D, C, d, N_train, 8, "N")
    phases.append(MemoryEstimate(f"transfer rows at D={D}", (
        Term(f"test set z, g ({N}, {D}) float64 and its draw's u, int8 z, masks",
             N * D * (2 * F64 + F64 + I8 + 3 * BOOL), {"N_test": N, "D": D}),
        Term(f"outputs of one evaluation ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N_test": N, "D": D}),
        *train.terms[:-1], attn, SMALL)))
    return max(phases, key=lambda e: e.total)


def vit_train_memory(batch: int, width: int = 384, depth: int = 7, heads: int = 12, mlp: int | None = None,
                     patch: int = 4, image_size: int = 32, channels: int = 3, classes: int = 10,
                     itemsize: int = 4) -> MemoryEstimate:
    """:func:`vit_batch_memory` plus the weights of the ViT: parameters, gradients and AdamW's two
    moments (4 float32 copies) of ≈ depth·(4·width² + 2·width·mlp) block weights, the patch
    embedding (channels·patch²·width), the T·width positional encodings and the head (width·classes).
    A CLI refuses a network whose size alone would not fit (``--width 10**6``) with it."""
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    n = depth * (4 * width * width + 2 * width * mlp) + channels * patch * patch * width + T * width + width * classes
    return vit_batch_memory(batch, width, depth, heads, mlp, patch, image_size, channels, itemsize) + MemoryEstimate(
        "ViT weights", (Term(f"{n:,} parameters ×4 (weights, gradients, AdamW moments) float32", 16 * n,
                             {"width": width, "depth": depth}),))
