"""The grid permutation π_s of permuted CIFAR (docs/theory.md §8, Figure 5).

An image of side ``n`` is cut into ``g² = (n/s)²`` tiles of ``s×s`` pixels, numbered row-major.
``π_s`` is one fixed permutation of the tile numbers, drawn from a seed: the permuted image has at
tile position ``k`` the tile that sat at position ``π_s[k]`` in the original. Its inverse is
``argsort(π_s)``. ``s = n`` gives one tile and leaves every image unchanged; the pixels inside a
tile keep their arrangement (tiles move whole).
"""

from __future__ import annotations

import numpy as np
import torch


def check_grid(image_size: int, s: int) -> None:
    """Raise ``ValueError`` unless the tile side ``s`` divides the image side."""
    if s < 1 or image_size % s:
        raise ValueError(f"grid size must divide the image size {image_size}, got {s}")


def grid_permutation(image_size: int, s: int, seed: int) -> np.ndarray:
    """π_s: a permutation of the ``(image_size/s)²`` tiles, drawn from ``seed`` (int64 array)."""
    check_grid(image_size, s)
    g = image_size // s
    return np.random.default_rng(seed).permutation(g * g)


def inverse(perm: np.ndarray) -> np.ndarray:
    """π⁻¹ with ``π⁻¹[π[k]] = k``."""
    return np.argsort(perm)


def permute_tiles(x: torch.Tensor, perm, s: int) -> torch.Tensor:
    """Apply π_s to square images ``x: (..., n, n)``: tile ``k`` of the result is tile ``perm[k]`` of ``x``."""
    *lead, n, m = x.shape
    check_grid(n, s)
    g = n // s
    perm = torch.as_tensor(np.asarray(perm), dtype=torch.long, device=x.device)
    if perm.numel() != g * g:
        raise ValueError(f"permutation has {perm.numel()} entries, the {s}-grid of a {n}×{n} image has {g * g} tiles")
    t = x.reshape(*lead, g, s, g, s).movedim(-3, -2).reshape(*lead, g * g, s, s)
    t = t[..., perm, :, :]
    return t.reshape(*lead, g, g, s, s).movedim(-2, -3).reshape(*lead, n, m)


def unpermute_tiles(x: torch.Tensor, perm, s: int) -> torch.Tensor:
    """Apply π_s⁻¹, undoing :func:`permute_tiles`."""
    return permute_tiles(x, inverse(np.asarray(perm)), s)
