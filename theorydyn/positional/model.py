"""Figure 2's models in torch (docs/theory.md §7): a one-layer ViT with *learned* positional
encodings, and model (T) of Section 3, both with model (T)'s readout (W_V = [v, …, v]):

    F(X) = Σ_{i=1}^{D} σ(h_i),   h_i = Σ_j S_ij ⟨v, X_j⟩,   σ(x) = x^p + ν x  (p, ν of the Setting,
    :func:`theorydyn.core.model.activation`).

The paper does not spell out the readout of its Figure 2 ViT; we take model (T)'s, so that the
two kinds differ only in how the scores S are made, and both can represent f exactly (block
scores and v = w* give F ∝ f up to the ν-term).

* ``"positional"`` — positional attention (Definition 3.2), every piece trainable:
  P ∈ R^{d_p × D} (column p_i = positional encoding of patch i), W_Q, W_K ∈ R^{d_p × d_h}, v ∈ R^d;
  logits A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ / √d_h, S = row-softmax(A). The scores depend on P only, never on X.
  Init: P_{ki} ~ N(0, p_std²) (p_std = 1 by default; 1/√D is Parametrization 3.1's scale),
  (W_Q)_{kl}, (W_K)_{kl} ~ N(0, 1/d_p), v ~ N(0, ω²/d · I). d_p = d_h = d
  (Simplification 3.1's d = D). The learned Gram reported is PᵀP (D × D).
* ``"T"`` — model (T) of Section 3: trainable off-diagonal logits Â (diagonal fixed at β) and v;
  S = row-softmax(Â / τ). Init Â_ij ~ N(0, ω²) off the diagonal, v ~ N(0, ω²/d · I). The "Gram"
  reported is Â itself (its off-diagonal plus the fixed diagonal β), the object Definition 2.2 is
  applied to in Theorems 4.1/4.2.

Measures of structure of a (D, D) Gram matrix: :func:`theorydyn.core.model.association` (Definition 2.2),
:func:`block_contrast` (its continuous companion), :func:`set_rows` and the chance level
:func:`chance_association`.

torch is the "vision" extra: it is imported on use (:func:`_torch`), so importing this module does
not need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.model import activation
from ..core.setting import Setting
from .config import POSITIONAL_DEFAULTS, PositionalConfig

KINDS = ("positional", "T")

#: The setting of Figure 2: 16 patches on a 4 × 4 grid, sets = the four 2 × 2 tiles.
FIGURE2_SETTING = dict(D=16, C=4, partition="grid")


def figure2_setting(**changes: Any) -> Setting:
    """The Setting of Figure 2 (D = 16, C = 4, 2 × 2 tiles on the 4 × 4 grid, d = D), with changes."""
    return Setting(**{**FIGURE2_SETTING, **changes})


def chance_association(s: Setting) -> float:
    """1 / binom(D − 1, C − 1): the association of a row of a Gram matrix whose diagonal is its
    largest entry and whose off-diagonal entries are exchangeable (random P)."""
    return 1.0 / math.comb(s.D - 1, s.C - 1)


def set_rows(s: Setting, M: np.ndarray) -> np.ndarray:
    """Rows whose C largest entries (diagonal included) form *some* set S_ℓ, not necessarily the
    row's own: (D,) bool. Definition 2.2 asks for the own set; this weaker form is what a
    readout Σ_i σ(h_i) needs, since f = Σ_ℓ φ(X_{S_ℓ}) is served by any assignment of rows to sets.
    A tie at the C-th place counts as no set (as in :func:`theorydyn.core.model.association_rows`).
    """
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (s.D, s.D):
        raise ValueError(f"M must have shape (D, D) = ({s.D}, {s.D}), got {M.shape}")
    sets = {tuple(int(i) for i in S) for S in s.sets}
    order = np.argsort(-M, axis=1, kind="stable")
    out = np.zeros(s.D, dtype=bool)
    for i in range(s.D):
        top = order[i, : s.C]
        if M[i, top[-1]] > M[i, order[i, s.C]]:
            out[i] = tuple(sorted(int(j) for j in top)) in sets
    return out


def block_contrast(s: Setting, M: np.ndarray) -> float:
    """Standardised in-set minus cross-set contrast of a (D, D) matrix, diagonal excluded:

        z(M) = (mean_{i≠j, same set} M_ij − mean_{different sets} M_ij) / std_{i≠j} M_ij.

    A continuous companion of Definition 2.2 (which is all-or-nothing per row): 0 in expectation
    for a random Gram, ≈ 2.5 for perfect blocks (in-set 1, cross 0) at C/D = 1/4, negative when
    set-mates repel. Scale-free, so PᵀP, the logits and Â are on one scale.
    """
    M = np.asarray(M, dtype=np.float64)
    if M.shape != (s.D, s.D):
        raise ValueError(f"M must have shape (D, D) = ({s.D}, {s.D}), got {M.shape}")
    off = M[~np.eye(s.D, dtype=bool)]
    sd = off.std()
    if not sd > 0:
        return 0.0
    return float((M[s.in_set_mask].mean() - M[s.cross_set_mask].mean()) / sd)


def _torch():
    import torch  # the "vision" extra; imported lazily so that the rest of theorydyn does not need it

    return torch


def positional_logits(P, WQ, WK):
    """A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ / √d_h.  P: (d_p, D), W_Q, W_K: (d_p, d_h) → A: (D, D).  No X enters."""
    Q, K = P.T @ WQ, P.T @ WK
    return Q @ K.T / math.sqrt(WQ.shape[1])


def t_logits(s: Setting, A_off, beta: float | None = None):
    """Model (T)'s logits: Â = off-diagonal of ``A_off`` (D, D) plus the fixed diagonal β, divided by τ."""
    torch = _torch()
    D = A_off.shape[0]
    eye = torch.eye(D, dtype=A_off.dtype)
    b = s.beta if beta is None else beta
    return (A_off * (1 - eye) + b * eye) / s.tau


def readout(s: Setting, S, v, X):
    """F(X) = Σ_i σ(Σ_j S_ij ⟨v, X_j⟩).  S: (D, D) rows summing to 1, v: (d,), X: (N, D, d) → (N,)."""
    H = (X @ v) @ S.T  # (N, D): h_ni = Σ_j S_ij u_nj, u = X v
    out: Any = activation(s, H)  # σ of the Setting, applied to a tensor
    return out.sum(dim=1)


@dataclass
class TorchParams:
    """Trainable tensors of one model. ``positional``: P, WQ, WK, v; ``T``: A (off-diagonal used), v."""

    kind: str
    tensors: dict[str, Any]

    def scores(self, s: Setting):
        """S = row-softmax of the logits: (D, D). Depends on the parameters only, never on X."""
        torch = _torch()
        return torch.softmax(self.logits(s), dim=-1)

    def logits(self, s: Setting):
        """The logits that enter the softmax (positional: A = (PᵀW_Q)(PᵀW_K)ᵀ/√d_h; T: Â/τ)."""
        t = self.tensors
        if self.kind == "positional":
            return positional_logits(t["P"], t["WQ"], t["WK"])
        return t_logits(s, t["A"])

    def gram(self, s: Setting) -> np.ndarray:
        """The matrix Definition 2.2 is applied to: PᵀP (positional) or Â with diagonal β (T). (D, D)."""
        t = self.tensors
        with _torch().no_grad():
            if self.kind == "positional":
                G = t["P"].T @ t["P"]
            else:
                G = t_logits(s, t["A"]) * s.tau
        return G.detach().numpy().astype(np.float64)

    def forward(self, s: Setting, X):
        """F(X): (N,).  X: (N, D, d) tensor."""
        return readout(s, self.scores(s), self.tensors["v"], X)


def init_torch_params(
    s: Setting,
    kind: str,
    seed: int,
    omega: float = POSITIONAL_DEFAULTS.omega,
    d_p: int | None = POSITIONAL_DEFAULTS.d_p,
    dtype=None,
    p_std: float = POSITIONAL_DEFAULTS.p_std,
) -> TorchParams:
    """Random initialisation (module docstring), from a private torch Generator seeded with ``seed``.

    Args:
        kind: ``"positional"`` or ``"T"``.
        omega: scale ω of v (and of Â's off-diagonal for ``"T"``); v ~ N(0, ω²/d · I) so ‖v‖ ≈ ω.
        d_p: width of the positional encodings and of W_Q, W_K (default d).
        p_std: standard deviation of the entries of P (``"positional"``): 1 draws P_{ki} ~ N(0, 1)
            (the default); 1/√D draws each p_i ~ N(0, I/D), Parametrization 3.1's scale.
    """
    torch = _torch()
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    PositionalConfig.check_values(omega=omega, p_std=p_std, d_p=d_p)  # the rules of the config's fields
    dtype = torch.float64 if dtype is None else dtype
    g = torch.Generator().manual_seed(int(seed))
    rn = lambda *shape: torch.randn(*shape, generator=g, dtype=dtype)  # noqa: E731
    D, d = s.D, s.d
    dp = d if d_p is None else int(d_p)
    if kind == "positional":
        t = dict(
            P=rn(dp, D) * p_std,
            WQ=rn(dp, dp) / math.sqrt(dp),
            WK=rn(dp, dp) / math.sqrt(dp),
            v=rn(d) * omega / math.sqrt(d),
        )
    else:
        t = dict(A=rn(D, D) * omega, v=rn(d) * omega / math.sqrt(d))
    for x in t.values():
        x.requires_grad_(True)
    return TorchParams(kind, t)
