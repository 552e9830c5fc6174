"""Theorem 4.2 at finite N in the ledger (docs/theory.md §4): the rows judged on its runs.

The runs are :mod:`theorydyn.experiments.theorem4` (realistic GD over seeds with its Â-frozen control,
N*(D)'s regime and the closeness runs beside them, all in one call:
:func:`~theorydyn.experiments.theorem4.run`); this module judges them (:func:`rows`):

* Theorem 4.2 — patch association (Definition 2.2) along the whole run of realistic GD with the
  full D × D Â: complete at every recorded step of the window [T_a, k·T_a]
  (:mod:`theorydyn.claims.persistence`; the run lasts ⌈max k·T_a/η⌉ steps), and small test error at
  the end, over seeds (:func:`theorem_4_rows` on :func:`~theorydyn.experiments.theorem4.run_seeds`),
  judged inside Theorem 3.1's scope rule (the same Assumption 2); from the same runs, Lemma 4.2 at
  finite N (v stays along w*; INFO, the lemma is about (P)) and Figure 4 (cos(v̂, w*) rises).
* The semi-realistic closeness the proof rests on (:func:`theorydyn.claims.semirealistic.closeness_check_rows`):
  finite-N GD against population GD at the same s, the gap's exponent in N.
* Without patch association (:func:`check_frozen_attention`, :func:`frozen_attention_row`): Â frozen
  at its initialisation, the model is (nearly) a GLM, its error against Theorem 3.1's 1/8.

Lemma 4.1 is :mod:`theorydyn.claims.lemma41`; N*(D), the N Theorem 4.2 needs, is
:mod:`theorydyn.claims.nstar`; Theorem 4.1 on the idealized (population) dynamics is checked by
:mod:`theorydyn.claims.dynamics`.

Shapes: A: (D, D), v: (d,), X: (N, D, d).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.config import Seeds, option
from ..core.setting import Setting
from ..core.stats import mean_ci
from ..experiments import theorem4 as runs4
from ..experiments.nstar import KS
from ..experiments.theorem4 import RUN as RUN  # the runs' options, named here before they moved (bench, tests)
from ..experiments.theorem4 import Theorem4Config, Theorem4Results, Theorem4Runs, glm_reading, run_frozen
from ..infra.memory import MemoryEstimate
from . import forms
from .check import UNIT, Check, Form, Verdict, departures, setting_params, unconditional_error
from .lemma41 import SIZES as LEMMA41_SIZES  # the closeness runs' size: the Lemma 4.1 finite-N rows'
from .nstar import SIZES as NSTAR_SIZES  # the regime: N*(D)'s runs at the same D and q
from .persistence import windows_rows
from .semirealistic import CLOSENESS, ClosenessSizes, closeness_check_rows
from .sizes import ClaimSizes, Sizes, grid_option, seeds_option

#: Lemma 4.2 at finite N: "v stays along w*" read as cos(v_hat, w*) >= 0.99 after phase I (the part of
#: v_hat off w* at most sqrt(1 - 0.99^2) = 14% of its norm), fixed before any run.
COS_TOL = 0.99

#: The independent routes behind the Theorem 4.2 rows' numbers.
ROUTE = (
    "association vs brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c); "
    "GD step: gradients vs central differences "
    "(tests/test_model.py::test_gradients_match_central_differences)"
)


@dataclass(frozen=True)
class Theorem4Sizes(ClaimSizes):
    """The sizes of Theorem 4.2's rows (:func:`rows` of :data:`EXPERIMENT`): its runs and the closeness rows
    beside them."""

    N: int = option(16384, "training samples of each run", positive=True)
    steps: int = option(1200, "the least GD steps of a run (more where the flow needs it: run_plan)", positive=True)
    seeds: Seeds = seeds_option(5, "the seeds k (run seed 1000 k + 42)")
    D_max: int | None = option(
        None, "the largest D run (the quick budget); None: the ledger's D", kind=int, optional=True, positive=True
    )
    ks: tuple[float, ...] = grid_option(KS, "the windows [T_a, k T_a] read (N*(D)'s: one footing)", kind=float, low=1.0)
    closeness: ClosenessSizes = option(CLOSENESS.full, "the semi-realistic closeness rows' sizes", cli=False)

    def run_D(self, D: int) -> int:
        """The D the runs are at for the ledger's ``D``: min(D, :attr:`D_max`), or D without a D_max."""
        return D if self.D_max is None else min(D, self.D_max)


#: Theorem 4.2's sizes, fixed before any run: N = 16384; quick: at D = min(D, 32) at a q where the theorem has
#: content (:func:`~theorydyn.experiments.theorem4.run_setting`); full: at the ledger's D and q; both read on
#: N*(D)'s windows k = 1.5 and 3 at the stated rule's step size (:func:`~theorydyn.experiments.theorem4.run_plan`),
#: 5 seeds.
SIZES = Sizes(
    quick=Theorem4Sizes(steps=250, D_max=32, closeness=CLOSENESS.quick),
    full=Theorem4Sizes(),
)


def theorem_4_rows(
    runs: Theorem4Runs,
    *,
    err_tol: float = 0.05,
    ledger_D: int | None = None,
    cos_tol: float = COS_TOL,
    T_a: float | None = None,
    ks: tuple[float, ...] = (),
    regime: dict | None = None,
) -> list[Check]:
    """:func:`judged_rows` of ``runs`` read on the windows [T_a, k·T_a], k in ``ks``
    (:func:`theorydyn.experiments.theorem4.read_windows`), with Theorem 3.1's reading of ``runs.s``
    (:func:`theorydyn.experiments.theorem4.glm_reading`)."""
    windows = runs4.read_windows(runs, T_a, ks) if ks else {}
    scope, glm_err = glm_reading(runs.s)
    return judged_rows(
        runs, windows, scope, glm_err, err_tol=err_tol, ledger_D=ledger_D, cos_tol=cos_tol, T_a=T_a, regime=regime
    )


def judged_rows(
    runs: Theorem4Runs,
    windows: dict[float, list[dict[str, float]]],
    scope_31: str | None,
    glm_err: float,
    *,
    err_tol: float = 0.05,
    ledger_D: int | None = None,
    cos_tol: float = COS_TOL,
    T_a: float | None = None,
    regime: dict | None = None,
) -> list[Check]:
    """The rows of Theorem 4.2 (realistic init) at the end of GD from
    :class:`~theorydyn.experiments.theorem4.Theorem4Runs` (:func:`~theorydyn.experiments.theorem4.run_seeds`:
    independent seeds of data and initialisation), over its seeds:

    1. patch association of Â (Definition 2.2, :func:`theorydyn.core.model.association`), fraction of
       rows, along the run (:func:`theorydyn.claims.persistence.windows_rows`, with ``T_a`` the idealized
       flow's association time and ``windows`` each seed's reading of [T_a, k·T_a]), judged in its regime by
       :func:`theorydyn.claims.forms.achievable` (``regime``: :func:`regime_of`'s reading of N*(D)'s runs at
       the same D, q, step size and windows): in regime PASS iff complete at every recorded step of
       [T_a, max(ks)·T_a] in every seed, else FAIL; below the regime OUT_OF_SCOPE while more samples approach
       it, FAIL (or DEVIATES at a step size outside the rule) when they do not; without ``regime``, PASS iff
       complete; at the last step INFO (the toolkit's stopping rule);
    2. Pr[f F ≤ 0] on fresh samples (the paper's quantity: f = 0 counts as an error,
       :func:`~theorydyn.claims.check.unconditional_error`): INFO at one D (an o(1) is a trend across D: the
       N*(D) runs' "Theorem 4.2 (2) across D" rows), the threshold saying whether it is at most ``err_tol``;
       Pr[f F ≤ 0 | f ≠ 0] beside it as INFO.

    Inside Theorem 3.1's scope rule (``scope_31``: :func:`theorydyn.core.glm.theorem_3_1_scope` at ``runs.s``,
    the same Assumption 2) or
    OUT_OF_SCOPE with the reason; OUT_OF_SCOPE too when GD diverged in some seed (the run's η departs
    from Parametrization 3.1's η ≤ 1/poly(d), and a diverged run measures that departure). From the
    same runs (about 100 records each), Lemma 4.2 at finite N and Figure 4 (:func:`_cos_rows`).

    With paired controls (``runs.control``: :func:`~theorydyn.experiments.theorem4.train_paired`, same
    data, same initialisation, one pass over X a step), the row of :func:`frozen_attention_row` follows
    the rows above.

    Every claim text names the size it was measured at; ``ledger_D`` (the ledger's D, when the check
    runs at a smaller one) goes into the claim text as well, so a smaller run is never read as the
    ledger's.
    """
    s, N, steps, eta, seeds = runs.s, runs.run.N, runs.run.steps, runs.run.eta, len(runs.runs)
    scope = _scope(runs, scope_31)
    assoc = [r.assoc for r in runs.runs]
    errs = [unconditional_error(r.err_f, r.amb_f) for r in runs.runs]
    status = [r.status for r in runs.runs]
    trajs = [r.trajectory for r in runs.runs]
    params = run_params(s, runs.run, "realistic", **departures(s, eta=eta))
    note = f"cos(v, w*) mean {np.mean([r.cos for r in runs.runs]):.3f}; simulate status {sorted(set(status))}"
    where = theorem_4_2_where(s, N, steps, seeds, ledger_D)
    ctl = [r.control_err for r in runs.runs if r.control_err is not None]  # the controls, when paired
    cos_after, cos_rise = [r.cos_after for r in runs.runs], [r.cos_rise for r in runs.runs]
    # the 95% intervals over seeds that the verdicts below read (the rows' own come with each Check)
    _, _, hi = mean_ci(errs)
    ctl_ci = mean_ci(ctl) if runs.control else None
    after_lo = mean_ci(cos_after)[1] if all(math.isfinite(c) for c in cos_after) else math.nan
    rise_lo = mean_ci(cos_rise)[1]
    v1 = Verdict.OUT_OF_SCOPE if scope else Verdict.INFO  # the verdict is the window row
    v2 = Verdict.OUT_OF_SCOPE if scope else Verdict.INFO  # o(1) at one D: the trend across D decides
    if scope:
        note = f"out of scope: {scope}; {note}"
    judge = None
    if regime is not None:
        note += f"; {regime['why']}"
        judge = lambda complete: forms.achievable(  # noqa: E731
            where=regime["where"],
            complete=complete,
            margin_slope=regime["margin_slope"],
            eta=eta,
            eta_inside=regime["eta_inside"],
        )
    along = (
        windows_rows(windows, T_a, eta, f"Theorem 4.2 (1) along the run {where}", params, scope, ROUTE, judge)
        if T_a is not None and windows and "association" in trajs[0]
        else []
    )
    frozen = (
        frozen_rows(s, scope_31, glm_err, ctl, ctl_ci, runs.run, ledger_D, "realistic, A frozen, paired")
        if ctl_ci is not None
        else []
    )
    # the three rows share their params, note, route and bounds
    row = functools.partial(Check.over_seeds, params=params, note=note, route=ROUTE, bounds=UNIT)
    rows = along + [
        row(
            f"Theorem 4.2 (1) {where}",
            f"patch association of A_hat at the last step ({steps}) (Definition 2.2, fraction of rows)",
            assoc,
            "INFO (the end of the run is the toolkit's stopping rule; the verdict: along the run)"
            if along
            else "== 1 (all rows, every seed)",
            v1 if along else (Verdict.OUT_OF_SCOPE if scope else bool(min(assoc) == 1.0)),
        ),
        row(
            f"Theorem 4.2 (2) {where}",
            "Pr[f F <= 0] on fresh samples (f = 0 an error)",
            errs,
            f"INFO at one D (o(1): the trend across D decides); <= {err_tol}: "
            + ("met" if hi <= err_tol else "not met"),
            v2,
        ),
        row(
            f"Theorem 4.2 (2) {where}",
            "Pr[f F <= 0 | f != 0] on fresh samples",
            [r.err_f for r in runs.runs],
            "INFO (not the paper's quantity: f = 0 excluded)",
            Verdict.INFO,
        ),
    ]
    return rows + _cos_rows(cos_after, cos_rise, after_lo, rise_lo, where, params, scope, cos_tol) + frozen


def _scope(runs: Theorem4Runs, scope: str | None) -> str | None:
    """Why the rows of ``runs`` are OUT_OF_SCOPE, or None: Theorem 3.1's scope rule at ``runs.s`` (``scope``),
    else GD diverged in some seed."""
    diverged = [f"seed {k + 1}: {r.message}" for k, r in enumerate(runs.runs) if r.status == "diverged"]
    if diverged and not scope:
        # a run that diverged measures the step size, not the theorem: eta = 10 is the toolkit's departure
        # from Parametrization 3.1 (eta <= 1/poly(d)), and here it is not harmless
        scope = (
            f"GD at eta = {runs.run.eta:g} diverged in {len(diverged)} of {len(runs.runs)} seeds "
            f"({'; '.join(diverged)}): "
            "the theorem takes eta <= 1/poly(d) (Parametrization 3.1; docs/theory.md §1.2.1)"
        )
    return scope


def _cos_rows(
    cos_after: list[float],
    cos_rise: list[float],
    after_lo: float,
    rise_lo: float,
    where: str,
    params: dict,
    scope: str | None,
    cos_tol: float,
) -> list[Check]:
    """From the runs of :func:`judged_rows` (per seed: ``cos_after``, ``cos_rise``; the lower ends of their
    95% intervals over seeds: ``after_lo``, nan unless every seed reached T0, and ``rise_lo``):

    3. Lemma 4.2 at finite N, "v stays along w*": min over recorded s ≥ T0 (the end of phase I,
       :class:`~theorydyn.core.phases.Phases`) of cos(v̂(s), w*); INFO (the lemma is about (P)), the
       threshold saying whether its 95% lower bound is ≥ ``cos_tol`` (0.99, the toolkit's reading);
       OUT_OF_SCOPE with ``scope``;
    4. Figure 4, "cos(v̂, w*) rises": cos at the end minus cos at initialisation, paired by seed;
       PASS iff its 95% interval lies above 0, else FAIL (OUT_OF_SCOPE with ``scope``).
    """
    reached = all(math.isfinite(c) for c in cos_after)
    c_lo = (min(cos_after) if math.isnan(after_lo) else after_lo) if reached else math.nan
    # INFO (issue 30): Lemma 4.2 is a statement about (P); the 0.99 reading at finite N is the toolkit's,
    # and the finite-N statement the proof rests on is the semi-realistic closeness (its own rows)
    v3 = Verdict.OUT_OF_SCOPE if scope else Verdict.INFO
    r_lo = min(cos_rise) if math.isnan(rise_lo) else rise_lo
    v4 = Verdict.OUT_OF_SCOPE if scope else bool(r_lo > 0)
    per = lambda v: ", ".join(f"{x:.4f}" for x in v)  # noqa: E731
    return [
        (Check.over_seeds if reached else _unreached)(
            f"Lemma 4.2 (finite N) {where}",
            "min over recorded s >= T0 of cos(v_hat(s), w*)",
            cos_after,
            f"INFO (the lemma is about (P); the toolkit's reading at finite N: 95% lower bound >= {cos_tol}, "
            + ("met" if reached and c_lo >= cos_tol else "not met")
            + ")",
            v3,
            params=params,
            note=(
                f"per seed {per(cos_after)} (nan: T0, the end of phase I, not reached); the lemma is about (P), "
                "where v is exactly along w*; at finite N the noise directions get a share of v"
                + (f"; out of scope: {scope}" if scope else "")
            ),
            route="tests/test_theorems.py::test_lemma_4_2_and_figure_4_rows_fail_on_a_v_off_w_star",
        ),
        Check.over_seeds(
            f"Figure 4 {where}",
            "cos(v_hat, w*) at the end minus at initialisation (paired by seed)",
            cos_rise,
            "95% interval > 0 (cos rises)",
            v4,
            params=params,
            note=f"per seed {per(cos_rise)}" + (f"; out of scope: {scope}" if scope else ""),
            route="tests/test_theorems.py::test_lemma_4_2_and_figure_4_rows_fail_on_a_v_off_w_star",
        ),
    ]


def _unreached(claim: str, quantity: str, values, threshold: str, verdict, **kw) -> Check:
    """A row whose per-seed values are not all finite (an event not reached): measured nan."""
    params = dict(kw.pop("params", {}))
    params.setdefault("seeds", len(values))
    return Check(claim, quantity, math.nan, threshold, verdict, params=params, **kw)


def run_params(s: Setting, run: Any, init: str, **more: Any) -> dict[str, Any]:
    """A Theorem 4.2 row's params: the setting's (:func:`~.check.setting_params`), the run's
    (a :class:`~theorydyn.simulate.config.SimConfig`) N, η, steps and ω, its initialisation ``init``, then ``more``."""
    return setting_params(s, N=run.N, eta=run.eta, steps=run.steps, omega=run.omega, init=init, **more)


def theorem_4_2_where(s: Setting, N: int, steps: int, n_seeds: int, ledger_D: int | None = None) -> str:
    """The size a Theorem 4.2 row was measured at, for its claim text: ``[D = 32, N = 16384, 250 steps,
    5 seeds]``, with ``; not the ledger's D = 64`` when ``ledger_D`` differs from ``s.D``."""
    other = f"; not the ledger's D = {ledger_D}" if ledger_D is not None and ledger_D != s.D else ""
    return f"[D = {s.D}, N = {N}, {steps} steps, {n_seeds} seeds{other}]"


def check_frozen_attention(
    s: Setting, run: Any, seeds: Seeds, *, ledger_D: int | None = None, progress=None
) -> list[Check]:
    """ "Without patch association the model is a GLM that does not fit f" (Section 4, with Theorem 3.1)
    on runs of its own: Â frozen at its initialisation, v̂ trained by GD at ``run``'s sizes over ``seeds``
    (:func:`theorydyn.experiments.theorem4.run_frozen`, its own data and initialisation per seed),
    judged by :func:`frozen_attention_row`. The ledger pairs the control with the Theorem 4.2 runs
    instead (``run_seeds(control=True)``, :func:`theorem_4_rows`)."""
    return frozen_attention_row(s, run_frozen(s, run, seeds, progress=progress), run, ledger_D)


def frozen_attention_row(
    s: Setting, errs: list[float], run: Any, ledger_D: int | None = None, init: str = "realistic, A frozen"
) -> list[Check]:
    """:func:`frozen_rows` at ``s`` with Theorem 3.1's reading there
    (:func:`theorydyn.experiments.theorem4.glm_reading`)."""
    scope, best = glm_reading(s)
    return frozen_rows(s, scope, best, errs, mean_ci(errs), run, ledger_D, init)


def frozen_rows(
    s: Setting,
    scope: str | None,
    best: float,
    errs: list[float],
    ci: tuple[float, float, float],
    run: Any,
    ledger_D: int | None = None,
    init: str = "realistic, A frozen",
) -> list[Check]:
    """The row of the model without patch association: Pr[f F ≤ 0 | f ≠ 0] of Â frozen at init, v̂
    trained by GD (``run``: its N, steps, η, ω), one error per seed (``errs``, with ``ci`` their mean and 95%
    interval, :func:`theorydyn.core.stats.mean_ci`). PASS iff its 95%
    interval lies at or above 1/8 (Theorem 3.1's bound for every GLM); DEVIATES iff it lies below (the
    frozen model beats the bound: with Â_ii = β ≠ Â_ij it is not exactly a GLM); INFO when the interval
    straddles 1/8; OUT_OF_SCOPE outside Theorem 3.1's scope rule (``scope``: its reason, or None inside).
    The note gives ``best``, the exact error of the equal-weight GLM with the best link
    (:func:`theorydyn.core.glm.glm_oracle_error_exact`), an upper bound on the best GLM's error
    (docs/theory.md §6.1)."""
    seeds = len(errs)
    _, lo, hi = ci
    lo, hi = (min(errs), max(errs)) if math.isnan(lo) else (lo, hi)
    note = (
        f"per seed {', '.join(f'{e:.4f}' for e in errs)}; exact error of the equal-weight GLM with the best link "
        f"at this setting {best:.4f}"
    )
    if best < 0.125:
        note += (
            " (below 1/8: Theorem 3.1's bound fails at this setting for this GLM, hence for the best GLM, see the "
            "Theorem 3.1 scan rows)"
        )
    if scope:
        verdict, note = Verdict.OUT_OF_SCOPE, f"out of scope: {scope}; {note}"
    elif lo >= 0.125:
        verdict = Verdict.PASS
    elif hi < 0.125:
        why = (
            "1/8 fails here for a GLM itself (the equal-weight one), and the frozen model errs about as that GLM does"
            if best < 0.125
            else "with A_ii = beta != A_ij the frozen model is not exactly a GLM (h_i weighs its own patch more)"
        )
        verdict, note = Verdict.DEVIATES, f"the model with A frozen at init errs less than 1/8: {why}; {note}"
    else:
        verdict, note = Verdict.INFO, f"unresolved: the 95% interval straddles 1/8; {note}"
    where = theorem_4_2_where(s, run.N, run.steps, seeds, ledger_D)
    return [
        Check.over_seeds(
            f"Section 4, without patch association (Theorem 3.1) {where}",
            "Pr[f F <= 0 | f != 0] with A_hat frozen at init, v_hat trained by GD",
            errs,
            ">= 1/8 (95% interval; a GLM errs at least 1/8)",
            verdict,
            params=run_params(s, run, init),
            note=note,
            route="fused v-only step vs frozen_grad_v "
            "(tests/test_simulate_partial.py::test_v_only_step_matches_the_numpy_route), frozen_grad_v vs "
            "model.risk_and_grad "
            "(tests/test_theorems.py::test_frozen_attention_gradient_and_verdicts), itself "
            "vs central differences "
            "(tests/test_model.py::test_gradients_match_central_differences)",
            bounds=UNIT,
        )
    ]


def regime_of(res: Theorem4Results) -> dict:
    """Whether Theorem 4.2's runs of ``res`` (at ``res.sg`` with N samples) are in the regime of "N = poly(d)
    suffices": N*(D)'s runs at the same D, q, step size and windows (``res.regime``:
    :func:`theorydyn.experiments.nstar.regime_reading`), N_50 on the longest window as a bracket
    (:func:`theorydyn.claims.forms.regime`), and the association margin's slope per doubling of N; the text
    says why q moved (``res.why_q``) and where the step size comes from (``res.plan``).

    Returns dict(where, why, margin_slope, eta_inside, n50)."""
    rd, plan = res.regime, res.plan
    r, tr, Ns = rd["n50"], rd["trend"], rd["Ns"]
    where, why = forms.regime(res.runs.run.N, r["boot_lo"], r["boot_hi"])
    grid = f"N*(D)'s grid N = {Ns[0]}..{Ns[-1]} at this D and q, window [T_a, {rd['k']:g} T_a]: {r['text']}"
    why = f"{why}; {grid}"
    if res.why_q:
        why = f"{res.why_q}; {why}"
    why += (
        f"; eta = {plan['eta']:g}: the stated rule 1/lambda*, lambda* = {plan['lam']:.4g} the largest curvature "
        f"along the idealized flow (edge of stability 2/lambda* = {plan['edge']:.4g})"
    )
    return dict(
        where=where,
        why=why,
        margin_slope=None if tr is None else (tr["b_low"], tr["b_high"]),
        eta_inside=rd["eta"] <= rd["eta_rule"] * (1 + 1e-12),
        n50=r,
    )


def config(s: Setting, quick: bool) -> Theorem4Config:
    """What :func:`theorydyn.experiments.theorem4.run` needs for the rows at :data:`SIZES`: these sizes, N*(D)'s
    (its runs at the same D and q give the regime; the full mode's time budget) and the D the closeness
    runs' size search starts from (the Lemma 4.1 finite-N rows': from 16 quick, from min(D, 32) full)."""
    regime = NSTAR_SIZES.pick(quick)
    return Theorem4Config(
        SIZES.pick(quick), regime, LEMMA41_SIZES.pick(quick).start_D(s.D), None if quick else regime.budget_s
    )


#: Theorem 4.2's experiment: ``verify`` runs it at :func:`config` and judges its results by :func:`rows`
#: (:func:`theorydyn.claims.judge`); this module runs nothing. Its rows: Theorem 4.2 (with Lemma 4.2 and Figure 4
#: from its runs) and the model without patch association at :data:`SIZES`, each random number over its 5
#: seeds, every row's claim text naming its size.
EXPERIMENT = runs4.run


def rows(res: Theorem4Results) -> list[Check]:
    """The rows of ``res`` (:func:`theorydyn.experiments.theorem4.run` at the ledger's setting ``res.s``):

    * Theorem 4.2 at the ledger's D in full mode (N = 16384); in quick mode at D = min(D, 32), at a q where
      the theorem has content (:func:`theorydyn.experiments.theorem4.run_setting`), labelled so in its claim
      text, plus a NOT_RUN row for the ledger's D when that is larger, with the command that runs it. Steps,
      step size and records are :func:`theorydyn.experiments.theorem4.run_plan`'s (N*(D)'s windows and the
      stated rule), the regime :func:`regime_of`'s (:func:`judged_rows`);
    * without patch association (:func:`frozen_rows`): each Theorem 4.2 run's Â-frozen control (same data,
      same initialisation, the same steps), error against 1/8;
    * Lemma 4.2's finite-N statement the proof rests on: the semi-realistic closeness
      (:func:`theorydyn.claims.semirealistic.closeness_check_rows`), at the Lemma 4.1 finite-N rows' size.
    """
    s, sg = res.s, res.sg
    not_run = _not_run_rows(s, sg.D) if sg.D != s.D else []
    out = judged_rows(
        res.runs, res.windows, res.scope, res.glm_err, ledger_D=s.D, T_a=res.plan["T_a"], regime=regime_of(res)
    )
    return out + closeness_check_rows(res.closeness, s.D) + not_run


def _not_run_rows(s: Setting, D_run: int) -> list[Check]:
    """The NOT_RUN rows of Theorem 4.2 at the ledger's D when the quick runs are at ``D_run`` < D, with the
    command that runs them at full size."""
    Nf = SIZES.full.N
    cmd = (
        f"python -m theorydyn.verify --D {s.D} --C {s.C} --q {s.q:g} --only theorem4 "
        f"(full size: N = {Nf}, {len(SIZES.full.seeds)} seeds, the rule's step size)"
    )
    out = []
    for part, what in (
        ("(1)", "patch association of A_hat (Definition 2.2, fraction of rows)"),
        ("(2)", "Pr[f F <= 0] on fresh samples (f = 0 an error)"),
    ):
        out.append(
            Check.not_run(
                f"Theorem 4.2 {part} [D = {s.D}, the ledger's D]",
                what,
                "== 1 at every recorded step of [T_a, 3 T_a] (all rows, every seed), in regime"
                if part == "(1)"
                else "INFO at one D (o(1): the trend across D)",
                f"not run in quick mode: the quick budget runs Theorem 4.2 at D = {D_run} (the rows above)",
                cmd,
                params=setting_params(s, N=Nf, seeds=len(SIZES.full.seeds)),
                form=Form.ACHIEVABLE,
            )
        )
    return out


def inputs(s: Setting, quick: bool) -> dict:
    """What the rows read besides the code and ``s``: nothing (its NOT_RUN rows depend only on
    the mode and the ledger's D), so the ledger may reuse them (:mod:`theorydyn.verify.ledger`)."""
    return {}


def memory(s: Setting, quick: bool) -> MemoryEstimate:
    """Peak of :data:`EXPERIMENT` at :func:`config`: the largest simulation
    (:func:`theorydyn.experiments.theorem4.memory`): Theorem 4.2 at :data:`SIZES`' N (16384) and D = min(D, its
    D_max) (32 in quick mode; the ledger's D in full mode)."""
    return runs4.memory(s, config(s, quick))
