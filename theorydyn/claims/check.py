"""The record of one numerical check of a claim of the paper: one row of the ledger.

Every check in theorydyn returns :class:`Check` records; ``python -m theorydyn.verify``
collects them into one table with the columns :data:`LEDGER_COLUMNS`.

A verdict is one of :class:`Verdict`:

* ``PASS`` / ``FAIL``: the claim's own experiment, inside the claim's assumptions, measured
  against a threshold the claim implies. A FAIL is a check that could have passed and did not.
* ``DEVIATES``: a reproducible disagreement with the paper's text; the note says what and why.
* ``OUT_OF_SCOPE``: the claim's assumption does not hold at this setting; the note names it.
* ``INFO``: a diagnostic the paper does not claim (solver consistency, scalings, …), a row that
  is the toolkit's own definition (it cannot fail), or a proxy of the paper's experiment.
* ``NOT_RUN``: the claim's own experiment could not run here (its data is absent, or the toolkit
  has no route to it); the note gives the command that would run it. Not a pass, and never a
  reason for a non-zero exit status.

Every measured number that depends on randomness carries a 95% interval over seeds
(:func:`theorydyn.core.stats.mean_ci`); an exact computation has ``ci_low == ci_high == measured``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from ..core.stats import bounded_mean_ci, mean_ci

#: The range of a probability, an error rate or a patch association (``Check.over_seeds(bounds=UNIT)``).
UNIT = (0.0, 1.0)

LEDGER_COLUMNS = [
    "claim",
    "quantity",
    "measured",
    "ci_low",
    "ci_high",
    "threshold",
    "verdict",
    "note",
    "route",
    "params",
    "form",
]


class Form(StrEnum):
    """The logical form of a claim of the paper: how its verdict is read (:mod:`theorydyn.claims.forms`
    holds one rule per form; docs/theory.md §15 states them).

    * ``ACHIEVABLE``: "with enough samples / steps, X happens" (Theorem 4.2 (1), (2), Figure 4): judged only
      in regime; below the regime OUT_OF_SCOPE, unless more samples are not approaching it (then FAIL).
    * ``LOWER_BOUND``: "every learner without the structure needs D^Omega(1) samples" (Theorem 5.2):
      one learner never confirms it; a flat learner falsifies it.
    * ``POLYLOG_UPPER``: "N ≤ polylog(D) suffices" (Theorem 5.1): needs a test that tells polylog from poly
      and a need above the procedure's floor.
    * ``VANISHING``: "o(1)", "d^-omega(1)": a trend across D, never a constant at one D.
    * ``RATE``: an exponent or an order across D ("order D", "N = poly(d)").
    * ``IDENTITY``: an exact or structural statement at one setting (a symmetry, an inequality at one D).
    * ``DIAGNOSTIC``: not a claim of the paper (INFO).
    """

    ACHIEVABLE = "achievable"
    LOWER_BOUND = "lower bound over learners"
    POLYLOG_UPPER = "upper bound at polylog"
    VANISHING = "vanishing with d"
    RATE = "rate across D"
    IDENTITY = "identity"
    DIAGNOSTIC = "diagnostic"

    def __str__(self) -> str:
        return self.value


class Verdict(StrEnum):
    """The six verdicts of the ledger (module docstring)."""

    PASS = "PASS"
    FAIL = "FAIL"
    DEVIATES = "DEVIATES"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"
    INFO = "INFO"
    NOT_RUN = "NOT_RUN"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Check:
    """One claim checked at one size: one row of the ledger.

    Attributes:
        claim: where the claim is stated, e.g. ``"Theorem 3.1"``, ``"Lemma 4.3"``, ``"Definition 2.2"``.
        quantity: what was measured, in words, e.g. ``"min over GLMs of Pr[f g <= 0]"``.
        measured: the measured value (the mean over seeds when random).
        threshold: the value it is compared with, in words or as a number, e.g. ``">= 0.125"``.
        verdict: a :class:`Verdict`; ``True``/``False`` are accepted for PASS/FAIL.
        params: the parameters of the measurement (setting, N, seeds …).
        note: what a reader must know to interpret the verdict (required for DEVIATES and
            OUT_OF_SCOPE: what disagrees and why / which assumption fails).
        ci_low, ci_high: 95% interval of ``measured`` over seeds; equal to ``measured`` for an
            exact computation; nan when not estimated (a single seed).
        route: the independent route that the formula behind the number was tested against
            (exhaustive enumeration, finite differences, sympy, a second implementation).
        form: the claim's logical form (:class:`Form`), whose rule in :mod:`theorydyn.claims.forms` gave
            the verdict; "" where a row predates the forms (read as :attr:`Form.IDENTITY`).
    """

    claim: str
    quantity: str
    measured: float
    threshold: str
    verdict: Verdict | bool
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    ci_low: float = math.nan
    ci_high: float = math.nan
    route: str = ""
    form: Form | str = ""

    def __post_init__(self) -> None:
        v = self.verdict
        if isinstance(v, (bool, np.bool_)):
            v = Verdict.PASS if v else Verdict.FAIL
        object.__setattr__(self, "verdict", Verdict(v))
        if self.verdict in (Verdict.DEVIATES, Verdict.OUT_OF_SCOPE, Verdict.NOT_RUN) and not self.note:
            raise ValueError(f"a {self.verdict} row needs a note saying why ({self.claim}: {self.quantity})")

    @classmethod
    def exact(
        cls, claim: str, quantity: str, value: float, threshold: str, verdict: Verdict | bool, **kw: Any
    ) -> Check:
        """A row for an exact (non-random) computation: the interval is the value itself."""
        return cls(claim, quantity, float(value), threshold, verdict, ci_low=float(value), ci_high=float(value), **kw)

    @classmethod
    def over_seeds(
        cls,
        claim: str,
        quantity: str,
        values: Sequence[float],
        threshold: str,
        verdict: Verdict | bool,
        bounds: tuple[float, float] | None = None,
        **kw: Any,
    ) -> Check:
        """A row whose number is the mean over seeds of ``values``, with its 95% t-interval; for a
        quantity confined to ``bounds`` (a probability, an association: :data:`UNIT`) the interval is
        cut to that range (:func:`theorydyn.core.stats.bounded_mean_ci`, same coverage)."""
        if bounds is None:
            m, lo, hi = mean_ci(values)
        else:
            m, lo, hi = bounded_mean_ci(values, low=bounds[0], high=bounds[1], min_n=2)
        params = dict(kw.pop("params", {}))
        params.setdefault("seeds", len(values))
        return cls(claim, quantity, m, threshold, verdict, params=params, ci_low=lo, ci_high=hi, **kw)

    @classmethod
    def not_run(cls, claim: str, quantity: str, threshold: str, why: str, command: str, **kw: Any) -> Check:
        """A row for a check that did not run here: ``why`` (e.g. the data is absent) and the
        ``command`` that would run it go into the note; measured is nan."""
        return cls(claim, quantity, math.nan, threshold, Verdict.NOT_RUN, note=f"{why}; run it with: {command}", **kw)

    @property
    def passed(self) -> bool:
        """True unless the verdict is FAIL (DEVIATES / OUT_OF_SCOPE / INFO / NOT_RUN are not failures)."""
        return self.verdict is not Verdict.FAIL

    def row(self) -> dict[str, Any]:
        """A flat dict for a pandas row, in :data:`LEDGER_COLUMNS` order (params rendered as text)."""
        out = asdict(self)
        out["verdict"] = str(self.verdict)
        out["params"] = ", ".join(f"{k}={v}" for k, v in self.params.items())
        out["form"] = str(self.form)
        return {k: out[k] for k in LEDGER_COLUMNS}


def setting_params(s: Any, **more: Any) -> dict[str, Any]:
    """A row's params: the setting's D, C and q (q rounded to 6 digits: the rows name it as read),
    then ``more`` in its order."""
    return dict(D=s.D, C=s.C, q=round(s.q, 6), **more)


def departures(s: Any, *, eta: float | str | None = None, model: bool = True) -> dict[str, str]:
    """The departures of a row's measurement from Parametrization 3.1 and model (T), for its params
    (docs/theory.md §1.2, "Departures from Parametrization 3.1", argues each one).

    Args:
        s: the :class:`~theorydyn.core.setting.Setting` measured (its β, τ and d are read).
        eta: the step size of the run: a number (discrete GD, e.g. 10 in the simulator), ``"flow"``
            (the gradient flow, the limit η → 0 in time s = ηt) or None (no training in this row).
        model: False for a row that involves no transformer at all (Theorem 3.1's GLMs): then no
            parameter of the model enters and the entry says so.

    Returns:
        ``{"departures": text}``, a single params entry naming each departure, e.g.
        ``"eta=10 (paper: eta <= 1/poly(d)); beta=1 (paper: sigma_A = polyloglog(d)); tau=1 (model (T): …)"``.
    """
    if not model:
        return {"departures": "none (no transformer parameter enters this row)"}
    out = []
    if eta == "flow":
        out.append("eta -> 0 (gradient flow in s = eta t; paper: eta <= 1/poly(d), consistent)")
    elif eta is not None:
        out.append(f"eta={float(eta):g} (paper: eta <= 1/poly(d))")
    out.append(f"beta={float(s.beta):g} (paper: sigma_A = polyloglog(d))")
    tau_T = math.sqrt(s.d)  # S = softmax(A / tau): model (T)'s logits A / sqrt(d) are tau = sqrt(d)
    if not math.isclose(float(s.tau), tau_T, rel_tol=1e-12):
        out.append(f"tau={float(s.tau):g} (model (T): logits scaled by 1/sqrt(d), tau = sqrt(d) = {tau_T:.4g})")
    return {"departures": "; ".join(out)}


def unconditional_error(err_cond: float, amb: float) -> float:
    """Pr[f F <= 0] from the conditional error Pr[f F <= 0 | f != 0] and Pr[f = 0]: a point with
    f = 0 has f F = 0 <= 0 and counts as an error (the paper's quantity, docs/theory.md conventions)."""
    return float(amb + (1.0 - amb) * err_cond)


def interval_verdict(
    lo: float,
    hi: float,
    *,
    above: float | None = None,
    below: float | None = None,
    inside: tuple[float, float] | None = None,
    edge: str | None = None,
    if_above: Verdict = Verdict.PASS,
    if_below: Verdict = Verdict.FAIL,
    otherwise: Verdict = Verdict.INFO,
) -> Verdict:
    """The verdict of a 95% interval [lo, hi] against a threshold: the ledger's one ladder
    "interval above → one verdict, interval below → another, interval straddling → a third".

    One-sided thresholds (``above`` and/or ``below``; the same number for the usual single threshold):

    * ``if_above`` when the interval lies wholly above ``above``: lo > above (lo ≥ above with
      ``edge="above"``, the threshold itself counted as above);
    * else ``if_below`` when it lies wholly below ``below``: hi < below (hi ≤ below with
      ``edge="below"``);
    * else ``otherwise`` (the interval touches or straddles the threshold: unresolved).

    Two-sided (``inside=(a, b)``, an equivalence test): PASS when a ≤ lo and hi ≤ b (the interval
    inside the closed band), FAIL when it lies wholly outside (lo > b or hi < a), else ``otherwise``.

    With lo ≤ hi and below ≤ above the first two cases exclude each other, so the order of the tests
    does not matter. A NaN end (no interval: one seed) makes every comparison false: ``otherwise``.
    """
    if edge not in (None, "above", "below"):
        raise ValueError(f"edge must be None, 'above' or 'below', got {edge!r}")
    if inside is not None:
        if above is not None or below is not None or edge is not None:
            raise ValueError("inside= is a band of its own: give it without above=, below= or edge=")
        a, b = inside
        if a <= lo and hi <= b:
            return Verdict.PASS
        if lo > b or hi < a:
            return Verdict.FAIL
        return otherwise
    if above is None and below is None:
        raise ValueError("interval_verdict needs above=, below= or inside=")
    if above is not None and (lo >= above if edge == "above" else lo > above):
        return if_above
    if below is not None and (hi <= below if edge == "below" else hi < below):
        return if_below
    return otherwise
