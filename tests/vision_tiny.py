"""The tiny networks and the digits slice shared by the ensemble tests (CPU) and the CUDA tests."""

from __future__ import annotations

from theorydyn.vision.data import load
from theorydyn.vision.model import ViTConfig, build_model

TINY = dict(
    image_size=8, patch=2, channels=1, classes=10, width=16, depth=2, heads=2, mlp=32, init="torch", pos_std=1.0
)
#: member k against the single run of seed k after 3 epochs: batched matmuls (baddbmm) and the
#: member-wise layer norm round differently from the single network's addmm and fused layer norm
#: (measured: ≤ 6e-7 on the weights and running statistics); everything else is bit for bit
RTOL, ATOL = 1e-4, 1e-5
SEEDS = (3, 0, 7)


def small_digits(device: str = "cpu", n_train: int = 192, n_test: int = 96):
    """The digits with ``n_train`` training and ``n_test`` test images, on ``device``."""
    d = load("digits")
    d.x_train, d.y_train = d.x_train[:n_train], d.y_train[:n_train]
    d.x_test, d.y_test = d.x_test[:n_test], d.y_test[:n_test]
    return d.to(device)


def single(name, seed, vit=None):
    """The single network ``name`` of ``seed`` (the TINY ViT unless ``vit`` is given)."""
    import torch

    torch.manual_seed(seed)
    return build_model(name, channels=1, classes=10, vit=vit or ViTConfig(**TINY))
