"""The data: the sampler of Assumption 1, the labelling function f, and docs/theory.md §7's Gaussian data.

Shapes: a data point is stored patch-major, ``X[n, j, :]`` = patch X_j of sample n, so a
batch is ``X: (N, D, d)``; labels ``y: (N,)`` in {−1, +1}.

Assumption 1 (docs/theory.md §1), with unit feature w* and noise orthogonal to it:
    signal set ℓ(X) ~ Unif[L]; for j ∈ S_ℓ(X): X_j = y w* + ξ_j;
    other patches: X_j = δ_j w* + ξ_j, δ_j = ±1 w.p. q/2 each, 0 w.p. 1 − q;
    ξ_j ~ N(0, σ² (I_d − w* w*ᵀ)).
So ⟨w*, X_j⟩ = z_j exactly, with z_j = y on the signal set and δ_j elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..infra.memory import BOOL, F64, I8, SMALL, MemoryEstimate, Term
from .setting import Setting

#: Rows generated per chunk, so that float32 storage never needs a float64 copy of X.
_CHUNK_ELEMS = 1 << 22


@dataclass(frozen=True)
class Batch:
    """N samples of Assumption 1.

    Attributes:
        X: (N, D, d) patches, float64 or float32.
        y: (N,) int8 labels in {−1, +1}.
        signal: (N,) int64 index ℓ(X) of the signal set.
        z: (N, D) int8, z_j = ⟨w*, X_j⟩ ∈ {−1, 0, +1} (y on the signal set, δ_j elsewhere).
    """

    X: np.ndarray
    y: np.ndarray
    signal: np.ndarray
    z: np.ndarray

    def __len__(self) -> int:
        return len(self.y)


def sample_z(s: Setting, N: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw the feature coefficients of Assumption 1 without the noise.

    Returns:
        y: (N,) int8 in {−1, +1}; signal: (N,) int64 in [L]; z: (N, D) int8 in {−1, 0, +1}.
    """
    y = np.where(rng.random(N) < 0.5, -1, 1).astype(np.int8)
    signal = rng.integers(0, s.L, size=N)
    u = rng.random((N, s.D))
    z = np.zeros((N, s.D), dtype=np.int8)
    z[u < s.q / 2] = 1
    z[(u >= s.q / 2) & (u < s.q)] = -1
    on_signal = s.set_of[None, :] == signal[:, None]  # (N, D)
    z[on_signal] = np.broadcast_to(y[:, None], (N, s.D))[on_signal]
    return y, signal, z


def embed(s: Setting, z: np.ndarray, noise: np.ndarray | None = None, dtype=np.float64) -> np.ndarray:
    """X_j = z_j w* + ξ_j, with ``noise`` (N, D, d) projected orthogonally to w* (None: ξ = 0).

    Returns X: (N, D, d) of ``dtype``. ``noise`` is projected in place when given.
    """
    w = s.w_star
    if noise is None:
        X = np.zeros(z.shape + (s.d,), dtype=dtype)
    else:
        X = np.asarray(noise, dtype=dtype)
        X -= (X @ w.astype(dtype))[..., None] * w.astype(dtype)
    X += z[..., None].astype(dtype) * w.astype(dtype)
    return X


def sample(s: Setting, N: int, seed: int | np.random.Generator = 0, dtype=np.float64) -> Batch:
    """Draw N i.i.d. samples of Assumption 1 (docs/theory.md §1).

    The Gaussian noise is always drawn in float64 from ``np.random.default_rng(seed)`` and cast
    chunk by chunk, so the same seed gives the same data up to rounding in float32 and float64,
    and a float32 batch never needs a float64 copy of X.

    Args:
        s: the setting.
        N: number of samples (≥ 1).
        seed: an int seed or a numpy Generator.
        dtype: storage of X, ``np.float64`` or ``np.float32``.

    Returns:
        A :class:`Batch` with X: (N, D, d).
    """
    if N < 1:
        raise ValueError(f"N must be >= 1, got N={N}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    y, signal, z = sample_z(s, N, rng)
    X = np.empty((N, s.D, s.d), dtype=dtype)
    sd = np.sqrt(s.sigma2)
    w = s.w_star
    rows = max(1, _CHUNK_ELEMS // (s.D * s.d))
    for a in range(0, N, rows):
        b = min(N, a + rows)
        g = rng.standard_normal((b - a, s.D, s.d)) * sd
        g -= (g @ w)[..., None] * w  # noise ⟂ w*
        g += z[a:b, :, None] * w
        X[a:b] = g
    return Batch(X=X, y=y, signal=signal, z=z)


def threshold(s: Setting, t: np.ndarray) -> np.ndarray:
    """Thr(t) = t if |t| > 0.9·C else 0 (the labelling function's set detector)."""
    t = np.asarray(t, dtype=float)
    return np.where(np.abs(t) > 0.9 * s.C, t, 0.0)


def labelling_from_z(s: Setting, z: np.ndarray) -> np.ndarray:
    """f from the feature coefficients: f = Σ_ℓ Thr(Σ_{i∈S_ℓ} z_i).  z: (N, D) → (N,)."""
    sums = np.asarray(z, dtype=float)[:, s.sets].sum(axis=2)  # (N, L)
    return threshold(s, sums).sum(axis=1)


def labelling(s: Setting, X: np.ndarray) -> np.ndarray:
    """The labelling function f(X) = Σ_ℓ Thr(Σ_{i∈S_ℓ} ⟨w*, X_i⟩) (Section 2).  X: (N, D, d) → (N,).

    ⟨w*, X_i⟩ is rounded to the nearest integer before thresholding: under Assumption 1 it is
    an integer up to floating-point error, and rounding keeps float32 data exact.
    """
    proj = np.rint(np.asarray(X, dtype=np.float64) @ s.w_star)
    return labelling_from_z(s, proj)


def errors(
    F: np.ndarray,
    y: np.ndarray,
    f: np.ndarray,
    weights: np.ndarray | None = None,
    scale: np.ndarray | float | None = None,
    tie_rtol: float = 1e-12,
) -> dict[str, float]:
    """Classification errors of outputs F against y and against the labelling function f.

    err_y = Pr[y F ≤ 0];  err_f = Pr[f F ≤ 0 | f ≠ 0];  amb_f = Pr[f = 0]
    (where f = 0 the label is ambiguous: a random set equal to −y cancels the signal set; the paper's
    Pr[f F ≤ 0] counts it as an error and is amb_f + (1 − amb_f)·err_f).
    All arrays (N,); ``weights`` (N,) turns the means into weighted means (exact expectations).

    Ties (docs/theory.md, conventions): |F| ≤ ``tie_rtol``·``scale`` counts as F = 0, an error
    against y and against f, whatever the sign of its rounding residue. ``scale`` (N,) or scalar is
    the size of the terms summed into F (their Σ|·|); None takes the batch's largest |F|, which
    bounds Σ|terms| on noiseless data up to a factor D (on noisy data exact ties have probability 0).
    The default ``tie_rtol`` is the reduced solver's ``TIE_RTOL``.
    """
    F, y, f = (np.asarray(a, dtype=float) for a in (F, y, f))
    w = np.full(F.shape, 1.0 / F.size) if weights is None else np.asarray(weights, float) / np.sum(weights)
    finite = np.abs(F[np.isfinite(F)])
    sc = (float(finite.max()) if finite.size else 0.0) if scale is None else np.asarray(scale, float)
    F = np.where(np.abs(F) <= tie_rtol * sc, 0.0, F)
    decisive = f != 0
    mass = float(w[decisive].sum())
    return {
        "err_y": float(w[y * F <= 0].sum()),
        "err_f": float(w[decisive & (f * F <= 0)].sum() / mass) if mass > 0 else float("nan"),
        "amb_f": 1.0 - mass,
    }


def sample_gaussian_cnn(
    s: Setting, N: int, seed: int | np.random.Generator = 0, dtype=np.float64, w: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The negative example of Figure 2 (docs/theory.md §7).

    X_j ~ N(0, I_d) i.i.d.; y = sign f_CNN(X) with f_CNN(X) = Σ_ℓ (Σ_{i∈S_ℓ} ⟨w, X_i⟩)³, a
    one-hidden-layer CNN with cubic activation and one shared filter w (default w*).

    Returns:
        X: (N, D, d), y: (N,) int8 in {−1, +1}.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    X = rng.standard_normal((N, s.D, s.d)).astype(dtype, copy=False)
    y = np.where(cnn_labelling(s, X, w) >= 0, 1, -1).astype(np.int8)
    return X, y


def cnn_labelling(s: Setting, X: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """f_CNN(X) = Σ_ℓ (Σ_{i∈S_ℓ} ⟨w, X_i⟩)³.  X: (N, D, d) → (N,)."""
    w = s.w_star if w is None else np.asarray(w, dtype=float)
    proj = np.asarray(X, dtype=np.float64) @ w  # (N, D)
    return (proj[:, s.sets].sum(axis=2) ** 3).sum(axis=1)


def enumerate_population(s: Setting, max_points: int = 2_000_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every noiseless data point of Assumption 1 with its probability (exact expectations).

    y, the signal set and the values δ_j ∈ {+1, −1, 0} of the D − C other patches run over all
    2·L·3^{D−C} possibilities; points of probability 0 (q ∈ {0, 1}) are dropped. Together with
    ``embed(s, z)`` (X_j = z_j w*) and the weights, the (weighted) empirical risk *is* the
    population risk at any v ∈ span(w*), where the noise drops out (Lemma 4.2, docs/theory.md §3).

    Returns:
        z: (M, D) int8, y: (M,) int8, weights: (M,) probabilities summing to 1.

    Raises:
        ValueError: when 2·L·3^{D−C} exceeds ``max_points``.
    """
    M = 2 * s.L * 3 ** (s.D - s.C)
    if M > max_points:
        raise ValueError(
            f"exhaustive enumeration needs 2*L*3^(D-C) = {M} points > max_points={max_points}; use a smaller D - C"
        )
    others = s.D - s.C
    deltas = np.array(np.meshgrid(*([[1, -1, 0]] * others), indexing="ij"), dtype=np.int8).reshape(others, -1).T
    p_delta = np.prod(np.choose(deltas + 1, [s.q / 2, 1 - s.q, s.q / 2]), axis=1) if others else np.ones(1)
    zs, ys, ws = [], [], []
    for label in (1, -1):
        for l in range(s.L):
            zl = np.empty((len(deltas), s.D), dtype=np.int8)
            zl[:, s.sets[l]] = label
            zl[:, s.set_of != l] = deltas
            zs.append(zl)
            ys.append(np.full(len(deltas), label, dtype=np.int8))
            ws.append(p_delta * 0.5 / s.L)
    z, y, w = np.concatenate(zs), np.concatenate(ys), np.concatenate(ws)
    keep = w > 0
    return z[keep], y[keep], w[keep]


def sample_memory(D: int, C: int, d: int | None, N: int, itemsize: int = 8, label: str = "N") -> MemoryEstimate:
    """:func:`theorydyn.core.data.sample` of N samples: X (N, D, d) plus the larger of its temporaries.

    X is the one array that stays; before it, the feature coefficients need u (N, D) float64,
    z (N, D) int8 and three (N, D) boolean masks; while X fills, a noise chunk of
    ≤ 2^22 float64 elements and its projection (two chunks).
    """
    d = D if d is None else d
    chunk = min(N * D * d, max(D * d, _CHUNK_ELEMS // (D * d) * D * d))
    return MemoryEstimate(
        f"data ({label}={N})",
        (
            Term(f"X ({N}, {D}, {d}) {itemsize * 8}-bit floats", N * D * d * itemsize, {label: N, "D": D, "d": d}),
            Term(
                f"feature coefficients u, z, masks ({N}, {D})",
                N * D * (F64 + I8 + 4 * BOOL) + 3 * N * F64,
                {label: N, "D": D},
            ),
            Term("noise chunks (float64, 2 live)", 2 * chunk * F64, {"D": D, "d": d}),
            SMALL,
        ),
    )
