"""Assumption 1's data law read back from the sampler's data (docs/theory.md §1.1): what
:mod:`theorydyn.claims.assumption1` judges.

Assumption 1: for the signal set S_ℓ(X), X_j = y w* + ξ_j; for the other sets X_j = δ_j w* + ξ_j with
δ_j = ±1 with probability q/2 each and 0 otherwise; ξ_j ~ N(0, σ² (I_d − w* w*ᵀ)) i.i.d., "sampled from
the orthogonal complement of w*". So the feature coefficient of a patch is read from X alone,

    z_j := rint⟨w*, X_j⟩,   and   ⟨w*, X_j⟩ − z_j = ⟨w*, ξ_j⟩ = 0,   ‖ξ_j‖² = ‖X_j‖² − 2 z_j ⟨w*, X_j⟩ + z_j² ‖w*‖²,

with E‖ξ_j‖² = tr σ² (I_d − w* w*ᵀ) = σ² (d − 1). This module measures, per batch of
:func:`theorydyn.core.data.sample` (X: (N, D, d), y: (N,), ℓ(X): (N,)), the numbers these statements fix
(:class:`BatchLaw`), without the sampler's own record of z: a sampler that drew z but not the noise the law
says shows in them. It judges nothing.

* :func:`batch_law` — the numbers of one batch; :func:`data_law` — one batch per seed (:class:`DataLaw`);
* :func:`run` — what the ledger's rows read, in one call (:class:`Assumption1Config` →
  :class:`Assumption1Results`): :func:`data_law` at the config's sizes; :func:`memory` its peak.

>>> import numpy as np
>>> from theorydyn.core.setting import Setting
>>> s = Setting(D=8, C=2, q=0.5)
>>> X = np.zeros((1, 8, 8)); X[0, :, 0] = [1, 1, 0, -1, 0, 0, 1, 0]; X[0, :, 1] = 0.5  # ξ_j = e_1 / 2 ⟂ w* = e_0
>>> law = batch_law(s, X, np.array([1]), np.array([0]))
>>> law.residual, law.wrong, law.plus, law.minus, law.noise2
(0.0, 0, 0.16666666666666666, 0.16666666666666666, 0.25)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.config import Seeds
from ..core.data import sample, sample_memory
from ..core.setting import Setting
from ..infra.memory import F64, MemoryEstimate, Term


@dataclass(frozen=True)
class BatchLaw:
    """Assumption 1's numbers in one batch, z_j = rint⟨w*, X_j⟩ read from X (module docstring).

    Attributes:
        residual: max_{n,j} |⟨w*, X_j⟩ − z_j| (0 up to rounding when ξ_j ⟂ w*).
        norm: max_{n,j} ‖X_j‖ (the scale of that rounding).
        wrong: the patches whose z_j Assumption 1 forbids: z_j ≠ y on the signal set, |z_j| > 1 elsewhere.
        plus, minus: the fractions of the patches outside the signal set with z_j = +1, −1.
        noise2: the mean over all patches of ‖ξ_j‖² = ‖X_j − z_j w*‖².
    """

    residual: float
    norm: float
    wrong: int
    plus: float
    minus: float
    noise2: float


@dataclass(frozen=True)
class DataLaw:
    """:class:`BatchLaw` per seed k of ``seeds`` (one batch of N samples each)."""

    N: int
    seeds: Seeds
    batches: tuple[BatchLaw, ...]

    def of(self, field: str) -> list[float]:
        """One number per seed: the field ``field`` of each batch."""
        return [float(getattr(b, field)) for b in self.batches]


def batch_law(s: Setting, X: np.ndarray, y: np.ndarray, signal: np.ndarray) -> BatchLaw:
    """:class:`BatchLaw` of the batch X: (N, D, d) with labels y: (N,) and signal sets ℓ(X) = ``signal``: (N,),
    in float64 (module docstring)."""
    w = s.w_star
    p = X @ w  # (N, D): ⟨w*, X_j⟩
    z = np.rint(p)
    x2 = np.einsum("ndk,ndk->nd", X, X, dtype=np.float64)  # ‖X_j‖², no copy of X
    on_signal = s.set_of[None, :] == np.asarray(signal)[:, None]  # (N, D)
    y_of = np.broadcast_to(np.asarray(y, dtype=np.float64)[:, None], z.shape)
    wrong = (on_signal & (z != y_of)) | (~on_signal & (np.abs(z) > 1))
    off = z[~on_signal]
    return BatchLaw(
        residual=float(np.max(np.abs(p - z))),
        norm=float(np.sqrt(np.max(x2))),
        wrong=int(np.count_nonzero(wrong)),
        plus=float(np.mean(off == 1)) if off.size else 0.0,
        minus=float(np.mean(off == -1)) if off.size else 0.0,
        noise2=float(np.mean(x2 - 2 * z * p + z * z * float(w @ w))),
    )


def data_law(s: Setting, *, N: int, seeds: Seeds) -> DataLaw:
    """Per seed k of ``seeds``: N samples of :func:`theorydyn.core.data.sample` (float64, generator
    ``[k, 1001]``) and their :class:`BatchLaw`."""
    out = []
    for k in seeds:
        b = sample(s, N, np.random.default_rng([k, 1001]))
        out.append(batch_law(s, b.X, b.y, b.signal))
    return DataLaw(N=N, seeds=seeds, batches=tuple(out))


@dataclass(frozen=True)
class Assumption1Config:
    """What :func:`run` needs for the ledger's Assumption 1 rows: one batch of ``N`` samples per seed k of
    ``seeds`` (generator ``[k, 1001]``)."""

    N: int
    seeds: Seeds


@dataclass(frozen=True)
class Assumption1Results:
    """The outcome of :func:`run` at the ledger's setting ``s``: ``law``, the :class:`DataLaw` of the batches
    (one :class:`BatchLaw` per seed: the residual max |⟨w*, X_j⟩ − z_j|, max ‖X_j‖, the forbidden patches,
    Pr[z_j = ±1] off the signal set and the mean ‖ξ_j‖²)."""

    s: Setting
    law: DataLaw


def run(s: Setting, config: Assumption1Config, progress: Callable[[str], None] | None = None) -> Assumption1Results:
    """Assumption 1's data law at the ledger's setting ``s`` (:class:`Assumption1Results`): per seed k of
    ``config.seeds``, ``config.N`` samples of :func:`theorydyn.core.data.sample` (X: (N, D, d), float64,
    generator ``[k, 1001]``) read back by :func:`batch_law` (:func:`data_law`); one progress message first."""
    if progress:
        progress(f"Assumption 1 (N = {config.N}, {len(config.seeds)} seeds)")
    return Assumption1Results(s, data_law(s, N=config.N, seeds=config.seeds))


def memory(s: Setting, N: int) -> MemoryEstimate:
    """Peak of :func:`data_law` at N samples: one batch (:func:`theorydyn.core.data.sample_memory`) and the
    (N, D) float64 arrays of :func:`batch_law` (⟨w*, X_j⟩, z, ‖X_j‖², the label and the difference)."""
    read = MemoryEstimate("Assumption 1", (Term(f"projections ({N}, {s.D}) float64", 6 * N * s.D * F64, {"N": N}),))
    return sample_memory(s.D, s.C, s.d, N) + read
