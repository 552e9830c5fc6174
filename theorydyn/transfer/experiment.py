"""Transfer to a downstream task with a frozen attention (Section 5, Theorems 5.1 and 5.2; docs/theory.md §5).

Downstream distribution D̃: Assumption 1 with the *same* sets S_ℓ and a new unit feature w̃ ⟂ w*
(:func:`downstream_setting`). The attention logits Â stay fixed; ṽ is re-initialised,
ṽ(0) ~ N(0, ω² I_d), and trained alone by GD on the empirical risk (Ẽ) of Ñ downstream samples:

    ṽ ← ṽ − η ∇_ṽ (1/Ñ) Σ_n log(1 + exp(−ỹ_n F_{Â,ṽ}(X̃_n))).

Theorem 5.1: with the pre-trained Â (patch association), Ñ ≤ polylog(D) samples give
Pr[f F ≤ 0] = o(1). Theorem 5.2: without patch-association knowledge, D^{Ω(1)} samples are needed.

**What is measured.** Sample complexity Ñ_target(D): the number of downstream samples at which the
seed-mean test accuracy against f, acc_f = 1 − Pr[f F ≤ 0 | f ≠ 0], first reaches a target, as D
grows. Three choices make this a sample requirement rather than an accuracy ceiling:

* **q scales with D** (:func:`setting_at` with ``q_rule="count"``): q(D − C) = K is kept, i.e. the
  expected number of ±w̃ patches outside the signal set (Assumption 2's q = poly(C)/D). Then the
  best accuracy reachable with patch association, a*(D), is the same at every D (≈ 0.9999 at
  K = 8, C = 4). With q fixed instead, the number of spurious patches grows like qD and the best
  accuracy itself falls with D (0.987 → 0.760 from D = 16 to 128 at q = 0.25): a ceiling, not a
  sample requirement. q = C²/D is the other Assumption-2 choice; it is not used because at C = 4 it
  gives q = 1 at D = 16. K = 8 keeps q ≤ 1 from D = 16 on, and the reduced flow at K = 8 reaches
  error < 2% (Event III) at every D in 16…256.
* **The target is relative to a*(D)**: target = a*(D) − ε (ε = 0.05 by default), where a*(D) is
  the population accuracy of model (T) with the block attention of Lemma 4.1 at the best ṽ = α w̃
  (:func:`ceiling`, by Monte Carlo over set counts, docs/theory.md §3).
* **A log grid of Ñ from 1**, the crossing interpolated linearly in log Ñ, and censored values kept
  as bounds: reached at the smallest Ñ (> 1) is an upper bound, never reached is a lower bound
  (Ñ_target > largest Ñ tried). Reached at Ñ = 1 is the value 1 (no fewer samples exist).

**Which pre-trained Â.** ``pretrained``: the idealized pre-trained attention — the final (γ, ρ) of
the reduced gradient flow (:func:`theorydyn.reduced.integrate`, run to s_max = 2·10⁴·max(1, D/64)^1.5,
past Event III at every D used here) put into the three-value form (``model.symmetric_attention``).
That is exactly what population GD (Theorem 4.1) produces, and it costs well under a second at any D,
whereas the finite-sample simulator holds X: (N, D, d) with d = D (N·D² floats). ``pretrained-sim``:
Â from finite-sample GD (:func:`pretrain`, Theorem 4.2's realistic process), computed where affordable
(D ≤ ``TransferOptions.sim_max_D``) as a cross-check of the idealized one.

Methods (accuracy on a fresh downstream test set; also against y):

* ``pretrained``      — idealized pre-trained Â (above); ``pretrained-sim`` — finite-sample Â;
* ``init``            — Â at its realistic initialisation (Â_ij ~ N(0, ω²), Â_ii = β);
* ``other-partition`` — Â pre-trained on a different (random) partition: the same flow (γ, ρ),
  placed on a random partition's sets (the reduced flow does not depend on which partition);
* ``scratch``         — A and v both trained from the realistic initialisation on the Ñ samples;
* ``logreg``          — L2 logistic regression on the flattened X, λ by cross-validation on the Ñ
  samples (:mod:`theorydyn.logreg`);
* ``oracle``          — optional: the block attention of Lemma 4.1 with a large gap (a reference).

**Exact cheap test sets.** For a trained ṽ, ⟨ṽ, X_j⟩ = a z_j + ⟨P⊥ṽ, ξ_j⟩ with a = ⟨ṽ, w̃⟩, and
⟨P⊥ṽ, ξ_j⟩ ~ N(0, σ²‖P⊥ṽ‖²) i.i.d. over j and samples (ξ_j ~ N(0, σ²P⊥), P⊥ = I − w̃w̃ᵀ). So the
test set is stored as z: (N, D) and g: (N, D) standard normals and u = a z + σ‖P⊥ṽ‖ g — the same
distribution as drawing X: (N, D, d), at cost N·D instead of N·D·d (:class:`TestSet`).
Likewise a linear rule Σ_j ⟨W_j, X_j⟩ + b has the law of Σ_j a_j z_j + σ(Σ_j ‖P⊥W_j‖²)^{1/2} g + b.

Resumable (:func:`run`): each (D, method, Ñ, seed) result is one row of a crash-safe store
(:class:`theorydyn.resultstore.ResultStore`) keyed by a hash of its parameters; an interrupted run
loses nothing, and rerunning computes only the missing rows.

Shapes: X: (N, D, d), A: (D, D), v: (d,), z: (N, D).
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit

from .. import data, model
from ..provenance import NUMERICS_VERSION
from ..reduced import forward_counts, integrate
from ..scan.store import ResultStore
from ..setting import Setting
from ..simulate import simulate
from .logreg import fit_logreg_cv

METHODS = ("pretrained", "pretrained-sim", "init", "other-partition", "scratch", "logreg", "oracle")
#: Methods whose attention is frozen and only ṽ is trained.
FROZEN = ("pretrained", "pretrained-sim", "init", "other-partition", "oracle")


# ---- the downstream task ---------------------------------------------------------------------
def downstream_feature(s: Setting) -> int | tuple[float, ...]:
    """A unit feature w̃ ⟂ w*: the next basis vector for w* = e_k, else e_0 (or e_1) minus its w* part."""
    if isinstance(s.feature, int):
        return (s.feature + 1) % s.d
    w = s.w_star
    for k in range(s.d):
        e = np.zeros(s.d)
        e[k] = 1.0
        u = e - (e @ w) * w
        if np.linalg.norm(u) > 0.5:
            return tuple(float(x) for x in u / np.linalg.norm(u))
    raise AssertionError("unreachable: some basis vector is far from w*")


def downstream_setting(s: Setting) -> Setting:
    """D̃: the same setting (same sets) with a feature w̃ ⟂ w* (docs/theory.md §5)."""
    return s.replace(feature=downstream_feature(s))


# ---- attention matrices ----------------------------------------------------------------------
def init_attention(s: Setting, omega: float, rng: np.random.Generator) -> np.ndarray:
    """Realistic initialisation (Parametrization 3.1): Â_ij ~ N(0, ω²) (i ≠ j), Â_ii = β.  → (D, D)."""
    A = rng.normal(0.0, omega, size=(s.D, s.D))
    np.fill_diagonal(A, s.beta)
    return A


def oracle_attention(s: Setting, gap: float = 10.0) -> np.ndarray:
    """A reference block Â (Lemma 4.1's form): in-set logits γ = β (equal to the diagonal, so each
    patch averages its whole set) and cross-set logits ρ = β − gap; S_ij ≈ 1/C in-set."""
    return model.symmetric_attention(s, s.beta, s.beta - gap)


def pretrain(s: Setting, N: int = 16384, eta: float = 10.0, steps: int = 1200, omega: float = 1e-3,
             seed: int = 0, dtype: str = "float32"):
    """Pre-train (A, v) by realistic GD on the upstream task with ``theorydyn.simulate``.

    Returns the simulate result (``res.A`` is the Â to transfer; ``res.trajectory`` the record).
    """

    return simulate(s, N=N, eta=eta, steps=steps, omega=omega, seed=seed, record_every=max(1, steps // 4),
                    dtype=dtype)


# ---- training of ṽ with Â frozen (the fine-tuning problem (Ẽ)) --------------------------------
def risk_and_grad_v(s: Setting, S: np.ndarray, v: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Risk (Ẽ) and ∇_v for a fixed score matrix S = softmax(Â/τ) (docs/theory.md §2, the ∇_v formula).

    The products with X use stacked matmul / einsum rather than one large BLAS call: at the small
    Ñ of fine-tuning a threaded BLAS gemv costs more in thread start-up than in arithmetic.
    """
    y = np.asarray(y, dtype=np.float64)
    U = X @ v  # (N, D)
    H = U @ S.T
    m = y * model.activation(s, H).sum(axis=1)
    r = float(np.mean(model.logistic_loss(m)))
    G = (-y * expit(-m) / len(y))[:, None] * model.activation_grad(s, H)
    return r, np.einsum("nj,njk->k", G @ S, X)


def descend(obj: Callable[[list[np.ndarray]], tuple[float, list[np.ndarray]]], params: list[np.ndarray],
            eta: float, steps: int) -> tuple[list[np.ndarray], float, int]:
    """GD with step η, halved (up to 40 times) whenever a step would raise the risk or leave the
    finite range: with the cubic activation a fixed large step can jump to |v| ~ 1e100 in a few
    steps once margins grow, so each step is accepted only if the risk does not increase.
    Stops early when no halving decreases the risk (a numerical stationary point) or the risk is 0.

    ``obj(params)`` → (risk, grads). Returns (params, final risk, steps taken).
    """
    r, grads = obj(params)
    t = 0
    for t in range(1, steps + 1):
        step = eta
        for _ in range(40):
            trial = [p - step * g for p, g in zip(params, grads)]
            with np.errstate(over="ignore", invalid="ignore"):
                r2, g2 = obj(trial)
            if np.isfinite(r2) and r2 <= r and all(np.all(np.isfinite(g)) for g in g2):
                break
            step *= 0.5
        else:
            return params, r, t - 1
        params, r, grads = trial, r2, g2
        if r == 0.0:
            break
    return params, r, t


def fit_v(s: Setting, A: np.ndarray, X: np.ndarray, y: np.ndarray, omega: float = 1e-3, eta: float = 10.0,
          steps: int = 300, seed: int = 0, method: str = "gd") -> np.ndarray:
    """Train ṽ alone with Â frozen, from ṽ(0) ~ N(0, ω² I_d) (Section 5, fine-tuning (Ẽ)).

    method ``"gd"``: ``steps`` GD steps of size η, safeguarded by :func:`descend`;
    ``"lbfgs"``: scipy L-BFGS with at most ``steps`` iterations. Returns ṽ: (d,).
    """
    S = model.attention(s, A)
    v = np.random.default_rng(seed).normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)
    if method == "lbfgs":
        with np.errstate(over="ignore", invalid="ignore"):
            res = minimize(lambda w: risk_and_grad_v(s, S, w, X, y), v, jac=True, method="L-BFGS-B",
                           options={"maxiter": steps})
        return res.x
    if method != "gd":
        raise ValueError(f"method must be 'gd' or 'lbfgs', got {method!r}")

    def obj(p):
        r, g = risk_and_grad_v(s, S, p[0], X, y)
        return r, [g]

    return descend(obj, [v], eta, steps)[0][0]


def fit_scratch(s: Setting, X: np.ndarray, y: np.ndarray, omega: float = 1e-3, eta: float = 10.0,
                steps: int = 1200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Train A (off-diagonal) and v together on the Ñ samples from the realistic initialisation
    (the upstream algorithm with only the downstream data), by the safeguarded GD of
    :func:`descend`.  → (A, v)."""
    rng = np.random.default_rng(seed)
    A = init_attention(s, omega, rng)
    v = rng.normal(0.0, omega, size=s.d)
    X = np.asarray(X, dtype=np.float64)

    def obj(p):
        r, gA, gv = model.risk_and_grad(s, p[0], p[1], X, y)
        return r, [gA, gv]

    A, v = descend(obj, [A, v], eta, steps)[0]
    return A, v


# ---- the setting across D ------------------------------------------------------------------------
Q_RULES = ("keep", "count")


def setting_at(s: Setting, D: int, q_rule: str = "keep") -> Setting:
    """``s`` at another number of patches D, with C, p, ν, β, τ kept; d = D and σ² = 1/d re-derived
    when ``s`` used those defaults (Simplification 3.1, ‖ξ‖ ≈ ‖w*‖). An explicit partition cannot move
    to another D, so it becomes ``"blocks"``.

    The q rule is explicit:

    * ``"keep"``: q unchanged (the upstream checks' rule: only D changes). The number of spurious
      ±w* patches, q(D − C), then grows with D, and so does the difficulty of the task itself.
    * ``"count"``: q(D − C) = s.q (s.D − C) = K kept — the expected number of ±w* patches outside
      the signal set, i.e. Assumption 2's q = poly(C)/D. The best accuracy reachable with patch
      association is then the same at every D (the transfer experiment's rule, module docstring).
      ValueError when the new q exceeds 1 (D too small for that K).
    """
    if q_rule not in Q_RULES:
        raise ValueError(f"q_rule must be one of {Q_RULES}, got {q_rule!r}")
    q = s.q if q_rule == "keep" else s.q * (s.D - s.C) / (D - s.C)
    if q > 1:
        raise ValueError(f"q_rule='count': q(D−C) = {s.q * (s.D - s.C):g} needs D − C ≥ {s.q * (s.D - s.C):g}, "
                         f"got D={D} (q would be {q:.3g} > 1)")
    kw = dict(d=None if s.d == s.D else s.d, sigma2=None if s.sigma2 == 1.0 / s.d else s.sigma2)
    part = s.partition if isinstance(s.partition, str) else "blocks"
    return Setting(D=D, C=s.C, q=q, p=s.p, nu=s.nu, beta=s.beta, tau=s.tau, partition=part,
                   partition_seed=s.partition_seed, **kw)


def with_count(s: Setting, K: float) -> Setting:
    """``s`` with q = K / (D − C): K expected ±w* patches outside the signal set."""
    return s.replace(q=K / (s.D - s.C))


# ---- population ceilings (exact up to Monte Carlo over set counts) ------------------------------------
#: The α grid of :func:`ceiling`: wide, because at init h = α(Λ − Ξ) z_i + α Ξ T with Λ − Ξ ≈ (e^β − 1)/D,
#: so the cubic regime needs α of order D.
ALPHAS = tuple(np.geomspace(1e-2, 1e4, 97))


def tie_tolerance(s: Setting, alpha: float) -> float:
    """|F| below this is an exact tie up to rounding: D · 1e-10 · σ(α) bounds the rounding error of a
    sum of D terms of size ≤ σ(α) (|h| ≤ α since rows of S sum to 1 and |z| ≤ 1)."""
    return 1e-10 * s.D * (alpha**s.p + s.nu * alpha)


def ceiling(s: Setting, gamma: float, rho: float, alphas: Sequence[float] = ALPHAS, n_samples: int = 20000,
            seed: int = 0) -> tuple[float, float]:
    """max over α of the population accuracy against f of model (T) with the three-value attention
    (β, γ, ρ) and v = α w, by Monte Carlo over ``n_samples`` draws of the feature values z
    (docs/theory.md §3: with v ∥ w the noise drops out of F exactly, and F is evaluated in O(L) per
    sample by ``reduced.forward_counts``). An exact tie F = 0 counts as an error (docs/theory.md,
    conventions: the paper's Pr[f F ≤ 0]; at init, F = 0 whenever Σ_j z_j = 0).

    ``gamma = β, rho = β − 10`` is the block attention (a*: the best with patch association);
    ``gamma = rho = 0`` is the expected attention at initialisation. The maximum is over v ∥ w and
    over the α grid only: a reference, not a proof of optimality over all v.
    Returns (accuracy, best α)."""

    _, _, z = data.sample_z(s, n_samples, np.random.default_rng(seed))
    f = data.labelling_from_z(s, z)
    dec = f != 0
    z, sf = z[dec], np.sign(f[dec])
    best = (-1.0, float("nan"))
    for a in alphas:
        F = forward_counts(s, float(a), float(gamma), float(rho), z)
        tie = np.abs(F) <= tie_tolerance(s, float(a))
        acc = float(np.mean(np.where(tie, False, np.sign(F) == sf)))
        if acc > best[0]:
            best = (acc, float(a))
    return best


def block_ceiling(s: Setting, n_samples: int = 20000, seed: int = 0) -> float:
    """a*(s): :func:`ceiling` of the block attention (in-set logits β, cross-set β − 10)."""
    return ceiling(s, s.beta, s.beta - 10.0, n_samples=n_samples, seed=seed)[0]


def linear_reference(s: Setting, n_samples: int = 200_000, seed: int = 0) -> float:
    """Population accuracy against f of the symmetric linear rule sign(Σ_j ⟨w, X_j⟩) (the noise is ⟂ w,
    so this is sign(Σ_j z_j)); a tie counts as an error (as in :func:`ceiling`). Theorem 3.1's kind of classifier."""
    rng = np.random.default_rng(seed)
    right = total = 0
    for a in range(0, n_samples, 20000):  # chunks: z is (n, D)
        _, _, z = data.sample_z(s, min(20000, n_samples - a), rng)
        f = data.labelling_from_z(s, z)
        T = z.astype(np.int64).sum(axis=1)
        dec = f != 0
        right += float(np.sum(np.where(T[dec] == 0, False, np.sign(T[dec]) == np.sign(f[dec]))))
        total += int(dec.sum())
    return right / total


# ---- pre-trained attentions, cached ------------------------------------------------------------------
def _setting_tag(s: Setting) -> str:
    """Names a cached attention: the setting, and the numerics version (so a change of the solvers'
    numbers never reuses an attention computed by older code)."""
    part = s.partition if isinstance(s.partition, str) else "explicit"
    return (f"D{s.D}_C{s.C}_d{s.d}_q{s.q:.6g}_nu{s.nu:g}_beta{s.beta:g}_tau{s.tau:g}_{part}{s.partition_seed}"
            f"_feat{s.feature if isinstance(s.feature, int) else 'vec'}_v{NUMERICS_VERSION}")


def _cache_key(s: Setting, N: int, steps: int, eta: float, omega: float, seed: int) -> str:
    return f"upstream_{_setting_tag(s)}_N{N}_steps{steps}_eta{eta:g}_omega{omega:g}_seed{seed}.npz"


def flow_s_max(D: int) -> float:
    """Horizon of the idealized pre-training: 2·10⁴·max(1, D/64)^1.5 (past Event III for C = 4, K = 8)."""
    return 2.0e4 * max(1.0, D / 64) ** 1.5


def flow_attention(s: Setting, s_max: float | None = None, n_samples: int = 2000, seed: int = 0,
                   cache: str | Path | None = None) -> tuple[float, float, dict]:
    """(γ, ρ, info) at the end of the reduced gradient flow from the idealized init (Theorem 4.1's
    population GD, docs/theory.md §3), read from / written to ``cache`` (.npz keyed by setting and
    options). info: alpha, err_f (population, against f), T2, status, s_max, cached."""
    s_max = flow_s_max(s.D) if s_max is None else s_max
    path = (Path(cache) / f"flow_{_setting_tag(s)}_smax{s_max:g}_n{n_samples}_seed{seed}.npz"
            if cache is not None else None)
    if path is not None and path.exists():
        z = np.load(path, allow_pickle=False)
        info = {k: z[k].item() for k in z.files}
        info["cached"] = True
        return float(info.pop("gamma")), float(info.pop("rho")), info

    res = integrate(s, method="flow", s_max=s_max, n_samples=n_samples, seed=seed, n_points=40)
    last = res.trajectory.iloc[-1]
    info = dict(gamma=float(last["gamma"]), rho=float(last["rho"]), alpha=float(last["alpha"]),
                err_f=float(last["err_f"]), T2=float(res.phases.T2 if res.phases.T2 is not None else np.nan),
                status=str(res.status), s_max=float(last["s"]))
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **{k: np.asarray(v) for k, v in info.items()})
    info["cached"] = False
    return float(info.pop("gamma")), float(info.pop("rho")), info


def pretrained_attention(s: Setting, N: int, steps: int, eta: float, omega: float, seed: int = 0,
                         cache: str | Path | None = None) -> tuple[np.ndarray, dict]:
    """Â pre-trained upstream by finite-sample GD (:func:`pretrain`), read from / written to ``cache``
    (an .npz per setting and options). Returns (Â, info) with info: status, steps, test_err_f,
    association (Definition 2.2, own sets), wall_s, cached."""
    path = Path(cache) / _cache_key(s, N, steps, eta, omega, seed) if cache is not None else None
    if path is not None and path.exists():
        z = np.load(path, allow_pickle=False)
        info = {k: z[k].item() for k in z.files if k != "A"}
        info["cached"] = True
        return np.array(z["A"]), info
    t = time.perf_counter()
    res = pretrain(s, N=N, eta=eta, steps=steps, omega=omega, seed=seed)
    last = res.trajectory.iloc[-1]
    info = dict(status=str(res.status), steps=int(last["step"]), test_err_f=float(last["err_f"]),
                association=model.association(s, res.A), wall_s=time.perf_counter() - t)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, A=res.A, **{k: np.asarray(v) for k, v in info.items()})
    info["cached"] = False
    return res.A, info


def other_partition(s: Setting) -> Setting:
    """``s`` with a random partition (seed + 1): the sets an 'other-partition' Â associates."""
    return s.replace(partition="random", partition_seed=s.partition_seed + 1)


# ---- evaluation ------------------------------------------------------------------------------
@dataclass(frozen=True)
class TestSet:
    """A fresh downstream test set in projected form (module docstring): z: (N, D) feature values,
    g: (N, D) standard normals for the noise projections, y (N,), f (N,) the labelling function."""

    z: np.ndarray
    g: np.ndarray
    y: np.ndarray
    f: np.ndarray

    @classmethod
    def draw(cls, s: Setting, N: int, seed: int) -> "TestSet":
        rng = np.random.default_rng(seed)
        y, _, z = data.sample_z(s, N, rng)
        g = rng.standard_normal((N, s.D))
        return cls(z.astype(np.float64), g, y.astype(np.float64), data.labelling_from_z(s, z))


def outputs_v(s: Setting, S: np.ndarray, v: np.ndarray, test: TestSet) -> np.ndarray:
    """F_{A,v} on the test set, with S = softmax(A/τ): u = a z + σ‖P⊥v‖ g, F = Σ_i σ((u Sᵀ)_i).  → (N,)."""
    w = s.w_star
    a = float(v @ w)
    b = math.sqrt(s.sigma2) * float(np.linalg.norm(v - a * w))
    U = a * test.z + b * test.g
    with np.errstate(over="ignore", invalid="ignore"):
        return model.activation(s, U @ S.T).sum(axis=1)


def outputs_linear(s: Setting, W: np.ndarray, b0: float, test: TestSet) -> np.ndarray:
    """Σ_j ⟨W_j, X_j⟩ + b0 on the test set (W: (D, d)): Σ_j a_j z_j + σ(Σ_j ‖P⊥W_j‖²)^{1/2} g + b0.  → (N,)."""
    w = s.w_star
    a = W @ w
    sd = math.sqrt(s.sigma2) * float(np.linalg.norm(W - a[:, None] * w[None, :]))
    return test.z @ a + sd * test.g[:, 0] + b0


def accuracies(F: np.ndarray, test: TestSet) -> dict[str, float]:
    """acc_f = 1 − Pr[f F ≤ 0 | f ≠ 0] (Theorem 5.1's quantity) and acc_y = Pr[y F > 0].

    A non-finite output (overflow of σ, inf − inf) counts as an error, never as a success."""
    F = np.where(np.isfinite(F), F, 0.0)
    e = data.errors(F, test.y, test.f)
    return {"acc_f": 1.0 - e["err_f"], "acc_y": 1.0 - e["err_y"]}


# ---- experiments -----------------------------------------------------------------------------
@dataclass(frozen=True)
class TransferOptions:
    """Sizes and hyper-parameters of one transfer experiment.

    Ns: the log grid of Ñ (from 1). Per (D, method) the grid stops at the largest Ñ whose training
    set Ñ·D·d fits ``budget`` (``budget_scratch`` for scratch, which also trains A), and ``extra``
    grid points after the seed-mean accuracy first reaches the target (the rows beyond are not
    needed for the crossing). count: K = q(D − C) (None: keep q, the old rule). eps: target =
    a*(D) − eps. sim_max_D / scratch_max_D / logreg_max_D: ``pretrained-sim`` / ``scratch`` /
    ``logreg`` only up to this D (their cost grows like D³, and D·d features for logreg). baseline_max_N caps ``init`` and ``other-partition``, whose population
    ceiling lies below the target (their rows can only give lower bounds), and ``pretrained-sim``.
    upstream_steps · eta = 2·10⁴ by default: the finite-sample GD runs to the same time s = η·t as
    the reduced flow's horizon at D ≤ 64, so the two pre-trained Â are comparable."""

    Ns: tuple[int, ...] = tuple(2 ** k for k in range(11))
    seeds: int = 5
    N_test: int = 8192
    omega: float = 1e-3
    eta: float = 10.0
    steps_v: int = 300
    steps_scratch: int = 1200
    method: str = "gd"
    logreg_max_N: int = 4096
    scratch_max_N: int = 1024
    baseline_max_N: int = 256
    scratch_max_D: int = 32
    logreg_max_D: int = 256
    count: float | None = 8.0
    eps: float = 0.05
    budget: int = 1 << 20
    budget_scratch: int = 1 << 20
    extra: int = 2
    sim_max_D: int = 32
    upstream_N: int = 8192
    upstream_steps: int = 2000
    flow_n_samples: int = 2000
    test_seed: int = 10_000
    ceiling_samples: int = 20000

    def __post_init__(self) -> None:
        if not self.Ns or any(int(n) < 1 for n in self.Ns) or list(self.Ns) != sorted(set(self.Ns)):
            raise ValueError(f"Ns must be increasing positive integers, got {self.Ns}")
        if self.seeds < 1:
            raise ValueError(f"seeds must be >= 1, got {self.seeds}")
        if not 0 < self.eps < 0.5:
            raise ValueError(f"eps must lie in (0, 0.5), got {self.eps}")
        if self.count is not None and not self.count > 0:
            raise ValueError(f"count must be > 0 or None, got {self.count}")
        if self.method not in ("gd", "lbfgs"):
            raise ValueError(f"method must be 'gd' or 'lbfgs', got {self.method!r}")

    def max_N(self, method: str, s: Setting) -> int:
        """The largest Ñ tried for ``method`` at setting ``s`` (the cost cap, module docstring)."""
        cap = {"scratch": self.scratch_max_N, "logreg": self.logreg_max_N, "init": self.baseline_max_N,
               "other-partition": self.baseline_max_N, "pretrained-sim": self.baseline_max_N}.get(method, max(self.Ns))
        budget = self.budget_scratch if method == "scratch" else self.budget
        fit = [n for n in self.Ns if n <= cap and n * s.D * s.d <= budget]
        return max(fit) if fit else min(self.Ns)


def _forward(s: Setting, A: np.ndarray, v: np.ndarray, X: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return model.forward(s, A, v, X)


def _progress(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def train_seed(seed: int, N: int) -> int:
    """Seed of the Ñ training samples of repeat ``seed`` (the same data for every method)."""
    return 1000 * seed + N


def compute_row(sd: Setting, method: str, A: np.ndarray | None, N: int, seed: int, opts: TransferOptions,
                test: TestSet) -> dict[str, float]:
    """Train one method on the Ñ = ``N`` downstream samples of repeat ``seed`` and test it.

    Frozen methods train ṽ alone (:func:`fit_v`, ṽ(0) from ``seed``); ``scratch`` trains A and v
    (:func:`fit_scratch`); ``logreg`` fits :func:`theorydyn.logreg.fit_logreg_cv`.
    Returns {acc_f, acc_y, wall_s}."""
    t = time.perf_counter()
    tr = data.sample(sd, N, seed=train_seed(seed, N))
    if method in FROZEN:
        v = fit_v(sd, A, tr.X, tr.y, opts.omega, opts.eta, opts.steps_v, seed=seed, method=opts.method)
        F = outputs_v(sd, model.attention(sd, A), v, test)
    elif method == "scratch":
        A2, v = fit_scratch(sd, tr.X, tr.y, opts.omega, opts.eta, opts.steps_scratch, seed=seed)
        F = outputs_v(sd, model.attention(sd, A2), v, test)
    elif method == "logreg":
        lr = fit_logreg_cv(tr.X, tr.y, seed=seed)
        F = outputs_linear(sd, lr.w.reshape(sd.D, sd.d), lr.b, test)
    else:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return dict(**accuracies(F, test), wall_s=time.perf_counter() - t)


def row_key(D: int, method: str, N: int, seed: int, config: dict) -> str:
    """The store key of one result: a hash of everything it depends on, the numerics version included
    (as for a scan's rows: results of older numerics are recomputed, never reused)."""
    blob = json.dumps(dict(D=D, method=method, N=N, seed=seed, config=config, numerics=NUMERICS_VERSION),
                      sort_keys=True, default=str)
    return hashlib.sha1(blob.encode()).hexdigest()[:20]


def _row_config(sd: Setting, method: str, opts: TransferOptions, source: dict) -> dict:
    keep = ("N_test", "omega", "eta", "test_seed")
    cfg = {k: getattr(opts, k) for k in keep}
    if method in FROZEN:
        cfg.update(steps_v=opts.steps_v, fit=opts.method)
    if method == "scratch":
        cfg.update(steps_scratch=opts.steps_scratch)
    return dict(setting=sd.to_dict(), method_opts=cfg, source=source)


def _store(out: str | Path | None):

    if out is None:
        return _MemoryStore()
    Path(out).mkdir(parents=True, exist_ok=True)
    return ResultStore(Path(out) / "transfer_rows.csv")


class _MemoryStore:
    """The in-memory stand-in for a ResultStore (``out=None``)."""

    def __init__(self):
        self.rows: dict[str, dict] = {}

    def __contains__(self, key):
        return key in self.rows

    def append(self, row):
        self.rows[row["key"]] = {k: str(v) for k, v in row.items()}


def attentions_at(s_up: Setting, D: int, methods: Sequence[str], opts: TransferOptions,
                  cache: str | Path | None, progress=None) -> tuple[dict[str, np.ndarray], dict[str, dict], list[dict]]:
    """The frozen Â of each frozen method at D, with their provenance (part of the row keys) and a
    table of upstream diagnostics. ``s_up`` is the upstream setting at D."""
    attn, source, ups = {}, {}, []
    need_flow = any(m in methods for m in ("pretrained", "other-partition"))
    if need_flow:
        g, r, info = flow_attention(s_up, n_samples=opts.flow_n_samples, cache=cache)
        src = dict(kind="reduced-flow", s_max=info["s_max"], n_samples=opts.flow_n_samples, gamma=round(g, 10),
                   rho=round(r, 10))
        ups.append(dict(D=D, method="pretrained", gamma=g, rho=r, **{k: info[k] for k in ("alpha", "err_f", "T2", "status",
                                                                                          "s_max", "cached")}))
        if progress:
            progress(f"upstream D={D}: reduced flow to s={info['s_max']:g}: γ={g:.3f}, ρ={r:.4f}, err_f={info['err_f']:.4f}"
                     f"{' (cached)' if info['cached'] else ''}")
        if "pretrained" in methods:
            attn["pretrained"], source["pretrained"] = model.symmetric_attention(s_up, g, r), src
        if "other-partition" in methods:
            attn["other-partition"] = model.symmetric_attention(other_partition(s_up), g, r)
            source["other-partition"] = dict(src, partition_seed=s_up.partition_seed + 1)
    if "pretrained-sim" in methods and D <= opts.sim_max_D:
        A, info = pretrained_attention(s_up, opts.upstream_N, opts.upstream_steps, opts.eta, opts.omega, 0, cache)
        ok = not str(info["status"]).startswith("diverged")
        if ok:  # a diverged pre-training is no pre-trained Â: the cross-check is left out at this D
            attn["pretrained-sim"] = A
            source["pretrained-sim"] = dict(kind="simulate", N=opts.upstream_N, steps=opts.upstream_steps,
                                            eta=opts.eta, omega=opts.omega)
        ups.append(dict(D=D, method="pretrained-sim", err_f=info["test_err_f"], association=info["association"],
                        status=info["status"], cached=info["cached"]))
        if progress:
            progress(f"upstream D={D}: finite-sample GD N={opts.upstream_N}, {opts.upstream_steps} steps: "
                     f"{info['status']}, association {info['association']:.2f}, err_f {info['test_err_f']:.3f}"
                     f"{' (cached)' if info['cached'] else ''}{'' if ok else ' — left out'}")
    if "init" in methods:
        attn["init"] = init_attention(s_up, opts.omega, np.random.default_rng(12345))
        source["init"] = dict(kind="init", omega=opts.omega, rng=12345)
    if "oracle" in methods:
        attn["oracle"] = oracle_attention(s_up)
        source["oracle"] = dict(kind="oracle", gap=10.0)
    return attn, source, ups


def run(s: Setting, Ds: Iterable[int] = (16, 32, 64, 128, 256), opts: TransferOptions = TransferOptions(),
        upstream_N: int | None = None, upstream_steps: int | None = None, upstream_eta: float | None = None,
        methods: Sequence[str] = ("pretrained", "pretrained-sim", "init", "other-partition", "scratch", "logreg"),
        targets: Sequence[float] | None = None, out: str | Path | None = None,
        progress: Callable[[str], None] | None = _progress, cache: str | Path | None = None,
        compute: Callable[..., dict] = compute_row, B: int = 2000):
    """The whole transfer experiment, resumable.

    For each D: the upstream setting :func:`setting_at` (q rule ``"count"`` with K = ``opts.count``),
    its a*(D) and target a*(D) − ε, the frozen attentions (:func:`attentions_at`), then for each
    method the log grid of Ñ (with the caps of :class:`TransferOptions`), ``opts.seeds`` repeats each.
    Every finished (D, method, Ñ, seed) is appended at once to ``out/transfer_rows.csv`` keyed by
    :func:`row_key`; rows already there are read, not recomputed. ``compute`` (default
    :func:`compute_row`) is the per-row work (a parameter so that tests can interrupt it); ``B``
    bootstrap replicates for the intervals.
    ``upstream_*`` override ``opts.upstream_*``; ``targets`` is accepted for compatibility and
    ignored (the target is a*(D) − ε).

    Returns (raw, summary, target_df, slopes, upstream) DataFrames; with ``out`` also writes the
    CSVs and the two figures there (:func:`report`).
    """
    del targets
    repl = {k: v for k, v in (("upstream_N", upstream_N), ("upstream_steps", upstream_steps)) if v is not None}
    if upstream_eta is not None and upstream_eta != opts.eta:
        repl["eta"] = upstream_eta
    if repl:
        from dataclasses import replace

        opts = replace(opts, **repl)
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise ValueError(f"methods must be among {METHODS}, got {bad}")
    base = with_count(s, opts.count) if opts.count is not None else s
    rule = "count" if opts.count is not None else "keep"
    if cache is None and out is not None:
        cache = Path(out) / "upstream_cache"
    store = _store(out)
    rows, ups, levels = [], [], []
    for D in Ds:
        s_up = setting_at(base, D, rule)
        sd = downstream_setting(s_up)
        a_star = block_ceiling(s_up, n_samples=opts.ceiling_samples)
        target = a_star - opts.eps
        levels.append(dict(D=D, q=s_up.q, K=s_up.q * (D - s_up.C), a_star=a_star, target=target,
                           init_ceiling=ceiling(s_up, 0.0, 0.0, n_samples=opts.ceiling_samples)[0],
                           linear_reference=linear_reference(s_up, n_samples=10 * opts.ceiling_samples)))
        attn, source, up = attentions_at(s_up, D, methods, opts, cache, progress)
        ups += up
        test = TestSet.draw(sd, opts.N_test, seed=opts.test_seed)
        for method in methods:
            if ((method in FROZEN and method not in attn) or (method == "scratch" and D > opts.scratch_max_D)
                    or (method == "logreg" and D > opts.logreg_max_D)):
                continue  # pretrained-sim above sim_max_D, scratch / logreg above their max D
            config = _row_config(sd, method, opts, source.get(method, {}))
            n_max = opts.max_N(method, sd)
            after = None  # grid points done since the seed-mean first reached the target
            t0 = time.perf_counter()
            for N in [n for n in opts.Ns if n <= n_max]:
                accs = []
                for seed in range(opts.seeds):
                    key = row_key(D, method, N, seed, config)
                    if key in store:
                        r = store.rows[key]
                        res = dict(acc_f=float(r["acc_f"]), acc_y=float(r["acc_y"]), wall_s=float(r["wall_s"]))
                    else:
                        res = {k: float(v) for k, v in compute(sd, method, attn.get(method), N, seed, opts,
                                                               test).items()}
                        store.append(dict(key=key, D=D, method=method, N_tilde=N, seed=seed, **res))
                    rows.append(dict(D=D, method=method, N_tilde=N, seed=seed, **res))
                    accs.append(res["acc_f"])
                if after is not None:
                    after += 1
                elif np.mean(accs) >= target:
                    after = 0
                if after is not None and after >= opts.extra:
                    break
            if progress:
                progress(f"transfer D={D} {method}: Ñ ≤ {N} ({time.perf_counter() - t0:.0f} s)")
    raw = pd.DataFrame(rows, columns=["D", "method", "N_tilde", "seed", "acc_f", "acc_y", "wall_s"])
    levels = pd.DataFrame(levels)
    upstream = pd.DataFrame(ups)
    summary, tgt, slopes = report(raw, levels, out, B=B)
    if out is not None:
        upstream.to_csv(Path(out) / "transfer_upstream.csv", index=False)
        levels.to_csv(Path(out) / "transfer_levels.csv", index=False)
    return raw, summary, tgt, slopes, upstream


# ---- analysis: crossings, bounds, slopes ---------------------------------------------------------------
def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean, std, count and 95% t-interval over seeds of acc_f and acc_y per (D, method, Ñ)."""
    from scipy.stats import t as student_t

    g = df.groupby(["D", "method", "N_tilde"], sort=True)
    out = g[["acc_f", "acc_y"]].agg(["mean", "std", "count"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    out = out.reset_index()
    for c in ("acc_f", "acc_y"):
        n = out[f"{c}_count"].to_numpy(float)
        half = np.where(n > 1, student_t.ppf(0.975, np.maximum(n - 1, 1)) * out[f"{c}_std"].fillna(0) / np.sqrt(n), np.nan)
        out[f"{c}_ci_low"], out[f"{c}_ci_high"] = out[f"{c}_mean"] - half, out[f"{c}_mean"] + half
    return out


def crossing(N: np.ndarray, acc: np.ndarray, target: float) -> tuple[float, float, str]:
    """Where the curve acc(Ñ) first reaches ``target``, as an interval (lo, hi) of Ñ and a kind:

    * ``"value"``: crossed between two grid points, interpolated linearly in log Ñ (lo = hi), or
      reached at Ñ = 1 (no fewer samples exist);
    * ``"upper"``: reached already at the smallest Ñ > 1: the need is in [1, Ñ_min];
    * ``"lower"``: never reached: the need exceeds the largest Ñ tried, (Ñ_max, ∞).
    N: increasing grid, acc: same length."""
    N, acc = np.asarray(N, float), np.asarray(acc, float)
    if len(N) == 0 or len(N) != len(acc) or np.any(np.diff(N) <= 0) or N[0] < 1:
        raise ValueError("N must be a non-empty increasing grid of values >= 1 matching acc")
    hit = np.flatnonzero(acc >= target)
    if len(hit) == 0:
        return float(N[-1]), math.inf, "lower"
    k = hit[0]
    if k == 0:
        return (1.0, 1.0, "value") if N[0] == 1 else (1.0, float(N[0]), "upper")
    x0, x1 = np.log(N[k - 1]), np.log(N[k])
    v = float(np.exp(x0 + (target - acc[k - 1]) / (acc[k] - acc[k - 1]) * (x1 - x0)))
    return v, v, "value"


def _curve_matrix(g: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(N grid, acc matrix (n_seeds, n_N)) of one (D, method), seeds present at every Ñ only."""
    piv = g.pivot_table(index="seed", columns="N_tilde", values="acc_f").sort_index(axis=1)
    return piv.columns.to_numpy(float), piv.to_numpy(float)


def _boot(n_seeds: int, B: int, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, n_seeds, size=(B, n_seeds))


def target_table(raw: pd.DataFrame, levels: pd.DataFrame, B: int = 2000, seed: int = 0,
                 _reps: dict | None = None) -> pd.DataFrame:
    """Ñ_target per (D, method) from the seed-mean curve (:func:`crossing`), with a 95% bootstrap
    interval over seeds (percentile; a replicate that is censored widens the interval to its
    bound, so an interval end can be 1 or ∞). ``levels`` gives the target per D.

    Columns: D, method, target, N_target (point; NaN unless kind == "value"), lo, hi (the interval
    the censoring allows), kind, ci_low, ci_high, N_min, N_max, seeds, max_acc (best seed-mean)."""
    rng = np.random.default_rng(seed)
    tmap = dict(zip(levels["D"], levels["target"]))
    rows = []
    for (D, method), g in raw.groupby(["D", "method"], sort=True):
        N, M = _curve_matrix(g)
        M = M[~np.isnan(M).any(axis=1)]
        target = tmap[D]
        lo, hi, kind = crossing(N, M.mean(axis=0), target)
        idx = _boot(len(M), B, rng)
        reps = np.array([crossing(N, M[i].mean(axis=0), target)[:2] for i in idx])
        if _reps is not None:
            _reps[(D, method)] = reps
        rows.append(dict(D=D, method=method, target=target, N_target=lo if kind == "value" else np.nan, lo=lo, hi=hi,
                         kind=kind, ci_low=float(np.quantile(reps[:, 0], 0.025, method="lower")),
                         ci_high=float(np.quantile(reps[:, 1], 0.975, method="higher")), N_min=N[0], N_max=N[-1], seeds=len(M),
                         max_acc=float(M.mean(axis=0).max())))
    return pd.DataFrame(rows)


def slope_bounds(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """The range of least-squares slopes of y on x over all y with lo ≤ y ≤ hi (in log space; ±inf
    allowed). The slope Σ w_i y_i, w_i = (x_i − x̄)/Σ(x − x̄)², is linear in y, so its extremes sit
    at the corners: min takes lo where w > 0 and hi where w < 0, max the reverse."""
    x, lo, hi = (np.asarray(a, float) for a in (x, lo, hi))
    w = (x - x.mean()) / np.sum((x - x.mean()) ** 2)

    def dot(wv, yv):
        with np.errstate(invalid="ignore"):
            terms = np.where(wv == 0, 0.0, wv * yv)
        return float(np.sum(terms)) if np.all(np.isfinite(terms)) else (
            -math.inf if np.any(terms == -math.inf) and not np.any(terms == math.inf)
            else math.inf if np.any(terms == math.inf) and not np.any(terms == -math.inf) else math.nan)

    smin = dot(w, np.where(w > 0, lo, hi))
    smax = dot(w, np.where(w > 0, hi, lo))
    return smin, smax


def growth_fits(tgt: pd.DataFrame, reps: dict | None = None) -> pd.DataFrame:
    """Fits of log Ñ_target against log D and against log log D per method (D's with a result).

    slope_low/slope_high: the slopes allowed by the censoring at the point estimate (equal when no
    D is censored); ci_low/ci_high: 95% bootstrap interval over seeds (from ``reps``, the replicate
    intervals of :func:`target_table`), the censoring bounds applied per replicate. ``censored``
    counts the censored D's. rms: residual of the point fit (uncensored only)."""
    rows = []
    for method, g in tgt.groupby("method", sort=True):
        g = g.sort_values("D")
        if g["D"].nunique() < 2:
            continue
        D = g["D"].to_numpy(float)
        lo, hi = np.log(g["lo"].to_numpy(float)), np.log(g["hi"].to_numpy(float))
        for xname, x in (("log D", np.log(D)), ("log log D", np.log(np.log(D)))):
            smin, smax = slope_bounds(x, lo, hi)
            ci = (np.nan, np.nan)
            if reps is not None and all((d, method) in reps for d in g["D"]):
                R = [np.log(reps[(d, method)]) for d in g["D"]]  # each (B, 2)
                B = min(len(r) for r in R)
                sb = np.array([slope_bounds(x, np.array([r[b, 0] for r in R]), np.array([r[b, 1] for r in R]))
                               for b in range(B)])
                ci = (float(np.quantile(sb[:, 0], 0.025, method="lower")),
                      float(np.quantile(sb[:, 1], 0.975, method="higher")))
            rms = np.nan
            if np.all(lo == hi):
                c = np.polyfit(x, lo, 1)
                rms = float(np.sqrt(np.mean((np.polyval(c, x) - lo) ** 2)))
            rows.append(dict(method=method, x=xname, slope_low=smin, slope_high=smax, ci_low=ci[0], ci_high=ci[1],
                             censored=int((g["kind"] != "value").sum()), n_D=len(g), D_min=int(D.min()),
                             D_max=int(D.max()), rms=rms))
    return pd.DataFrame(rows)


def describe_slope(r) -> str:
    """'0.12 [−0.05, 0.30]', '≥ 0.8 [CI ≥ 0.5]' … from a :func:`growth_fits` row."""
    lo, hi = r["slope_low"], r["slope_high"]
    if lo == hi:
        est = f"{lo:.3g}"
    elif np.isinf(hi) and np.isfinite(lo):
        est = f"≥ {lo:.3g}"
    elif np.isinf(lo) and np.isfinite(hi):
        est = f"≤ {hi:.3g}"
    elif np.isfinite(lo) and np.isfinite(hi):
        est = f"in [{lo:.3g}, {hi:.3g}]"
    else:
        return "not estimable (censored at every D)"
    return f"{est}, 95% CI [{r['ci_low']:.3g}, {r['ci_high']:.3g}]"


def report(raw: pd.DataFrame, levels: pd.DataFrame, out: str | Path | None = None, B: int = 2000):
    """Summary, Ñ_target table and growth fits from the per-seed table; with ``out`` writes
    ``transfer_raw.csv``, ``transfer_summary.csv``, ``transfer_target.csv``, ``transfer_slopes.csv``,
    ``transfer_curves.png``, ``transfer_target.png``."""
    summary = summarize(raw)
    reps: dict = {}
    tgt = target_table(raw, levels, B=B, _reps=reps)
    slopes = growth_fits(tgt, reps)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, df in (("raw", raw), ("summary", summary), ("target", tgt), ("slopes", slopes)):
            df.to_csv(out / f"transfer_{name}.csv", index=False)
        _save(lambda ax: plot_curves(summary, levels, ax), out / "transfer_curves.png", panels=summary["D"].nunique())
        _save(lambda ax: plot_samples_to_target(tgt, ax[0], slopes), out / "transfer_target.png", panels=1)
    return summary, tgt, slopes


# ---- pictures (draw into given axes; the caller picks the backend) -----------------------------------
_COLORS = {m: f"C{i}" for i, m in enumerate(METHODS)}


def _save(draw: Callable, path: Path, panels: int = 1) -> Path:
    """Draw into a fresh Figure (no pyplot state, no backend choice) and write ``path``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * panels if panels > 1 else 8.0, 3.9 if panels > 1 else 6.4))
    axes = fig.subplots(1, panels, squeeze=False, sharey=True)[0]
    draw(list(axes))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return Path(path)


def plot_curves(summary: pd.DataFrame, levels: pd.DataFrame, axes: Sequence) -> None:
    """Accuracy against f (seed mean with its 95% t-interval) against Ñ (log axis), one panel per
    D (``axes``), one line per method; dotted: the target a*(D) − ε, dashed: a*(D)."""
    Ds = sorted(summary["D"].unique())
    lv = levels.set_index("D")
    for ax, D in zip(axes, Ds):
        for method, g in summary[summary["D"] == D].groupby("method", sort=False):
            g = g.sort_values("N_tilde")
            c = _COLORS.get(method)
            ax.plot(g["N_tilde"], g["acc_f_mean"], marker="o", ms=3, color=c, label=method)
            ax.fill_between(g["N_tilde"], g["acc_f_ci_low"], g["acc_f_ci_high"], color=c, alpha=0.2, lw=0)
        if D in lv.index:
            ax.axhline(lv.loc[D, "target"], color="k", lw=0.8, ls=":")
            ax.axhline(lv.loc[D, "a_star"], color="grey", lw=0.8, ls="--")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("downstream samples Ñ")
        ax.set_title(f"D = {D}" + (f", q = {lv.loc[D, 'q']:.3g}" if D in lv.index else ""), fontsize=9)
        ax.grid(alpha=0.3)
        ax.set_ylim(0.45, 1.01)
    axes[0].set_ylabel("test accuracy against f")
    handles = {}
    for ax in axes:  # methods run only at some D (scratch, pretrained-sim) still get a legend entry
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    axes[-1].legend(handles.values(), handles.keys(), fontsize=7, loc="lower right")


def plot_samples_to_target(tgt: pd.DataFrame, ax, slopes: pd.DataFrame | None = None) -> None:
    """Ñ_target against D, log-log. Filled circles with 95% bootstrap bars: a crossing. A censored
    estimate is never drawn as a value: an upward arrow from Ñ_max (never reached: Ñ_target > Ñ_max),
    a downward arrow from Ñ_min (reached at the smallest Ñ: Ñ_target ≤ Ñ_min). Methods are shifted
    slightly along D so that equal values stay visible. The legend gives the log-log slope."""
    groups = list(tgt.groupby("method", sort=True))
    for i, (method, g) in enumerate(groups):
        g = g.sort_values("D")
        c = _COLORS.get(method, f"C{i}")
        x = g["D"].to_numpy(float) * 2.0 ** (0.06 * (i - (len(groups) - 1) / 2))
        val = (g["kind"] == "value").to_numpy()
        label = method
        if slopes is not None:
            r = slopes[(slopes["method"] == method) & (slopes["x"] == "log D")]
            if len(r):
                label += f" (slope {describe_slope(r.iloc[0])})"
        y = g["lo"].to_numpy(float)
        lo_err = np.clip(y - g["ci_low"].to_numpy(float), 0, None)
        hi = g["ci_high"].to_numpy(float)
        hi_err = np.where(np.isfinite(hi), np.clip(hi - y, 0, None), 0.0)
        if val.any():
            ax.errorbar(x[val], y[val], yerr=[lo_err[val], hi_err[val]], fmt="o-", ms=4, color=c, capsize=2,
                        label=label)
            label = None
        up = (g["kind"] == "lower").to_numpy()
        down = (g["kind"] == "upper").to_numpy()
        for mask, base, sign in ((up, g["lo"].to_numpy(float), 1), (down, g["hi"].to_numpy(float), -1)):
            for xi, b in zip(x[mask], base[mask]):
                ax.annotate("", xy=(xi, b * 2.0 ** (1.2 * sign)), xytext=(xi, b),
                            arrowprops=dict(arrowstyle="->", color=c, lw=1.4))
            if mask.any():
                ax.scatter(x[mask], base[mask], marker="_", s=80, color=c, label=label)
                label = None
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("D (number of patches; q(D − C) fixed)")
    ax.set_ylabel("Ñ_target (accuracy ≥ a*(D) − ε)")
    ax.set_title("● crossing (95% CI)   ↑ not reached: Ñ_target > Ñ_max   ↓ reached at Ñ_min", fontsize=8)
    ax.grid(alpha=0.3, which="both")
    top = np.nanmax(np.where(np.isfinite(tgt["hi"]), tgt["hi"], tgt["lo"]).astype(float))
    ax.set_ylim(0.7, max(4.0, top) * 4)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1)


# ---- the ledger --------------------------------------------------------------------------------
#: Theorem 5.1's threshold on the log-log slope: a polylog (log D)^k has local log-log slope k / ln D,
#: i.e. ≈ k/4.2 at the geometric middle (D = 64) of D ∈ [16, 256]; 0.5 admits polylogs up to k ≈ 2
#: there and rejects any power law D^a with a > 0.5.
SLOPE_51 = 0.5

QUICK = dict(Ds=(16, 32, 64, 128, 256), Ns=tuple(2 ** k for k in range(9)), seeds=5, N_test=4096,
             upstream_N=4096, upstream_steps=2000, logreg_max_N=64, scratch_max_N=256, baseline_max_N=64,
             budget=1 << 19, budget_scratch=1 << 18, sim_max_D=16, scratch_max_D=16, logreg_max_D=64)
# The sizes of the reported run (pre-trained Â are cached under OUT/upstream_cache).
FULL = dict(Ds=(16, 32, 64, 128, 256), Ns=tuple(2 ** k for k in range(11)), seeds=5, N_test=8192,
            upstream_N=8192, upstream_steps=2000, logreg_max_N=1024, scratch_max_N=1024, baseline_max_N=256,
            budget=1 << 20, budget_scratch=1 << 20, sim_max_D=32, scratch_max_D=32)


def options_from(cfg: dict, **kw) -> TransferOptions:
    """TransferOptions from a QUICK/FULL-style dict (keys it does not know are ignored)."""
    names = set(TransferOptions.__dataclass_fields__)
    merged = {k: (tuple(v) if k == "Ns" else v) for k, v in cfg.items() if k in names}
    merged.update(kw)
    return TransferOptions(**merged)


def base_setting() -> Setting:
    """The transfer experiment's setting: C = 4, ν = 1/64, β = τ = 1, K = q(D − C) = 8 (module docstring)."""
    return with_count(Setting(D=64, C=4, nu=1 / 64), 8.0)
