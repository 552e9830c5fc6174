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

Ensembles (``members=K > 1``, the ViT and the small CNN): K networks of one shape trained as one,
every parameter and buffer with a leading member axis ``K`` (member ``k``'s tensors are ``t[k]``,
shaped as in the single network, see :func:`member_state`); inputs and outputs carry the member axis
first, ``(K, B, c, H, W) → (K, B, classes)``. Linear layers become batched matmuls (``baddbmm``),
convolutions one grouped convolution (members stacked along the channels, ``groups=K``), layer and
batch norms normalise per member. ``members=1`` is the single network, with no member axis and the
plain ``nn`` code paths, bit for bit. :func:`ensemble` builds one from seeds, each member initialised
exactly as the single network of its seed.

Baselines: the CIFAR forms of ResNet-18 (He et al. 2016, 3×3 stem, no max-pool) and VGG-19 with
batch norm (Simonyan & Zisserman 2015, one linear classifier), and a small CNN for 8×8 digits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import cast

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
    """``(..., c, H, W) → (..., D, c·p²)``, patches in row-major order of the ``(H/p)×(W/p)`` grid."""
    *lead, c, H, W = x.shape
    n = len(lead)
    x = x.reshape(*lead, c, H // p, p, W // p, p).permute(*range(n), n + 1, n + 3, n, n + 2, n + 4)
    return x.reshape(*lead, (H // p) * (W // p), c * p * p)


class Linear(nn.Linear):
    """``nn.Linear`` (members = 1, initialised as it) or ``members`` of them, weight ``(K, out, in)``,
    applied to ``x: (K, ..., in)`` as one batched matmul."""

    def __init__(self, fan_in: int, fan_out: int, members: int = 1):
        super().__init__(fan_in, fan_out)
        if members > 1:  # the values come from the members' single layers (ensemble)
            self.weight = nn.Parameter(torch.empty(members, fan_out, fan_in))
            self.bias = nn.Parameter(torch.zeros(members, fan_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight.ndim == 2:
            return F.linear(x, self.weight, self.bias)
        K, *mid, n = x.shape
        y = torch.baddbmm(self.bias.unsqueeze(1), x.reshape(K, -1, n), self.weight.transpose(1, 2))
        return y.view(K, *mid, y.shape[-1])


class LayerNorm(nn.LayerNorm):
    """``nn.LayerNorm`` over the last axis, or ``members`` of them (weight and bias ``(K, E)``)."""

    def __init__(self, width: int, members: int = 1):
        super().__init__(width)
        if members > 1:
            self.weight = nn.Parameter(torch.ones(members, width))
            self.bias = nn.Parameter(torch.zeros(members, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight.ndim == 1:
            return super().forward(x)
        K, E = self.weight.shape
        shape = (K,) + (1,) * (x.ndim - 2) + (E,)
        return torch.addcmul(
            self.bias.view(shape), F.layer_norm(x, (E,), None, None, self.eps), self.weight.view(shape)
        )


class Conv2d(nn.Conv2d):
    """``nn.Conv2d`` (no bias), or ``members`` of them as one grouped convolution: weight
    ``(K, out, in, k, k)``, input and output with the members stacked along the channels."""

    def __init__(self, cin: int, cout: int, kernel: int, padding: int, members: int = 1):
        super().__init__(cin, cout, kernel, padding=padding, bias=False)
        self.members = members
        if members > 1:
            self.weight = nn.Parameter(torch.empty(members, cout, cin, kernel, kernel))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.members == 1:
            return super().forward(x)
        return F.conv2d(x, self.weight.flatten(0, 1), None, self.stride, self.padding, self.dilation, self.members)


class BatchNorm2d(nn.BatchNorm2d):
    """``nn.BatchNorm2d``, or ``members`` of them over channels stacked member-major (weight, bias,
    running statistics ``(K, C)``, batch counter ``(K,)``)."""

    def __init__(self, channels: int, members: int = 1):
        super().__init__(channels)
        self.members = members
        if members > 1:
            self.weight = nn.Parameter(torch.ones(members, channels))
            self.bias = nn.Parameter(torch.zeros(members, channels))
            self.running_mean = torch.zeros(members, channels)
            self.running_var = torch.ones(members, channels)
            self.num_batches_tracked = torch.zeros(members, dtype=torch.long)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.members == 1:
            return super().forward(x)
        assert self.running_mean is not None and self.running_var is not None and self.momentum is not None
        if self.training and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
        # views of the contiguous (K, C) buffers: batch_norm updates the running statistics in place
        return F.batch_norm(
            x,
            self.running_mean.view(-1),
            self.running_var.view(-1),
            self.weight.view(-1),
            self.bias.view(-1),
            self.training,
            self.momentum,
            self.eps,
        )


class Attention(nn.Module):
    """Multi-head attention, vanilla or positional (see the module docstring)."""

    def __init__(self, width: int, heads: int, positional: bool, members: int = 1):
        super().__init__()
        self.heads, self.dh, self.positional = heads, width // heads, positional
        self.qk = Linear(width, 2 * width, members)  # applied to P (positional) or to the tokens (vanilla)
        self.v = Linear(width, width, members)
        self.out = Linear(width, width, members)
        self.last_scores: torch.Tensor | None = None  # ([K,] H, D, D) of the latest positional forward

    def scores(self, z: torch.Tensor) -> torch.Tensor:
        """``softmax(Q Kᵀ/√d_h)`` per head from ``z: (..., D, E)`` → ``(..., H, D, D)``."""
        *lead, D, _ = z.shape
        q, k = self.qk(z).view(*lead, D, 2, self.heads, self.dh).unbind(-3)
        q, k = q.transpose(-3, -2), k.transpose(-3, -2)  # (..., H, D, d_h)
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.dh), dim=-1)

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        *lead, D, E = x.shape  # lead: (B,) or (K, B)
        v = self.v(x).view(*lead, D, self.heads, self.dh)
        if self.positional:
            S = self.scores(pos)  # ([K,] H, D, D): once per forward pass, the same for every image
            self.last_scores = S.detach()
            eq = "hij,bjhd->bihd" if S.ndim == 3 else "khij,kbjhd->kbihd"
            y = torch.einsum(eq, S.to(v.dtype), v)
        else:
            q, k = self.qk(x).view(*lead, D, 2, self.heads, self.dh).movedim(-3, 0).transpose(-3, -2)
            y = F.scaled_dot_product_attention(q, k, v.transpose(-3, -2)).transpose(-3, -2)
        return self.out(y.reshape(*lead, D, E))


class Block(nn.Module):
    def __init__(self, cfg: ViTConfig, members: int = 1):
        super().__init__()
        self.ln1, self.ln2 = LayerNorm(cfg.width, members), LayerNorm(cfg.width, members)
        self.attn = Attention(cfg.width, cfg.heads, cfg.attention == "positional", members)
        self.mlp = nn.Sequential(Linear(cfg.width, cfg.mlp, members), nn.GELU(), Linear(cfg.mlp, cfg.width, members))

    def forward(self, x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), pos)
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """Vision Transformer of docs/theory.md §8: ``(B, c, H, W)`` float images → ``(B, classes)`` logits
    (``members = K > 1``: ``(K, B, c, H, W) → (K, B, classes)``, see the module docstring)."""

    def __init__(self, cfg: ViTConfig, members: int = 1):
        super().__init__()
        self.cfg, self.members = cfg, members
        lead = (members,) if members > 1 else ()
        self.embed = Linear(cfg.channels * cfg.patch**2, cfg.width, members)
        self.pos = nn.Parameter(torch.zeros(*lead, cfg.tokens, cfg.width)) if cfg.pos_embed else None
        self.blocks = nn.ModuleList(Block(cfg, members) for _ in range(cfg.depth))
        self.ln = LayerNorm(cfg.width, members)
        self.head = Linear(cfg.width, cfg.classes, members)
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
        """The ``([K,] H, D, D)`` score matrix of every layer in positional attention (depends on P only)."""
        assert self.cfg.attention == "positional"
        assert self.pos is not None
        return [cast(Block, b).attn.scores(self.pos) for b in self.blocks]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.embed(patchify(x, self.cfg.patch))  # ([K,] B, D, E)
        pos = self.pos if self.pos is not None else z.new_zeros(z.shape[:-3] + z.shape[-2:])
        if self.cfg.attention == "vanilla":
            z = z + pos.unsqueeze(-3)
        for block in self.blocks:
            z = block(z, pos)
        return self.head(self.ln(z).mean(dim=-2))


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
        layers: list[nn.Module] = []
        cin = channels
        for v in VGG19_PLAN:
            if isinstance(v, str):  # "M"
                layers.append(nn.MaxPool2d(2, ceil_mode=True))
            else:
                layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU()]
                cin = v
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(512, classes)

    def forward(self, x):
        return self.head(self.features(x))


class SmallCNN(nn.Module):
    """A small CNN for 8×8 digits: conv(32)-conv(64)-pool-conv(128)-pool, global average, linear
    (``members = K > 1``: ``(K, B, c, H, W) → (K, B, classes)``, the members' channels side by side)."""

    def __init__(self, channels: int = 1, classes: int = 10, members: int = 1):
        super().__init__()
        self.members = members

        def cbr(a, b):
            return [Conv2d(a, b, 3, 1, members), BatchNorm2d(b, members), nn.ReLU()]

        self.features = nn.Sequential(
            *cbr(channels, 32),
            *cbr(32, 64),
            nn.MaxPool2d(2),
            *cbr(64, 128),
            nn.MaxPool2d(2),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = Linear(128, classes, members)

    def forward(self, x):
        if self.members == 1:
            return self.head(self.features(x))
        K, B, *chw = x.shape
        f = self.features(x.transpose(0, 1).reshape(B, -1, *chw[1:]))  # (B, K·128), member-major
        return self.head(f.view(B, K, -1).transpose(0, 1))


MODELS = ("vit", "resnet18", "vgg19", "cnn")


def build_model(name: str, *, channels: int, classes: int, vit: ViTConfig | None = None, members: int = 1) -> nn.Module:
    """The network called ``name`` (one of :data:`MODELS`); ``vit`` gives the ViT's shape; ``members``
    > 1 (ViT and small CNN only) an uninitialised ensemble (use :func:`ensemble`)."""
    if members > 1 and name not in ENSEMBLES:
        raise ValueError(f"only {ENSEMBLES} train as ensembles, got {name!r} with {members} members")
    if name == "vit":
        if vit is None:
            raise ValueError("the ViT needs its ViTConfig (vit=...)")
        return ViT(vit, members)
    if name == "resnet18":
        return ResNet18(channels, classes)
    if name == "vgg19":
        return VGG19(channels, classes)
    if name == "cnn":
        return SmallCNN(channels, classes, members)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")


#: the networks that train as ensembles (members > 1)
ENSEMBLES = ("vit", "cnn")


def members(model: nn.Module) -> int:
    """The number of networks ``model`` holds: K of an ensemble, 1 otherwise."""
    return int(getattr(model, "members", 1))


def ensemble(
    name: str, seeds: Sequence[int], *, channels: int, classes: int, vit: ViTConfig | None = None
) -> nn.Module:
    """The networks of ``seeds`` as one: member ``k`` is initialised exactly as the single network built
    after ``torch.manual_seed(seeds[k])``; one seed gives that single network itself."""
    singles = []
    for seed in seeds:
        torch.manual_seed(seed)
        singles.append(build_model(name, channels=channels, classes=classes, vit=vit))
    if len(singles) == 1:
        return singles[0]
    model = build_model(name, channels=channels, classes=classes, vit=vit, members=len(singles))
    model.load_state_dict(stack_states([m.state_dict() for m in singles]))
    return model


def stack_states(states: Sequence[dict]) -> dict:
    """The state of an ensemble from its members' (single-network) states, in member order."""
    return {k: torch.stack([s[k] for s in states]) for k in states[0]}


def member_state(model: nn.Module, k: int) -> dict:
    """Member ``k``'s state, keyed and shaped as the single network's ``state_dict()``."""
    state = model.state_dict()
    if members(model) == 1:
        if k != 0:
            raise ValueError(f"a single network has member 0 only, got {k}")
        return state
    return {name: t[k].clone() for name, t in state.items()}
