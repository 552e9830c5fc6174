"""The mathematics of Theorem 3.1 (docs/theory.md §6.1): the error of a generalized linear model
g(X) = φ(Σ_j ⟨w_j, X_j⟩) on the data of Assumption 1, against the bound Pr[f g ≤ 0] ≥ 1/8.

No verdicts here: the ledger rows that judge these numbers are in :mod:`theorydyn.claims.theorem31`.

* the equal-weight GLM with the best link, exactly (:func:`glm_oracle_error_exact`): projection
  T = Σ_j ⟨w*, X_j⟩, best φ = majority of sign f given T; the law of the L − 1 i.i.d. random sets
  as a convolution power, by DFT or set by set;
* where that error crosses 1/8 (:func:`glm_crossing`, :func:`glm_crossings`) and the scan against
  x = q(D − C)/C² (:func:`theorem_3_1_scan`, figure :func:`plot_theorem_3_1_scan`);
* the scope rule, Assumption 2 read at a finite size (:func:`theorem_3_1_scope`);
* the literal statement (any w_j, any φ): w_j = 3^j w* makes the projection injective on the
  patterns and a lookup φ computes sign f exactly (:func:`lookup_glm_error`), exact by
  enumeration (:func:`literal_construction_exact`) and by Monte Carlo (:func:`literal_construction_mc`);
* fitted GLMs: the best φ of a fixed projection (:func:`best_phi_error`) and one seed of the
  logistic regressions on z_j = ⟨w*, X_j⟩ and on the flattened X (:func:`glm_fitted_errors`).

Shapes: z: (N, D) feature coefficients ⟨w*, X_j⟩ ∈ {−1, 0, +1}; X: (N, D, d).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.signal import convolve2d

from ..infra.atomic import write_with
from . import data
from .logreg import fit_logreg
from .plotting import FORMATS, GREY, PALETTE, legend_outside, save, styled
from .setting import Setting, setting_at

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
        return f"Assumption 2 (more spurious features than informative ones): q(D-C) = {spurious:.3g} <= C = {s.C}"
    if s.q > q_max:
        return f"Assumption 2 (q << 1, read as q <= {q_max:g}): q = {s.q:.3g}"
    if s.L < L_min:
        return f"Assumption 2 (C << D, read as L = D/C >= {L_min}): L = {s.L}"
    return None


def smallest_in_scope(s: Setting, D_from: int, D_to: int) -> tuple[Setting, str | None]:
    """The smallest multiple of C in [``D_from``, max(D_from, ``D_to``)] whose setting (q and ν kept,
    :func:`theorydyn.core.setting.setting_at`) lies inside :func:`theorem_3_1_scope`; when none does, the
    setting at ``D_from`` with the scope rule's reason (rows read there are then OUT_OF_SCOPE). The size of
    the finite-N runs of Lemma 4.1 and of Theorem 4.2's closeness runs.

    >>> smallest_in_scope(Setting(D=64, C=4, q=0.25), 16, 64)[0].D  # q(D − C) = 3 <= C at D = 16, 5 at 24
    24
    """
    start = D_from + (-D_from) % s.C
    for D in range(start, max(start, D_to) + 1, s.C):
        sd = setting_at(s, D)
        if theorem_3_1_scope(sd) is None:
            return sd, None
    sd = setting_at(s, start)
    return sd, theorem_3_1_scope(sd)


def glm_crossing(
    s: Setting, bound: float | None = None, n_grid: int = 48, q_min: float = 1e-3, key: str = "err"
) -> dict[str, float]:
    """Where the exact error of the equal-weight GLM with the best link crosses the bound of Theorem 3.1.

    Along q ∈ [q_min, 1] at fixed (D, C) (other fields of ``s`` kept), err(q) = ``key`` of
    :func:`glm_oracle_error_exact`: ``"err"`` = Pr[f g ≤ 0], the paper's quantity (f = 0 counts as an
    error; the default), or ``"err_cond"`` = Pr[f g ≤ 0 | f ≠ 0]. The crossing q* is the smallest q
    with err(q) = ``bound`` (default 1/8), located on a log grid of ``n_grid`` points and refined by
    Brent's method on the exact function (no interpolation error beyond 1e-12 in q).

    Returns q_star, x_star = q*(D − C)/C², spurious_star = q*(D − C), err_at_1 (the error at q = 1);
    q_star is nan when err(q) < bound for every q ≤ 1 (the bound fails at this (D, C) for any q).
    """
    if key not in ("err", "err_cond"):
        raise ValueError(f"key must be 'err' or 'err_cond', got {key!r}")
    bound = THEOREM_3_1_BOUND if bound is None else bound

    def err(q: float) -> float:
        return glm_oracle_error_exact(s.replace(q=float(q)))[key] - bound

    qs = np.geomspace(q_min, 1.0, n_grid)
    e = np.array([err(q) for q in qs])
    above = np.flatnonzero(e >= 0)
    out = dict(
        D=s.D,
        C=s.C,
        err_at_1=float(e[-1] + bound),
        q_star=float("nan"),
        x_star=float("nan"),
        spurious_star=float("nan"),
    )
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
    boundary q(D − C) = C in x). One row per (D, C): q_star, x_star, spurious_star, err_at_1 of the
    paper's Pr[f g ≤ 0], and the same with suffix ``_cond`` for Pr[f g ≤ 0 | f ≠ 0]."""
    rows = []
    for C in Cs:
        for D in Ds:
            if C < D and D % C == 0:
                s = Setting(D=D, C=C, q=0.5)
                cond = glm_crossing(s, n_grid=n_grid, key="err_cond")
                rows.append(
                    dict(
                        glm_crossing(s, n_grid=n_grid, key="err"),
                        x_scope=1.0 / C,
                        **{f"{k}_cond": cond[k] for k in ("q_star", "x_star", "spurious_star", "err_at_1")},
                    )
                )
    return pd.DataFrame(rows)


def theorem_3_1_scan(
    Ds=SCAN_31_D, Cs=SCAN_31_C, n_q: int = 40, base: Setting | None = None, n_grid: int = 48
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The exact error of the equal-weight GLM with the best link against x = q(D − C)/C², for every
    (D, C) with C < D.

    Returns (curves, crossings): ``curves`` a DataFrame with columns D, C, q, x, spurious =
    q(D − C), err (Pr[f g ≤ 0], the paper's quantity), err_cond (given f ≠ 0), amb, in_scope
    (:func:`theorem_3_1_scope`); ``crossings`` one row per (D, C) from :func:`glm_crossings` (``n_grid``
    points before Brent's refinement), for both errors.
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
                rows.append(
                    dict(
                        D=D,
                        C=C,
                        q=float(q),
                        x=q * (D - C) / C**2,
                        spurious=q * (D - C),
                        **e,
                        in_scope=theorem_3_1_scope(sq) is None,
                    )
                )
    return pd.DataFrame(rows), glm_crossings(Ds, Cs, n_grid=n_grid)


@styled
def plot_theorem_3_1_scan(ax, curves, crossings) -> None:
    """Draw the exact error of the equal-weight GLM with the best link against q(D − C)/C² into ``ax``:
    per (D, C) the paper's Pr[f g ≤ 0] (thick) and the conditional Pr[f g ≤ 0 | f ≠ 0] (thin, faint).

    The bound 1/8 is a horizontal line; each crossing x* is marked (filled: the paper's quantity,
    open: the conditional one); the dotted verticals are the scope boundary q(D − C) = C (x = 1/C)
    of each C, left of which the toolkit's Assumption 2 rule does not hold. The legend, beside the
    axes, names each encoding once (colour: C, line style: D, width: which error).
    """
    colors = dict(zip(sorted(curves["C"].unique()), PALETTE, strict=False))
    styles = {D: ls for D, ls in zip(sorted(curves["D"].unique()), ("-", "--", ":", "-."), strict=False)}
    for (D, C), g in curves.groupby(["D", "C"]):
        ax.plot(g["x"], g["err"], color=colors[C], ls=styles[D], lw=1.6)
        ax.plot(g["x"], g["err_cond"], color=colors[C], ls=styles[D], lw=0.8, alpha=0.45)
    for C, col in colors.items():
        ax.axvline(1.0 / C, color=col, lw=0.8, ls=(0, (1, 3)))
    for _, r in crossings.iterrows():
        if np.isfinite(r["x_star"]):
            ax.plot([r["x_star"]], [THEOREM_3_1_BOUND], "o", color=colors[int(r["C"])], ms=5)
        if "x_star_cond" in r and np.isfinite(r["x_star_cond"]):
            ax.plot([r["x_star_cond"]], [THEOREM_3_1_BOUND], "o", color=colors[int(r["C"])], ms=5, mfc="none")
    ax.axhline(THEOREM_3_1_BOUND, color="k", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("q (D − C) / C²: expected spurious ±w* patches / C² (log scale)")
    ax.set_ylabel("error of the equal-weight GLM, best link")
    ax.set_title("Theorem 3.1: the bound 1/8 needs q(D−C) ≳ 0.75 C²; dotted: q(D−C) = C")
    # one legend entry per encoding (colour: C, line style: D, width: which error), not per curve
    from matplotlib.lines import Line2D  # matplotlib: only the plotting functions need it

    handles = [Line2D([], [], color=col, lw=1.6, label=f"C = {C}") for C, col in colors.items()]
    handles += [Line2D([], [], color="0.3", ls=ls, lw=1.6, label=f"D = {D}") for D, ls in styles.items()]
    handles += [
        Line2D([], [], color=GREY, lw=1.6, label="Pr[f g ≤ 0] (thick)"),
        Line2D([], [], color=GREY, lw=0.8, alpha=0.45, label="Pr[f g ≤ 0 | f ≠ 0] (thin)"),
        Line2D([], [], color="k", lw=0.8, label="the bound 1/8"),
        Line2D([], [], color=GREY, lw=0.8, ls=(0, (1, 3)), label="scope edge q(D−C) = C, per C"),
        Line2D([], [], color=GREY, marker="o", ls="", ms=5, label="crossing x* of 1/8"),
        Line2D([], [], color=GREY, marker="o", ls="", ms=5, mfc="none", label="x*, given f ≠ 0"),
    ]
    legend_outside(ax, handles)


def save_theorem_3_1_figure(path: str, csv: str | None = None):
    """Compute :func:`theorem_3_1_scan` and save its figure (and optionally the crossings as CSV).

    Draws into a :class:`matplotlib.figure.Figure` (no pyplot: no backend is chosen here), in the
    toolkit's style; the format follows the suffix of ``path`` (png, pdf or svg:
    :func:`theorydyn.core.plotting.save`)."""
    import matplotlib as mpl
    from matplotlib.figure import Figure  # matplotlib: only this function draws

    from .plotting import STYLE

    curves, crossings = theorem_3_1_scan()
    with mpl.rc_context(STYLE):
        fig = Figure(figsize=(9.5, 4.8))
    plot_theorem_3_1_scan(fig.subplots(), curves, crossings)
    if str(path).rsplit(".", 1)[-1].lower() in FORMATS:
        save(fig, path, close=False)  # atomic, never through a link
    else:  # another suffix matplotlib knows (.jpg …): as asked, atomically
        write_with(path, lambda t: fig.savefig(t))
    if csv:
        write_with(csv, lambda t: crossings.to_csv(t, index=False))
    return crossings


# ---- the literal statement: any φ, any weights --------------------------------------------------
def lookup_glm_error(
    s: Setting, X: np.ndarray, f: np.ndarray, base: int, weights: np.ndarray | None = None
) -> dict[str, float]:
    """Error of the GLM g = φ(Σ_j ⟨w_j, X_j⟩) with w_j = base^j w* and the best link φ (a lookup table:
    per value of the projection, the weighted majority of sign f), on the points X with labels f.

    Σ_j ⟨w_j, X_j⟩ = Σ_j base^j ⟨w*, X_j⟩ is computed in exact integer arithmetic (Python ints: 3^63
    exceeds float64's 2^53) from ⟨w*, X_j⟩ rounded to the nearest integer, as
    :func:`theorydyn.core.data.labelling` rounds it. With base = 3 the projection is injective on the
    patterns ⟨w*, X_j⟩ ∈ {−1, 0, 1}^D (balanced ternary), so the lookup computes sign f exactly and
    errs only where f = 0. With base = 2 distinct patterns collide (1·1 + 2·(−1) = −1·1 + 2·0).

    Args:
        X: (N, D, d) points (noisy or not); f: (N,) labelling function (:func:`theorydyn.core.data.labelling`);
        weights: (N,) probabilities (an exhaustive enumeration) or None (a sample, each 1/N).

    Returns ``err`` = Pr[f g ≤ 0] (the paper's quantity), ``err_cond`` = Pr[f g ≤ 0 | f ≠ 0],
    ``amb`` = Pr[f = 0], ``injective`` (1.0 when distinct projections ↔ distinct patterns on these points).
    """
    z = np.rint(np.asarray(X, dtype=np.float64) @ s.w_star).astype(np.int64)  # (N, D): ⟨w*, X_j⟩
    coef = np.array([base**j for j in range(s.D)], dtype=object)
    T = z.astype(object) @ coef  # (N,) Python ints, exact
    f = np.asarray(f, dtype=float)
    w = np.full(len(f), 1.0 / len(f)) if weights is None else np.asarray(weights, float) / np.sum(weights)
    _, inv = np.unique(T, return_inverse=True)
    inv = inv.ravel()
    pos = np.bincount(inv, weights=w * (f > 0))
    neg = np.bincount(inv, weights=w * (f < 0))
    amb = float(w[f == 0].sum())
    err = amb + float(np.minimum(pos, neg).sum())  # φ = majority; f = 0 errs whatever φ says
    n_T = len(pos)
    n_z = len(np.unique(z, axis=0))
    return {
        "err": err,
        "err_cond": (err - amb) / (1 - amb) if amb < 1 else float("nan"),
        "amb": amb,
        "injective": float(n_T == n_z),
    }


def literal_construction_exact(base: int = 3, D: int = 8, C: int = 2, q: float = 0.5) -> dict[str, float]:
    """:func:`lookup_glm_error` of the weights base^j w* over the exhaustive noiseless enumeration of
    Assumption 1 (:func:`theorydyn.core.data.enumerate_population`, :func:`theorydyn.core.data.embed`,
    :func:`theorydyn.core.data.labelling`): the exact population error (the noise is ⟂ w* and drops out)."""
    s = Setting(D=D, C=C, q=q)
    z, _, w = data.enumerate_population(s)
    X = data.embed(s, z)
    return lookup_glm_error(s, X, data.labelling(s, X), base, weights=w)


def literal_construction_mc(s: Setting, N: int, seed: int, base: int = 3, chunk: int | None = None) -> dict[str, float]:
    """:func:`lookup_glm_error` of the weights base^j w* on N noisy samples of Assumption 1
    (:func:`theorydyn.core.data.sample`, float32, drawn ``chunk`` at a time, default 2^23 / (D d) rows, so
    that X stays within 32 MiB).

    The lookup is fitted per chunk; for an injective projection (base 3) the projection determines
    the pattern and hence f, so the per-chunk majority is the exact φ and chunking changes nothing.
    Returns the sample means of err, err_cond, amb and ``injective`` (1.0 when every chunk was)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 313]))
    chunk = chunk or max(1, (1 << 23) // (s.D * s.d))  # X of a chunk: 2^23 float32 numbers, 32 MiB
    err = amb = 0.0
    inj = 1.0
    for a in range(0, N, chunk):
        n = min(chunk, N - a)
        b = data.sample(s, n, seed=rng, dtype=np.float32)
        e = lookup_glm_error(s, b.X, data.labelling(s, b.X), base)
        err, amb, inj = err + e["err"] * n, amb + e["amb"] * n, min(inj, e["injective"])
    err, amb = err / N, amb / N
    return {"err": err, "err_cond": (err - amb) / (1 - amb) if amb < 1 else float("nan"), "amb": amb, "injective": inj}


def best_phi_error(
    proj_fit: np.ndarray, f_fit: np.ndarray, proj_test: np.ndarray, f_test: np.ndarray, bins: int = 64
) -> dict[str, float]:
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


def glm_fitted_errors(
    s: Setting, N_fit: int, N_test: int, N_flat: int, lam: float, rng: np.random.Generator
) -> dict[str, dict[str, float]]:
    """One seed of the fitted GLMs of Theorem 3.1: {name: {"err": Pr[f g ≤ 0], "err_cond": Pr[f g ≤ 0 | f ≠ 0]}}.

    A logistic regression on z_j = ⟨w*, X_j⟩ (components of w_j ⟂ w* only add Gaussian noise
    independent of (y, z)) and, when ``N_flat`` ≥ 4, one on the flattened X; each then with the best φ
    (:func:`best_phi_error`) fitted on held-out samples."""
    y1, _, z1 = data.sample_z(s, N_fit, rng)
    y2, _, z2 = data.sample_z(s, N_test, rng)
    f1, f2 = data.labelling_from_z(s, z1), data.labelling_from_z(s, z2)
    half = N_fit // 2
    # Fitted to sign f (the target of Theorem 3.1); the rare f = 0 samples get label +1.
    lr = fit_logreg(z1[:half].astype(float), np.sign(f1[:half]) + (f1[:half] == 0), lam)
    errs = {
        "logistic regression on <w*, X_j>": best_phi_error(
            lr.decision(z1[half:].astype(float)), f1[half:], lr.decision(z2.astype(float)), f2
        )
    }
    if N_flat >= 4:
        b = data.sample(s, N_flat, seed=rng)
        fb = data.labelling(s, b.X)
        h = N_flat // 2
        lrx = fit_logreg(b.X[:h], np.sign(fb[:h]) + (fb[:h] == 0), lam)
        bt = data.sample(s, min(N_test, 20_000), seed=rng)
        errs["logistic regression on flattened X"] = best_phi_error(
            lrx.decision(b.X[h:]), fb[h:], lrx.decision(bt.X), data.labelling(s, bt.X)
        )
    return errs
