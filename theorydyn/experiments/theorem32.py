"""The explicit transformer of Theorem 3.2 (docs/theory.md §6, §10.3) and what it measures: a one-layer transformer
with positional attention (Definition 3.2) that fits f while its positional Gram matrix PᵀP has no patch association.

* :func:`construct_theorem_3_2` — the construction (:class:`PositionalTransformer`);
* :func:`measure_construction` — the construction fed to model (T)'s own forward on fresh samples and to the
  association code that judges trained models (:class:`Theorem32Run`);
* :func:`error_envelope`, :func:`envelope_trend` — exact envelopes of its Pr[f F <= 0] from the law of the set
  sums, at one setting and on a (C, D) grid (the readings across D);
* :func:`run` — everything the ledger's Theorem 3.2 rows read, in one call (:class:`Theorem32Config` →
  :class:`Theorem32Results`): the envelopes on the two grids across D, then the construction measured at the
  ledger's setting.

:mod:`theorydyn.claims.theorem32` judges them. Shapes: X: (N, D, d); P, W_Q, W_K: (D, D) (column i of P =
positional encoding p_i); v: (d,).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from scipy.stats import binom

from ..core import data, model
from ..core.config import Seeds
from ..core.data import sample_memory
from ..core.setting import Setting
from ..infra.memory import BOOL, F64, SMALL, MemoryEstimate, Term
from .labels import label_agreement


def offdiag_topc_miss(s: Setting, M: np.ndarray) -> float:
    """Fraction of rows i whose off-diagonal Top-C misses S(i) entirely, whichever way ties break:
    the C-th largest off-diagonal entry exceeds every in-set off-diagonal entry of the row."""
    M = np.array(M, dtype=np.float64)
    np.fill_diagonal(M, -np.inf)
    cth = -np.sort(-M, axis=1)[:, s.C - 1]
    in_max = np.where(s.in_set_mask, M, -np.inf).max(axis=1)
    return float(np.mean(cth > in_max))


@dataclass(frozen=True)
class PositionalTransformer:
    """A one-layer transformer with positional attention (Definition 3.2):

        Q = Pᵀ W_Q, K = Pᵀ W_K, A = Q Kᵀ, S = row-softmax(A),
        M(X) = Σ_i ψ(h_i),  h_i = Σ_j S_ij ⟨v, X_j⟩,  ψ(x) = Thr(C x) / C.

    P: (D, D) positional encodings (column i = p_i); W_Q, W_K: (D, D); v: (d,).
    """

    s: Setting
    P: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    v: np.ndarray

    @property
    def gram(self) -> np.ndarray:
        """⟨p_i, p_j⟩: (D, D)."""
        return self.P.T @ self.P

    @property
    def logits(self) -> np.ndarray:
        """A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ: (D, D)."""
        return (self.P.T @ self.W_Q) @ (self.P.T @ self.W_K).T

    def forward(self, X: np.ndarray) -> np.ndarray:
        """M(X): (N, D, d) → (N,)."""
        S = model.softmax_rows(self.logits)
        H = (np.asarray(X, dtype=np.float64) @ self.v) @ S.T
        return data.threshold(self.s, self.s.C * H).sum(axis=1) / self.s.C


def construct_theorem_3_2(s: Setting, kappa: float = 60.0, b: float = 1.0) -> PositionalTransformer:
    """An explicit transformer for Theorem 3.2.

    Positional Gram matrix G = PᵀP = (bC + 1) I − b B, B_ij = 1[i, j in the same set]: positive
    definite (eigenvalues 1 and bC + 1), in-set off-diagonal entries −b < 0 = cross-set ones,
    so each row's off-diagonal Top-C lies outside its own set. P = G^{1/2} (symmetric root).
    Queries/keys undo the Gram matrix: W_Q = κ P^{−T}, W_K = P^{−T} B, hence Q = κ I, K = B and
    A = κ B — block attention, S_ij ≈ 1/C in-set (up to D e^{−κ}). With v = w*,
    h_i ≈ (1/C) Σ_{j∈S(i)} z_j and M(X) ≈ Σ_ℓ Thr(Σ_{i∈S_ℓ} z_i) = f(X).

    Why the diagonal is excluded from the Top-C: by Cauchy–Schwarz ⟨p_i, p_j⟩ ≤ ‖p_i‖² for the
    row i of largest norm, so no Gram matrix can push every diagonal out of its row's Top-C; with
    the diagonal included, Top-C ∩ S(i) = {i} and Definition 2.2's association is 0.
    """
    B = s.same_set.astype(np.float64)
    G = (b * s.C + 1.0) * np.eye(s.D) - b * B
    lam, U = np.linalg.eigh(G)
    P = (U * np.sqrt(lam)) @ U.T
    P_inv_T = np.linalg.inv(P).T
    return PositionalTransformer(s=s, P=P, W_Q=kappa * P_inv_T, W_K=P_inv_T @ B, v=np.array(s.w_star))


#: Noise sets past the threshold (|s| > 0.9 C) that :func:`error_envelope` enumerates exactly; a sample with more
#: is counted as an error (their probability, a binomial tail, is added whole).
N_EXACT = 2


def block_output(s: Setting, z: np.ndarray) -> np.ndarray:
    """The construction's output with exactly block-uniform attention (S_ij = 1/C in-set, 0 across; κ → ∞) and
    v = w*: h_i = s_ℓ/C for i in S_ℓ, so F = Σ_ℓ C σ(s_ℓ/C), s_ℓ = Σ_{i∈S_ℓ} z_i. z: (N, D) → (N,).

    >>> s = Setting(D=8, C=2, q=0.5)
    >>> float(block_output(s, np.array([[1, 1, 0, 0, -1, 0, 0, 0]]))[0]) == 2 * (1 + s.nu) + 2 * (-(0.5**3) - s.nu / 2)
    True
    """
    sums = np.asarray(z, dtype=np.float64)[:, s.sets].sum(axis=2)  # (N, L)
    return (s.C * model.sigma(sums / s.C, s.p, s.nu)).sum(axis=1)


def _set_law(C: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The law of one set sum Σ δ_j of C i.i.d. δ ∈ {−1, 0, +1} (probabilities q/2, 1 − q, q/2): values −C…C."""
    delta = np.array([q / 2, 1 - q, q / 2])
    law = np.array([1.0])
    for _ in range(C):
        law = np.convolve(law, delta)
    return np.arange(-C, C + 1), law


def _chernoff_tail(r: np.ndarray, law: np.ndarray, m: int, a: float) -> float:
    """An upper bound on Pr[Σ_{k=1}^m r_k >= a], r_k i.i.d. taking the values ``r`` with probabilities ``law``:
    inf over λ >= 0 of exp(−λ a) M(λ)^m, M(λ) = Σ law·exp(λ r) (Chernoff; every λ gives a valid bound). 1 for
    a <= 0, 0 where a exceeds m·max r (the sum cannot reach it)."""
    keep = law > 0
    r, lt = r[keep], np.log(law[keep])
    if a <= 0:
        return 1.0
    if m == 0 or a > m * r.max():
        return 0.0
    top = 200.0 / max(float(np.abs(r).max()), 1e-300)
    res = minimize_scalar(lambda lam: -lam * a + m * logsumexp(lt + lam * r), bounds=(0.0, top), method="bounded")
    return float(np.exp(min(float(res.fun), 0.0)))


def error_envelope(s: Setting, n_exact: int = N_EXACT) -> dict[str, float]:
    """Exact envelopes of the construction's Pr[f F <= 0] (f = 0 counted as an error), from the law of the set sums.

    With block attention and v = w* (:func:`block_output`; the construction's leakage to other sets, (D − C)e^{−κ}/C
    of the attention at κ = 60, is below float64's resolution, and
    :func:`theorydyn.claims.theorem32.check_theorem_3_2`'s identity row checks model (T)'s forward against it),
    C^{p−1} F = Σ_ℓ w(s_ℓ), w(s) = s^p + c s, c = ν C^{p−1}, while f = Σ_ℓ Thr(s_ℓ). With r(s) = w(s) − C^{p−1}
    Thr(s): C^{p−1} F = C^{p−1} f + Σ_ℓ r(s_ℓ). Take y = +1 (symmetry): the signal set has s = C. A noise set is
    *past the threshold* when |s| > 0.9 C (for C <= 10 only s = ±C). Given the n noise sets past it and their sums
    (enumerated exactly for n <= ``n_exact``), f = C + Σ of those sums and R_0 = r(C) + Σ of their r are fixed, and
    the other m = L − 1 − n sets are i.i.d. with the law of s given |s| <= 0.9 C, which is symmetric, so R = Σ r(s)
    over them is too. Where f != 0, f F <= 0 iff sign(f)·R <= −(C^{p−1}|f| + sign(f) R_0): probability Pr[R >= a], a
    = C^{p−1}|f| + sign(f) R_0, bounded by Chernoff (:func:`_chernoff_tail`). Configurations with n > ``n_exact``
    are all counted as errors.

    Returns:
        dict(floor = Pr[f = 0] (exact, :func:`theorydyn.experiments.labels.label_agreement`), bound >=
        Pr[f != 0, f F <= 0], upper = floor + bound >= Pr[f F <= 0], bound_given = bound / (1 − floor) >=
        Pr[f F <= 0 | f != 0]). floor <= Pr[f F <= 0] <= upper.

    >>> e = error_envelope(Setting(D=64, C=4))
    >>> round(e["floor"], 5), e["floor"] < e["upper"] < 0.02
    (0.00364, True)
    """
    C, L, p = s.C, s.L, s.p
    c = s.nu * C ** (p - 1)
    vals, law = _set_law(C, s.q)
    past = np.abs(vals) > 0.9 * C
    r = vals.astype(np.float64) ** p + c * vals - C ** (p - 1) * np.where(past, vals, 0)
    pi = float(law[past].sum())
    below = law[~past] / law[~past].sum()
    tv, tp, tr = vals[past], law[past] / pi if pi > 0 else law[past], r[past]
    bound = 0.0
    for n in range(min(n_exact, L - 1) + 1):
        pn = float(binom.pmf(n, L - 1, pi))
        if pn == 0.0:
            continue
        for combo in itertools.product(range(len(tv)), repeat=n):
            f = C + int(sum(tv[i] for i in combo))
            if f == 0:
                continue  # the floor's
            R0 = c * C + float(sum(tr[i] for i in combo))
            sg = 1.0 if f > 0 else -1.0
            w = pn * float(np.prod([tp[i] for i in combo]))
            bound += w * _chernoff_tail(r[~past], below, L - 1 - n, C ** (p - 1) * abs(f) + sg * R0)
    bound += float(binom.sf(n_exact, L - 1, pi))
    floor = label_agreement(s)["zero"]
    bound = min(bound, 1.0 - floor)
    return dict(floor=floor, bound=bound, upper=floor + bound, bound_given=bound / (1.0 - floor))


def measure_errors(
    s: Setting, A: np.ndarray, v: np.ndarray, N: int, seeds: Seeds, seed: int
) -> tuple[list[float], list[float], float]:
    """Model (T) with logits ``A``: (D, D) and value ``v``: (d,) on ``N`` fresh samples per seed (seed k
    draws from ``SeedSequence([seed, k, 32])``): per seed Pr[f F ≤ 0 | f ≠ 0] and Pr[f = 0]
    (:func:`theorydyn.core.data.errors`; a non-finite output counts as 0), and over every sample the largest
    |F − F_block| / max |F_block|, F_block the block-attention output :func:`block_output` that
    :func:`error_envelope` reads (inf where F is not finite)."""
    errs, amb, dev = [], [], 0.0
    for k in seeds:
        b = data.sample(s, N, seed=np.random.default_rng(np.random.SeedSequence([seed, k, 32])))
        with np.errstate(over="ignore", invalid="ignore"):
            F = model.forward(s, A, v, b.X)
        e = data.errors(np.where(np.isfinite(F), F, 0.0), b.y, data.labelling(s, b.X))
        errs.append(e["err_f"])
        amb.append(e["amb_f"])
        Fb = block_output(s, b.z)
        with np.errstate(invalid="ignore"):
            d = float(np.max(np.abs(F - Fb))) / max(float(np.max(np.abs(Fb))), 1e-300)
        dev = max(dev, d if np.isfinite(d) else np.inf)
    return errs, amb, dev


def envelope_trend(grid: tuple[tuple[int, int], ...]) -> dict[str, np.ndarray]:
    """:func:`error_envelope` on a (C, D) grid at q = C²/D: the floor and the upper envelope per size and the local
    exponents Δ log / Δ log D of each between neighbours."""
    Ds = np.array([D for _, D in grid], float)
    envs = [error_envelope(Setting(D=D, C=C, q=C * C / D)) for C, D in grid]
    out: dict[str, np.ndarray] = {"D": Ds, "C": np.array([C for C, _ in grid])}
    for key in ("floor", "upper", "bound_given"):
        out[key] = np.array([e[key] for e in envs])
    for key in ("floor", "upper"):
        out[f"local_{key}"] = np.diff(np.log(out[key])) / np.diff(np.log(Ds))
    return out


@dataclass(frozen=True)
class Theorem32Run:
    """What :func:`measure_construction` measured on the construction: per seed ``errs`` Pr[f F ≤ 0 | f ≠ 0] and
    ``amb`` Pr[f = 0] on fresh samples; ``dev`` the largest |F − F_block| / max |F_block| over them
    (:func:`measure_errors`); ``env`` the exact envelope at the setting (:func:`error_envelope`); on the Gram matrix
    PᵀP ``miss`` the fraction of rows whose off-diagonal Top-C misses their set (:func:`offdiag_topc_miss`),
    ``assoc_rows`` Definition 2.2's rows (:func:`theorydyn.core.model.association_rows`, (D,) bool) and ``literal``
    the fraction of rows whose Top-C over all j (diagonal included) misses their set, for every tie-break;
    ``logits_assoc`` the patch association of the logits A."""

    errs: list[float]
    amb: list[float]
    dev: float
    env: dict[str, float]
    miss: float
    assoc_rows: np.ndarray
    literal: float
    logits_assoc: float


def measure_construction(
    s: Setting, N: int, seeds: Seeds, *, seed: int = 0, kappa: float = 60.0, M: PositionalTransformer | None = None
) -> Theorem32Run:
    """The construction ``M`` (default :func:`construct_theorem_3_2` with κ·τ, so that the softmax of A/τ is the same
    at any τ) fed to model (T): logits A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ, value M.v, ``N`` fresh samples per seed of
    ``seeds`` (:func:`measure_errors`), and its Gram matrix PᵀP to the association code (:class:`Theorem32Run`)."""
    M = M if M is not None else construct_theorem_3_2(s, kappa=kappa * s.tau)
    P = np.asarray(M.P, dtype=np.float64)
    G = P.T @ P
    A = (P.T @ M.W_Q) @ (P.T @ M.W_K).T
    errs, amb, dev = measure_errors(s, A, M.v, N, seeds, seed)
    env = error_envelope(s)
    miss = offdiag_topc_miss(s, G)
    assoc_rows = model.association_rows(s, G)
    # literal: Top-C over j = 1..D (diagonal included) disjoint from S(i), for every tie-break
    cth = -np.sort(-G, axis=1)[:, s.C - 1]
    literal = float(np.mean(cth > np.where(s.same_set, G, -np.inf).max(axis=1)))
    return Theorem32Run(errs, amb, dev, env, miss, assoc_rows, literal, model.association(s, A))


@dataclass(frozen=True)
class Theorem32Config:
    """What :func:`run` needs for the ledger's Theorem 3.2 rows.

    Attributes:
        sizes: the construction's sizes (a validated sizes config of the claims, :mod:`theorydyn.claims.sizes`):
            ``N`` fresh samples per seed, ``seeds`` (seed k draws from ``SeedSequence([seed, k, 32])``).
        along: the (C, D) grid along Assumption 2 (C ≈ log₂ D, q = C²/D) the envelope is read on across D.
        fixed: the (C, D) grid at the ledger's fixed C (q = C²/D), the planted counter-case.
        seed: the base seed of the fresh samples.
        kappa: κ of the construction (taken times τ, :func:`measure_construction`).
    """

    sizes: Any
    along: tuple[tuple[int, int], ...]
    fixed: tuple[tuple[int, int], ...]
    seed: int = 0
    kappa: float = 60.0


@dataclass(frozen=True)
class Theorem32Results:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        config: the :class:`Theorem32Config` it ran at (its N, seeds and κ name the rows' sizes).
        along, fixed: :func:`envelope_trend` on ``config.along`` and ``config.fixed``: per (C, D) the floor
            Pr[f = 0], the upper envelope and the bound given f ≠ 0, and the local exponents in D ((n − 1,) each).
        construction: the construction at ``s`` (:func:`measure_construction` at ``config.sizes``' N and seeds).
    """

    s: Setting
    config: Theorem32Config
    along: dict[str, np.ndarray]
    fixed: dict[str, np.ndarray]
    construction: Theorem32Run


def run(s: Setting, config: Theorem32Config, progress: Callable[[str], None] | None = None) -> Theorem32Results:
    """Everything the ledger's Theorem 3.2 rows read at ``s`` (:class:`Theorem32Results`): the exact envelopes of the
    construction's Pr[f F <= 0] across D (:func:`envelope_trend`, first along Assumption 2 on ``config.along``, then
    at the fixed C on ``config.fixed``), then the construction fed to model (T) on ``config.sizes.N`` fresh samples per
    seed of ``config.sizes.seeds`` and its Gram matrix to the association code (:func:`measure_construction`)."""
    if progress:
        progress("Theorem 3.2")
    along = envelope_trend(config.along)
    fixed = envelope_trend(config.fixed)
    n = config.sizes
    M = measure_construction(s, n.N, n.seeds, seed=config.seed, kappa=config.kappa)
    return Theorem32Results(s, config, along, fixed, M)


def memory(D: int, C: int, d: int | None = None, N: int = 20_000) -> MemoryEstimate:
    """:func:`run` (:func:`measure_construction`) with ``N`` samples per seed: N samples (two seeds' worth at the
    hand-over between seeds) and a dozen D × D float64 matrices.

    The construction holds B, G, the eigenvectors, P, P⁻¹, W_Q, W_K and the Gram and logits
    matrices (≈ 12 live D × D float64 arrays with LAPACK work space), the boolean masks, and
    the N samples of :func:`sample_memory` plus their float64 projections (N, D) for f.
    """
    d = D if d is None else d
    data = sample_memory(D, C, d, N, 8, "N")
    return MemoryEstimate(
        "Theorem 3.2 check",
        data.terms[:-1]
        + (
            # the check loops over seeds: the previous seed's X is alive while the next one is drawn
            Term(f"the previous seed's X ({N}, {D}, {d}) float64", N * D * d * F64, {"N": N, "D": D, "d": d}),
            Term("D × D float64 matrices of the construction (12)", 12 * D * D * F64, {"D": D}),
            Term("(D, D) boolean masks of the Setting (4)", 4 * D * D * BOOL, {"D": D}),
            Term(f"projections ⟨w*, X_j⟩ and labels ({N}, {D}) float64 ×3", 3 * N * D * F64, {"N": N, "D": D}),
            SMALL,
        ),
    )
