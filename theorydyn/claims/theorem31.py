"""Theorem 3.1 in the ledger (docs/theory.md §4): a generalized linear model errs.

The claim: any g(X) = φ(Σ_j ⟨w_j, X_j⟩) has Pr[f g ≤ 0] ≥ 1/8. Judged inside its scope
(:func:`theorem_3_1_scope`, from Assumption 2: q(D − C) > C, q ≤ 1/2, L ≥ 4), else OUT_OF_SCOPE.
Measured:

(a) the oracle projection T = Σ_j ⟨w*, X_j⟩, whose best-φ error is computed *exactly*
    (:func:`glm_oracle_error_exact`: the law of the L − 1 i.i.d. random sets as a convolution
    power, by DFT or set by set);
(b) fitted GLMs over seeds: a logistic regression on z_j = ⟨w*, X_j⟩ (WLOG: components of w_j ⟂ w*
    only add Gaussian noise that is independent of (y, z), which cannot lower the Bayes error of
    any φ) and on the flattened X, then the best φ (per-bin majority of sign f, :func:`best_phi_error`);
(c) a scan over D ∈ {64, 128, 256}, C ∈ {4, 8, 16} (:func:`glm_crossings`, :func:`theorem_3_1_scan`,
    figure :func:`plot_theorem_3_1_scan`): the exact error is a function of x = q(D − C)/C² and
    crosses 1/8 at x* ≈ 0.75, so the bound fails inside the scope for C < q(D − C) < 0.75 C² — a
    DEVIATES row.

Shapes: z: (N, D) feature coefficients ⟨w*, X_j⟩ ∈ {−1, 0, +1}; X: (N, D, d).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.signal import convolve2d

from .. import data
from ..resources import MemoryEstimate, theorem_3_1_memory
from ..setting import Setting
from ..stats import mean_ci
from ..transfer.logreg import fit_logreg
from .check import Check, Verdict

THEOREM_3_1_BOUND = 1.0 / 8.0


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
    for Pk, at_up, at_down in ((Pp, pos, neg), (Pn, neg, pos), (P0, zer, zer)):
        np.add.at(Pk, up, 0.5 * at_up)
        np.add.at(Pk, down, 0.5 * at_down)
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


def glm_crossing(s: Setting, bound: float | None = None, n_grid: int = 48, q_min: float = 1e-3) -> dict[str, float]:
    """Where the exact best-GLM error of the oracle projection crosses the bound of Theorem 3.1.

    Along q ∈ [q_min, 1] at fixed (D, C) (other fields of ``s`` kept), err(q) = the conditional
    error Pr[f g ≤ 0 | f ≠ 0] of :func:`glm_oracle_error_exact`. The crossing q* is the smallest q
    with err(q) = ``bound`` (default 1/8), located on a log grid of ``n_grid`` points and refined by
    Brent's method on the exact function (no interpolation error beyond 1e-12 in q).

    Returns q_star, x_star = q*(D − C)/C², spurious_star = q*(D − C), err_at_1 (the error at q = 1);
    q_star is nan when err(q) < bound for every q ≤ 1 (the bound fails at this (D, C) for any q).
    """
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


def glm_crossings(Ds=SCAN_31_D, Cs=SCAN_31_C, n_grid: int = 48) -> pd.DataFrame:
    """:func:`glm_crossing` at every (D, C) of the grid with C < D and C dividing D (C outer, D inner),
    from q = 1/2 (the crossing depends on D, C and the threshold only), plus x_scope = 1/C (the scope
    boundary q(D − C) = C in x). One row per (D, C)."""
    return pd.DataFrame([dict(glm_crossing(Setting(D=D, C=C, q=0.5), n_grid=n_grid), x_scope=1.0 / C)
                         for C in Cs for D in Ds if C < D and D % C == 0])


def theorem_3_1_scan(Ds=SCAN_31_D, Cs=SCAN_31_C, n_q: int = 40, base: Setting | None = None,
                     n_grid: int = 48) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The exact best-GLM error against x = q(D − C)/C², for every (D, C) with C < D.

    Returns (curves, crossings): ``curves`` a DataFrame with columns D, C, q, x, spurious =
    q(D − C), err, err_cond, amb, in_scope (:func:`theorem_3_1_scope`); ``crossings`` one row per
    (D, C) from :func:`glm_crossings` (``n_grid`` points before Brent's refinement).
    """
    base = base or Setting()
    rows = []
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
    return pd.DataFrame(rows), glm_crossings(Ds, Cs, n_grid=n_grid)


def plot_theorem_3_1_scan(ax, curves, crossings) -> None:
    """Draw the exact best-GLM error against q(D − C)/C² into ``ax`` (one curve per (D, C)).

    The bound 1/8 is a horizontal line; each crossing x* is marked; the dotted verticals are the
    scope boundary q(D − C) = C (x = 1/C) of each C, left of which Assumption 2 does not hold.
    """
    colors = {C: c for C, c in zip(sorted(curves["C"].unique()), ("tab:blue", "tab:orange", "tab:green", "tab:red"),
                                           strict=False)}
    styles = {D: ls for D, ls in zip(sorted(curves["D"].unique()), ("-", "--", ":", "-."), strict=False)}
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
    """Compute :func:`theorem_3_1_scan` and save its figure (and optionally the crossings as CSV).

    Draws into a :class:`matplotlib.figure.Figure` (no pyplot: no backend is chosen here)."""
    from matplotlib.figure import Figure  # matplotlib: only this function draws

    curves, crossings = theorem_3_1_scan()
    fig = Figure(figsize=(7.5, 4.8))
    plot_theorem_3_1_scan(fig.subplots(), curves, crossings)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
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
    checks = [Check.exact("Theorem 3.1", "exact Pr[f g <= 0 | f != 0], g = best phi of sum_j <w*, X_j>",
                          exact["err_cond"],
                          ">= 0.125", v, params=params, note=note,
                          route="FFT power vs set-by-set DP vs exhaustive enumeration vs Monte Carlo "
                                "(tests/test_theorems.py::test_glm_oracle_error_*)")]
    p_fit = dict(params, N_fit=N_fit, N_test=N_test, N_flat=N_flat, lam=lam)
    if scope:
        # Outside Assumption 2 no fitted error bears on the theorem: decided before fitting anything.
        names = ["<w*, X_j>"] + (["flattened X"] if N_flat >= 4 else [])
        for name in [f"logistic regression on {n}" for n in names] + ["min over the fitted GLMs (per seed)"]:
            checks.append(Check("Theorem 3.1", f"Pr[f g <= 0 | f != 0], g = best phi of {name}", math.nan,
                                ">= 0.125", Verdict.OUT_OF_SCOPE, params=p_fit,
                                note=f"out of scope: {scope}. Not fitted (the scope is decided first)"))
    else:
        per_seed: dict[str, list[float]] = {}
        for k in range(seeds):
            rng = np.random.default_rng(np.random.SeedSequence([seed, k, 31]))
            for name, e in _glm_fitted_errors(s, N_fit, N_test, N_flat, lam, rng).items():
                per_seed.setdefault(name, []).append(e)
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
        cross = glm_crossings(n_grid=24)
        for C, g in cross.groupby("C"):
            xs = g["x_star"].to_numpy()
            listing = ", ".join(
                f"D={int(r.D)}: x*={r.x_star:.3f} (q*={r.q_star:.3f}, q*(D-C)={r.spurious_star:.1f})"
                if np.isfinite(r.x_star) else f"D={int(r.D)}: none for q <= 1 (err(1) = {r.err_at_1:.3f})"
                for r in g.itertuples())
            fin = xs[np.isfinite(xs)]
            meas = float(fin.max()) if len(fin) else float("nan")
            # The paper's claim: the bound holds throughout the scope, whose edge is x = 1/C.
            holds = len(fin) == len(xs) and meas <= 1.0 / C
            checks.append(Check.exact(
                "Theorem 3.1 (scan)",
                f"C={int(C)}: largest x* = q*(D-C)/C^2 where the exact best-GLM error crosses 1/8",
                meas, f"<= 1/C = {1 / C:.4g} (the scope edge q(D-C) = C)", Verdict.PASS if holds else Verdict.DEVIATES,
                params=dict(C=int(C), D=list(SCAN_31_D)),
                note=(f"the bound fails inside Assumption 2 wherever C < q(D-C) < x* C^2 (x* ~ 0.75 measured): "
                      f"'q = poly(C)/D' needs poly(C) >~ 0.75 C^2. {listing}. "
                      "Figure: figures/theorem31.png (python -m theorydyn.figures theorem31)"),
                route="Brent's method on the exact FFT route "
                      "(tests/test_theorems.py::test_glm_crossing_is_where_the_exact_error_meets_one_eighth)"))
    return checks




#: Sample sizes of :func:`checks` in quick mode and in the full ledger.
QUICK = dict(N_fit=50_000, N_test=50_000, N_flat=2_000)
FULL = dict(N_fit=200_000, N_test=200_000, N_flat=8_000)


def checks(s: Setting, *, quick: bool = True, progress: Callable[[str], None] | None = None,
           seeds: int = 5) -> list[Check]:
    """The ledger rows of Theorem 3.1 at ``s``: :func:`check_theorem_3_1` with the scan, sizes
    :data:`QUICK` or :data:`FULL`, each random number over ``seeds`` seeds."""
    if progress:
        progress("Theorem 3.1")
    n = QUICK if quick else FULL
    return check_theorem_3_1(s, N_fit=n["N_fit"], N_test=n["N_test"], N_flat=n["N_flat"], seeds=seeds)


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :func:`checks` (:func:`theorydyn.resources.theorem_3_1_memory`; the scan's exact laws
    are smaller than the fitted samples)."""
    return theorem_3_1_memory(s, **(QUICK if quick else FULL))
