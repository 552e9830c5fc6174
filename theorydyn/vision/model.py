"""The networks of Section 6: a ViT with positional or vanilla attention, and CNN baselines.

ViT (docs/theory.md §8). An image ``x: (B, c, H, W)`` is cut into ``D = (H/p)(W/p)`` patches of ``p×p``
pixels, each flattened and embedded linearly: tokens ``X: (B, D, E)``. ``P: (D, E)`` is the learned
positional encoding (one row per patch position, i.e. the paper's ``P ∈ R^{d×D}`` transposed).
Each of the ``depth`` pre-LayerNorm blocks is ``x += Attn(LN(x)); x += MLP(LN(x))``; the
classifier reads the mean token (no class token, so the network treats every position alike).

Attention with ``H`` heads of width ``d_h = E/H``:

* ``vanilla``: ``S_h(x) = softmax(Q_h K_hᵀ / √d_h)`` with ``Q = x W_Q``, ``K = x W_K`` computed
  from the tokens, which carry ``P`` (``x_0 = X + P``); one ``D×D`` score matrix per image.
* ``positional`` (Definition 3.2): ``S_h = softmax((P W_Q)_h (P W_K)_hᵀ / √d_h)`` from ``P`` alone,
  computed once per forward pass and shared by the whole batch; the values ``V = LN(x) W_V`` come
  from the tokens, which do not carry ``P`` (``x_0 = X``), so data and positions stay separate as
  in the theory. Per image this costs ``S_h V_h`` only: no ``Q``, ``K`` projection of the tokens
  and no ``QKᵀ`` product.

In both cases the block output is ``Σ_h S_h V_h W_O`` (heads concatenated, then ``W_O``).

Baselines: the CIFAR forms of ResNet-18 (He et al. 2016, 3×3 stem, no max-pool) and VGG-19 with
batch norm (Simonyan & Zisserman 2015, one linear classifier), and a small CNN for 8×8 digits.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

ATTENTIONS = ("positional", "vanilla")
#: initialisations of the linear layers: "vit" (weights N(0, 0.02²), zero biases; ViT/timm's, for wide
#: networks) and "torch" (PyTorch's nn.Linear default: weights and biases U(±1/√fan_in))
INITS = ("vit", "torch")


@dataclass(frozen=True)
class ViTConfig:
    """Shape and initialisation of a ViT. Paper (docs/theory.md §8): 7 layers, 12 heads, width 384,
    MLP 384, patch 4 on 32×32, ViT initialisation (``init="vit"``, ``pos_std=0.02``)."""

    image_size: int = 32
    patch: int = 4
    channels: int = 3
    classes: int = 10
    width: int = 384
    depth: int = 7
    heads: int = 12
    mlp: int = 384
    attention: str = "positional"
    pos_embed: bool = True  # False only for the permutation-equivariance check
    init: str = "vit"  # linear layers, one of INITS
    pos_std: float = 0.02  # P starts at N(0, σ²) truncated at ±2σ

    def __post_init__(self):
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        for k in ("image_size", "patch", "channels", "classes", "width", "depth", "heads", "mlp"):
            v = getattr(self, k)
            if not (isinstance(v, int) and v >= 1):
                raise ValueError(f"{k} must be a positive integer, got {v!r}")
        if self.init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {self.init!r}")
        if not (isinstance(self.pos_std, (int, float)) and math.isfinite(self.pos_std) and self.pos_std > 0):
            raise ValueError(f"pos_std must be a positive finite number, got {self.pos_std!r}")
        if self.image_size % self.patch:
            raise ValueError(f"patch size {self.patch} must divide the image size {self.image_size}")
        if self.width % self.heads:
            raise ValueError(f"heads {self.heads} must divide the width {self.width}")
        if self.attention == "positional" and not self.pos_embed:
            raise ValueError("positional attention needs positional encodings (pos_embed=True)")

    @property
    def tokens(self) -> int:
        return (self.image_size // self.patch) ** 2

    def to_dict(self) -> dict:
        return asdict(self)


def patchify(x: torch.Tensor, p: int) -> torch.Tensor:
    """``(B, c, H, W) → (B, D, c·p²)``, patches in row-major order of the ``(H/p)×(W/p)`` grid."""
    B, c, H, W = x.shape
    x = x.reshape(B, c, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(B, (H // p) * (W // p), c * p * p)


class Attention(nn.Module):
    """Multi-head attention, vanilla or positional (see the module docstring)."""

    def __init__(self, width: int, heads: int, positional: bool):
        super().__init__()
        self.heads, self.dh, self.positional = heads, width // heads, positional
        self.qk = nn.Linear(width, 2 * width)  # applied to P (positional) or to the tokens (vanilla)
        self.v = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.last_scores: torch.Tensor | None = None  # (H, D, D) of the latest positional forward

    def scores(self, z: torch.Tensor) -> torch.Tensor:
        """``softmax(Q Kᵀ/√d_h)`` per head from ``z: (..., D, E)`` → ``(..., H, D, D)``."""
        *lead, D, _ = z.shape
        q, k = self.qk(z).view(*lead, D, 2, self.heads, self.dh).unbind(-3)
        q, k = q.transpose(-3, -2), k.transpose(-3, -2)  # (..., H, D, d_h)
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), dim=-1)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        B, D, E = x.shape
        v = self.v(x).view(B, D, self.heads, self.dh)
        if self.positional:
            S = self.scores(pos)  # (H, D, D): once per forward pass, the same for every image
            self.last_scores = S.detach()
            y = torch.einsum("hij,bjhd->bihd", S.to(v.dtype), v)
        else:
            q, k = self.qk(x).view(B, D, 2, self.heads, self.dh).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(q, k, v.transpose(1, 2)).transpose(1, 2)
        return self.out(y.reshape(B, D, E))


class Block(nn.Module):
    def __init__(self, cfg: ViTConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.width), nn.LayerNorm(cfg.width)
        self.attn = Attention(cfg.width, cfg.heads, cfg.attention == "positional")
        self.mlp = nn.Sequential(nn.Linear(cfg.width, cfg.mlp), nn.GELU(), nn.Linear(cfg.mlp, cfg.width))

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), pos)
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """Vision Transformer of docs/theory.md §8: ``(B, c, H, W)`` float images → ``(B, classes)`` logits."""

    def __init__(self, cfg: ViTConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Linear(cfg.channels * cfg.patch**2, cfg.width)
        self.pos = nn.Parameter(torch.zeros(cfg.tokens, cfg.width)) if cfg.pos_embed else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.depth))
        self.ln = nn.LayerNorm(cfg.width)
        self.head = nn.Linear(cfg.width, cfg.classes)
        if cfg.init == "vit":  # "torch": the layers keep the default they were built with
            self.apply(self._init_vit)
        if self.pos is not None:
            # at σ = 0.02 the positional scores (P W_Q)(P W_K)ᵀ start ≈ 0 (uniform attention) and
            # their gradient is ∝ σ², so positional attention finds its structure slowly
            std = cfg.pos_std
            nn.init.trunc_normal_(self.pos, std=std, a=-2 * std, b=2 * std)

    @staticmethod
    def _init_vit(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.trunc_normal_(m.weight, std=0.02)
            nn.init.zeros_(m.bias)

    def positional_scores(self) -> list[torch.Tensor]:
        """The ``(H, D, D)`` score matrix of every layer in positional attention (depends on P only)."""
        assert self.cfg.attention == "positional"
        return [b.attn.scores(self.pos) for b in self.blocks]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.embed(patchify(x, self.cfg.patch))  # (B, D, E)
        pos = self.pos if self.pos is not None else z.new_zeros(z.shape[1:])
        if self.cfg.attention == "vanilla":
            z = z + pos
        for block in self.blocks:
            z = block(z, pos)
        return self.head(self.ln(z).mean(dim=1))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Sequential()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.short(x))


class ResNet18(nn.Module):
    """CIFAR ResNet-18: 3×3 stem of 64 channels, stages (64, 128, 256, 512) × 2 blocks, avg-pool, linear."""

    def __init__(self, channels: int = 3, classes: int = 10):
        super().__init__()
        layers, cin = [nn.Conv2d(channels, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            for j in range(2):
                layers.append(BasicBlock(cin, cout, 2 if (i > 0 and j == 0) else 1))
                cin = cout
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(512, classes)

    def forward(self, x):
        return self.head(self.features(x))


VGG19_PLAN = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M")


class VGG19(nn.Module):
    """CIFAR VGG-19 with batch norm: 16 conv-BN-ReLU layers, 5 max-pools, one linear classifier.

    The pools use ``ceil_mode`` so that images smaller than 32×32 still reach a 1×1 map.
    """

    def __init__(self, channels: int = 3, classes: int = 10):
        super().__init__()
        layers, cin = [], channels
        for v in VGG19_PLAN:
            if v == "M":
                layers.append(nn.MaxPool2d(2, ceil_mode=True))
            else:
                layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU()]
                cin = v
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(512, classes)

    def forward(self, x):
        return self.head(self.features(x))


class SmallCNN(nn.Module):
    """A small CNN for 8×8 digits: conv(32)-conv(64)-pool-conv(128)-pool, global average, linear."""

    def __init__(self, channels: int = 1, classes: int = 10):
        super().__init__()

        def cbr(a, b):
            return [nn.Conv2d(a, b, 3, padding=1, bias=False), nn.BatchNorm2d(b), nn.ReLU()]

        self.features = nn.Sequential(
            *cbr(channels, 32), *cbr(32, 64), nn.MaxPool2d(2), *cbr(64, 128), nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.head = nn.Linear(128, classes)

    def forward(self, x):
        return self.head(self.features(x))


MODELS = ("vit", "resnet18", "vgg19", "cnn")


def build_model(name: str, *, channels: int, classes: int, vit: ViTConfig | None = None) -> nn.Module:
    """The network called ``name`` (one of :data:`MODELS`); ``vit`` gives the ViT's shape."""
    if name == "vit":
        return ViT(vit)
    if name == "resnet18":
        return ResNet18(channels, classes)
    if name == "vgg19":
        return VGG19(channels, classes)
    if name == "cnn":
        return SmallCNN(channels, classes)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")
