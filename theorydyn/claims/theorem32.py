"""Theorem 3.2 in the ledger (docs/theory.md §6): a transformer that fits f without patch association.

The claim: a one-layer transformer with positional attention (Definition 3.2) can reach error
d^{−ω(1)} with positional encodings whose Gram matrix PᵀP has no patch association. The toolkit
builds one explicitly (:func:`construct_theorem_3_2`) and feeds it to model (T)'s own forward and
to the association code that judges trained models (:func:`check_theorem_3_2`).

Shapes: X: (N, D, d); P, W_Q, W_K: (D, D) (column i of P = positional encoding p_i); v: (d,).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..cli.configs import Seeds, option
from ..core import data, model
from ..core.setting import Setting
from ..core.stats import mean_ci
from ..infra.memory import MemoryEstimate
from .check import UNIT, Check, Verdict, setting_params
from .estimates import theorem_3_2_memory
from .sizes import ClaimSizes, Sizes, seeds_option


@dataclass(frozen=True)
class Theorem32Sizes(ClaimSizes):
    """The sizes of :func:`check_theorem_3_2`: ``N`` fresh samples per seed, one draw per seed of ``seeds``."""

    N: int = option(5_000, "fresh samples per seed", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k of the fresh samples (drawn from SeedSequence([seed, k, 32]))")


#: Theorem 3.2's sizes: 5000 samples per seed in quick mode, 50000 in the full ledger, 5 seeds.
SIZES = Sizes(quick=Theorem32Sizes(), full=Theorem32Sizes(N=50_000))


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


THEOREM_3_2_ERR_TOL = 0.01


def _measure_errors(
    s: Setting, A: np.ndarray, v: np.ndarray, N: int, seeds: Seeds, seed: int
) -> tuple[list[float], list[float]]:
    """Model (T) with logits ``A``: (D, D) and value ``v``: (d,) on ``N`` fresh samples per seed (seed k
    draws from ``SeedSequence([seed, k, 32])``): per seed Pr[f F ≤ 0 | f ≠ 0] and Pr[f = 0]
    (:func:`theorydyn.core.data.errors`; a non-finite output counts as 0)."""
    errs, amb = [], []
    for k in seeds:
        b = data.sample(s, N, seed=np.random.default_rng(np.random.SeedSequence([seed, k, 32])))
        with np.errstate(over="ignore", invalid="ignore"):
            F = model.forward(s, A, v, b.X)
        e = data.errors(np.where(np.isfinite(F), F, 0.0), b.y, data.labelling(s, b.X))
        errs.append(e["err_f"])
        amb.append(e["amb_f"])
    return errs, amb


def check_theorem_3_2(
    s: Setting,
    sizes: Theorem32Sizes = SIZES.quick,
    *,
    seed: int = 0,
    kappa: float = 60.0,
    M: PositionalTransformer | None = None,
    err_tol: float = THEOREM_3_2_ERR_TOL,
) -> list[Check]:
    """Theorem 3.2 checked through the code that judges trained models, at ``sizes``
    (:class:`Theorem32Sizes`: N fresh samples per seed; default the quick sizes).

    The construction ``M`` (default :func:`construct_theorem_3_2` with κ·τ, so that the softmax
    of A/τ is the same at any τ) is fed to model (T) itself: logits A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ, value
    v = M.v, output F = :func:`theorydyn.core.model.forward` (activation σ(x) = x^p + νx of the setting,
    not the construction's ψ = Thr(C·)/C, so the error is *not* f by construction). Rows:

    1. Pr[f F ≤ 0 | f ≠ 0] on fresh samples, mean and 95% interval over the seeds;
       PASS if the interval lies below ``err_tol`` (1%: the theorem says d^{−ω(1)}, and 1% is
       far below the 1/8 that every GLM must make in Theorem 3.1).
    2. the fraction of rows i whose off-diagonal Top-C of ⟨p_i, p_j⟩ (from P, computed) misses
       S(i): the theorem's property (diagonal excluded, see 4); must be 1.
    3. Definition 2.2 (:func:`theorydyn.core.model.association_rows`) on PᵀP: must be 0 rows.
    4. the literal statement (Top-C over all j, the diagonal included): INFO, since no Gram matrix
       can satisfy it (Cauchy–Schwarz on the row of largest norm), so no planted case can flip the
       row; measured is the fraction of rows satisfying it for this construction.
    5. INFO: Definition 2.2 on the logits A (the block structure lives in W_Q, W_K).
    """
    M = M if M is not None else construct_theorem_3_2(s, kappa=kappa * s.tau)
    N = sizes.N
    params = setting_params(s, N=N, kappa=kappa)
    P = np.asarray(M.P, dtype=np.float64)
    G = P.T @ P
    A = (P.T @ M.W_Q) @ (P.T @ M.W_K).T
    errs, amb = _measure_errors(s, A, M.v, N, sizes.seeds, seed)
    _, _, hi = mean_ci(errs)
    miss = offdiag_topc_miss(s, G)
    assoc_rows = model.association_rows(s, G)
    # literal: Top-C over j = 1..D (diagonal included) disjoint from S(i), for every tie-break
    cth = -np.sort(-G, axis=1)[:, s.C - 1]
    literal = float(np.mean(cth > np.where(s.same_set, G, -np.inf).max(axis=1)))
    route_fwd = "model.forward vs explicit loops (tests/test_model.py::test_forward_against_explicit_loops)"
    return [
        Check.over_seeds(
            "Theorem 3.2",
            "Pr[f F <= 0 | f != 0], F = model (T) forward with the construction's P, W_Q, W_K, v",
            errs,
            f"<= {err_tol} (d^-omega(1))",
            bool(hi <= err_tol),
            params=params,
            note=f"sigma(x) = x^{s.p} + nu x of model (T); Pr[f = 0] = {np.mean(amb):.4f}",
            route=route_fwd,
            bounds=UNIT,
        ),
        Check.exact(
            "Theorem 3.2",
            "fraction of rows i whose off-diagonal Top-C of <p_i, p_j> misses S(i)",
            miss,
            "== 1",
            miss == 1.0,
            params=params,
            note="Gram matrix computed from the construction's P",
            route="brute-force Top-C over tie-breaks (tests/test_theorems.py::"
            "test_theorem_3_2_construction_fits_f_without_positional_association)",
        ),
        Check.exact(
            "Theorem 3.2",
            "patch association of P^T P (Definition 2.2, model.association_rows, fraction of rows)",
            float(np.mean(assoc_rows)),
            "== 0",
            not assoc_rows.any(),
            params=params,
            route="brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c)",
        ),
        Check.exact(
            "Theorem 3.2 (literal)",
            "fraction of rows whose Top-C over all j (diagonal included) misses S(i)",
            literal,
            "INFO (== 1 as stated; no Gram matrix can meet it, so no run can flip this row)",
            Verdict.INFO,
            params=params,
            note=(
                "impossible as stated: the row i of largest |p_i| has <p_i, p_i> >= <p_i, p_j> "
                "(Cauchy-Schwarz), so i, in S(i), is in its own Top-C; the checks read the statement "
                f"with the diagonal excluded (here {'met' if literal == 1 else 'not met'}: a proof, not a "
                "measurement, hence INFO)"
            ),
            route="hypothesis test over random Gram matrices (tests/test_theorems.py::"
            "test_no_gram_matrix_pushes_every_diagonal_out_of_its_top)",
        ),
        Check.exact(
            "Theorem 3.2",
            "patch association of the logits A = (P^T W_Q)(P^T W_K)^T (fraction of rows)",
            model.association(s, A),
            "INFO",
            Verdict.INFO,
            params=params,
            note="the block structure lives in W_Q, W_K, not in the positional encodings",
        ),
    ]


def checks(s: Setting, *, quick: bool = True, progress: Callable[[str], None] | None = None) -> list[Check]:
    """The ledger rows of Theorem 3.2 at ``s``: :func:`check_theorem_3_2` at :data:`SIZES` (N = 5000
    samples per seed, 50000 in the full ledger, 5 seeds)."""
    if progress:
        progress("Theorem 3.2")
    return check_theorem_3_2(s, SIZES.pick(quick))


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :func:`checks` (:func:`theorydyn.claims.estimates.theorem_3_2_memory`) at :data:`SIZES`."""
    return theorem_3_2_memory(s.D, s.C, s.d, N=SIZES.pick(quick).N)
