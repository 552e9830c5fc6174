"""Batched augmentation on the device: random crop with zero padding and horizontal flip.

``x: (B, c, n, n)`` uint8 stays on its device; the randomness comes from a ``torch.Generator`` on
that device, so an epoch's augmentations are a function of the generator's seed alone (this is
what makes ``--resume`` exact).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def random_crop_flip(x: torch.Tensor, pad: int, flip: bool, gen: torch.Generator) -> torch.Tensor:
    """Pad by ``pad`` zeros on each side, cut a random ``n×n`` window per image, flip half of them.

    Each image ``b`` gets offsets ``(i_b, j_b)`` uniform in ``{0..2·pad}²`` and the result is
    ``x_pad[b, :, i_b:i_b+n, j_b:j_b+n]``, mirrored left-right with probability ½ if ``flip``.
    """
    B, c, H, W = x.shape
    dev = x.device
    if pad > 0:
        xp = F.pad(x, (pad, pad, pad, pad))
        off = torch.randint(0, 2 * pad + 1, (2, B), generator=gen, device=dev)
        rows = off[0][:, None] + torch.arange(H, device=dev)  # (B, H)
        cols = off[1][:, None] + torch.arange(W, device=dev)  # (B, W)
        b = torch.arange(B, device=dev)[:, None, None]
        x = xp.permute(0, 2, 3, 1)[b, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)
    if flip:
        mask = torch.rand(B, generator=gen, device=dev) < 0.5
        x = torch.where(mask[:, None, None, None], x.flip(-1), x)
    return x.contiguous()


def random_affine(x: torch.Tensor, shift: float, rotate: float, scale: float, gen: torch.Generator) -> torch.Tensor:
    """A small random affine map per image, sampled bilinearly with zero fill: float ``(B, c, n, n)``.

    Image ``b`` is rotated by ``a_b`` degrees, scaled by ``1 + z_b`` and translated by ``(u_b, v_b)``
    pixels, with ``a_b ~ U[−rotate, rotate]``, ``z_b ~ U[−scale, scale]``, ``u_b, v_b ~ U[−shift, shift]``.
    Unlike a crop, sub-pixel shifts and small rotations keep an 8×8 digit recognisable (a whole-pixel
    shift moves an eighth of it). The values stay on the input's scale (0…255 for uint8 input).
    """
    B, c, H, W = x.shape
    u = torch.rand(B, 4, generator=gen, device=x.device) * 2 - 1
    a = u[:, 0] * (rotate * torch.pi / 180)
    z = 1 + u[:, 1] * scale
    cos, sin = torch.cos(a) / z, torch.sin(a) / z
    # affine_grid maps output to input coordinates in [-1, 1]: a shift of t pixels is 2t/n there
    theta = torch.stack(
        [torch.stack([cos, -sin, u[:, 2] * (2 * shift / W)], 1), torch.stack([sin, cos, u[:, 3] * (2 * shift / H)], 1)],
        1,
    )
    grid = F.affine_grid(theta, [B, c, H, W], align_corners=False)
    return F.grid_sample(x.float(), grid, mode="bilinear", padding_mode="zeros", align_corners=False)
