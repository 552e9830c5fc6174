"""Numerical checks of the paper's theorems (docs/theory.md §4, §6), each returning :class:`Check` records.

* Theorem 3.1 — a generalized linear model g(X) = φ(Σ_j ⟨w_j, X_j⟩) errs: Pr[f g ≤ 0] ≥ 1/8.
  Judged inside its scope (:func:`theorem_3_1_scope`, from Assumption 2: q(D − C) > C, q ≤ 1/2,
  L ≥ 4), else OUT_OF_SCOPE. Measured: (a) the oracle projection Σ_j ⟨w*, X_j⟩, whose best-φ error
  is computed *exactly* (:func:`glm_oracle_error_exact`: the law of the L − 1 i.i.d. random sets
  as a convolution power, by DFT or set by set); (b) fitted GLMs over seeds: a logistic regression
  on z_j = ⟨w*, X_j⟩ (WLOG: components of w_j ⟂ w* only add Gaussian noise that is independent of
  (y, z), which cannot lower the Bayes error of any φ) and on the flattened X, then the best φ
  (per-bin majority of sign f). (c) A scan over D ∈ {64, 128, 256}, C ∈ {4, 8, 16}
  (:func:`theorem_3_1_scan`, figure :func:`plot_theorem_3_1_scan`): the exact error is a function
  of x = q(D − C)/C² and crosses 1/8 at x* ≈ 0.75, so the bound fails inside the scope for
  C < q(D − C) < 0.75 C² — a DEVIATES row.
* Theorem 3.2 — an explicit one-layer transformer whose positional Gram matrix PᵀP has no patch
  association (:func:`construct_theorem_3_2`), fed to model (T)'s own forward and to the
  association code that judges trained models (:func:`check_theorem_3_2`).
* Theorem 4.2 — patch association (Definition 2.2) and small test error at the end of realistic
  GD, over seeds (:func:`check_theorem_4_seeds`).
* Lemma 4.1 — exact on the enumerated population (:func:`check_lemma_4_1_population`); at finite N
  the symmetry break is a diagnostic (INFO) measured against N with its exponent
  (:func:`check_lemma_4_1_scaling`).
* Figure 2 (docs/theory.md §7) lives in :mod:`theorydyn.claims.figure2` (the paper's own
  experiment: a positional-attention ViT with learned P).

Shapes: X: (N, D, d), A: (D, D), v: (d,), P: (D, D) (column i = positional encoding p_i).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import convolve2d

from .. import data, model
from ..model import association  # Definition 2.2 (re-exported: part of this module's API)
from ..setting import Setting
from ..simulate import simulate  # the full-matrix GD simulator (docs/theory.md §4)
from ..stats import mean_ci
from ..transfer import setting_at  # the same q, ν at another D (d = D, σ² = 1/d)
from ..transfer.logreg import fit_logreg
from .check import Check, Verdict

THEOREM_3_1_BOUND = 1.0 / 8.0


# ---- patch association (Definition 2.2) ------------------------------------------------------
def topc_sets(s: Setting, M: np.ndarray, exclude_diagonal: bool = False) -> np.ndarray:
    """(D, C) indices of the C largest entries of each row of M (diagonal excluded if asked)."""
    M = np.array(M, dtype=np.float64)
    if exclude_diagonal:
        np.fill_diagonal(M, -np.inf)
    return np.argsort(-M, axis=1, kind="stable")[:, : s.C]


def offdiag_topc_miss(s: Setting, M: np.ndarray) -> float:
    """Fraction of rows i whose off-diagonal Top-C misses S(i) entirely, whichever way ties break:
    the C-th largest off-diagonal entry exceeds every in-set off-diagonal entry of the row."""
    M = np.array(M, dtype=np.float64)
    np.fill_diagonal(M, -np.inf)
    cth = -np.sort(-M, axis=1)[:, s.C - 1]
    in_max = np.where(s.in_set_mask, M, -np.inf).max(axis=1)
    return float(np.mean(cth > in_max))


# ---- Theorem 3.1 -----------------------------------------------------------------------------
def _set_law(s: Setting) -> np.ndarray:
    """Joint law of (t, Thr(t)) for one random set: K[t + C, Thr(t) + C], (2C+1, 2C+1).

    t = Σ_{i∈S} z_i is a sum of C i.i.d. values in {−1, 0, +1} with probabilities (q/2, 1−q, q/2).
    """
    C, q = s.C, s.q
    pt = np.array([1.0])
    for _ in range(C):
        pt = np.convolve(pt, [q / 2, 1 - q, q / 2])
    tv = np.arange(-C, C + 1)
    thr = data.threshold(s, tv).astype(int)
    K = np.zeros((2 * C + 1, 2 * C + 1))
    K[tv + C, thr + C] = pt
    return K


def _random_sets_law_dp(s: Setting) -> np.ndarray:
    """(L−1)-fold 2-D convolution of :func:`_set_law`, one set at a time: cost ∝ L³C⁴."""
    K = _set_law(s)
    P = np.array([[1.0]])
    for _ in range(s.L - 1):
        P = convolve2d(P, K)
    return P


def _random_sets_law_fft(s: Setting) -> np.ndarray:
    """The same law as :func:`_random_sets_law_dp` through the 2-D DFT: the law of a sum of L − 1
    i.i.d. sets is the (L−1)-th power of one set's characteristic function. On an n × n grid with
    n = 2(L−1)C + 1 (the exact support of the sum, so the circular convolution does not wrap) the
    power is exact up to rounding (~1e-16 per entry, clipped at 0). Cost ∝ (LC)² log(LC).
    """
    C, m = s.C, s.L - 1
    if m == 0:
        return np.array([[1.0]])
    n = 2 * m * C + 1
    K = _set_law(s)
    # place K with its (0, 0) offset at index 0 (negative offsets wrap to the end): a pure shift
    G = np.zeros((n, n))
    idx = np.arange(-C, C + 1) % n
    G[np.ix_(idx, idx)] = K
    P = np.fft.irfft2(np.fft.rfft2(G) ** m, s=(n, n))
    P = np.fft.fftshift(P)  # offset −mC … mC along both axes
    return np.clip(P, 0.0, None)


def glm_oracle_error_exact(s: Setting, route: str = "fft") -> dict[str, float]:
    """Exact error of the best φ on the oracle projection T = Σ_j ⟨w*, X_j⟩ (Theorem 3.1).

    Under Assumption 1, ⟨w*, X_j⟩ = z_j, so with y = +1 the projection is T = C + Σ_{m≠ℓ(X)} t_m
    and f = C + Σ_{m≠ℓ(X)} Thr(t_m), where the set sums t_m are i.i.d. over the L − 1 random sets,
    each a sum of C i.i.d. values in {−1, 0, +1} with probabilities (q/2, 1−q, q/2). The joint law
    of (Σ t_m, Σ Thr(t_m)) is the (L−1)-fold 2-D convolution of one set's law; y = −1 mirrors it.
    The best φ(T) is the majority of sign f given T, so

        Pr[f g ≤ 0] = Pr[f = 0] + Σ_t min(Pr[T=t, f>0], Pr[T=t, f<0]).

    Args:
        route: ``"fft"`` (default; the convolution power through the 2-D DFT, scales to D = 256,
            C = 16 in milliseconds) or ``"dp"`` (one convolution per set; the reference route,
            cost ∝ L³C⁴). Both are tested against exhaustive enumeration and against each other.

    Returns ``err`` (that probability), ``err_cond`` (given f ≠ 0) and ``amb`` = Pr[f = 0].
    """
    if route not in ("fft", "dp"):
        raise ValueError(f"route must be 'fft' or 'dp', got {route!r}")
    C, L = s.C, s.L
    P = _random_sets_law_fft(s) if route == "fft" else _random_sets_law_dp(s)
    R = C * (L - 1)
    vals = np.arange(-R, R + 1)
    ftot = C + vals
    pos, neg, zer = (P[:, m].sum(axis=1) for m in (ftot > 0, ftot < 0, ftot == 0))
    tt = np.arange(-C - R, C + R + 1)
    Pp, Pn, P0 = np.zeros(len(tt)), np.zeros(len(tt)), np.zeros(len(tt))
    up, down = (C + vals) - tt[0], -(C + vals) - tt[0]  # y = +1 at T, y = −1 at −T (f mirrored)
    np.add.at(Pp, up, 0.5 * pos), np.add.at(Pn, up, 0.5 * neg), np.add.at(P0, up, 0.5 * zer)
    np.add.at(Pp, down, 0.5 * neg), np.add.at(Pn, down, 0.5 * pos), np.add.at(P0, down, 0.5 * zer)
    amb = float(P0.sum())
    err = amb + float(np.minimum(Pp, Pn).sum())
    return {"err": err, "err_cond": (err - amb) / (1 - amb) if amb < 1 else float("nan"), "amb": amb}


#: Operational reading of Assumption 2's "q ≪ 1" and "C ≪ D" (see :func:`theorem_3_1_scope`).
SCOPE_Q_MAX = 0.5
SCOPE_L_MIN = 4


def theorem_3_1_scope(s: Setting, q_max: float = SCOPE_Q_MAX, L_min: int = SCOPE_L_MIN) -> str | None:
    """Whether ``s`` lies inside the assumptions of Theorem 3.1; None if it does, else the reason.

    Theorem 3.1 assumes D as in Assumption 1, and Assumption 2 (which the theorem's proof uses:
    the paper says the data is "non-linearly separable" *because of* Assumption 2's choice of q):
    d = poly(D), C = polylog(d), q = poly(C)/D, σ² = 1/d, "this implies C ≪ D and q ≪ 1", and
    "q is chosen so that there are more spurious features than informative ones (low
    signal-to-noise regime) which makes the data non-linearly separable". At a finite size this
    reads, in order:

    1. more spurious features than informative ones: the expected number of spurious ±w* patches,
       q (D − C), exceeds the C informative patches of the signal set: q (D − C) > C;
    2. q ≪ 1, read as q ≤ ``q_max`` (default 1/2: at least half of the random patches blank);
    3. C ≪ D, read as L = D / C ≥ ``L_min`` (default 4: at least three random sets per signal set;
       with q ≤ 1/2, rule 1 already implies L − 1 > 1/q ≥ 2, so this rule bites only if made stricter).

    d, σ² and the noise do not enter: the noise is orthogonal to w* and independent of (y, f), so
    it cannot change the best GLM error (module docstring). The asymptotic conditions (poly,
    polylog) have no finite-size content and are not tested.
    """
    spurious = s.q * (s.D - s.C)
    if not spurious > s.C:
        return (f"Assumption 2 (more spurious features than informative ones): q(D-C) = {spurious:.3g} "
                f"<= C = {s.C}")
    if s.q > q_max:
        return f"Assumption 2 (q << 1, read as q <= {q_max:g}): q = {s.q:.3g}"
    if s.L < L_min:
        return f"Assumption 2 (C << D, read as L = D/C >= {L_min}): L = {s.L}"
    return None


def glm_crossing(s: Setting, bound: float = None, n_grid: int = 48, q_min: float = 1e-3) -> dict[str, float]:
    """Where the exact best-GLM error of the oracle projection crosses the bound of Theorem 3.1.

    Along q ∈ [q_min, 1] at fixed (D, C) (other fields of ``s`` kept), err(q) = the conditional
    error Pr[f g ≤ 0 | f ≠ 0] of :func:`glm_oracle_error_exact`. The crossing q* is the smallest q
    with err(q) = ``bound`` (default 1/8), located on a log grid of ``n_grid`` points and refined by
    Brent's method on the exact function (no interpolation error beyond 1e-12 in q).

    Returns q_star, x_star = q*(D − C)/C², spurious_star = q*(D − C), err_at_1 (the error at q = 1);
    q_star is nan when err(q) < bound for every q ≤ 1 (the bound fails at this (D, C) for any q).
    """
    from scipy.optimize import brentq

    bound = THEOREM_3_1_BOUND if bound is None else bound

    def err(q: float) -> float:
        return glm_oracle_error_exact(s.replace(q=float(q)))["err_cond"] - bound

    qs = np.geomspace(q_min, 1.0, n_grid)
    e = np.array([err(q) for q in qs])
    above = np.flatnonzero(e >= 0)
    out = dict(D=s.D, C=s.C, err_at_1=float(e[-1] + bound), q_star=float("nan"), x_star=float("nan"),
               spurious_star=float("nan"))
    if len(above) and above[0] > 0:
        k = above[0]
        q_star = float(brentq(err, qs[k - 1], qs[k], xtol=1e-12))
        out.update(q_star=q_star, x_star=q_star * (s.D - s.C) / s.C**2, spurious_star=q_star * (s.D - s.C))
    elif len(above) and above[0] == 0:
        out.update(q_star=q_min, x_star=q_min * (s.D - s.C) / s.C**2, spurious_star=q_min * (s.D - s.C))
    return out


SCAN_31_D = (64, 128, 256)
SCAN_31_C = (4, 8, 16)


def theorem_3_1_scan(Ds=SCAN_31_D, Cs=SCAN_31_C, n_q: int = 40, base: Setting | None = None, n_grid: int = 48):
    """The exact best-GLM error against x = q(D − C)/C², for every (D, C) with C < D.

    Returns (curves, crossings): ``curves`` a DataFrame with columns D, C, q, x, spurious =
    q(D − C), err, err_cond, amb, in_scope (:func:`theorem_3_1_scope`); ``crossings`` one row per
    (D, C) from :func:`glm_crossing` (``n_grid`` points before Brent's refinement) plus x_scope = 1/C
    (the boundary q(D − C) = C in x).
    """
    import pandas as pd

    base = base or Setting()
    rows, cross = [], []
    for C in Cs:
        for D in Ds:
            if C >= D or D % C:
                continue
            s = Setting(D=D, C=C, q=0.5, p=base.p, nu=base.nu, beta=base.beta, tau=base.tau)
            for q in np.geomspace(0.2 * C / (D - C), 1.0, n_q):
                sq = s.replace(q=float(q))
                e = glm_oracle_error_exact(sq)
                rows.append(dict(D=D, C=C, q=float(q), x=q * (D - C) / C**2, spurious=q * (D - C), **e,
                                 in_scope=theorem_3_1_scope(sq) is None))
            cross.append(dict(glm_crossing(s, n_grid=n_grid), x_scope=1.0 / C))
    return pd.DataFrame(rows), pd.DataFrame(cross)


def plot_theorem_3_1_scan(ax, curves, crossings) -> None:
    """Draw the exact best-GLM error against q(D − C)/C² into ``ax`` (one curve per (D, C)).

    The bound 1/8 is a horizontal line; each crossing x* is marked; the dotted verticals are the
    scope boundary q(D − C) = C (x = 1/C) of each C, left of which Assumption 2 does not hold.
    """
    colors = {C: c for C, c in zip(sorted(curves["C"].unique()), ("tab:blue", "tab:orange", "tab:green", "tab:red"))}
    styles = {D: ls for D, ls in zip(sorted(curves["D"].unique()), ("-", "--", ":", "-."))}
    for (D, C), g in curves.groupby(["D", "C"]):
        ax.plot(g["x"], g["err_cond"], color=colors[C], ls=styles[D], lw=1.4, label=f"D={D}, C={C}")
    for C, col in colors.items():
        ax.axvline(1.0 / C, color=col, lw=0.8, ls=(0, (1, 3)))
    for _, r in crossings.iterrows():
        if np.isfinite(r["x_star"]):
            ax.plot([r["x_star"]], [THEOREM_3_1_BOUND], "o", color=colors[int(r["C"])], ms=5, mfc="none")
    ax.axhline(THEOREM_3_1_BOUND, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("q (D − C) / C²   (expected spurious ±w* patches / C²)")
    ax.set_ylabel("exact best-GLM error Pr[f g ≤ 0 | f ≠ 0]")
    ax.set_title("Theorem 3.1: the bound 1/8 needs q(D−C) ≳ 0.75 C²; dotted: q(D−C) = C")
    ax.legend(fontsize=7, ncol=3)


def save_theorem_3_1_figure(path: str = "figures/theorem31_glm.png", csv: str | None = None):
    """Compute :func:`theorem_3_1_scan` and save its figure (and optionally the crossings as CSV)."""
    import matplotlib.pyplot as plt
    from pathlib import Path

    curves, crossings = theorem_3_1_scan()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    plot_theorem_3_1_scan(ax, curves, crossings)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    if csv:
        crossings.to_csv(csv, index=False)
    return crossings


def best_phi_error(proj_fit: np.ndarray, f_fit: np.ndarray, proj_test: np.ndarray, f_test: np.ndarray,
                   bins: int = 64) -> dict[str, float]:
    """Error of the best φ for a fixed projection: φ = per-bin majority of sign f, fitted on one
    sample and measured on another (Theorem 3.1's g = φ ∘ projection).

    Bins: the distinct values when the projection takes at most 4·bins of them (integer-valued
    oracle projections), else ``bins`` quantile bins of ``proj_fit``. An empty bin votes +1.
    Returns ``err`` = Pr[f g ≤ 0] and ``err_cond`` = Pr[f g ≤ 0 | f ≠ 0] on the test sample.
    """
    proj_fit, proj_test = np.asarray(proj_fit, float), np.asarray(proj_test, float)
    u = np.unique(np.round(proj_fit, 9))
    if len(u) <= 4 * bins:
        edges = (u[1:] + u[:-1]) / 2
    else:
        edges = np.unique(np.quantile(proj_fit, np.linspace(0, 1, bins + 1)[1:-1]))
    b_fit, b_test = np.searchsorted(edges, proj_fit), np.searchsorted(edges, proj_test)
    vote = np.bincount(b_fit, weights=np.sign(f_fit), minlength=len(edges) + 1)
    phi = np.where(vote >= 0, 1.0, -1.0)
    g = phi[b_test]
    f_test = np.asarray(f_test, float)
    wrong = f_test * g <= 0
    dec = f_test != 0
    return {"err": float(wrong.mean()), "err_cond": float(wrong[dec].mean()) if dec.any() else float("nan")}


def _glm_fitted_errors(s: Setting, N_fit: int, N_test: int, N_flat: int, lam: float,
                       rng: np.random.Generator) -> dict[str, float]:
    """One seed of the fitted GLMs of Theorem 3.1: {name: Pr[f g ≤ 0 | f ≠ 0]} (module docstring)."""
    y1, _, z1 = data.sample_z(s, N_fit, rng)
    y2, _, z2 = data.sample_z(s, N_test, rng)
    f1, f2 = data.labelling_from_z(s, z1), data.labelling_from_z(s, z2)
    half = N_fit // 2
    # Fitted to sign f (the target of Theorem 3.1); the rare f = 0 samples get label +1.
    lr = fit_logreg(z1[:half].astype(float), np.sign(f1[:half]) + (f1[:half] == 0), lam)
    errs = {"logistic regression on <w*, X_j>": best_phi_error(lr.decision(z1[half:].astype(float)), f1[half:],
                                                               lr.decision(z2.astype(float)), f2)["err_cond"]}
    if N_flat >= 4:
        b = data.sample(s, N_flat, seed=rng)
        fb = data.labelling(s, b.X)
        h = N_flat // 2
        lrx = fit_logreg(b.X[:h], np.sign(fb[:h]) + (fb[:h] == 0), lam)
        bt = data.sample(s, min(N_test, 20_000), seed=rng)
        errs["logistic regression on flattened X"] = best_phi_error(
            lrx.decision(b.X[h:]), fb[h:], lrx.decision(bt.X), data.labelling(s, bt.X))["err_cond"]
    return errs


def check_theorem_3_1(s: Setting, N_fit: int = 100_000, N_test: int = 100_000, N_flat: int = 2_000,
                      lam: float = 1e-3, seeds: int = 5, seed: int = 0, scan: bool = True) -> list[Check]:
    """Theorem 3.1 (any GLM g = φ(Σ_j ⟨w_j, X_j⟩) has Pr[f g ≤ 0] ≥ 1/8), judged inside its scope.

    Scope rule (:func:`theorem_3_1_scope`, from Assumption 2): q(D − C) > C (more spurious ±w*
    patches than informative ones), q ≤ 1/2 (q ≪ 1), L = D/C ≥ 4 (C ≪ D). Outside it every row of
    this setting is OUT_OF_SCOPE, with the assumption in the note.

    Rows:
    * the exact error of the best φ of the oracle projection Σ_j ⟨w*, X_j⟩ (:func:`glm_oracle_error_exact`;
      conditional on f ≠ 0, the stricter reading; the unconditional value is in the note). Inside
      the scope: PASS if ≥ 1/8, else DEVIATES (the bound fails inside its assumption).
    * fitted GLMs over ``seeds`` independent seeds (logistic regression on z_j = ⟨w*, X_j⟩ and on the
      flattened X, then the best φ on held-out samples), mean and 95% interval of the error and of
      the per-seed minimum over models. A fitted error is an upper bound of the best GLM's error, so
      it can only contradict the theorem: DEVIATES if the interval lies below 1/8, else PASS.
    * with ``scan``: one row per C ∈ {4, 8, 16} with the crossing x* = q*(D − C)/C² of the exact error
      through 1/8 over D ∈ {64, 128, 256} (:func:`glm_crossing`): PASS if x* ≤ 1/C (the bound holds from
      the scope's lower edge q(D − C) = C on), else DEVIATES — measured x* ≈ 0.75 > 1/C for every C, so
      the bound fails on (1/C, x*) inside the assumption.
    """
    scope = theorem_3_1_scope(s)
    params = dict(D=s.D, C=s.C, q=round(s.q, 6))
    crossing: dict[str, float] = {}

    def judge(ok: bool, what: str) -> tuple[Verdict, str]:
        if scope:
            return Verdict.OUT_OF_SCOPE, f"out of scope: {scope}. {what}"
        if ok:
            return Verdict.PASS, what
        x = s.q * (s.D - s.C) / s.C**2
        crossing.update(crossing or glm_crossing(s, n_grid=24))
        xs = crossing["x_star"]
        return Verdict.DEVIATES, (f"the bound fails inside Assumption 2: q(D-C)/C^2 = {x:.3g} is below this (D, C)'s "
                                  f"crossing x* = {xs:.3g} of the exact best-GLM error through 1/8 (the bound needs "
                                  f"q(D-C) >~ 0.75 C^2, see the scan rows). {what}")

    exact = glm_oracle_error_exact(s)
    v, note = judge(exact["err_cond"] >= THEOREM_3_1_BOUND,
                    f"unconditional Pr[f g <= 0] = {exact['err']:.4f}; Pr[f=0] = {exact['amb']:.2g}")
    checks = [Check.exact("Theorem 3.1", "exact Pr[f g <= 0 | f != 0], g = best phi of sum_j <w*, X_j>", exact["err_cond"],
                          ">= 0.125", v, params=params, note=note,
                          route="FFT power vs set-by-set DP vs exhaustive enumeration vs Monte Carlo "
                                "(tests/test_theorems.py::test_glm_oracle_error_*)")]
    per_seed: dict[str, list[float]] = {}
    for k in range(seeds):
        rng = np.random.default_rng(np.random.SeedSequence([seed, k, 31]))
        for name, e in _glm_fitted_errors(s, N_fit, N_test, N_flat, lam, rng).items():
            per_seed.setdefault(name, []).append(e)
    p_fit = dict(params, N_fit=N_fit, N_test=N_test, N_flat=N_flat, lam=lam)
    mins = np.min(np.array(list(per_seed.values())), axis=0)
    for name, vals in list(per_seed.items()) + [("min over the fitted GLMs (per seed)", list(mins))]:
        m, lo, hi = mean_ci(vals)
        v, note = judge(hi >= THEOREM_3_1_BOUND, "phi = per-bin majority of sign f, fitted on held-out samples; "
                        "a fitted error bounds the best GLM's from above")
        checks.append(Check.over_seeds("Theorem 3.1", f"Pr[f g <= 0 | f != 0], g = best phi of {name}", vals,
                                       ">= 0.125", v, params=p_fit, note=note,
                                       route="logistic regression gradient vs central differences "
                                             "(tests/test_transfer.py::test_logreg_gradient_matches_central_differences)"))
    if scan:
        cross = _crossings()
        for C, g in cross.groupby("C"):
            xs = g["x_star"].to_numpy()
            listing = ", ".join(f"D={int(r.D)}: x*={r.x_star:.3f} (q*={r.q_star:.3f}, q*(D-C)={r.spurious_star:.1f})"
                                if np.isfinite(r.x_star) else f"D={int(r.D)}: none for q <= 1 (err(1) = {r.err_at_1:.3f})"
                                for r in g.itertuples())
            fin = xs[np.isfinite(xs)]
            meas = float(fin.max()) if len(fin) else float("nan")
            # The paper's claim: the bound holds throughout the scope, whose edge is x = 1/C.
            holds = len(fin) == len(xs) and meas <= 1.0 / C
            checks.append(Check.exact(
                "Theorem 3.1 (scan)", f"C={int(C)}: largest x* = q*(D-C)/C^2 where the exact best-GLM error crosses 1/8",
                meas, f"<= 1/C = {1 / C:.4g} (the scope edge q(D-C) = C)", Verdict.PASS if holds else Verdict.DEVIATES,
                params=dict(C=int(C), D=list(SCAN_31_D)),
                note=(f"the bound fails inside Assumption 2 wherever C < q(D-C) < x* C^2 (x* ~ 0.75 measured): "
                      f"'q = poly(C)/D' needs poly(C) >~ 0.75 C^2. {listing}. "
                      "Figure: figures/theorem31.png (python -m theorydyn.figures theorem31)"),
                route="Brent's method on the exact FFT route "
                      "(tests/test_theorems.py::test_glm_crossing_is_where_the_exact_error_meets_one_eighth)"))
    return checks


def _crossings():
    import pandas as pd

    rows = []
    for C in SCAN_31_C:
        for D in SCAN_31_D:
            if C < D:
                rows.append(dict(glm_crossing(Setting(D=D, C=C, q=0.5), n_grid=24), x_scope=1.0 / C))
    return pd.DataFrame(rows)


# ---- Theorem 3.2 -----------------------------------------------------------------------------
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


def check_theorem_3_2(s: Setting, N: int = 5_000, seeds: int = 5, seed: int = 0, kappa: float = 60.0,
                      M: PositionalTransformer | None = None, err_tol: float = THEOREM_3_2_ERR_TOL) -> list[Check]:
    """Theorem 3.2 checked through the code that judges trained models.

    The construction ``M`` (default :func:`construct_theorem_3_2` with κ·τ, so that the softmax
    of A/τ is the same at any τ) is fed to model (T) itself: logits A = (Pᵀ W_Q)(Pᵀ W_K)ᵀ, value
    v = M.v, output F = :func:`theorydyn.model.forward` (activation σ(x) = x^p + νx of the setting,
    not the construction's ψ = Thr(C·)/C, so the error is *not* f by construction). Rows:

    1. Pr[f F ≤ 0 | f ≠ 0] on fresh samples, mean and 95% interval over ``seeds`` seeds;
       PASS if the interval lies below ``err_tol`` (1%: the theorem says d^{−ω(1)}, and 1% is
       far below the 1/8 that every GLM must make in Theorem 3.1).
    2. the fraction of rows i whose off-diagonal Top-C of ⟨p_i, p_j⟩ (from P, computed) misses
       S(i): the theorem's property (diagonal excluded, see 4); must be 1.
    3. Definition 2.2 (:func:`theorydyn.model.association_rows`) on PᵀP: must be 0 rows.
    4. the literal statement (Top-C over all j, the diagonal included): DEVIATES, since no Gram
       matrix can satisfy it (Cauchy–Schwarz on the row of largest norm); measured is the fraction
       of rows satisfying it for this construction.
    5. INFO: Definition 2.2 on the logits A (the block structure lives in W_Q, W_K).
    """
    M = M if M is not None else construct_theorem_3_2(s, kappa=kappa * s.tau)
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), N=N, kappa=kappa)
    P = np.asarray(M.P, dtype=np.float64)
    G = P.T @ P
    A = (P.T @ M.W_Q) @ (P.T @ M.W_K).T
    errs, amb = [], []
    for k in range(seeds):
        b = data.sample(s, N, seed=np.random.SeedSequence([seed, k, 32]))
        with np.errstate(over="ignore", invalid="ignore"):
            F = model.forward(s, A, M.v, b.X)
        e = data.errors(np.where(np.isfinite(F), F, 0.0), b.y, data.labelling(s, b.X))
        errs.append(e["err_f"])
        amb.append(e["amb_f"])
    _, _, hi = mean_ci(errs)
    miss = offdiag_topc_miss(s, G)
    assoc_rows = model.association_rows(s, G)
    # literal: Top-C over j = 1..D (diagonal included) disjoint from S(i), for every tie-break
    cth = -np.sort(-G, axis=1)[:, s.C - 1]
    literal = float(np.mean(cth > np.where(s.same_set, G, -np.inf).max(axis=1)))
    route_fwd = "model.forward vs explicit loops (tests/test_model.py::test_forward_against_explicit_loops)"
    return [
        Check.over_seeds("Theorem 3.2", "Pr[f F <= 0 | f != 0], F = model (T) forward with the construction's P, W_Q, W_K, v",
                         errs, f"<= {err_tol} (d^-omega(1))", bool(hi <= err_tol), params=params,
                         note=f"sigma(x) = x^{s.p} + nu x of model (T); Pr[f = 0] = {np.mean(amb):.4f}", route=route_fwd),
        Check.exact("Theorem 3.2", "fraction of rows i whose off-diagonal Top-C of <p_i, p_j> misses S(i)", miss, "== 1",
                    miss == 1.0, params=params, note="Gram matrix computed from the construction's P",
                    route="brute-force Top-C over tie-breaks (tests/test_theorems.py::"
                          "test_theorem_3_2_construction_fits_f_without_positional_association)"),
        Check.exact("Theorem 3.2", "patch association of P^T P (Definition 2.2, model.association_rows, fraction of rows)",
                    float(np.mean(assoc_rows)), "== 0", not assoc_rows.any(), params=params,
                    route="brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c)"),
        Check.exact("Theorem 3.2 (literal)", "fraction of rows whose Top-C over all j (diagonal included) misses S(i)",
                    literal, "== 1 (as stated)", Verdict.DEVIATES if literal < 1 else Verdict.PASS, params=params,
                    note=("impossible as stated: the row i of largest |p_i| has <p_i, p_i> >= <p_i, p_j> (Cauchy-Schwarz), "
                          "so i, in S(i), is in its own Top-C; the checks read the statement with the diagonal excluded"),
                    route="hypothesis test over random Gram matrices (tests/test_theorems.py::"
                          "test_no_gram_matrix_pushes_every_diagonal_out_of_its_top)"),
        Check.exact("Theorem 3.2", "patch association of the logits A = (P^T W_Q)(P^T W_K)^T (fraction of rows)",
                    model.association(s, A), "INFO", Verdict.INFO, params=params,
                    note="the block structure lives in W_Q, W_K, not in the positional encodings"),
    ]


# ---- realistic and idealized GD (Theorems 4.1, 4.2; Lemma 4.1; Figure 2) ---------------------
def _simulate(s: Setting, **kw):

    return simulate(s, **kw)


def symmetry_deviation(s: Setting, A: np.ndarray) -> dict[str, float]:
    """Distance of Â from the three-value form of Lemma 4.1 (A_ii = β, γ in-set, ρ across sets).

    gap = mean in-set − mean cross-set entry; ``in_rel_std`` / ``cross_rel_std`` = std of the in-set /
    cross-set entries over |gap|. Row level (the finite-sample break of the symmetry): r_i = mean of
    row i's in-set entries; ``row_rel_spread`` = max over sets of (max_i r_i − min_i r_i) / |gap|;
    ``top_row_ratio`` = median over sets of (max_i r_i − ρ̄) / (median of the set's other rows − ρ̄),
    ρ̄ the cross-set mean (≈ 1 under Lemma 4.1, ≫ 1 when one query row per set dominates).
    """
    A = np.asarray(A, dtype=np.float64)
    inv, crv = A[s.in_set_mask], A[s.cross_set_mask]
    gap = float(inv.mean() - crv.mean())
    r = np.where(s.in_set_mask, A, 0.0).sum(axis=1) / (s.C - 1)
    rows = r[s.sets]  # (L, C)
    srt = np.sort(rows, axis=1)
    spread = srt[:, -1] - srt[:, 0]
    others = np.median(srt[:, :-1], axis=1) - crv.mean()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (srt[:, -1] - crv.mean()) / others
    g = abs(gap) if gap != 0 else np.nan
    return {"gap": gap, "in_mean": float(inv.mean()), "cross_mean": float(crv.mean()),
            "in_rel_std": float(inv.std() / g), "cross_rel_std": float(crv.std() / g),
            "cross_absmax": float(np.abs(crv).max()), "row_rel_spread": float(spread.max() / g),
            "top_row_ratio": float(np.median(ratio))}


def _fresh_errors(s: Setting, A: np.ndarray, v: np.ndarray, N_test: int, seed: int) -> dict[str, float]:
    b = data.sample(s, N_test, seed=seed)
    with np.errstate(over="ignore", invalid="ignore"):
        F = model.forward(s, A, v, b.X)
    return data.errors(np.where(np.isfinite(F), F, 0.0), b.y, data.labelling(s, b.X))


def train_upstream(s: Setting, N: int = 16384, eta: float = 10.0, steps: int = 400, omega: float = 1e-3,
                   seed: int = 0, idealized: bool = False, dtype: str = "float32", record_every: int = 50):
    """GD on (E) with the full D×D Â (``theorydyn.simulate``): realistic initialisation, or the
    idealized one of Parametrization 3.1 (Â off-diagonal 0, v = α(0) w*) — with large N the
    latter is the proxy of (P) used for Theorem 4.1 and Lemma 4.1."""
    kw = dict(N=N, eta=eta, steps=steps, omega=omega, seed=seed, record_every=record_every, dtype=dtype)
    if idealized:
        kw.update(A0=model.symmetric_attention(s, 0.0, 0.0), v0=s.alpha0 * np.array(s.w_star))
    return _simulate(s, **kw)


def check_theorem_4(s: Setting, N: int = 16384, eta: float = 10.0, steps: int = 400, omega: float = 1e-3,
                    seed: int = 0, idealized: bool = False, N_test: int = 8192, err_tol: float = 0.05,
                    res: Any = None) -> tuple[list[Check], Any]:
    """Theorem 4.2 (realistic init) or 4.1 (idealized init, N large as a proxy of (P)) at the end of GD:

    1. patch association: Top_C{Â_ij}_j = S(i) for all rows (Definition 2.2);
    2. the labelling function is fitted: Pr[f F ≤ 0 | f ≠ 0] ≤ ``err_tol`` on fresh samples.

    Association and errors are recomputed here from res.A, res.v on a fresh test set (independently
    of the simulator's own recording). Returns (checks, simulate result).
    """
    claim = "Theorem 4.1" if idealized else "Theorem 4.2"
    if res is None:
        res = train_upstream(s, N, eta, steps, omega, seed, idealized)
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), N=N, eta=eta, steps=steps, omega=omega, seed=seed,
                  init="idealized" if idealized else "realistic")
    traj = res.trajectory
    last = traj.iloc[-1]
    status = str(getattr(res, "status", "ok"))
    assoc = association(s, res.A)
    e = _fresh_errors(s, res.A, res.v, N_test, seed + 7919)
    note_run = f"simulate status: {status}; last recorded step {int(last['step'])}"
    if "association" in traj:
        note_run += f"; simulator's association {float(last['association']):.3f}"
    cos = float(res.v @ s.w_star / np.linalg.norm(res.v))
    return [
        Check(f"{claim} (1)", "patch association of A_hat (Definition 2.2, fraction of rows)", assoc, "== 1 (all rows)",
              assoc == 1.0, params, note_run),
        Check(f"{claim} (2)", "Pr[f F <= 0 | f != 0] on fresh samples", e["err_f"], f"<= {err_tol}",
              e["err_f"] <= err_tol, params, f"err vs y {e['err_y']:.4f}; cos(v, w*) {cos:.3f}; {note_run}"),
    ], res


def check_lemma_4_1(s: Setting, res_realistic: Any, res_idealized: Any = None) -> list[Check]:
    """Lemma 4.1's three-value form, measured on the final Â of finite-N runs: INFO rows.

    Lemma 4.1 is a statement about GD on the population risk (P) from the idealized init
    (:func:`check_lemma_4_1_population` checks it). At finite N no exact symmetry exists, so these
    are diagnostics (:func:`symmetry_deviation`): entry-level spreads relative to the gap, and the
    row-level break (max over sets of the spread of the rows' in-set means, relative to the gap).
    Their decrease with N is measured by :func:`check_lemma_4_1_scaling`.
    """
    out = []
    dev = symmetry_deviation(s, res_realistic.A)
    traj = res_realistic.trajectory
    params = dict(D=s.D, C=s.C, steps=int(traj["step"].iloc[-1]), init="realistic")
    along = ""
    if {"in_std", "gamma", "rho"} <= set(traj.columns):
        gap = (traj["gamma"] - traj["rho"]).abs()
        rel = (traj["in_std"] / gap).where(gap > 0)
        along = "; in_std/gap along the run: " + ", ".join(f"{int(t)}:{x:.2f}" for t, x in zip(traj["step"], rel))
    info = "no exact symmetry at finite N (the lemma is about (P))"
    out.append(Check("Lemma 4.1 (finite N)", "in-set std / (in-set mean - cross-set mean) of A_hat, realistic run",
                     dev["in_rel_std"], "INFO", Verdict.INFO, params,
                     f"{info}; gap {dev['gap']:.3f}, cross std/gap {dev['cross_rel_std']:.3f}{along}"))
    out.append(Check("Lemma 4.1 (finite N)", "cross-set std / gap of A_hat, realistic run", dev["cross_rel_std"],
                     "INFO", Verdict.INFO, params, f"{info}; max |cross| {dev['cross_absmax']:.3f}"))
    out.append(Check("Lemma 4.1 (finite N, row level)", "max over sets of (max - min row in-set mean) / gap, realistic run",
                     dev["row_rel_spread"], "INFO", Verdict.INFO, params,
                     f"median over sets of (top row - cross mean)/(other rows - cross mean) = {dev['top_row_ratio']:.2f} "
                     "(1 under Lemma 4.1); a finite-sample break the reduced model cannot represent"))
    if res_idealized is not None:
        di = symmetry_deviation(s, res_idealized.A)
        p2 = dict(params, init="idealized", steps=int(res_idealized.trajectory["step"].iloc[-1]))
        out.append(Check("Lemma 4.1 (finite N)", "in-set std / gap of A_hat, idealized init", di["in_rel_std"],
                         "INFO", Verdict.INFO, p2,
                         f"cross std/gap {di['cross_rel_std']:.3f}; row spread/gap {di['row_rel_spread']:.3f}"))
    return out


def lemma_4_1_scaling_runs(s: Setting, Ns=tuple(2**k for k in range(11, 16)), seeds: int = 5, steps: int = 150,
                           eta: float = 10.0, omega: float = 1e-3, seed: int = 0, dtype: str = "float32",
                           progress=None):
    """Realistic GD at every N of ``Ns`` and every seed; each (N, seed) draws its own data.

    Returns a DataFrame with columns N, seed, the :func:`symmetry_deviation` fields, association
    (Definition 2.2), err_f (fresh samples), and the runs' status. Nothing is cached or shared:
    run (N, k) uses ``simulate(seed = seed + 1000 k + log2 N)``.
    """
    import pandas as pd

    rows = []
    for k in range(seeds):
        for N in Ns:
            sd = int(seed + 1000 * k + int(round(np.log2(N))))
            if progress:
                progress(f"Lemma 4.1 scaling: D={s.D}, N={N}, seed {k + 1}/{seeds}")
            res = _simulate(s, N=int(N), eta=eta, steps=steps, omega=omega, seed=sd, record_every=steps, dtype=dtype,
                            n_test=2048)
            e = _fresh_errors(s, res.A, res.v, 4096, sd + 7919)
            rows.append(dict(N=int(N), seed=k, **symmetry_deviation(s, res.A), association=association(s, res.A),
                             err_f=e["err_f"], status=str(getattr(res, "status", "ok"))))
    return pd.DataFrame(rows)


def check_lemma_4_1_scaling(s: Setting, runs=None, **kw) -> list[Check]:
    """The finite-N symmetry break of Lemma 4.1 against N: INFO rows with 95% intervals over seeds.

    For each seed, the least-squares slope b of log(in-set std / gap) against log N (the
    deviation ∝ N^b; 0 would mean no approach to the three-value form), and the same for the
    row-level spread; plus the values at the largest N. ``runs``: a DataFrame from
    :func:`lemma_4_1_scaling_runs` (else computed with ``kw``).
    """
    runs = runs if runs is not None else lemma_4_1_scaling_runs(s, **kw)
    Ns = sorted(runs["N"].unique())
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), N=f"{Ns[0]}..{Ns[-1]}", init="realistic")
    out = []
    for col, what in (("in_rel_std", "in-set std / gap"), ("row_rel_spread", "row-level spread / gap"),
                      ("cross_rel_std", "cross-set std / gap")):
        slopes = [float(np.polyfit(np.log(g["N"]), np.log(g[col]), 1)[0]) for _, g in runs.groupby("seed")]
        means = runs.groupby("N")[col].mean()
        listing = ", ".join(f"N={n}: {m:.3f}" for n, m in means.items())
        out.append(Check.over_seeds("Lemma 4.1 (finite N)", f"exponent b of {what} of A_hat ~ N^b (realistic GD)", slopes,
                                    "INFO (0: no approach to the symmetric form)", Verdict.INFO, params=params,
                                    note=f"mean over seeds: {listing}",
                                    route="slope recovery on planted power laws "
                                          "(tests/test_theorems.py::test_lemma_4_1_scaling_recovers_a_planted_exponent)"))
        big = runs[runs["N"] == Ns[-1]][col].to_list()
        if col == "in_rel_std" and "association" in runs:
            am = runs.groupby("N")["association"].mean()
            small = runs[runs["N"] == Ns[0]]["association"].to_list()
            out.append(Check.over_seeds(
                "Lemma 4.1 (finite N)", f"patch association of A_hat at N = {Ns[0]} (Definition 2.2, fraction of rows)",
                small, "INFO (finite-N break of the symmetry can cost rows)", Verdict.INFO, params=dict(params, N=Ns[0]),
                note="mean over seeds: " + ", ".join(f"N={n}: {m:.3f}" for n, m in am.items()),
                route="brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c)"))
        out.append(Check.over_seeds("Lemma 4.1 (finite N)", f"{what} of A_hat at N = {Ns[-1]} (realistic GD)", big,
                                    "INFO (the lemma is about (P))", Verdict.INFO, params=dict(params, N=Ns[-1]),
                                    route="symmetry_deviation vs hand-built A (tests/test_theorems.py::"
                                          "test_lemma_4_1_check_sees_the_three_value_form_and_a_dominant_row)"))
    return out


def check_lemma_4_1_population(s: Setting, D: int = 6, C: int = 2, q: float = 0.4, eta: float = 2.0,
                               steps: int = 300, tol: float = 1e-9) -> list[Check]:
    """Lemma 4.1 as stated: GD on the population risk (P) keeps A in the three-value form.

    (P) is computed exactly by enumerating every noiseless data point with its probability
    (:func:`theorydyn.data.enumerate_population`) at a size where that is instant (default D = 6,
    C = 2; p, β, τ taken from ``s``). From the idealized init (A = β I, v = α(0) w*), plain GD with
    the full-model gradients (:func:`theorydyn.model.risk_and_grad`) runs ``steps`` steps; the
    measured value is the largest spread of the in-set and of the cross-set entries relative to
    |γ − ρ| over the run. (v stays in span(w*) trivially here, the enumeration being noiseless, so
    Lemma 4.2 is not checked by this route.)
    """
    sp = Setting(D=D, C=C, q=q, p=s.p, beta=s.beta, tau=s.tau)
    z, y, w = data.enumerate_population(sp)
    X = data.embed(sp, z)
    A = model.symmetric_attention(sp, 0.0, 0.0)
    v = sp.alpha0 * sp.w_star
    worst_A = 0.0
    for _ in range(steps):
        _, gA, gv = model.risk_and_grad(sp, A, v, X, y, weights=w)
        A, v = A - eta * gA, v - eta * gv
        inv, crv = A[sp.in_set_mask], A[sp.cross_set_mask]
        gap = abs(inv.mean() - crv.mean())
        if gap > 0:
            worst_A = max(worst_A, float(max(np.ptp(inv), np.ptp(crv)) / gap))
    inv, crv = A[sp.in_set_mask], A[sp.cross_set_mask]
    params = dict(D=D, C=C, q=q, p=s.p, eta=eta, steps=steps, expectation="exact enumeration")
    note = f"final gamma {inv.mean():.4f}, rho {crv.mean():.4f}, alpha {v @ sp.w_star:.4f}"
    return [
        Check.exact("Lemma 4.1", "max over GD on (P) of (in-set or cross-set spread of A) / |gamma - rho|", worst_A,
                    f"<= {tol:g}", worst_A <= tol, params=params, note=note,
                    route="enumeration vs itertools (tests/test_data.py::test_enumerate_population_against_itertools); "
                          "gradients vs central differences (tests/test_model.py::test_gradients_match_central_differences)"),
    ]


def check_theorem_4_seeds(s: Setting, N: int = 8192, steps: int = 200, seeds: int = 5, eta: float = 10.0,
                          omega: float = 1e-3, seed: int = 0, N_test: int = 8192, err_tol: float = 0.05,
                          dtype: str = "float32", progress=None) -> list[Check]:
    """Theorem 4.2 (realistic init) at the end of GD, over ``seeds`` independent seeds (data and init):

    1. patch association of Â (Definition 2.2, :func:`theorydyn.model.association`), fraction of
       rows: PASS if every seed reaches 1;
    2. Pr[f F ≤ 0 | f ≠ 0] on fresh samples: PASS if the 95% interval lies below ``err_tol``.

    Inside Theorem 3.1's scope rule (:func:`theorem_3_1_scope`, the same Assumption 2) or
    OUT_OF_SCOPE with the reason.
    """
    scope = theorem_3_1_scope(s)
    assoc, errs, cos, status = [], [], [], []
    for k in range(seeds):
        sd = int(seed + 1000 * k + 42)
        if progress:
            progress(f"Theorem 4.2: D={s.D}, N={N}, {steps} steps, seed {k + 1}/{seeds}")
        res = train_upstream(s, N, eta, steps, omega, sd, idealized=False, dtype=dtype, record_every=steps)
        assoc.append(association(s, res.A))
        errs.append(_fresh_errors(s, res.A, res.v, N_test, sd + 7919)["err_f"])
        cos.append(float(res.v @ s.w_star / np.linalg.norm(res.v)))
        status.append(str(getattr(res, "status", "ok")))
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), N=N, eta=eta, steps=steps, omega=omega, init="realistic")
    note = f"cos(v, w*) mean {np.mean(cos):.3f}; simulate status {sorted(set(status))}"
    _, _, hi = mean_ci(errs)
    v1 = Verdict.OUT_OF_SCOPE if scope else bool(min(assoc) == 1.0)
    v2 = Verdict.OUT_OF_SCOPE if scope else bool(hi <= err_tol)
    if scope:
        note = f"out of scope: {scope}; {note}"
    route = ("association vs brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c); "
             "GD step: gradients vs central differences (tests/test_model.py::test_gradients_match_central_differences)")
    return [
        Check.over_seeds("Theorem 4.2 (1)", "patch association of A_hat (Definition 2.2, fraction of rows)", assoc,
                         "== 1 (all rows, every seed)", v1, params=params, note=note, route=route),
        Check.over_seeds("Theorem 4.2 (2)", "Pr[f F <= 0 | f != 0] on fresh samples", errs, f"<= {err_tol}", v2,
                         params=params, note=note, route=route),
    ]


def run_all(s: Setting, quick: bool = True, progress=None, seeds: int = 5) -> list[Check]:
    """Every check of this module, each random number over ``seeds`` independent seeds.

    Theorems 3.1 and 3.2 at ``s``; Lemma 4.1 on the exactly enumerated population, and its
    finite-N break against N ∈ {2^11, …, 2^15} at D = 16 (q, ν kept: :func:`theorydyn.transfer.setting_at`);
    Theorem 4.2 at D = min(D, 32) (N = 16384, 250 steps; at N = 8192 one seed in five loses a row of
    association late in the run, a finite-N effect, see the Lemma 4.1 association row) in quick mode, at ``s`` with docs/theory.md §9's sizes
    (N = 16384, 1200 steps) otherwise. Figure 2 is checked by ``theorydyn.claims.figure2``, the
    idealized dynamics (Theorem 4.1, Lemma 4.3) by the reduced flow in ``theorydyn.verify``.
    """

    say = progress or (lambda msg: None)
    checks: list[Check] = []
    say("Theorem 3.1")
    checks += check_theorem_3_1(s, N_fit=50_000 if quick else 200_000, N_test=50_000 if quick else 200_000,
                                N_flat=2_000 if quick else 8_000, seeds=seeds)
    say("Theorem 3.2")
    checks += check_theorem_3_2(s, N=5_000 if quick else 50_000, seeds=seeds)
    say("Lemma 4.1 (population, exact enumeration)")
    checks += check_lemma_4_1_population(s)
    sl = setting_at(s, 16 if quick else min(s.D, 32))
    Ns = tuple(2**k for k in range(11, 16 if quick else 17))
    checks += check_lemma_4_1_scaling(sl, Ns=Ns, seeds=seeds, steps=150 if quick else 300, progress=say)
    sg = setting_at(s, min(s.D, 32)) if quick else s
    N, steps = (16384, 250) if quick else (16384, 1200)
    checks += check_theorem_4_seeds(sg, N=N, steps=steps, seeds=seeds, progress=say)
    return checks
