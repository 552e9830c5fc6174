"""One verdict rule per logical form of a claim (:class:`~theorydyn.claims.check.Form`; docs/theory.md §15).

A claim of the paper is an upper bound, a lower bound over learners, a statement that something is
achievable with enough samples, a rate, a vanishing quantity or an identity; each needs its own reading
of the numbers. The rules below take the measured intervals and return a verdict with the words that
say why; the claims call them and nothing else decides a verdict of these forms.

* :func:`achievable` (Theorem 4.2 (1), (2), Figure 4): judged only in regime, N ≥ N_50 at its D; below
  the regime OUT_OF_SCOPE only while more samples approach it (the association margin grows with N);
  a margin that does not grow is a FAIL at a step size inside the theorem's assumptions and DEVIATES,
  naming the step size, outside them.
* :func:`rate` ("N = poly(d)", N_50(D) ∝ D^b): PASS when a power law passes through every N_50 bracket
  (:func:`theorydyn.core.stats.bracket_power_law`), FAIL when the local exponent accelerates across at
  least :data:`MIN_UNCENSORED` uncensored sizes; INFO otherwise.
* :func:`lower_bound` (Theorem 5.2): a lower bound over all learners never PASSes from one learner; a
  learner without the structure whose need does not grow FAILs it; a growing need is "consistent".
* :func:`polylog_upper` (Theorem 5.1, "Ñ ≤ polylog(D) suffices"): the need's exponent across D against that of
  (ln D)^k, k stated, on the D's at hand (:func:`polylog_exponent`), read only where the need lies above the
  procedure's floor at :data:`MIN_ABOVE_FLOOR` sizes or more.
* :func:`vanishing` ("o(1)"): the quantity falls with D (the slope of its log on log D below 0);
  a constant threshold at one D is INFO. :func:`vanishing_error` reads an error together with its part
  beyond the irreducible floor Pr[f = 0] (the error given f ≠ 0): both must fall.
* :func:`faster_than_every_power` ("d^-omega(1)"): the local exponent Δ log X / Δ log D keeps falling
  across the sizes (the last at least :data:`DROP` below the first, and below 0): no power law holds.
  :func:`faster_than_every_power_between` reads a quantity known between two envelopes (a floor
  below it, a bound above it).

Every rule returns ``(verdict, why)``; ``why`` goes into the row's threshold or note.
"""

from __future__ import annotations

import math

import numpy as np

from .check import Verdict

#: Fewest uncensored sizes (D) on which a rate across D can FAIL: two sizes always fit a power law.
MIN_UNCENSORED = 3


def regime(N: int, n50_low: float, n50_high: float, *, own_completion: bool = False) -> tuple[str, str]:
    """Whether a run at ``N`` samples is in the regime of "N = poly(d) suffices" at its D.

    Args:
        N: the run's samples.
        n50_low, n50_high: N_50 at the run's D, q, step size and window as a bracket (the seed-bootstrap
            range of :func:`theorydyn.claims.nstar.n50`): N_50 ∈ (n50_low, n50_high]; ``inf`` for a high end
            censored above the grid, nan when N_50 was not measured.
        own_completion: the run itself shows association complete over its window in every seed (then it is
            in regime whatever N_50 says: the run is the evidence).

    Returns:
        ("in" | "below" | "unknown", why): "in" when N ≥ n50_high (every resample of the seeds reaches 1/2
        at or below N) or ``own_completion``; "below" when N ≤ n50_low or N < n50_high (N_50 may lie
        above N); "unknown" when N_50 was not measured.
    """
    if own_completion:
        return "in", "in regime: association complete over the window in every seed (the run's own evidence)"
    if math.isnan(n50_high) and math.isnan(n50_low):
        return "unknown", "regime unknown: N_50 not measured at this D, q, step size and window"
    if N >= n50_high:
        return "in", f"in regime: N = {N} >= the upper end of N_50's bracket ({_num(n50_high)})"
    return "below", f"below the regime: N = {N} < the upper end of N_50's bracket ({_num(n50_high)})"


def achievable(
    *,
    where: str,
    complete: bool,
    margin_slope: tuple[float, float] | None,
    eta: float,
    eta_inside: bool,
) -> tuple[Verdict, str]:
    """The verdict of an "achievable with enough samples" row from its regime and its runs.

    Args:
        where: :func:`regime`'s first value ("in", "below", "unknown").
        complete: the property holds in every seed (association over the window, error below its bound).
        margin_slope: the 95% interval of the association margin's slope per doubling of N across the N grid
            at this D (:func:`theorydyn.core.stats.trend_slope_ci` with ``log_y=False`` on log2 N), or None
            when no grid was run.
        eta: the runs' step size; eta_inside: whether it is inside the theorem's assumptions (the stated
            rule of :mod:`theorydyn.experiments.stepsize`) or a departure.

    Returns:
        (verdict, why):

        * in regime: PASS when ``complete``, else FAIL (an in-regime run that loses the property);
        * below (or unknown) regime, margin growing (the interval above 0): OUT_OF_SCOPE, more samples are
          approaching the regime;
        * below, margin not growing (the interval at or below 0): FAIL when ``eta_inside`` ("N = poly(d)
          suffices" fails at this step size), else DEVIATES naming the step size;
        * below, margin unresolved (the interval straddles 0) or no grid: INFO.
    """
    if where == "in":
        return (
            (Verdict.PASS, "in regime, complete in every seed")
            if complete
            else (
                Verdict.FAIL,
                "in regime, yet not complete in every seed",
            )
        )
    if complete:  # complete below the bracket's upper end: the run itself is the evidence
        return Verdict.PASS, "complete in every seed (the run's own evidence that N is in regime)"
    if margin_slope is None:
        return Verdict.INFO, "regime not established and no N grid to read the margin on"
    lo, hi = margin_slope
    grid = f"margin slope per doubling of N [{_num(lo)}, {_num(hi)}]"
    if lo > 0:
        return Verdict.OUT_OF_SCOPE, f"below the regime, and more samples approach it ({grid} > 0)"
    if hi <= 0:
        if eta_inside:
            return Verdict.FAIL, f"more samples do not approach association ({grid} <= 0) at eta = {eta:g}"
        return (
            Verdict.DEVIATES,
            f"more samples do not approach association ({grid} <= 0) at eta = {eta:g}, a step size outside "
            "the theorem's assumptions (the rule's step is read beside it)",
        )
    return Verdict.INFO, f"below the regime; whether more samples approach it is unresolved ({grid} straddles 0)"


def rate(shape: str, feasible: bool, n_uncensored: int) -> tuple[Verdict, str]:
    """The verdict of "N = poly(d)" read on N_50 brackets across D (:func:`theorydyn.core.stats.bracket_power_law`).

    PASS when a power law passes through every bracket (censored sizes as one-sided brackets) and at least
    :data:`MIN_UNCENSORED` sizes are uncensored; FAIL when the brackets force an accelerating local exponent
    across at least that many uncensored sizes (faster than every power law over them); INFO otherwise
    (too few uncensored sizes, or a decelerating / irregular shape, which bounds N_50 by a power law anyway).
    """
    if n_uncensored < MIN_UNCENSORED:
        return Verdict.INFO, f"{n_uncensored} uncensored size(s): a verdict needs >= {MIN_UNCENSORED}"
    if feasible:
        return Verdict.PASS, "a power law passes through every N_50 bracket"
    if shape == "accelerating":
        return Verdict.FAIL, "the local exponent grows beyond the brackets: faster than every power law"
    return Verdict.INFO, f"no single power law fits ({shape}); N_50 stays below a power law through the largest"


def lower_bound(b_low: float, b_high: float, b_resolution: float, *, reached: bool) -> tuple[Verdict, str]:
    """The verdict of a lower bound over all learners ("needs D^Omega(1) samples") from one learner's need.

    Args:
        b_low, b_high: the 95% interval of the exponent of the learner's need Ñ(D) ∝ D^b.
        b_resolution: the smallest exponent the Ñ grid resolves over the D range (one grid step over the
            range: log(step) / log(D_max / D_min)); an upper bound below it is "does not grow".
        reached: the learner reached the target at every D (else its need is censored: a bound).

    Returns:
        Never PASS (one learner cannot confirm a bound over all learners). FAIL when the need does not grow
        (b_high < b_resolution): a learner without the structure that needs no more samples as D grows
        contradicts the bound. INFO "consistent" when it grows (b_low > 0), INFO "unresolved" otherwise.
    """
    if not reached:
        return Verdict.INFO, "censored: the learner does not reach the target at every D (its need is a bound)"
    if b_high < b_resolution:
        return Verdict.FAIL, (
            f"the need does not grow (upper bound {_num(b_high)} < {_num(b_resolution)}, the smallest exponent "
            "the grid resolves): a learner without the structure needs no more samples as D grows"
        )
    if b_low > 0:
        return Verdict.INFO, f"consistent: the need grows (exponent > 0, lower bound {_num(b_low)}); never a PASS"
    return Verdict.INFO, "unresolved: the exponent's interval reaches 0 and the grid's resolution"


#: Fewest sizes (D) whose need lies above the procedure's floor for a polylog upper bound to be read: with one,
#: the slope is the floor's bracket at every other D.
MIN_ABOVE_FLOOR = 2


def polylog_exponent(k: float, Ds) -> float:
    """The exponent a polylog (ln D)^k shows across the D's at hand: the least-squares slope of k·ln ln D on
    ln D, the number a power-law fit of a need ∝ (ln D)^k returns there (a polylog's local exponent k/ln D
    falls with D; over a finite range it reads as a power).

    Example:
        >>> round(polylog_exponent(2, [32, 64, 128, 256]), 3)  # (ln D)^1..4: 0.226, 0.451, 0.677, 0.903
        0.451
    """
    lx = np.log(np.asarray(Ds, float))
    if len(lx) < 2 or len(np.unique(lx)) != len(lx) or lx.min() <= 0:
        raise ValueError(f"polylog_exponent needs >= 2 distinct D > 1, got {list(Ds)}")
    return float(k * np.polyfit(lx, np.log(lx), 1)[0])


def polylog_upper(
    b_low: float, b_high: float, Ds, *, k: float, n_above_floor: int, floor: float = 2.0
) -> tuple[Verdict, str]:
    """The verdict of "Ñ ≤ polylog(D) suffices" (an upper bound at polylog) from the exponent of the need across D.

    Over a finite range of D every growth is some polylog, so "polylog" is read with its degree stated:
    Ñ(D) ≤ c·(ln D)^k. On the D's at hand that bound has the exponent b_k = :func:`polylog_exponent`(k, Ds)
    (0.45 for k = 2 on D = 32…256); a need ∝ D^b with b > b_k outgrows it there, and one with b ≤ b_k cannot be
    told from a polylog of degree ≤ k on that range. The test therefore tells polylog (degree ≤ k) from every
    power above b_k and no other; widening the D range lowers b_k (k·ln(ln D_max/ln D_min)/ln(D_max/D_min)).

    Args:
        b_low, b_high: the 95% interval of the exponent of Ñ(D) ∝ D^b (seeds and sizes, the censoring box
            included: :func:`theorydyn.transfer.analysis.growth_fits`).
        Ds: the sizes the exponent was fitted on.
        k: the polylog's degree, stated before measuring.
        n_above_floor: the sizes whose need lies above the procedure's floor (the crossing beyond ``floor``
            samples, or censored above the cap); the others enter the exponent as the bracket [1, floor].
        floor: the floor, for the words.

    Returns:
        (verdict, why): INFO "at the floor" when fewer than :data:`MIN_ABOVE_FLOOR` sizes lie above it (the slope
        would measure the floor); PASS when b_high ≤ b_k (the need grows no faster than (ln D)^k across the
        range); FAIL when b_low > b_k (it outgrows every polylog of degree ≤ k there); INFO otherwise.

    Example:
        >>> str(polylog_upper(0.1, 0.3, [32, 256], k=2, n_above_floor=2)[0])
        'PASS'
        >>> str(polylog_upper(0.5, 0.6, [32, 256], k=2, n_above_floor=4)[0])
        'FAIL'
        >>> polylog_upper(-0.4, 0.4, [32, 256], k=2, n_above_floor=0)[1][:12]
        'at the floor'
    """
    n = len(Ds)
    if n_above_floor < MIN_ABOVE_FLOOR:
        return Verdict.INFO, (
            f"at the floor: the need lies above {_num(floor)} samples at {n_above_floor} of {n} D (a verdict needs "
            f">= {MIN_ABOVE_FLOOR}); at the floor the exponent measures the floor, not the need"
        )
    bk = polylog_exponent(k, Ds)
    rng = f"D = {_num(min(Ds))}…{_num(max(Ds))}"
    ci = f"[{_num(b_low)}, {_num(b_high)}]"
    if b_high <= bk:
        return Verdict.PASS, (
            f"grows no faster than (ln D)^{_num(k)} across {rng}: exponent {ci} <= {_num(bk)}, that polylog's there"
        )
    if b_low > bk:
        return Verdict.FAIL, (
            f"outgrows (ln D)^{_num(k)} across {rng}: exponent {ci} > {_num(bk)}, that polylog's there"
        )
    return Verdict.INFO, f"unresolved: exponent {ci} straddles {_num(bk)}, that of (ln D)^{_num(k)} across {rng}"


def vanishing(b_low: float, b_high: float) -> tuple[Verdict, str]:
    """The verdict of "X = o(1)" from the 95% interval of the slope of log X on log D (across D).

    PASS when the interval lies below 0 (X falls with D), FAIL when it lies at or above 0 (X does not fall),
    INFO when it straddles 0. The irreducible floor (Pr[f = 0]) is reported beside by the row.
    """
    if b_high < 0:
        return Verdict.PASS, f"falls with D (exponent interval [{_num(b_low)}, {_num(b_high)}] < 0)"
    if b_low >= 0:
        return Verdict.FAIL, f"does not fall with D (exponent interval [{_num(b_low)}, {_num(b_high)}] >= 0)"
    return Verdict.INFO, f"unresolved (exponent interval [{_num(b_low)}, {_num(b_high)}] straddles 0)"


def vanishing_error(total: tuple[float, float], given: tuple[float, float]) -> tuple[Verdict, str]:
    """The verdict of "the error Pr[f F <= 0] = o(1)" from the 95% intervals of two slopes on log D:
    ``total`` of log Pr[f F <= 0] (the paper's quantity, f = 0 an error) and ``given`` of
    log Pr[f F <= 0 | f != 0] (the model's own error, beyond the floor Pr[f = 0]).

    Pr[f F <= 0] = Pr[f = 0] + (1 - Pr[f = 0]) Pr[f F <= 0 | f != 0] vanishes only if both parts do, and the
    floor Pr[f = 0] is the data's (it falls along Assumption 2's q = poly(C)/D whatever the model does): a
    total that falls because the floor falls says nothing of the model. So the rule is :func:`vanishing` on
    each slope, the worse verdict winning (FAIL over INFO over PASS).

    >>> vanishing_error((-3.2, -2.1), (-1.5, -0.4))[0], vanishing_error((-3.2, -2.1), (-0.2, 0.3))[0]
    (<Verdict.PASS: 'PASS'>, <Verdict.INFO: 'INFO'>)
    >>> vanishing_error((-3.2, -2.1), (0.1, 0.6))[0]
    <Verdict.FAIL: 'FAIL'>
    """
    vt, wt = vanishing(*total)
    vg, wg = vanishing(*given)
    rank = {Verdict.FAIL: 0, Verdict.INFO: 1, Verdict.PASS: 2}
    verdict = min((vt, vg), key=lambda v: rank[v])
    return verdict, f"Pr[f F <= 0] {wt}; given f != 0 it {wg}"


#: The least fall of the local exponent across the sizes that reads as "faster than every power"
#: (Definition 2.1's rule, fixed before any run).
DROP = 1.0


def faster_than_every_power(
    first: tuple[float, float], last: tuple[float, float], *, drop: float = DROP
) -> tuple[Verdict, str]:
    """The verdict of "X = d^-omega(1)" from the local exponents k_i = Δ log X / Δ log D of neighbouring
    sizes: ``first`` and ``last`` the 95% intervals (lo, hi) of the first and the last (an exact computation
    gives lo == hi).

    A power law X ∝ D^-k has one exponent at every size; a quantity that falls faster than every power has
    a local exponent that keeps falling (X = exp(-c (log D)^2) has k = -2c log D). So:

    * PASS when the last exponent lies below 0 and at least ``drop`` below the first (hi_last < 0 and
      hi_last <= lo_first - drop): the exponent keeps falling;
    * FAIL when the last exponent is at or above 0 (lo_last >= 0: X does not fall at the largest sizes) or
      has settled (lo_last > hi_first - drop: it fell by less than ``drop``; X is polynomial, d^-Theta(1));
    * INFO otherwise (the intervals reach both readings).

    >>> faster_than_every_power((-6.4, -6.4), (-13.3, -13.3))[0], faster_than_every_power((-2.9, -2.9), (-3.0, -3.0))[0]
    (<Verdict.PASS: 'PASS'>, <Verdict.FAIL: 'FAIL'>)
    """
    (f_lo, f_hi), (l_lo, l_hi) = first, last
    span = f"local exponent first [{_num(f_lo)}, {_num(f_hi)}], last [{_num(l_lo)}, {_num(l_hi)}]"
    if l_hi < 0 and l_hi <= f_lo - drop:
        return Verdict.PASS, f"faster than every power ({span}: falls by >= {drop:g} and stays below 0)"
    if l_lo >= 0:
        return Verdict.FAIL, f"does not fall at the largest sizes ({span}: last >= 0)"
    if l_lo > f_hi - drop:
        return Verdict.FAIL, f"polynomial, d^-Theta(1) ({span}: fell by less than {drop:g}, settled)"
    return Verdict.INFO, f"unresolved ({span})"


def faster_than_every_power_between(
    upper: tuple[tuple[float, float], tuple[float, float]],
    lower: tuple[tuple[float, float], tuple[float, float]],
    *,
    drop: float = DROP,
) -> tuple[Verdict, str]:
    """The verdict of "X = d^-omega(1)" for a quantity known only between two envelopes at every size,
    lower(D) <= X(D) <= upper(D): ``upper`` and ``lower`` give each envelope's (first, last) local-exponent
    intervals as :func:`faster_than_every_power` reads them.

    PASS when the upper envelope falls faster than every power (X is below a d^-omega(1) sequence); FAIL when
    the lower envelope does not (X is above a sequence that is d^-Theta(1) or does not fall); INFO otherwise
    (neither envelope decides). A local exponent of X itself is not bracketed by the envelopes' exponents,
    so each envelope is read on its own.

    >>> faster_than_every_power_between(((-6, -6), (-13, -13)), ((-9, -9), (-16, -16)))[0]
    <Verdict.PASS: 'PASS'>
    >>> faster_than_every_power_between(((-1, -1), (-1.2, -1.2)), ((-2.9, -2.9), (-3.0, -3.0)))[0]
    <Verdict.FAIL: 'FAIL'>
    """
    vu, wu = faster_than_every_power(*upper, drop=drop)
    if vu is Verdict.PASS:
        return Verdict.PASS, f"the upper envelope is {wu}"
    vl, wl = faster_than_every_power(*lower, drop=drop)
    if vl is Verdict.FAIL:
        return Verdict.FAIL, f"the lower envelope {wl}"
    return Verdict.INFO, f"neither envelope decides: upper {wu}; lower {wl}"


def _num(x: float) -> str:
    return f"{x:.4g}" if math.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else "nan")
