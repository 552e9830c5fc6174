"""The memory of the finite-sample simulator (:func:`theorydyn.simulate.simulate`), from the
constants of its kernel (:mod:`theorydyn.simulate._kernel`: blocks of samples) and of the data
sampler (:func:`theorydyn.core.data.sample_memory`)."""

from __future__ import annotations

from ..core.data import sample_memory
from ..infra.memory import BOOL, F64, SMALL, MemoryEstimate, Term
from ._kernel import block_size

__all__ = ["simulate_memory"]


def simulate_memory(
    D: int, C: int, d: int | None = None, N: int = 16384, n_test: int = 8192, dtype: str = "float64", replicas: int = 1
) -> MemoryEstimate:
    """Peak of :func:`theorydyn.simulate.simulate`: the training and test X, and the D × D arrays.

    Training X (N, D, d) and test X (n_test, D, d) in ``dtype`` (bfloat16: the training X drawn in
    float32 and rounded, both held at the peak; the test X float32); the logits A and their copies
    (A, its gradient, the last good A, S, Sᵀ, the summed and the backward D × D arrays: 8 per
    replica) and the per-block partial gradients (nb, R, D, D) float64 with
    nb = ⌈N / block_size(N)⌉ ≤ MAX_BLOCKS (:func:`theorydyn.simulate._kernel.block_size`);
    the Setting's four (D, D) boolean masks; the test labels' float copies of z
    (2 × n_test × D float64).
    """
    d = D if d is None else d
    bf16 = str(dtype) == "bfloat16"
    itemsize = 4 if str(dtype) in ("float32", "bfloat16") else 8
    nb = -(-N // block_size(N))
    R = int(replicas)
    train = sample_memory(D, C, d, N, itemsize, "N")
    test = sample_memory(D, C, d, n_test, itemsize, "n_test")
    # X of both stay; the sampling temporaries of one draw at a time (the larger of the two)
    temps = max((train.terms[1:], test.terms[1:]), key=lambda ts: sum(t.nbytes for t in ts))
    # bfloat16: the float32 draw and its rounded copy are both held while it is rounded (the draw then goes)
    bits = (Term(f"X ({N}, {D}, {d}) bfloat16 bits", N * D * d * 2, {"N": N, "D": D, "d": d}),) if bf16 else ()
    extra = (
        train.terms[0],
        *bits,
        test.terms[0],
        *temps,
        Term(f"(D, D) float64 arrays: logits, gradients, softmax ({8 * R} of them)", 8 * R * D * D * F64, {"D": D}),
        Term(f"per-block partial gradients ({nb}, {R}, D, D) float64", nb * R * D * D * F64, {"D": D, "N": N}),
        Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * BOOL, {"D": D}),
        Term(f"test labels: z as float64 twice ({n_test}, {D})", 2 * n_test * D * F64, {"n_test": n_test, "D": D}),
        Term("per-sample vectors (labels, weights, outputs)", 4 * (N + n_test) * F64, {"N": N, "n_test": n_test}),
    )
    return MemoryEstimate("simulate", extra + (SMALL,))
