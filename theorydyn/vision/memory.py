"""Memory estimates of the vision model: one training step's activations and the weights with AdamW's
state (:class:`~theorydyn.infra.memory.MemoryEstimate`; light: imports no torch)."""

from __future__ import annotations

from typing import Any

from ..infra.memory import MemoryEstimate, Term

__all__ = ["vit_batch_memory", "vit_train_memory"]


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
    *,
    itemsize: int = 4,
    weights: bool = True,
) -> MemoryEstimate:
    """One training step of :class:`theorydyn.vision.model.ViT` on a batch: input and saved
    activations, plus (``weights``) the weights with their gradients and AdamW's state.

    With T = (image_size / patch)² tokens, each block keeps for the backward pass
    T·(8·width + 2·mlp) values (norms, q, k, v, outputs, residuals, the MLP's hidden layer
    before and after its activation) and 2·heads·T² (scores and softmax), in ``itemsize`` bytes;
    times ``depth``, plus the input batch (batch, channels, size, size). Measured against the
    tensors autograd saves (tests/test_resources.py) this is 1.1–1.8× of them, the rest being
    the transients of the backward pass; on a GPU compare with the device's free memory
    (``available=``).

    The weights (independent of the batch): parameters, gradients and AdamW's two moments
    (4 float32 copies) of ≈ depth·(4·width² + 2·width·mlp) block weights, the patch embedding
    (channels·patch²·width), the T·width positional encodings and the head (width·classes).
    A CLI refuses a network whose size alone would not fit (``--width 10**6``) with it."""
    mlp = width if mlp is None else mlp
    T = (image_size // patch) ** 2
    per_image = depth * (T * (8 * width + 2 * mlp) + 2 * heads * T * T) + 2 * T * width
    step = MemoryEstimate(
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
    if not weights:
        return step
    n = depth * (4 * width * width + 2 * width * mlp) + channels * patch * patch * width + T * width + width * classes
    return step + MemoryEstimate(
        "ViT weights",
        (
            Term(
                f"{n:,} parameters ×4 (weights, gradients, AdamW moments) float32",
                16 * n,
                {"width": width, "depth": depth},
            ),
        ),
    )


def vit_batch_memory(batch: int, *shape: Any, **kw: Any) -> MemoryEstimate:
    """:func:`vit_train_memory` without the weights: the batch's input and saved activations alone
    (the same arguments; ``classes`` plays no part)."""
    return vit_train_memory(batch, *shape, weights=False, **kw)
