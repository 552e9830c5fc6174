"""bfloat16 storage of the training set X: half the bytes of float32, widened exactly to float32.

A bfloat16 is the top 16 bits of a float32 (sign, the 8 exponent bits, 7 stored significand bits):
NumPy has no such dtype, so X is kept as its bits in a ``uint16`` array (:data:`BFLOAT16`), and

    to_bfloat16:   float32 x → round-to-nearest-even of x to 8 significant bits (relative error
                   ≤ 2⁻⁸, the unit roundoff of 8 bits),
    from_bfloat16: bits b → the float32 with bits b · 2¹⁶ (exact).

The fused step (:func:`theorydyn.simulate._kernel._fused_bf16`) widens each sub-block of X into an
L2-resident float32 buffer and steps in float32 arithmetic as for float32 X; only the data differ, by
the rounding of each entry (``simulate(dtype="bfloat16")``: a named option, never a default).

Example:
    >>> import numpy as np
    >>> from theorydyn.simulate.bfloat16 import to_bfloat16, from_bfloat16
    >>> x = np.array([1.0, 1.00390625, 1.01171875, -3.14159265], dtype=np.float32)
    >>> from_bfloat16(to_bfloat16(x)).tolist()  # 1 + 2⁻⁸ is a tie: to even (1.0); 1 + 3·2⁻⁸ → 1 + 2⁻⁶
    [1.0, 1.0, 1.015625, -3.140625]
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["BFLOAT16", "to_bfloat16", "from_bfloat16", "is_bfloat16"]

#: The storage dtype of bfloat16 bits.
BFLOAT16 = np.dtype(np.uint16)


@numba.njit(cache=True, parallel=True)
def _round_bits(u: np.ndarray, out: np.ndarray) -> None:
    """out = round-to-nearest-even of the float32 bits u to their top 16 bits; a NaN stays a (quiet) NaN."""
    for i in numba.prange(u.shape[0]):
        b = u[i]
        if (b & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000):  # NaN: keep it one (rounding could give Inf)
            out[i] = np.uint16((b >> np.uint32(16)) | np.uint32(0x0040))
        else:
            out[i] = np.uint16((b + np.uint32(0x7FFF) + ((b >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """The bfloat16 bits (``uint16``, same shape) of ``x`` rounded to nearest, ties to even (as
    ``torch.Tensor.to(torch.bfloat16)``); ``x`` is first cast to float32. Finite values past the
    largest bfloat16 (≈ 3.39·10³⁸) round to ±Inf."""
    x32 = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty(x32.shape, dtype=BFLOAT16)
    _round_bits(x32.reshape(-1).view(np.uint32), out.reshape(-1))
    return out


def from_bfloat16(b: np.ndarray) -> np.ndarray:
    """The float32 values (same shape) of bfloat16 bits ``b`` (exact)."""
    b = np.ascontiguousarray(b, dtype=BFLOAT16)
    return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)


def is_bfloat16(X: np.ndarray) -> bool:
    """Whether ``X`` holds bfloat16 bits (its dtype is :data:`BFLOAT16`)."""
    return np.asarray(X).dtype == BFLOAT16
