"""The runs of the idealized dynamics at the ledger's D (docs/theory.md §3): population GD of Parametrization 3.1,
reduced exactly to (α, γ, ρ) by Lemmas 4.1–4.2, one gradient flow of :func:`theorydyn.reduced.integrate` per
seed, each with its own Monte Carlo bank.

* :func:`flows` — the flows (:func:`theorydyn.reduced.flows_until_t2`) and what each trajectory shows
  (:class:`Flows`: the rates and gaps of γ and ρ, the phase times, the final association and error, the change
  of α after T1), with Lemma 4.3's start ratio on an independent bank and the exact equal-weight GLM beside;
* :func:`events` — Events I and III read on the flows (:class:`Events`);
* :func:`flow_vs_gd` — the paper's GD recursion against the flow on the exact expectation (:class:`FlowVsGD`);
* :func:`run` — everything the ledger's rows read (:class:`DynamicsResults`, at a :class:`DynamicsConfig`): the
  flows, Lemma 4.3's start ratio across D (:func:`theorydyn.experiments.lemma43.start_ratios`), the GD recursion
  against the flow, the events, the readings across D (:func:`theorydyn.experiments.vanishing.flow_errors_across_D`)
  and the exact Pr[f = 0] at each of their sizes (:func:`theorydyn.experiments.labels.label_agreement`).

:mod:`theorydyn.claims.dynamics` judges them; the readings across D are :mod:`theorydyn.experiments.vanishing`'s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import model
from ..core.config import Seeds
from ..core.glm import glm_oracle_error_exact
from ..core.result import Result
from ..core.setting import Setting
from ..infra.memory import MemoryEstimate
from ..reduced import flows_until_t2, integrate
from ..reduced.memory import reduced_memory
from .labels import label_agreement
from .lemma43 import lemma43_rate_ratio, start_ratios
from .vanishing import VanishingRuns, across_D_settings, bank_size, flow_errors_across_D


def memory(s: Setting, n_samples: int, vanish_sizes: int) -> MemoryEstimate:
    """Peak of :func:`run`: the flows and the readings across D with ``n_samples`` at ``s`` over ``vanish_sizes``
    sizes: one reduced flow at a time (:func:`theorydyn.reduced.memory.reduced_memory`), the largest being that of
    the largest size of the readings across D (its bank grows with D: :mod:`theorydyn.experiments.vanishing`)."""
    return max(
        (reduced_memory(t.D, t.C, t.q, bank_size(n_samples, s.D, t.D)) for t in across_D_settings(s, vanish_sizes)),
        key=lambda e: e.total,
    )


def phase(res: Result, name: str) -> float:
    """One entry of a result's :class:`~theorydyn.core.phases.Phases`, as a float (nan when not reached)."""
    v = getattr(res.phases, name)
    return math.nan if v is None else float(v)


@dataclass(frozen=True)
class Flows:
    """What :func:`flows` measured: ``per`` maps each per-seed quantity (``gap``, ``inc_ratio_min``, ``T1``,
    ``assoc``, …) to one value per seed; ``results`` the flows themselves (one :class:`Result` per seed);
    ``status`` the solver's word per seed; ``s_max`` the horizon reached (``grown`` × the default);
    ``start_ratio`` Lemma 4.3's rate ratio at s = 0 on an independent bank of ``ratio_n_samples``; ``glm`` the
    exact equal-weight GLM at ``s`` (:func:`theorydyn.core.glm.glm_oracle_error_exact`)."""

    per: dict[str, list[float]]
    results: list[Result]
    status: list[str]
    s_max: float
    grown: int
    n_samples: int
    start_ratio: float
    glm: dict[str, float]


def flows(
    s: Setting,
    *,
    progress: Callable[[str], None] | None,
    s_max: float | None,
    n_samples: int,
    seeds: Seeds,
    ratio_n_samples: int,
) -> Flows:
    """The flows at ``s`` (one per Monte Carlo bank seed of ``seeds``, horizon ``s_max`` or
    :func:`~theorydyn.reduced.flows_until_t2`'s growing default) and, on each trajectory, the per-seed
    quantities the ledger judges (:class:`Flows`)."""
    runs, s_max, grown = flows_until_t2(s, list(seeds), s_max, progress=progress, n_samples=n_samples)
    per: dict[str, list[float]] = {}
    status = []
    results: list[Result] = []
    for res in runs:
        traj = res.trajectory
        status.append(str(res.status) + (f" ({res.message})" if res.message else ""))
        sv, g, r = (traj[c].to_numpy(float) for c in ("s", "gamma", "rho"))
        later = sv > 0
        per.setdefault("gap", []).append(float(np.min(g[later] - r[later])))
        gap_rel = (g[later] - r[later]) / (np.abs(g[later]) + np.abs(r[later]))
        per.setdefault("gap_rel", []).append(float(np.min(gap_rel)))
        dg, dr = np.diff(g), np.abs(np.diff(r))
        # a rate, not an increment: the increment over the first grid interval scales with its length
        per.setdefault("dgamma_rate_min", []).append(float(np.min(dg / np.diff(sv))))
        with np.errstate(divide="ignore", invalid="ignore"):
            per.setdefault("inc_ratio_min", []).append(float(np.min(np.where(dr > 0, dg / dr, np.inf))))
        for name in ("lemma43_ratio", "T0", "T1", "T1_mass", "T2", "plateau_err", "final_err_f"):
            per.setdefault(name, []).append(phase(res, name))
        if not math.isfinite(per["final_err_f"][-1]):
            per["final_err_f"][-1] = float(traj["err_f"].iloc[-1])
        # the paper's Pr[f F <= 0] needs the final Pr[f = 0] too (a point with f = 0 counts as an error)
        per.setdefault("final_amb_f", []).append(float(traj["amb_f"].iloc[-1]))
        per.setdefault("assoc", []).append(model.association(s, model.symmetric_attention(s, g[-1], r[-1])))
        # Event III: "α(t) increases again until the population risk becomes o(1)". Measured as the
        # change of α from T1 (γ overtakes max|ρ|) to the end of the run, relative to α(T1).
        a_all = traj["alpha"].to_numpy(float)
        T1 = res.phases.T1
        a_T1 = float(np.interp(T1, sv, a_all)) if T1 is not None else math.nan
        per.setdefault("alpha_III", []).append((a_all[-1] - a_T1) / a_T1 if T1 is not None else math.nan)
        results.append(res)
    start_ratio = lemma43_rate_ratio(s, ratio_n_samples, seed=max(seeds) + 1)  # an independent bank
    glm = glm_oracle_error_exact(s)
    return Flows(per, results, status, s_max, grown, n_samples, start_ratio, glm)


@dataclass(frozen=True)
class Events:
    """Events I and III on the flows (:func:`events`), one value per flow: ``ratio`` max(|γ(T0)|, |ρ(T0)|) /
    |α(T0) − α(0)| (nan where T0 is not reached, inf where α did not move), ``risk`` and ``risk0`` the population
    risk at the end and at the start of the run (on the flow's own bank)."""

    ratio: list[float]
    risk: list[float]
    risk0: list[float]


def events(results: Sequence[Result]) -> Events:
    """Events I and III read on the flows ``results`` (:class:`Events`; γ = ρ = 0 at s = 0)."""
    ratio, risk, risk0 = [], [], []
    for res in results:
        tr, T0 = res.trajectory, res.phases.T0
        if T0 is None:
            ratio.append(math.nan)
        else:
            a, g, r = (
                float(np.interp(T0, tr["s"].to_numpy(float), tr[c].to_numpy(float))) for c in ("alpha", "gamma", "rho")
            )
            da = abs(a - float(tr["alpha"].iloc[0]))
            ratio.append(max(abs(g), abs(r)) / da if da > 0 else math.inf)
        risk.append(float(tr["risk"].iloc[-1]))
        risk0.append(float(tr["risk"].iloc[0]))
    return Events(ratio, risk, risk0)


#: The horizon of :func:`flow_vs_gd`: phase I, where α moves fastest.
GD_HORIZON = 200.0


@dataclass(frozen=True)
class FlowVsGD:
    """The GD recursion against the flow (:func:`flow_vs_gd`): ``setting`` where they ran (not the ledger's D),
    ``horizon``, the step sizes ``etas`` and per step size the ``gaps`` max_s |α_GD − α_flow| / α_flow."""

    setting: Setting
    horizon: float
    etas: tuple[float, ...]
    gaps: list[float]


def flow_vs_gd(s: Setting, etas: tuple[float, ...]) -> FlowVsGD:
    """The paper's recursion (GD) against the gradient flow of the same ℓ_red as η → 0, on the exact expectation
    (no Monte Carlo) at D = 16 with the setting's C, q, p, ν, β, τ where C divides 16 (else at D = 4C), horizon
    :data:`GD_HORIZON`: the relative gap of α for each step size of ``etas``."""
    D = 16 if 16 % s.C == 0 and s.C < 16 else 4 * s.C
    sx = s.at(D=D, q=s.q, nu=s.nu)  # C, p, ν, β, τ kept; d, σ² follow D unless set explicitly
    horizon = GD_HORIZON
    flow = integrate(sx, method="flow", s_max=horizon, expectation="exact").trajectory
    gaps = []
    for eta in etas:
        gd = integrate(sx, method="gd", eta=eta, steps=int(round(horizon / eta)), expectation="exact").trajectory
        a_flow = np.interp(gd["s"].to_numpy(), flow["s"].to_numpy(), flow["alpha"].to_numpy())
        gaps.append(float(np.max(np.abs(gd["alpha"].to_numpy() - a_flow) / np.abs(a_flow))))
    return FlowVsGD(sx, horizon, tuple(etas), gaps)


@dataclass(frozen=True)
class DynamicsConfig:
    """What :func:`run` needs for the ledger's rows of the idealized dynamics.

    Attributes:
        sizes: a validated sizes config of the claims (:mod:`theorydyn.claims.sizes`): ``etas`` (the GD step sizes
            against the flow), ``ratio_n_samples`` and ``across_seeds`` (Lemma 4.3's start ratio: samples per bank,
            banks), ``vanish_sizes`` and ``n_eval`` (the readings across D: sizes D, 1.4D, …, evaluation samples).
        s_max: the flows' horizon (None: :func:`~theorydyn.reduced.flows_until_t2`'s default, doubled while some
            seed has not reached T2).
        n_samples: Monte Carlo samples of the reduced risk per flow at the ledger's D.
        seeds: the Monte Carlo bank seed of each flow (independent banks), at every size across D too.
        lemma43_Ds: the D grid of Lemma 4.3's start ratio across D.
    """

    sizes: Any
    s_max: float | None
    n_samples: int
    seeds: Seeds
    lemma43_Ds: tuple[int, ...]


@dataclass(frozen=True)
class DynamicsResults:
    """The outcome of :func:`run` at the ledger's setting ``s``.

    Attributes:
        config: the :class:`DynamicsConfig` it ran at.
        flows: the flows at ``s``, one per bank seed, and what each shows (:class:`Flows`).
        ratios: Lemma 4.3's start ratio across ``config.lemma43_Ds`` at q = C²/D, then at the fixed q of ``s``
            (:func:`~theorydyn.experiments.lemma43.start_ratios`: D → one ratio per seed of
            ``config.sizes.across_seeds``).
        gd: the GD recursion against the flow on the exact expectation (:class:`FlowVsGD`).
        events: Events I and III read on ``flows.results`` (:class:`Events`).
        vanishing: the flows' ends at every size across D (:class:`~theorydyn.experiments.vanishing.VanishingRuns`;
            at ``s`` the flows of ``flows`` where the horizon is the default).
        floors: the exact Pr[f = 0] at each size of ``vanishing.settings``
            (:func:`~theorydyn.experiments.labels.label_agreement`), the floor of every classifier's error.
    """

    s: Setting
    config: DynamicsConfig
    flows: Flows
    ratios: tuple[dict[int, list[float]], dict[int, list[float]]]
    gd: FlowVsGD
    events: Events
    vanishing: VanishingRuns
    floors: tuple[float, ...]


def run(s: Setting, config: DynamicsConfig, progress: Callable[[str], None] | None = None) -> DynamicsResults:
    """Everything the ledger's rows of the idealized dynamics read at ``s`` (:class:`DynamicsResults`), in this order:

    1. :func:`flows`: one reduced flow of (α, γ, ρ) per bank seed of ``config.seeds`` with ``config.n_samples``
       Monte Carlo samples, to ``config.s_max`` (or the growing default), with Lemma 4.3's start ratio on an
       independent bank of ``config.sizes.ratio_n_samples`` and the exact equal-weight GLM;
    2. Lemma 4.3's start ratio across D (:func:`~theorydyn.experiments.lemma43.start_ratios` on
       ``config.lemma43_Ds``, banks of ``ratio_n_samples``, seeds ``across_seeds``), q = C²/D and then q fixed;
    3. the GD recursion against the flow at the step sizes ``config.sizes.etas`` (:func:`flow_vs_gd`);
    4. Events I and III on the flows (:func:`events`);
    5. the flows' ends across D (:func:`~theorydyn.experiments.vanishing.flow_errors_across_D`, ``vanish_sizes``
       sizes, the same bank seeds, banks ``n_samples``·(D_k/D)², ``n_eval`` evaluation samples), reusing the flows
       of 1 at ``s`` unless ``config.s_max`` was given (a horizon given for the ledger's D is not the path's rule);
    6. the exact Pr[f = 0] at each of those sizes (:func:`~theorydyn.experiments.labels.label_agreement`).
    """
    n = config.sizes
    fl = flows(
        s,
        progress=progress,
        s_max=config.s_max,
        n_samples=config.n_samples,
        seeds=config.seeds,
        ratio_n_samples=n.ratio_n_samples,
    )
    ratios = start_ratios(s, config.lemma43_Ds, n.ratio_n_samples, n.across_seeds)
    gd = flow_vs_gd(s, n.etas)
    ev = events(fl.results)
    vanishing = flow_errors_across_D(
        s,
        config.seeds,
        n_sizes=n.vanish_sizes,
        n_samples=config.n_samples,
        n_eval=n.n_eval,
        first=fl.results if config.s_max is None else None,
        first_horizon=(fl.s_max, fl.grown),
        progress=progress,
    )
    floors = tuple(label_agreement(t)["zero"] for t in vanishing.settings)
    return DynamicsResults(s, config, fl, ratios, gd, ev, vanishing, floors)
