"""Assumption 1 in the ledger: the data every run trains on have the paper's law (docs/theory.md §1.1).

The paper (Assumption 1): draw ℓ(X) uniformly from [L]; for j ∈ S_ℓ(X), X_j = y w* + ξ_j; for j in the other
sets, X_j = δ_j w* + ξ_j with δ_j = +1 or −1 with probability q/2 each and 0 otherwise; ξ_j ~ N(0, σ² (I_d −
w* w*ᵀ)) i.i.d.: "the noisy patches are sampled from the orthogonal complement of w*". Assumption 2 sets
σ² = 1/d "to have ‖ξ_j‖₂ ≈ ‖w*‖₂". So, with z_j := rint⟨w*, X_j⟩ read from X alone,

    ⟨w*, X_j⟩ = z_j exactly,   z_j = y on S_ℓ(X),   Pr[z_j = ±1] = q/2 elsewhere,   E‖X_j − z_j w*‖² = σ² (d − 1).

Every run of the ledger (Theorem 4.2, N*(D), Lemma 4.1 at finite N, the transfer's pre-training …) trains on
:func:`theorydyn.core.data.sample`; these rows check that its data have this law, at the ledger's setting,
one batch of N samples per seed (:func:`theorydyn.experiments.assumption1.run` measures, :data:`EXPERIMENT`;
this module judges, :func:`rows`):

0. exact, over every patch of every seed: max |⟨w*, X_j⟩ − z_j| against :func:`rounding_tolerance`, the
   float64 rounding of building and reading X: PASS when within it, FAIL otherwise with both numbers. Noise
   not projected out of w* leaves ⟨w*, ξ_j⟩ ~ N(0, σ²) there, |·| up to 1/2;
1. exact: the patches whose z_j the law forbids (z_j ≠ y on the signal set, |z_j| > 1 elsewhere): PASS iff 0;
2, 3. Pr[z_j = +1] and Pr[z_j = −1] outside the signal set, over seeds: PASS when the 95% interval lies in the
   band q/2 · (1 ± :data:`FREQ_BAND`), FAIL when it lies wholly outside, INFO when it straddles an edge
   (:func:`theorydyn.claims.check.interval_verdict`, ``inside=``);
4. the mean ‖ξ_j‖² over seeds against σ² (d − 1) · (1 ± :data:`NOISE_BAND`), read the same way; its note
   gives σ² (d − 1) / ‖w*‖², Assumption 2's ‖ξ_j‖ ≈ ‖w*‖ at this setting.

The bands are fixed before any run; at the quick sizes (N = 2048, 5 seeds, D = 64) the intervals' half-widths
are 0.5–1% of q/2 and 0.03% of σ² (d − 1). Each row can fail: tests/test_assumption1.py plants data whose noise
is not projected out, a flipped signal patch, a sampler at 0.8 q and one at 1.1 σ², and the same rows FAIL.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..experiments import assumption1 as law1
from ..experiments.assumption1 import Assumption1Config, Assumption1Results, DataLaw
from ..infra.memory import MemoryEstimate
from .check import UNIT, Check, Form, Verdict, interval_verdict, setting_params
from .sizes import ClaimSizes, Sizes, seeds_option


@dataclass(frozen=True)
class Assumption1Sizes(ClaimSizes):
    """The sizes of Assumption 1's rows: one batch of ``N`` samples per seed."""

    N: int = option(2048, "samples per seed", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k, one batch each (generator [k, 1001])")


#: Assumption 1's sizes, fixed before any run: N = 2048 quick, 8192 full; 5 seeds.
SIZES = Sizes(quick=Assumption1Sizes(), full=Assumption1Sizes(N=8192))
#: Rows 2, 3: the relative half-width of the band around q/2 (an equivalence band, fixed before running).
FREQ_BAND = 0.05
#: Row 4: the relative half-width of the band around σ² (d − 1).
NOISE_BAND = 0.02
#: The unit roundoff of float64, u = 2⁻⁵³.
UNIT_ROUNDOFF = 2.0**-53

CLAIM = "Assumption 1"


def rounding_tolerance(d: int, norm: float) -> float:
    """A bound on |fl⟨w*, X_j⟩ − z_j| for a patch built in float64 as the sampler builds it,
    X_j = fl(g − fl(⟨g, w*⟩) w*) + z_j w*, g the Gaussian draw, and read back as fl⟨w*, X_j⟩, with
    ``norm`` ≥ ‖X_j‖ (Higham's bound |fl(aᵀb) − aᵀb| ≤ γ_d |a|ᵀ|b|, γ_d = d u / (1 − d u), u = 2⁻⁵³).

    In exact arithmetic ⟨w*, X_j⟩ − z_j = 0. The rounding leaves, to first order, the dot product's error
    γ_d ‖g‖, ‖w*‖² − 1 ≤ (d + 2) u of the normalised w* times |⟨g, w*⟩| + 1, u (2|⟨g, w*⟩| + ‖g‖ + ‖X_j‖)
    from the three elementwise operations, and γ_d ‖X_j‖ from reading it back:
    u [(2d + 5) ‖g‖ + (d + 1) ‖X_j‖ + d + 2]. The draw g is not in X; with ‖g‖ ≤ ‖ξ_j‖ + |⟨g, w*⟩| ≤
    5 (‖X_j‖ + 1), which fails only if a standard normal exceeds 4/σ (32 at σ² = 1/64), this is at most

        tol = 16 (d + 4) u (‖X_j‖ + 1).

    >>> f"{rounding_tolerance(64, 3.0):.3e}"
    '4.832e-13'
    """
    return 16.0 * (d + 4) * UNIT_ROUNDOFF * (float(norm) + 1.0)


def band(centre: float, rel: float) -> tuple[float, float]:
    """The closed band centre · (1 ± rel) (a point when centre = 0).

    >>> band(0.125, 0.05)
    (0.11875, 0.13125)
    """
    return centre * (1.0 - rel), centre * (1.0 + rel)


def config(s: Setting, quick: bool) -> Assumption1Config:
    """What :func:`theorydyn.experiments.assumption1.run` needs for the rows at :data:`SIZES`: N samples per
    seed and the seeds."""
    n = SIZES.pick(quick)
    return Assumption1Config(N=n.N, seeds=n.seeds)


#: Assumption 1's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); this module runs nothing. One batch per seed at :data:`SIZES`.
EXPERIMENT = law1.run


def rows(res: Assumption1Results) -> list[Check]:
    """The five rows of Assumption 1 (module docstring) from ``res``
    (:func:`theorydyn.experiments.assumption1.run` at the ledger's setting ``res.s``)."""
    return _rows(res.s, res.law)


def _rows(s: Setting, law: DataLaw) -> list[Check]:
    """The five rows of Assumption 1 at ``s`` (module docstring) from the measured :class:`DataLaw` ``law``."""
    base = setting_params(s, d=s.d, sigma2=f"{s.sigma2:.6g}", N=law.N)
    route = "the projections against math.fsum, patch by patch (tests/test_assumption1.py)"
    residual = max(law.of("residual"))
    tol = rounding_tolerance(s.d, max(law.of("norm")))
    ok = residual <= tol
    out = [
        Check.exact(
            CLAIM,
            f"noise orthogonal to w*: max over {len(law.seeds)} x {law.N} samples and every patch of "
            "|<w*, X_j> - z_j|, z_j = rint<w*, X_j>",
            residual,
            f"<= {tol:.3g} (float64 rounding, 16 (d + 4) u (max ||X_j|| + 1))",
            ok,
            params=dict(base, seeds=len(law.seeds)),
            note=f"max |<w*, X_j> - z_j| = {residual:.3g} {'<=' if ok else '>'} the rounding bound {tol:.3g}"
            + ("" if ok else f", {residual / tol:.3g} times it: the noise has a component along w*"),
            route=route,
            form=Form.IDENTITY,
        )
    ]
    wrong = int(sum(law.of("wrong")))
    out.append(
        Check.exact(
            CLAIM,
            "patches whose feature coefficient z_j the law forbids (z_j != y on the signal set, |z_j| > 1 elsewhere)",
            wrong,
            "== 0",
            wrong == 0,
            params=dict(base, seeds=len(law.seeds)),
            note="" if wrong == 0 else f"{wrong} of {len(law.seeds) * law.N * s.D} patches",
            route=route,
            form=Form.IDENTITY,
        )
    )
    lo_f, hi_f = band(s.q / 2, FREQ_BAND)
    for sign, field in (("+1", "plus"), ("-1", "minus")):
        values = law.of(field)
        c = Check.over_seeds(
            CLAIM,
            f"Pr[z_j = {sign}] outside the signal set (delta_j = {sign} w.p. q/2)",
            values,
            f"95% CI inside q/2 (1 +- {FREQ_BAND:g}) = [{lo_f:.6g}, {hi_f:.6g}]",
            Verdict.INFO,
            bounds=UNIT,
            params=base,
            route="the law of z_j from X alone (rint <w*, X_j>), not the sampler's z; a sampler at 0.8 q fails "
            "(tests/test_assumption1.py)",
            form=Form.IDENTITY,
        )
        out.append(_banded(c, lo_f, hi_f, f"q/2 = {s.q / 2:.6g}"))
    expected = s.sigma2 * (s.d - 1)
    lo_n, hi_n = band(expected, NOISE_BAND)
    c = Check.over_seeds(
        CLAIM,
        "mean ||xi_j||^2 = ||X_j - z_j w*||^2 over the patches (E = tr sigma^2 (I - w* w*^T) = sigma^2 (d - 1))",
        law.of("noise2"),
        f"95% CI inside sigma^2 (d - 1)(1 +- {NOISE_BAND:g}) = [{lo_n:.6g}, {hi_n:.6g}]",
        Verdict.INFO,
        params=base,
        route="E ||xi||^2 = sigma^2 (d - 1), the trace of the covariance, against np.trace; a sampler at 1.1 sigma^2 "
        "fails (tests/test_assumption1.py)",
        form=Form.IDENTITY,
    )
    w2 = float(s.w_star @ s.w_star)
    out.append(
        _banded(c, lo_n, hi_n, f"sigma^2 (d - 1) = {expected:.6g} = {expected / w2:.4g} ||w*||^2 (Assumption 2)")
    )
    return out


def _banded(c: Check, lo: float, hi: float, what: str) -> Check:
    """``c`` with the verdict of its interval against the band [lo, hi] and a note saying where it lies."""
    verdict = interval_verdict(c.ci_low, c.ci_high, inside=(lo, hi))
    where = {Verdict.PASS: "inside", Verdict.FAIL: "outside"}.get(verdict, "across an edge of")
    gap = max(lo - c.ci_low, c.ci_high - hi, 0.0)
    note = f"95% CI [{c.ci_low:.6g}, {c.ci_high:.6g}] lies {where} the band around {what}"
    if gap > 0:
        note += f" (by {gap:.3g})"
    return replace(c, verdict=verdict, note=note)


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config`: one batch and its projections
    (:func:`theorydyn.experiments.assumption1.memory`)."""
    return law1.memory(s, config(s, quick).N)
