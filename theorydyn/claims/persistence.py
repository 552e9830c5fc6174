"""Patch association along the whole run (issue 30): Theorem 4.2 holds "for any T ≥ poly(d)/η".

A realistic GD run records Definition 2.2's per-row association (the fraction of rows i whose C
largest entries of Â_i are i's set, :func:`theorydyn.core.model.association`) at every recorded step
(the simulator's ``association`` column). The paper's "for any T ≥ poly(d)/η" is read on a window
[T_a, k·T_a] of time s = η·t, with

    T_a = max(T1, T2) of the idealized (N = ∞) flow at the row's setting: the time the idealized
          dynamics needs to end phases II and III (:func:`theorydyn.experiments.nstar.steps_for`).

(The idealized flow's own Definition 2.2 holds from s > 0 on, by the symmetry of Lemma 4.1, so its
literal association time is 0 and gives no window; T_a is when its association has a margin and its
error is o(1).) For each k of the readings (1.5 and 3; 10 where the run fits) the fraction of the
window's recorded steps at which association is complete (== 1) is measured per seed; the longest
window is the verdict (PASS iff that fraction is 1 in every seed), the others INFO.

Shapes: a trajectory is a DataFrame with columns ``s`` and ``association`` (one row per record).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..core.stats import mean_ci
from .check import UNIT, Check, Form, Verdict


def windows_rows(
    windows: dict[float, list[dict[str, float]]],
    T_a: float,
    eta: float,
    claim: str,
    params: dict,
    scope: str | None = None,
    route: str = "",
    judge: Callable[[bool], tuple[Verdict, str]] | None = None,
) -> list[Check]:
    """Theorem 4.2 (1) along the run, from the readings of the runs: ``windows`` maps each k read to one
    :func:`~theorydyn.experiments.measure.window_summary` per seed (first_s, last_s, peak, frac, covered):

    * for each k: the fraction of the recorded steps of [T_a, k·T_a] at which association is complete, over
      seeds; the longest window (max k) is the verdict: ``judge(complete)`` with complete = "the fraction is
      1 in every seed" (the claim's form: :func:`theorydyn.claims.forms.achievable` read in its regime), else
      PASS iff complete, FAIL otherwise (OUT_OF_SCOPE with ``scope``); the shorter windows INFO;
    * INFO: the first and the last recorded step with complete association, and the peak association.

    Every quantity names its window in steps (s / η) and T_a."""
    ks = tuple(windows)
    out: list[Check] = []
    if not ks:
        return [
            Check(
                claim,
                "association over the window [T_a, k T_a]",
                math.nan,
                "== 1 over the window, every seed",
                Verdict.FAIL if not scope else Verdict.OUT_OF_SCOPE,
                params=params,
                note=(f"out of scope: {scope}; " if scope else "")
                + "the idealized flow reaches neither T1 nor T2: no association time T_a, no window",
                route=route,
            )
        ]
    k_max = max(ks)
    for k in sorted(ks):
        summ = windows[k]
        fr = [x["frac"] for x in summ]
        judged = k == k_max
        why = ""
        if judged and judge is not None:
            v, why = judge(min(fr) == 1.0)
        else:
            v = (Verdict.PASS if min(fr) == 1.0 else Verdict.FAIL) if judged else Verdict.INFO
        if scope:
            v = Verdict.OUT_OF_SCOPE
        t0, t1 = T_a / eta, k * T_a / eta
        short = [f"seed {i + 1} covers {x['covered']:.2f}" for i, x in enumerate(summ) if x["covered"] < 1]
        out.append(
            Check.over_seeds(
                claim,
                f"fraction of recorded steps in [T_a, {k:g} T_a] = steps {t0:.0f}..{t1:.0f} with complete "
                "association (Definition 2.2, all rows)",
                fr,
                ("== 1 in every seed (the longest window: the verdict)" if judged else "INFO (a shorter window)"),
                v,
                params=dict(params, T_a=round(T_a, 1), k=k),
                note=(f"out of scope: {scope}; " if scope else "")
                + (f"{why}; " if why else "")
                + "per seed "
                + ", ".join(f"{x:.3f}" for x in fr)
                + f"; T_a = max(T1, T2) of the idealized flow = {T_a:.4g} (s)"
                + (f"; run shorter than the window: {', '.join(short)}" if short else ""),
                route=route,
                bounds=UNIT,
                form=Form.ACHIEVABLE if judged else Form.DIAGNOSTIC,
            )
        )
    summ = windows[k_max]
    fmt = lambda v: ", ".join("never" if not math.isfinite(x) else f"{x / eta:.0f}" for x in v)  # noqa: E731
    for key, what in (("first_s", "first"), ("last_s", "last")):
        vals = [x[key] / eta for x in summ]
        fin = [x for x in vals if math.isfinite(x)]
        m, lo, hi = mean_ci(fin) if len(fin) >= 2 else (fin[0] if fin else math.nan, math.nan, math.nan)
        out.append(
            Check(
                claim,
                f"{what} recorded step with complete association",
                m,
                "INFO",
                Verdict.INFO,
                params=dict(params, seeds=len(summ)),
                ci_low=lo,
                ci_high=hi,
                note=f"per seed (steps): {fmt([x[key] for x in summ])}; "
                f"window steps {T_a / eta:.0f}..{k_max * T_a / eta:.0f}",
                route=route,
            )
        )
    out.append(
        Check.over_seeds(
            claim,
            "peak association over the run (fraction of rows)",
            [x["peak"] for x in summ],
            "INFO (the peak is not the claim)",
            Verdict.INFO,
            params=params,
            route=route,
            bounds=UNIT,
        )
    )
    return out
