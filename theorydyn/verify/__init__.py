"""``python -m theorydyn.verify``: the ledger — every numerical check of the paper's claims, one table.

One row per check (:class:`theorydyn.claims.check.Check`), columns :data:`theorydyn.claims.check.LEDGER_COLUMNS`
(claim, quantity, measured, ci_low, ci_high, threshold, verdict, note, route, params). Verdicts:
PASS, FAIL, DEVIATES (the note says what and why), OUT_OF_SCOPE (the note names the assumption),
INFO (a diagnostic the paper does not claim). Every number that depends on randomness is a mean
over ≥ 5 independent seeds with its 95% t-interval; exact numbers have ci_low = ci_high.

Sources (:data:`SOURCES`, each imported lazily):

* ``reduced``: the idealized dynamics (population GD of Parametrization 3.1, reduced exactly to
  (α, γ, ρ) by Lemmas 4.1–4.2; docs/theory.md §3), one gradient flow of
  :func:`theorydyn.reduced.integrate` per seed, each with its own Monte Carlo bank:
  - Lemma 4.3: min over recorded t > 0 of γ(t) − ρ(t) > 0 (at t = 0 both are 0), every seed;
  - Lemma 4.3: the increment ratio Δγ/|Δρ| in phase II > 1 (the lemma: of order D), every seed;
  - Section 4.1, Events I–III: the phase times T0, T1, T1_mass, T2, reached in every seed;
  - Theorem 4.1: patch association of the final three-value A (Definition 2.2, through
    :func:`theorydyn.model.association`) and final population error against f < 2%;
  - INFO: the paper's GD recursion against the flow (solver consistency, exact expectation at
    D = 16: no randomness).
* ``theorems``: :func:`theorydyn.claims.theorems.run_all` (Theorems 3.1, 3.2, 4.2, Lemma 4.1).
* ``transfer``: ``theorydyn.claims.transfer.checks`` (Theorems 5.1, 5.2).
* ``figure2``: ``theorydyn.claims.figure2.checks`` (Figure 2).
* ``vision``: ``theorydyn.claims.vision.checks`` (Section 6).

A source that is not installed becomes one SKIP row saying so; a source that raises becomes a
FAIL row with the exception (a check that could not run is not a pass).

``--markdown`` prints the README table (claim | the paper says | measured (CI) | verdict) from the
ledger CSV written by a previous run (:func:`format_markdown`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input.
"""

from __future__ import annotations

import importlib
import inspect
import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import model
from ..claims.check import LEDGER_COLUMNS, Check, Verdict
from ..claims.theorems import run_all
from ..reduced import integrate
from ..result import Result
from ..setting import Setting
from ..stats import mean_ci

PROG = "python -m theorydyn.verify"
COLUMNS = LEDGER_COLUMNS
SKIP = "SKIP"


def _row(claim: str, quantity: str, verdict: str, note: str = "") -> dict[str, Any]:
    return dict(claim=claim, quantity=quantity, measured=math.nan, ci_low=math.nan, ci_high=math.nan, threshold="",
                verdict=verdict, note=note, route="", params="")


def phase(res: Result, name: str) -> float:
    """One entry of a result's :class:`~theorydyn.phases.Phases`, as a float (nan when not reached)."""
    v = getattr(res.phases, name)
    return math.nan if v is None else float(v)


def _above_one(values) -> Verdict:
    """PASS if the 95% interval of the mean lies above 1, FAIL if below, INFO if it contains 1
    (unresolved at this number of seeds and samples: the note says so through the interval)."""
    _, lo, hi = mean_ci(values)
    return Verdict.PASS if lo > 1 else (Verdict.FAIL if hi < 1 else Verdict.INFO)


def _all_finite(v) -> bool:
    return bool(np.all(np.isfinite(np.asarray(v, dtype=float))))


def reduced_checks(s: Setting, quick: bool = False, s_max: float | None = None, n_samples: int | None = None,
                   seed: int = 0, seeds: int = 5) -> list[Check]:
    """The checks of the idealized dynamics (module docstring), one flow per seed (independent banks)."""
    s_max = s_max or 2.0e4 * max(1.0, s.D / 64) ** 1.5
    n_samples = n_samples or (1500 if quick else 4000)
    params = dict(D=s.D, C=s.C, q=round(s.q, 6), tau=s.tau, s_max=s_max, n_samples=n_samples)
    per: dict[str, list[float]] = {}
    status = []
    for k in range(seeds):
        res = integrate(s, method="flow", s_max=s_max, n_samples=n_samples, seed=seed + k)
        traj = res.trajectory
        status.append(str(res.status) + (f" ({res.message})" if res.message else ""))
        sv, g, r = (traj[c].to_numpy(float) for c in ("s", "gamma", "rho"))
        later = sv > 0
        per.setdefault("gap", []).append(float(np.min(g[later] - r[later])))
        per.setdefault("gap_rel", []).append(float(np.min((g[later] - r[later]) / (np.abs(g[later]) + np.abs(r[later])))))
        dg, dr = np.diff(g), np.abs(np.diff(r))
        per.setdefault("dgamma_min", []).append(float(dg.min()))
        with np.errstate(divide="ignore", invalid="ignore"):
            per.setdefault("inc_ratio_min", []).append(float(np.min(np.where(dr > 0, dg / dr, np.inf))))
        for name in ("lemma43_ratio", "T0", "T1", "T1_mass", "T2", "plateau_err", "final_err_f"):
            per.setdefault(name, []).append(phase(res, name))
        if not math.isfinite(per["final_err_f"][-1]):
            per["final_err_f"][-1] = float(traj["err_f"].iloc[-1])
        per.setdefault("assoc", []).append(model.association(s, model.symmetric_attention(s, g[-1], r[-1])))
        # Event III: "α(t) increases again until the population risk becomes o(1)". Measured as the
        # change of α from T1 (γ overtakes max|ρ|) to the end of the run, relative to α(T1).
        a_all = traj["alpha"].to_numpy(float)
        T1 = res.phases.T1
        a_T1 = float(np.interp(T1, sv, a_all)) if T1 is not None else math.nan
        per.setdefault("alpha_III", []).append((a_all[-1] - a_T1) / a_T1 if T1 is not None else math.nan)
    bad = sorted({x for x in status if x != "ok"})
    note = f"solver: {bad}" if bad else ""
    route_red = ("reduced recursion vs population GD of the full D x D model by exhaustive enumeration "
                 "(tests/test_reduced_dynamics.py::test_gd_recursion_equals_full_model_population_gd); reduced gradient "
                 "vs central differences (tests/test_reduced.py::test_gradient_matches_central_differences)")
    route_ph = ("phase detection on a hand-built trajectory "
                "(tests/test_reduced_dynamics.py::test_detect_phases_on_a_synthetic_trajectory)")

    def over(claim, quantity, key, threshold, ok, route, extra=""):
        vals = per[key]
        if not _all_finite(vals):
            info = str(threshold).startswith("INFO")
            return Check(claim, quantity, math.nan, threshold, Verdict.INFO if info else Verdict.FAIL,
                         params=dict(params, seeds=seeds),
                         note=f"not reached in {sum(not math.isfinite(v) for v in vals)} of {seeds} seeds; values {vals}",
                         route=route)
        return Check.over_seeds(claim, quantity, vals, threshold, ok(vals), params=params,
                                note="; ".join(x for x in (note, extra) if x), route=route)

    ratio_over_D = np.mean(per["lemma43_ratio"]) / s.D if _all_finite(per["lemma43_ratio"]) else math.nan
    out = [
        over("Lemma 4.3", "min over recorded intervals of the increment of gamma", "dgamma_min", "> 0 in every seed",
             lambda v: min(v) > 0, route_red, "the lemma: gamma(t+1) >= gamma(t) + eta polylog(d) alpha^p Gamma G^(p-1)"),
        over("Lemma 4.3", "min over recorded intervals of d gamma / |d rho| (every increment, whole run)", "inc_ratio_min",
             "> 1 (95% interval)", _above_one, route_red,
             "the lemma bounds |rho|'s increment by gamma's over D (up to polylog(d) factors); the minimum sits at the "
             "first recorded interval (s ~ 0.01), where the Monte Carlo gradients are smallest"),
        over("Lemma 4.3", "median over phase II of d gamma / |d rho|", "lemma43_ratio",
             f"INFO (the lemma: order D = {s.D} up to polylog(d))", lambda v: Verdict.INFO, route_ph,
             f"ratio / D = {ratio_over_D:.3g}"),
        over("Lemma 4.3 (consequence)", "min over recorded t > 0 of gamma(t) - rho(t)", "gap", "> 0 in every seed",
             lambda v: min(v) > 0, route_red,
             f"relative: min_t (gamma-rho)/(|gamma|+|rho|) = {min(per['gap_rel']):.3g} over seeds (t = 0 excluded: "
             "gamma = rho = 0 there)"),
    ]
    for name, event, what in (("T0", "Event I", "end of phase I, alpha at its plateau"),
                              ("T1", "Event II", "first s with gamma(s) > max_t |rho(t)|"),
                              ("T1_mass", "Event II", "in-set attention mass Lambda+(C-1)Gamma reaches 1/2"),
                              ("T2", "Event III", "error against f below 2%")):
        out.append(over(f"Section 4.1, {event}", f"{name}: {what}", name, f"reached by s = {s_max:g} in every seed",
                        lambda v: True, route_ph))
    out.append(over("Section 4.1, Event I", "error against f at T0 (the GLM-like plateau)", "plateau_err",
                    "INFO (Theorem 3.1: a GLM errs >= 1/8)", lambda v: Verdict.INFO, route_ph))
    def event3(v):
        lo, hi = mean_ci(v)[1:]
        return Verdict.PASS if lo > 0 else Verdict.DEVIATES if hi < 0 else Verdict.INFO

    out.append(over("Section 4.1, Event III", "relative change of alpha from T1 to the end of the run, "
                    "(alpha(end) - alpha(T1)) / alpha(T1)", "alpha_III", "> 0 (the paper: alpha increases again)",
                    event3, route_red,
                    "DEVIATES when the 95% interval lies below 0: in the idealized dynamics alpha decreases in phase "
                    "III while gamma grows (the model lowers the risk through attention, not through alpha)"))
    out.append(over("Theorem 4.1 (1)", "patch association of the final A(gamma, rho) (Definition 2.2, fraction of rows)",
                    "assoc", "== 1 in every seed", lambda v: min(v) == 1.0,
                    "brute-force Top-C (tests/test_theorems.py::test_association_matches_brute_force_top_c)"))
    out.append(over("Theorem 4.1 (2)", "final population error against f (idealized dynamics)", "final_err_f",
                    "< 0.02 (95% interval)", lambda v: mean_ci(v)[2] < 0.02, route_red,
                    f"labelling ambiguity (L-1)(q/2)^C = {(s.L - 1) * (s.q / 2) ** s.C:.2g}"))
    out += _flow_vs_gd(s, quick=quick)
    return out


def _flow_vs_gd(s: Setting, quick: bool) -> list[Check]:
    """INFO (solver consistency, not a claim of the paper): the paper's recursion (GD) against the
    gradient flow of the same ℓ_red as η → 0, at first order (docs/theory.md §3).

    Exact expectation (no Monte Carlo) at D = 16 with the setting's C, q, p, ν, β, τ where C
    divides 16 (else at D = 4C), horizon s ≤ 200 (phase I, where α moves fastest); gap at the
    smallest η and observed order log2(gap(η)/gap(η/2)).
    """
    D = 16 if 16 % s.C == 0 and s.C < 16 else 4 * s.C
    sx = Setting(D=D, C=s.C, q=s.q, p=s.p, nu=s.nu, beta=s.beta, tau=s.tau)
    horizon = 200.0
    etas = (0.125, 0.0625) if quick else (0.125, 0.0625, 0.03125)
    flow = integrate(sx, method="flow", s_max=horizon, expectation="exact").trajectory
    gaps = []
    for eta in etas:
        gd = integrate(sx, method="gd", eta=eta, steps=int(round(horizon / eta)), expectation="exact").trajectory
        a_flow = np.interp(gd["s"].to_numpy(), flow["s"].to_numpy(), flow["alpha"].to_numpy())
        gaps.append(float(np.max(np.abs(gd["alpha"].to_numpy() - a_flow) / np.abs(a_flow))))
    params = dict(D=D, C=s.C, q=round(s.q, 6), horizon=horizon, etas=list(etas), expectation="exact")
    order = float(np.log2(gaps[-2] / gaps[-1]))
    note = "solver consistency of two integrations of the same reduced risk, not a claim of the paper"
    return [
        Check.exact("docs/theory.md §3 (GD vs flow)", f"max_s<={horizon:g} |alpha_GD - alpha_flow| / alpha_flow at eta = {etas[-1]:g}",
                    gaps[-1], "INFO (small)", Verdict.INFO, params=params,
                    note=f"{note}; gaps: " + ", ".join(f"{g:.3g}" for g in gaps)),
        Check.exact("docs/theory.md §3 (GD vs flow)", f"order of convergence log2(gap(eta)/gap(eta/2)), eta = {etas[-2]:g}",
                    order, "INFO (1: explicit Euler)", Verdict.INFO, params=params, note=note),
    ]


def theorem_checks(s: Setting, quick: bool = False) -> list[Check]:
    """Theorems 3.1, 3.2, 4.2 and Lemma 4.1 (:func:`theorydyn.claims.theorems.run_all`)."""
    def say(msg: str) -> None:
        print(f"[verify] theorems: {msg} …", file=sys.stderr, flush=True)

    return list(run_all(s, quick=quick, progress=say))


def _external(module: str, attr: str = "checks") -> Callable[..., list[Check]]:
    """A source provided by another module as ``module.checks(quick=...)``.

    The setting is passed (positionally) only when ``checks`` has a required positional parameter
    other than ``quick``: an optional ``s`` keeps the source's own sizes. ``progress`` is passed
    when accepted. A missing module or a module without ``checks`` raises ImportError (a SKIP row).
    """

    def run(s: Setting, quick: bool = False) -> list[Check]:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            raise ImportError(f"{module} is not installed ({e})") from e
        fn = getattr(mod, attr, None)
        if fn is None:
            raise ImportError(f"{module} has no {attr}()")
        params = inspect.signature(fn).parameters
        required = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    and p.name != "quick" and p.default is p.empty]
        kw: dict[str, Any] = {"quick": quick}
        if "progress" in params:
            kw["progress"] = lambda msg: print(f"[verify] {module}: {msg} …", file=sys.stderr, flush=True)
        return list(fn(s, **kw) if required else fn(**kw))

    run.__name__ = f"{module}.{attr}"
    return run


SOURCES: dict[str, tuple[str, Callable[..., list[Check]]]] = {
    "reduced": ("theorydyn.reduced", reduced_checks),
    "theorems": ("theorydyn.claims.theorems (run_all)", theorem_checks),
    "transfer": ("theorydyn.claims.transfer (checks)", _external("theorydyn.claims.transfer")),
    "figure2": ("theorydyn.claims.figure2 (checks)", _external("theorydyn.claims.figure2")),
    "vision": ("theorydyn.claims.vision (checks)", _external("theorydyn.claims.vision")),
}


def collect(s: Setting, quick: bool = False, only: list[str] | None = None, progress: bool = True,
            **reduced_kw: Any) -> pd.DataFrame:
    """Run every available source of checks: the ledger, one row per check (columns :data:`COLUMNS`).

    A source that is not installed gives one SKIP row; one that raises gives one FAIL row whose
    note carries the exception.
    """
    rows: list[dict[str, Any]] = []
    for name, (where, fn) in SOURCES.items():
        if only and name not in only:
            continue
        t = time.perf_counter()
        if progress:
            print(f"[verify] {name} …", file=sys.stderr, flush=True)
        try:
            checks = fn(s, quick=quick, **(reduced_kw if name == "reduced" else {}))
        except ImportError as e:
            rows.append(_row(where, "(source absent from this installation)", SKIP, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 — one broken part must not hide the others' results
            last = traceback.extract_tb(e.__traceback__)[-1]
            rows.append(_row(where, "(the check raised)", str(Verdict.FAIL),
                             f"{type(e).__name__}: {e} [{Path(last.filename).name}:{last.lineno}]"))
            continue
        rows += [c.row() for c in checks]
        if progress:
            print(f"[verify] {name}: {len(checks)} checks in {time.perf_counter() - t:.1f} s", file=sys.stderr,
                  flush=True)
    return pd.DataFrame(rows, columns=COLUMNS)


def _fmt(v: Any) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.4g}"


def format_measured(measured: Any, lo: Any, hi: Any, params: Any = "") -> str:
    """``0.1506 (exact)`` for an exact row (lo == hi == measured and no ``seeds=`` in params),
    ``0.42 [0.40, 0.44]`` with a 95% interval over seeds, else the bare value."""
    m, a, b = _fmt(measured), _fmt(lo), _fmt(hi)
    if m == "—" or a == "—" or b == "—":
        return m
    if float(lo) == float(hi) == float(measured) and "seeds=" not in str(params):
        return f"{m} (exact)"
    return f"{m} [{a}, {b}]"


def format_table(df: pd.DataFrame) -> str:
    """The ledger as printed text (claim, quantity, measured with its 95% interval, threshold, verdict)."""
    show = pd.DataFrame({
        "claim": df["claim"], "quantity": df["quantity"],
        "measured [95% CI]": [format_measured(m, a, b, p) for m, a, b, p in
                              zip(df["measured"], df["ci_low"], df["ci_high"], df["params"])],
        "threshold": df["threshold"].fillna("").astype(str), "verdict": df["verdict"]})
    with pd.option_context("display.width", 250, "display.max_colwidth", 90, "display.max_rows", 1000):
        return show.to_string(index=False)


def _md(text: Any) -> str:
    return ("" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)).replace("|", "\\|")


def format_markdown(df: pd.DataFrame) -> str:
    """The README table from a ledger: | claim | the paper says | measured (CI) | verdict |.

    "claim" is the claim and the quantity measured; "the paper says" is the threshold the claim
    implies; "measured (CI)" is the value with its 95% interval over seeds, or "(exact)"; DEVIATES
    and OUT_OF_SCOPE verdicts carry their note (what and why / which assumption).
    """
    lines = ["| claim | the paper says | measured (CI) | verdict |", "|---|---|---|---|"]
    for r in df.itertuples(index=False):
        verdict = f"**{r.verdict}**"
        if r.verdict in ("DEVIATES", "OUT_OF_SCOPE", "FAIL", SKIP) and isinstance(r.note, str) and r.note:
            verdict += f": {r.note}"
        lines.append(f"| {_md(r.claim)}: {_md(r.quantity)} | {_md(r.threshold)} | "
                     f"{format_measured(r.measured, r.ci_low, r.ci_high, r.params)} | {_md(verdict)} |")
    return "\n".join(lines)


def default_out(s: Setting, quick: bool) -> Path:
    return Path(f"scans/results/verify_D{s.D}_C{s.C}{'_quick' if quick else ''}.csv")
