"""Positional-encoding similarity maps (Figures 1a and 5c).

With the learned ``P: (D, E)`` (row ``i`` = encoding of patch position ``i``), the similarity is
``M = P Pᵀ: (D, D)`` — the paper's ``PᵀP`` with ``P ∈ R^{E×D}``. Row ``i`` reshaped to the
``g×g`` patch grid shows which positions patch ``i`` resembles (Figure 1a: all rows, as a mosaic).

On permuted images (Figure 5c) position ``q`` of the network's patch grid holds the patch that sat
at ``σ(q)`` of the original image, where ``σ`` is the patch permutation induced by π_s (tile side
``s`` = ``s/p`` patches). Applying π_s⁻¹ means ``M_orig[σ(q), σ(r)] = M[q, r]``: every map and the
order of the maps are moved back to the original image's coordinates.
"""

from __future__ import annotations

import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from .grid import permute_tiles  # noqa: E402


def similarity(P: torch.Tensor) -> np.ndarray:
    """``M = P Pᵀ`` as a float64 ``(D, D)`` array."""
    P = P.detach().double().cpu()
    return (P @ P.T).numpy()


def induced_patch_permutation(grid: int, perm, s_patches: int) -> np.ndarray:
    """``σ`` with ``σ[q]`` = original position of the patch at position ``q`` (``grid×grid`` patches)."""
    ids = torch.arange(grid * grid).reshape(grid, grid)
    return permute_tiles(ids, perm, s_patches).reshape(-1).numpy()


def unpermute_similarity(M: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``M_orig[σ(q), σ(r)] = M[q, r]``."""
    out = np.empty_like(M)
    out[np.ix_(sigma, sigma)] = M
    return out


def mosaic(M: np.ndarray) -> np.ndarray:
    """Rows of ``M`` as ``g×g`` maps laid out on the ``g×g`` grid of their own position, NaN-separated."""
    D = M.shape[0]
    g = int(round(np.sqrt(D)))
    big = np.full((g * (g + 1), g * (g + 1)), np.nan)
    for i in range(D):
        r, c = divmod(i, g)
        row = M[i].reshape(g, g)
        # per-map scaling: each map is read on its own, as in the paper's figures
        lo, hi = np.nanmin(row), np.nanmax(row)
        big[r * (g + 1) : r * (g + 1) + g, c * (g + 1) : c * (g + 1) + g] = (row - lo) / (hi - lo + 1e-12)
    return big


def plot_maps(P: torch.Tensor, path, title: str, perm=None, s: int | None = None, patch: int = 1) -> None:
    """Write the similarity mosaic to ``path``; with ``perm``, before (left) and after π_s⁻¹ (right)."""
    M = similarity(P)
    g = int(round(np.sqrt(M.shape[0])))
    panels = [("row i of PᵀP on the patch grid", M)]
    if perm is not None:
        sigma = induced_patch_permutation(g, perm, s // patch)
        panels = [("as learned (permuted positions)", M), ("after π_s⁻¹", unpermute_similarity(M, sigma))]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 6), squeeze=False)
    for ax, (name, A) in zip(axes[0], panels):
        ax.imshow(mosaic(A), cmap="viridis", interpolation="nearest")
        ax.set_title(name, fontsize=10)
        ax.axis("off")
    fig.suptitle(textwrap.fill(title, 45 * len(panels)), fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
