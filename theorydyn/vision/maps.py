"""Positional-encoding similarity maps (Figures 1a and 5c) and their distance profile.

With the learned ``P: (D, E)`` (row ``i`` = encoding of patch position ``i``), the similarity is
``M = P Pᵀ: (D, D)`` — the paper's ``PᵀP`` with ``P ∈ R^{E×D}``. Row ``i`` reshaped to the
``g×g`` patch grid shows which positions patch ``i`` resembles (Figure 1a: all rows, as a mosaic).
The pictures use the cosine form ``C_ij = ⟨P_i, P_j⟩ / (‖P_i‖ ‖P_j‖) ∈ [−1, 1]``, so that every
map, every network and the untrained initialisation share one colour scale.

Distance profile: with the Chebyshev grid distance ``δ(i, j) = max(|r_i − r_j|, |c_i − c_j|)`` of
the patch positions, ``ρ(k) = mean over pairs (i, j) with δ(i, j) = k of C_ij`` (``k = 1 … g−1``).
Patch association (Section 6) shows as ``ρ`` falling with ``k``; a random ``P`` gives ``ρ ≈ 0``.

On permuted images (Figure 5c) position ``q`` of the network's patch grid holds the patch that sat
at ``σ(q)`` of the original image, where ``σ`` is the patch permutation induced by π_s (tile side
``s`` = ``s/p`` patches). Applying π_s⁻¹ means ``M_orig[σ(q), σ(r)] = M[q, r]``: every map and the
order of the maps are moved back to the original image's coordinates.

Plot functions draw into given axes or return a :class:`matplotlib.figure.Figure` (no pyplot, no
backend choice).
"""

from __future__ import annotations

import textwrap

import numpy as np
import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..core.plotting import GREY, figure, legend_outside, save, styled
from .grid import permute_tiles


def similarity(P: torch.Tensor) -> np.ndarray:
    """``M = P Pᵀ`` as a float64 ``(D, D)`` array."""
    P = P.detach().double().cpu()
    return (P @ P.T).numpy()


def cosine_similarity(P: torch.Tensor | np.ndarray) -> np.ndarray:
    """``C_ij = ⟨P_i, P_j⟩ / (‖P_i‖ ‖P_j‖)``: float64 ``(D, D)`` from ``P: (D, E)``."""
    P = torch.as_tensor(np.asarray(P.detach().cpu() if isinstance(P, torch.Tensor) else P), dtype=torch.float64)
    U = P / P.norm(dim=1, keepdim=True).clamp_min(1e-300)
    return (U @ U.T).numpy()


def grid_distance(g: int) -> np.ndarray:
    """Chebyshev distance ``δ(i, j)`` between the positions of a row-major ``g×g`` grid: int ``(g², g²)``."""
    r, c = np.divmod(np.arange(g * g), g)
    return np.maximum(np.abs(r[:, None] - r[None]), np.abs(c[:, None] - c[None]))


def distance_profile(C: np.ndarray) -> np.ndarray:
    """``ρ(k)`` for ``k = 1 … g−1`` (module docstring) from a ``(g², g²)`` similarity: ``(g−1,)``."""
    C = np.asarray(C, dtype=float)
    g = int(round(np.sqrt(C.shape[0])))
    if g * g != C.shape[0] or C.shape != (g * g, g * g):
        raise ValueError(f"C must be (g², g²) for a square patch grid, got {C.shape}")
    dist = grid_distance(g)
    return np.array([C[dist == k].mean() for k in range(1, g)])


def induced_patch_permutation(grid: int, perm, s_patches: int) -> np.ndarray:
    """``σ`` with ``σ[q]`` = original position of the patch at position ``q`` (``grid×grid`` patches)."""
    ids = torch.arange(grid * grid).reshape(grid, grid)
    return permute_tiles(ids, perm, s_patches).reshape(-1).numpy()


def unpermute_similarity(M: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """``M_orig[σ(q), σ(r)] = M[q, r]``."""
    out = np.empty_like(M)
    out[np.ix_(sigma, sigma)] = M
    return out


def unpermuted(C: np.ndarray, perm, s: int, patch: int = 1) -> np.ndarray:
    """Figure 5c: the similarity ``C`` (g², g²) of a network trained on π_s-permuted images, on the
    original image's positions (π_s⁻¹ applied): ``perm`` is π_s of :func:`theorydyn.vision.grid.
    grid_permutation` over tiles of ``s`` pixels, ``patch`` the ViT's patch side (``s`` a multiple of it)."""
    if s % patch:
        raise ValueError(f"the tile side s = {s} must be a multiple of the patch side {patch}")
    g = int(round(np.sqrt(C.shape[0])))
    return unpermute_similarity(C, induced_patch_permutation(g, perm, s // patch))


def mosaic(M: np.ndarray) -> np.ndarray:
    """Rows of ``M`` as ``g×g`` maps laid out on the ``g×g`` grid of their own position, NaN-separated.

    The values are kept as they are (no per-map rescaling): all maps share the caller's colour scale.
    """
    D = M.shape[0]
    g = int(round(np.sqrt(D)))
    big = np.full((g * (g + 1) - 1, g * (g + 1) - 1), np.nan)
    for i in range(D):
        r, c = divmod(i, g)
        big[r * (g + 1) : r * (g + 1) + g, c * (g + 1) : c * (g + 1) + g] = M[i].reshape(g, g)
    return big


@styled
def draw_mosaic(ax, C: np.ndarray, title: str = "", vmin: float = -1.0, vmax: float = 1.0, mark: bool = True):
    """Draw the mosaic of ``C: (g², g²)`` into ``ax`` on the fixed scale ``[vmin, vmax]``; the query
    patch of every map is outlined in red. Returns the image (for a colorbar)."""
    g = int(round(np.sqrt(C.shape[0])))
    im = ax.imshow(mosaic(C), cmap="viridis", vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.grid(False)  # maps: no grid over the cells
    if mark:
        for i in range(g * g):
            r, c = divmod(i, g)
            ax.add_patch(
                Rectangle(
                    (c * (g + 1) + c - 0.5, r * (g + 1) + r - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=1.2
                )
            )
    ax.set_title(title)
    ax.set_xticks([])
    ax.set_yticks([])
    return im


@styled
def draw_profiles(ax, profiles: dict[str, np.ndarray]) -> None:
    """``ρ(k)`` against ``k``: for each label, the mean over seeds and a band of ± one standard deviation
    (``profiles[label]: (seeds, g−1)``)."""
    for label, arr in profiles.items():
        arr = np.atleast_2d(np.asarray(arr, dtype=float))
        k = np.arange(1, arr.shape[1] + 1)
        m = arr.mean(0)
        sd = arr.std(0, ddof=1) if arr.shape[0] > 1 else np.zeros_like(m)
        ax.plot(k, m, "o-", label=f"{label} ({arr.shape[0]} seeds)")
        ax.fill_between(k, m - sd, m + sd, alpha=0.25)
    ax.axhline(0.0, color=GREY, lw=0.7)
    ax.set_xticks(np.arange(1, arr.shape[1] + 1))
    ax.set(
        xlabel="grid distance k from the query patch (Chebyshev)",
        ylabel="mean cosine similarity ρ(k)",
        title="Similarity against distance (mean ± std over seeds)",
    )
    legend_outside(ax, where="below", ncol=1)


@styled
def similarity_figure(
    C_pos: np.ndarray, C_van: np.ndarray | None, profiles: dict[str, np.ndarray], title: str
) -> Figure:
    """Figure 1a with its quantitative companion: the cosine-similarity mosaic of a positional-attention
    ViT (and of a vanilla one), on one colour scale with a labelled colorbar, and the distance profiles."""
    mats = [("positional attention", C_pos)] + ([("vanilla attention", C_van)] if C_van is not None else [])
    fig, axes = figure(
        1, len(mats) + 1, figsize=(4.2 * len(mats) + 5.2, 5.2), pyplot=False,
        gridspec_kw=dict(width_ratios=[1] * len(mats) + [1.25]),
    )  # fmt: skip
    for ax, (name, C) in zip(axes[: len(mats)], mats, strict=True):
        im = draw_mosaic(ax, C, f"{name}: map i = row i of C\n(red: query patch i)")
    fig.colorbar(im, ax=list(axes[: len(mats)]), shrink=0.8, label="cosine similarity of positional encodings")
    draw_profiles(axes[-1], profiles)
    fig.suptitle(textwrap.fill(title, 110))
    return fig


@styled
def plot_maps(P: torch.Tensor, path, title: str, perm=None, s: int | None = None, patch: int = 1) -> None:
    """Write the cosine-similarity mosaic of ``P`` to ``path`` (one scale, colorbar, query marked; the
    format from its suffix: png, pdf or svg); with ``perm``, before (left) and after π_s⁻¹ (right)."""
    C = cosine_similarity(P)
    panels = [("row i of C on the patch grid", C)]
    if perm is not None:
        if s is None:
            raise ValueError("plot_maps: a permutation needs its tile side s")
        panels = [("as learned (permuted positions)", C), ("after π_s⁻¹", unpermuted(C, perm, s, patch))]
    fig, axes = figure(1, len(panels), figsize=(4.6 * len(panels) + 1.2, 5.2), pyplot=False, squeeze=False)
    axes = axes[0]
    for ax, (name, A) in zip(axes, panels, strict=True):
        im = draw_mosaic(ax, A, name)
    fig.colorbar(im, ax=list(axes), shrink=0.8, label="cosine similarity")
    fig.suptitle(textwrap.fill(title, 50 * len(panels)))
    save(fig, path)
