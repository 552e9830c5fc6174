"""Grid permutation π_s, its inverse, on-device augmentation and the similarity-map bookkeeping."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from theorydyn.vision.augment import random_crop_flip  # noqa: E402
from theorydyn.vision.grid import grid_permutation, inverse, permute_tiles, unpermute_tiles  # noqa: E402
from theorydyn.vision.maps import (  # noqa: E402
    induced_patch_permutation,
    plot_maps,
    similarity,
    unpermute_similarity,
    unpermuted,
)

torch.set_num_threads(1)

SIZES = st.sampled_from([(32, 1), (32, 2), (32, 4), (32, 8), (32, 16), (32, 32), (8, 2), (8, 4), (12, 3)])


@settings(max_examples=30, deadline=None)
@given(SIZES, st.integers(0, 2**31))
def test_pi_is_a_seeded_permutation_and_its_inverse_undoes_it(size_s, seed):
    n, s = size_s
    perm = grid_permutation(n, s, seed)
    g = n // s
    assert sorted(perm.tolist()) == list(range(g * g))
    assert np.array_equal(perm, grid_permutation(n, s, seed))
    assert np.array_equal(inverse(perm)[perm], np.arange(g * g))
    x = torch.randint(0, 256, (2, 3, n, n), dtype=torch.uint8)
    assert torch.equal(unpermute_tiles(permute_tiles(x, perm, s), perm, s), x)
    assert torch.equal(permute_tiles(unpermute_tiles(x, perm, s), perm, s), x)


@settings(max_examples=20, deadline=None)
@given(SIZES, st.integers(0, 1000))
def test_tiles_move_whole(size_s, seed):
    n, s = size_s
    perm = grid_permutation(n, s, seed)
    g = n // s
    x = torch.randn(2, 3, n, n)
    y = permute_tiles(x, perm, s)
    for k in range(g * g):
        r, c = divmod(k, g)
        r0, c0 = divmod(int(perm[k]), g)
        assert torch.equal(
            y[..., r * s : (r + 1) * s, c * s : (c + 1) * s], x[..., r0 * s : (r0 + 1) * s, c0 * s : (c0 + 1) * s]
        )


def test_whole_image_grid_is_the_identity_and_seeds_matter():
    x = torch.randint(0, 256, (4, 3, 32, 32), dtype=torch.uint8)
    perm = grid_permutation(32, 32, 5)
    assert perm.tolist() == [0]
    assert torch.equal(permute_tiles(x, perm, 32), x)
    assert not np.array_equal(grid_permutation(32, 4, 0), grid_permutation(32, 4, 1))
    assert not torch.equal(permute_tiles(x, grid_permutation(32, 4, 0), 4), x)


def test_grid_size_must_divide_the_image():
    with pytest.raises(ValueError, match="divide the image size 32"):
        grid_permutation(32, 6, 0)
    with pytest.raises(ValueError, match="tiles"):
        permute_tiles(torch.zeros(1, 32, 32), np.arange(3), 8)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 3), st.booleans(), st.integers(0, 10**6))
def test_crop_is_a_window_of_the_padded_image_and_flip_mirrors_it(pad, flip, seed):
    x = torch.randint(1, 256, (6, 3, 8, 8), dtype=torch.uint8)
    y = random_crop_flip(x, pad, flip, torch.Generator().manual_seed(seed))
    assert y.shape == x.shape and y.dtype == torch.uint8
    z = random_crop_flip(x, pad, flip, torch.Generator().manual_seed(seed))
    assert torch.equal(y, z)  # same seed, same augmentation
    xp = torch.nn.functional.pad(x, (pad,) * 4)
    for b in range(6):
        windows = [xp[b, :, i : i + 8, j : j + 8] for i in range(2 * pad + 1) for j in range(2 * pad + 1)]
        cands = windows + ([w.flip(-1) for w in windows] if flip else [])
        assert any(torch.equal(y[b], w) for w in cands)


def test_no_pad_no_flip_is_the_identity_and_flip_happens_about_half_the_time():
    x = torch.randint(0, 256, (400, 1, 4, 4), dtype=torch.uint8)
    assert torch.equal(random_crop_flip(x, 0, False, torch.Generator().manual_seed(0)), x)
    x[:, :, :, 0] = 0
    x[:, :, :, -1] = 255
    y = random_crop_flip(x, 0, True, torch.Generator().manual_seed(0))
    flipped = (y[:, 0, 0, 0] == 255).float().mean().item()
    assert 0.4 < flipped < 0.6


@pytest.mark.parametrize("n,p,s", [(8, 2, 4), (32, 2, 8), (32, 4, 16), (8, 1, 2)])
def test_induced_patch_permutation_and_unpermuted_similarity(n, p, s):
    perm = grid_permutation(n, s, 3)
    g = n // p
    # an image whose p×p patches carry their own original index
    ids = torch.arange(g * g, dtype=torch.float64).reshape(g, g).repeat_interleave(p, 0).repeat_interleave(p, 1)
    seen = permute_tiles(ids, perm, s)[::p, ::p].reshape(-1).long().numpy()
    sigma = induced_patch_permutation(g, perm, s // p)
    assert np.array_equal(sigma, seen)
    # a network that learned P_orig on original images learns P_orig[σ] on permuted ones
    P = torch.randn(g * g, 5, dtype=torch.float64)
    assert np.allclose(unpermute_similarity(similarity(P[sigma]), sigma), similarity(P))
    # the one entry point of Figure 5c (the ledger row and plot_maps) from π_s itself
    assert np.allclose(unpermuted(similarity(P[sigma]), perm, s, p), similarity(P))
    with pytest.raises(ValueError, match="multiple of the patch"):
        unpermuted(similarity(P), perm, s + 1, 2 * p)


def test_plot_maps_writes_pngs(tmp_path):
    P = torch.randn(16, 6)
    plot_maps(P, tmp_path / "a.png", "plain")
    plot_maps(P, tmp_path / "b.png", "permuted", perm=grid_permutation(8, 4, 0), s=4, patch=2)
    for f in ("a.png", "b.png"):
        assert (tmp_path / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_random_affine_is_the_identity_at_zero_and_reproducible():
    from theorydyn.vision.augment import random_affine

    x = torch.randint(0, 256, (5, 1, 8, 8), dtype=torch.uint8)
    g = torch.Generator().manual_seed(0)
    assert torch.allclose(random_affine(x, 0.0, 0.0, 0.0, g), x.float(), atol=1e-3)
    a = random_affine(x, 0.5, 10.0, 0.1, torch.Generator().manual_seed(1))
    b = random_affine(x, 0.5, 10.0, 0.1, torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and not torch.allclose(a, x.float(), atol=1.0)
    # a pure shift of at most half a pixel moves the centre of mass of a centred blob by at most that
    blob = torch.zeros(200, 1, 8, 8)
    blob[:, :, 3:5, 3:5] = 255
    y = random_affine(blob, 0.5, 0.0, 0.0, torch.Generator().manual_seed(2))
    cols = torch.arange(8.0)
    com = (y.sum(2).squeeze(1) * cols).sum(1) / y.sum((1, 2, 3))
    assert (com - 3.5).abs().max() <= 0.5 + 1e-4 and (com - 3.5).abs().max() > 0.3


def test_mosaic_keeps_values_and_similarity_figure_has_a_labelled_colorbar():
    from theorydyn.vision.maps import cosine_similarity, mosaic, similarity_figure

    C = cosine_similarity(torch.randn(16, 8))
    big = mosaic(C)
    assert big.shape == (19, 19) and np.nanmax(big) == pytest.approx(1.0) and np.isnan(big[4, 0])
    assert np.allclose(big[:4, :4], C[0].reshape(4, 4))  # no per-map rescaling
    fig = similarity_figure(C, C, {"a": np.ones((3, 3)), "b": np.zeros((2, 3))}, "t")
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert "cosine similarity of positional encodings" in labels
