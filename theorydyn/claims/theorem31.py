"""Theorem 3.1 in the ledger (docs/theory.md §6.1): a generalized linear model errs.

The claim: any g(X) = φ(Σ_j ⟨w_j, X_j⟩) has Pr[f g ≤ 0] ≥ 1/8, where a point with f = 0 counts as
an error (the paper's quantity; the conditional Pr[f g ≤ 0 | f ≠ 0] is reported beside it as INFO).
Every verdict row names its reading of the scope (params ``scope``): the statement's (Assumption 1
only) or the toolkit's (:func:`theorydyn.core.glm.theorem_3_1_scope`, from Assumption 2: q(D − C) > C,
q ≤ 1/2, L ≥ 4, else OUT_OF_SCOPE). The mathematics is in :mod:`theorydyn.core.glm`, the measurements in
:mod:`theorydyn.experiments.theorem31`: the ledger's are :func:`theorydyn.experiments.theorem31.run`
(:data:`EXPERIMENT`, at :func:`config`), judged here (:func:`rows`); :func:`check_theorem_3_1` runs and judges
them at sizes and options of its own (``python -m theorydyn.claims --only 3.1``, tests). Measured:

(a) the equal-weight GLM with the best link: projection T = Σ_j ⟨w*, X_j⟩, best φ = majority of
    sign f given T, its error computed *exactly* (:func:`theorydyn.core.glm.glm_oracle_error_exact`).
    It is one GLM, so its error is an upper bound on the best GLM's: it can refute the bound, not
    confirm it;
(b) fitted GLMs over seeds (:func:`theorydyn.core.glm.glm_fitted_errors`): a logistic regression on
    z_j = ⟨w*, X_j⟩ and on the flattened X, then the best φ (per-bin majority of sign f,
    :func:`theorydyn.core.glm.best_phi_error`);
(c) the literal statement (any w_j, any φ): w_j = 3^j w* makes the projection injective on the
    patterns and a lookup φ computes sign f exactly (:func:`theorydyn.core.glm.lookup_glm_error`), so the
    error is Pr[f = 0], the floor of every classifier — exact by enumeration at D = 8 and by Monte
    Carlo at the ledger's setting: read literally, the theorem is false wherever Pr[f = 0] < 1/8
    (DEVIATES);
(d) a scan over D ∈ {64, 128, 256}, C ∈ {4, 8, 16} (:func:`theorydyn.core.glm.glm_crossings`, figure
    :func:`theorydyn.core.glm.plot_theorem_3_1_scan`, both errors): the exact error is a function of
    x = q(D − C)/C² and crosses 1/8 at x* ≈ 0.73–0.75, so the bound fails inside the toolkit's scope
    for C < q(D − C) < 0.75 C² — a DEVIATES row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..core.stats import bounded_mean_ci, mean_ci
from ..experiments import theorem31 as xt31
from ..experiments.theorem31 import SCAN_31_D, THEOREM_3_1_BOUND, Theorem31Config, Theorem31Results
from ..infra.memory import MemoryEstimate
from .check import UNIT, Check, Verdict, departures, setting_params
from .sizes import ClaimSizes, Sizes, seeds_option

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Theorem31Sizes(ClaimSizes):
    """The sample sizes of :func:`check_theorem_3_1` (the defaults: its sizes outside the ledger)."""

    N_fit: int = option(100_000, "samples the GLMs on z_j = <w*, X_j> are fitted on, per seed", positive=True)
    N_test: int = option(100_000, "held-out samples of the fitted GLMs' best phi and error, per seed", positive=True)
    N_flat: int = option(2_000, "samples the GLM on the flattened X is fitted on, per seed (< 4: none)", low=0)
    N_literal: int = option(10_000, "Monte Carlo samples of the literal construction, per seed", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k (fitted: SeedSequence([seed, k, 31]); literal: seed + k)")


#: Theorem 3.1's sizes in quick mode and in the full ledger.
SIZES = Sizes(
    quick=Theorem31Sizes(N_fit=50_000, N_test=50_000, N_flat=2_000),
    full=Theorem31Sizes(N_fit=200_000, N_test=200_000, N_flat=8_000),
)

#: The small setting of the exact literal-statement row (issue 21's example): q(D − C) = 3 > C, q = 1/2, L = 4.
LITERAL_EXACT: dict[str, Any] = dict(D=8, C=2, q=0.5)

#: The two readings of Theorem 3.1's scope; every row names the one it is judged under (params ``scope``).
SCOPE_STATEMENT = "Assumption 1 only (the theorem's statement)"
SCOPE_TOOLKIT = "Assumption 1 + the toolkit's Assumption 2 rule (theorem_3_1_scope)"
#: The reading a row is judged under, in its claim text (the params carry the long form).
READING_TAG = {SCOPE_STATEMENT: " [scope: Assumption 1]", SCOPE_TOOLKIT: " [scope: Assumptions 1 + 2, toolkit rule]"}
BOUND_TEXT = ">= 0.125"
ROUTE_EXACT = (
    "FFT power vs set-by-set DP vs exhaustive enumeration vs Monte Carlo "
    "(tests/test_theorems.py::test_glm_oracle_error_*)"
)
ROUTE_FIT = (
    "logistic regression gradient vs central differences "
    "(tests/test_transfer.py::test_logreg_gradient_matches_central_differences)"
)
ROUTE_LITERAL = (
    "lookup GLM with weights 1^j = the exact equal-weight route, and base 3 injective / base 2 colliding "
    "on the exhaustive enumeration (tests/test_theorems.py::test_literal_*)"
)


def check_theorem_3_1(
    s: Setting,
    sizes: Theorem31Sizes = Theorem31Sizes(),
    *,
    lam: float = 1e-3,
    seed: int = 0,
    scan: bool = True,
    literal: bool = True,
) -> list[Check]:
    """Theorem 3.1 (any GLM g = φ(Σ_j ⟨w_j, X_j⟩) has Pr[f g ≤ 0] ≥ 1/8), on the paper's quantity
    Pr[f g ≤ 0] (a point with f = 0 has f g = 0 and counts as an error).

    Two readings of the scope, named in each row's params ``scope``: :data:`SCOPE_STATEMENT` (the
    statement cites Assumption 1 only: every setting of the sampler is in scope) and
    :data:`SCOPE_TOOLKIT` (:func:`~theorydyn.core.glm.theorem_3_1_scope`: q(D − C) > C, q ≤ 1/2, L ≥ 4; outside it
    OUT_OF_SCOPE with the assumption in the note). Rows:

    * the exact error of the equal-weight GLM (w_j = w*) with the best link φ
      (:func:`~theorydyn.core.glm.glm_oracle_error_exact`), one row per reading: PASS if ≥ 1/8, else DEVIATES. It is an
      upper bound on the best GLM's error, so it can refute the bound, not confirm it;
      Pr[f g ≤ 0 | f ≠ 0] beside it as INFO;
    * fitted GLMs over the seeds of ``sizes`` (:class:`Theorem31Sizes`; logistic regression on
      z_j = ⟨w*, X_j⟩ and on the flattened X,
      then the best φ on held-out samples), judged under the statement's reading (the toolkit
      reading's verdict in the note): DEVIATES if the 95% interval lies below 1/8, else PASS; the
      per-seed minimum over models once per reading, and its conditional error as INFO;
    * with ``literal``: the injective construction w_j = 3^j w* with a lookup φ
      (:func:`~theorydyn.core.glm.lookup_glm_error`), exact at D = 8, C = 2, q = 1/2 (:data:`LITERAL_EXACT`) and
      by Monte Carlo at ``s`` (``sizes.N_literal`` samples per seed), once per reading at ``s``: read literally (any
      φ), the theorem is false wherever Pr[f = 0] < 1/8 — DEVIATES;
    * with ``scan``: per C ∈ {4, 8, 16} the largest crossing x* = q*(D − C)/C² of the exact
      Pr[f g ≤ 0] through 1/8 over D ∈ {64, 128, 256} (:func:`~theorydyn.core.glm.glm_crossings`), once per
      reading: under the toolkit rule PASS if x* ≤ 1/C (the bound holds from the scope's edge q(D − C) = C on),
      under the statement PASS only if there is no crossing (the bound at every q); the conditional
      crossings in the note.
    """
    config = Theorem31Config(sizes, LITERAL_EXACT, lam=lam, seed=seed, literal=literal, scan=scan)
    return rows(xt31.run(s, config))


def config(s: Setting, quick: bool) -> Theorem31Config:
    """What :func:`theorydyn.experiments.theorem31.run` needs for the rows at :data:`SIZES` (the ledger's setting
    ``s`` does not enter): these sizes (quick: 50000 fit and test samples, 2000 flattened; full: 200000 and 8000;
    10000 literal Monte Carlo samples; 5 seeds), the literal construction exact at :data:`LITERAL_EXACT` and the
    scan, the default ridge and seed."""
    return Theorem31Config(SIZES.pick(quick), LITERAL_EXACT)


#: Theorem 3.1's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); the rows run nothing but, for a note of a DEVIATES row, this (D, C)'s exact
#: crossing (:func:`theorydyn.experiments.theorem31.crossing`). Its rows: the exact equal-weight GLM, the fitted GLMs,
#: the literal construction and the scan, each random number over its 5 seeds.
EXPERIMENT = xt31.run


def rows(res: Theorem31Results) -> list[Check]:
    """The rows of ``res`` (:func:`theorydyn.experiments.theorem31.run` at the setting ``res.s``), as
    :func:`check_theorem_3_1` lists them: the exact equal-weight GLM, the fitted GLMs at ``res.config``'s sizes and
    ridge, then (when measured) the literal construction and the scan's crossings."""
    n, lam = res.config.sizes, res.config.lam
    judge = _Judge(res.s, res.scope)
    exact = res.exact
    checks = _exact_rows(judge, exact)
    p_fit = dict(judge.base, N_fit=n.N_fit, N_test=n.N_test, N_flat=n.N_flat, lam=lam)
    checks += _fitted_rows(judge, res.fitted, p_fit, len(n.seeds))
    if res.literal is not None:
        checks += _literal_rows(
            exact, res.literal, res.config.literal_at, res.literal_scope, n.N_literal, judge.base, judge.both
        )
    if res.scan is not None:
        checks += _scan_rows(res.scan)
    return checks


class _Judge:
    """The verdicts of :func:`check_theorem_3_1`'s rows at ``s`` under the two readings of the scope
    (:data:`SCOPE_STATEMENT`, :data:`SCOPE_TOOLKIT`); ``base`` the params every row names."""

    def __init__(self, s: Setting, scope: str | None) -> None:
        self.s = s
        self.scope = scope
        self.base = setting_params(s, **departures(s, model=False))
        self._crossing: dict[str, float] = {}

    def crossing(self) -> dict[str, float]:
        """This (D, C)'s crossing of the exact equal-weight error through 1/8
        (:func:`theorydyn.experiments.theorem31.crossing`), measured once and only when a note needs it."""
        self._crossing.update(self._crossing or xt31.crossing(self.s))
        return self._crossing

    def judge(self, ok: bool, reading: str, what: str, why_crossing: bool = True) -> tuple[Verdict, str]:
        """(verdict, note) of a row whose bound holds iff ``ok``, under ``reading``: OUT_OF_SCOPE under
        the toolkit's rule outside its scope, else PASS or DEVIATES (the note then says where the bound
        fails, unless ``why_crossing`` is False: the note ``what`` itself says why)."""
        s = self.s
        if reading == SCOPE_TOOLKIT and self.scope:
            return Verdict.OUT_OF_SCOPE, f"out of scope under the toolkit's Assumption 2 rule: {self.scope}. {what}"
        if ok:
            return Verdict.PASS, what
        if not why_crossing:  # the note itself says why the bound fails
            return Verdict.DEVIATES, what
        x = s.q * (s.D - s.C) / s.C**2
        xs = self.crossing()["x_star"]
        where = "inside Assumption 2 (toolkit rule)" if reading == SCOPE_TOOLKIT else "under Assumption 1"
        return Verdict.DEVIATES, (
            f"the bound fails {where}: q(D-C)/C^2 = {x:.3g} is below this (D, C)'s crossing "
            f"x* = {xs:.3g} of the exact equal-weight Pr[f g <= 0] through 1/8 (the bound needs "
            f"q(D-C) >~ 0.75 C^2, see the scan rows). {what}"
        )

    def other(self, ok: bool, what: str) -> str:
        """The verdict under the toolkit's reading, for a row judged under the statement's."""
        return f"{what}. Under the toolkit's Assumption 2 rule: {self.judge(ok, SCOPE_TOOLKIT, '')[0]}"

    def both(
        self,
        quantity: str,
        value: float,
        ok: bool,
        what: str,
        route: str,
        lo: float | None = None,
        hi: float | None = None,
        params: dict | None = None,
        claim: str = "Theorem 3.1",
        why_crossing: bool = True,
    ) -> list[Check]:
        """One row per reading of the scope, the same number judged under each."""
        rows = []
        for reading in (SCOPE_STATEMENT, SCOPE_TOOLKIT):
            v, note = self.judge(ok, reading, what, why_crossing)
            p = dict(params or self.base, scope=reading)
            rows.append(
                Check(
                    claim + READING_TAG[reading],
                    quantity,
                    float(value),
                    BOUND_TEXT,
                    v,
                    params=p,
                    note=note,
                    route=route,
                    ci_low=float(value if lo is None else lo),
                    ci_high=float(value if hi is None else hi),
                )
            )
        return rows


def _exact_rows(judge: _Judge, exact: dict[str, float]) -> list[Check]:
    """The exact equal-weight GLM with the best link (:func:`check_theorem_3_1`), once per reading,
    and its conditional error as INFO."""
    glm = "equal-weight GLM, best link (w_j = w*, phi = majority of sign f given the projection)"
    upper = (
        "an upper bound on the best GLM's error (docs/theory.md §6.1): it can refute the bound, not confirm "
        f"it; Pr[f=0] = {exact['amb']:.3g}, given f != 0: {exact['err_cond']:.4f}"
    )
    rows = judge.both(
        f"exact Pr[f g <= 0], g = {glm}", exact["err"], exact["err"] >= THEOREM_3_1_BOUND, upper, ROUTE_EXACT
    )
    rows.append(
        Check.exact(
            "Theorem 3.1",
            f"exact Pr[f g <= 0 | f != 0], g = {glm}",
            exact["err_cond"],
            "INFO (not the paper's quantity: f = 0 excluded)",
            Verdict.INFO,
            params=dict(judge.base, scope="none (INFO)"),
            route=ROUTE_EXACT,
            note=f"the conditional error; the verdict rows judge Pr[f g <= 0] = {exact['err']:.4f}",
        )
    )
    return rows


def _fitted_rows(judge: _Judge, per_seed: dict[str, list[dict[str, float]]], p_fit: dict, n_seeds: int) -> list[Check]:
    """The fitted GLMs (:func:`theorydyn.experiments.theorem31.fitted`): one row per model under the statement's
    reading, the per-seed minimum over models once per reading, and its conditional error as INFO."""
    fit_note = (
        "phi = per-bin majority of sign f, fitted on held-out samples; a fitted error bounds the best GLM's from above"
    )
    rows = []
    for name, es in per_seed.items():
        vals = [e["err"] for e in es]
        m, lo, hi = mean_ci(vals)
        v, note = judge.judge(hi >= THEOREM_3_1_BOUND, SCOPE_STATEMENT, fit_note)
        rows.append(
            Check.over_seeds(
                "Theorem 3.1",
                f"Pr[f g <= 0], g = best phi of {name}",
                vals,
                BOUND_TEXT,
                v,
                params=dict(p_fit, scope=SCOPE_STATEMENT),
                route=ROUTE_FIT,
                note=judge.other(
                    hi >= THEOREM_3_1_BOUND, f"{note}; given f != 0: {np.mean([e['err_cond'] for e in es]):.4f}"
                ),
                bounds=UNIT,
            )
        )
    mins = np.min(np.array([[e["err"] for e in es] for es in per_seed.values()]), axis=0)
    mins_c = np.min(np.array([[e["err_cond"] for e in es] for es in per_seed.values()]), axis=0)
    m, lo, hi = bounded_mean_ci(mins, low=UNIT[0], high=UNIT[1], min_n=2)
    rows += judge.both(
        "Pr[f g <= 0], g = best phi of min over the fitted GLMs (per seed)",
        m,
        hi >= THEOREM_3_1_BOUND,
        fit_note,
        ROUTE_FIT,
        lo,
        hi,
        dict(p_fit, seeds=n_seeds),
    )
    rows.append(
        Check.over_seeds(
            "Theorem 3.1",
            "Pr[f g <= 0 | f != 0], g = best phi of min over the fitted GLMs (per seed)",
            list(mins_c),
            "INFO (not the paper's quantity: f = 0 excluded)",
            Verdict.INFO,
            params=dict(p_fit, scope="none (INFO)"),
            route=ROUTE_FIT,
            note="the conditional error of the fitted GLMs",
            bounds=UNIT,
        )
    )
    return rows


def _literal_rows(
    exact: dict[str, float],
    lit: dict[str, Any],
    at: dict[str, Any],
    reason2: str | None,
    N: int,
    base: dict,
    both: Callable[..., list[Check]],
) -> list[Check]:
    """The literal statement's rows (:func:`check_theorem_3_1`) from :func:`theorydyn.experiments.theorem31.literal`:
    the injective lookup GLM, exact at ``at`` (D, C, q: :data:`LITERAL_EXACT`; the toolkit's scope rule there:
    ``reason2``), Monte Carlo at the ledger's setting."""
    claim = "Theorem 3.1 (literal: any w_j, any phi)"
    glm = "lookup phi of sum_j <3^j w*, X_j> (injective on the patterns)"
    sx = Setting(**at)
    ex, eq, ex2 = lit["ex"], lit["eq"], lit["ex2"]
    seeds = len(lit["mc"])
    ok = ex["err"] >= THEOREM_3_1_BOUND
    why = (
        f"the construction errs only where f = 0 (every classifier errs there): Pr[f g <= 0] = Pr[f=0] = "
        f"{ex['amb']:.4f}, given f != 0: {ex['err_cond']:.3g} (equal weights: {eq['err']:.4f} / "
        f"{eq['err_cond']:.4f}; "
        f"colliding weights 2^j: {ex2['err']:.4f} / {ex2['err_cond']:.4f})"
    )
    note = (
        f"{why}; here Pr[f=0] >= 1/8, so the bound holds at this setting only through the ambiguous points"
        if ok
        else f"read literally (any phi) Theorem 3.1 is false: {why}"
    )
    rows = [
        Check.exact(
            claim,
            f"exact Pr[f g <= 0], g = {glm}, D={sx.D}, C={sx.C}, q={sx.q:g} (enumerated)",
            ex["err"],
            BOUND_TEXT,
            Verdict.PASS if ok else Verdict.DEVIATES,
            route=ROUTE_LITERAL,
            note=note,
            params=dict(
                D=sx.D,
                C=sx.C,
                q=sx.q,
                scope=f"{SCOPE_STATEMENT}; toolkit rule: {'in scope' if reason2 is None else reason2}",
                expectation="exhaustive enumeration",
                **departures(sx, model=False),
            ),
        )
    ]
    m, lo, hi = bounded_mean_ci(lit["mc"], low=UNIT[0], high=UNIT[1], min_n=2)
    what = (
        f"read literally (any phi) Theorem 3.1 is false: with w_j = 3^j w* the projection is injective on the "
        f"patterns <w*, X_j> in {{-1,0,1}} (balanced ternary) and a lookup phi computes sign f exactly; the error "
        f"is Pr[f=0] (exact, FFT route: {exact['amb']:.3g}), the floor of every classifier, against "
        f"{exact['err']:.4f} for equal weights. The paper's bound needs phi or the w_j restricted"
    )
    return rows + both(
        f"Pr[f g <= 0], g = {glm} (Monte Carlo)",
        m,
        hi >= THEOREM_3_1_BOUND,
        what,
        ROUTE_LITERAL,
        lo,
        hi,
        dict(base, N=N, seeds=seeds, dtype="float32"),
        claim=claim,
        why_crossing=False,
    )


def _scan_rows(cross: pd.DataFrame | None = None) -> list[Check]:
    """The crossing rows of :func:`check_theorem_3_1` (``scan``) from the crossings ``cross``
    (:func:`theorydyn.experiments.theorem31.scan`, measured here when not given), once per reading of the scope."""
    cross = xt31.scan() if cross is None else cross
    rows = []
    for C, g in cross.groupby("C"):
        xs = g["x_star"].to_numpy()
        listing = ", ".join(
            f"D={int(r.D)}: x*={r.x_star:.3f} (q*={r.q_star:.3f}, q*(D-C)={r.spurious_star:.1f}; given f != 0: "
            f"x*={r.x_star_cond:.3f})"
            if np.isfinite(r.x_star)
            else f"D={int(r.D)}: none for q <= 1 (err(1) = {r.err_at_1:.3f})"
            for r in g.itertuples()
        )
        fin = xs[np.isfinite(xs)]
        meas = float(fin.max()) if len(fin) else float("nan")
        for reading in (SCOPE_STATEMENT, SCOPE_TOOLKIT):
            if reading == SCOPE_TOOLKIT:  # the bound must hold from the scope's edge x = 1/C on
                holds = len(fin) == len(xs) and meas <= 1.0 / C
                thr = f"<= 1/C = {1 / C:.4g} (the scope edge q(D-C) = C)"
                where = "inside Assumption 2 wherever C < q(D-C) < x* C^2"
            else:  # Assumption 1 puts no bound on q: the bound must hold at every q in (0, 1]
                # glm_crossing returns q* = q_min (1e-3) when the error is >= 1/8 from the grid's first q on
                holds = bool(np.all(g["q_star"].to_numpy() <= 1e-3))
                thr = "no crossing (Pr[f g <= 0] >= 1/8 at every q in (0, 1])"
                where = "under Assumption 1 wherever q(D-C) < x* C^2"
            rows.append(
                Check.exact(
                    "Theorem 3.1 (scan)" + READING_TAG[reading],
                    f"C={int(C)}: largest x* = q*(D-C)/C^2 where the exact equal-weight Pr[f g <= 0] crosses 1/8, "
                    f"over D = {', '.join(map(str, SCAN_31_D))} and q in (0, 1]",
                    meas,
                    thr,
                    Verdict.PASS if holds else Verdict.DEVIATES,
                    params=dict(
                        C=int(C),
                        D=list(SCAN_31_D),
                        scope=reading,
                        departures="none (no transformer parameter enters this row)",
                    ),
                    note=(
                        f"the bound fails {where} (x* = 0.73-0.75 measured): "
                        "'q = poly(C)/D' needs poly(C) >~ 0.75 C^2. "
                        f"{listing}. Figure (both errors): python -m theorydyn.figures theorem31"
                    ),
                    route="Brent's method on the exact FFT route "
                    "(tests/test_theorems.py::test_glm_crossing_is_where_the_exact_error_meets_one_eighth)",
                )
            )
    return rows


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config`, i.e. at :data:`SIZES`
    (:func:`theorydyn.experiments.theorem31.memory`; the scan's exact laws are smaller than the fitted samples)."""
    return sizes_memory(s, SIZES.pick(quick))


def sizes_memory(s: Setting, n: Theorem31Sizes) -> MemoryEstimate:
    """Peak of :func:`check_theorem_3_1` at the sizes ``n`` (:func:`theorydyn.experiments.theorem31.memory`)."""
    return xt31.memory(s, N_fit=n.N_fit, N_test=n.N_test, N_flat=n.N_flat)
