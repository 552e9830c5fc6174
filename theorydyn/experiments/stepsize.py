"""The step size of the finite-sample runs, by a rule stated before any run (docs/theory.md §15.4).

Parametrization 3.1 takes η ≤ 1/poly(d), an asymptotic condition with no number at a finite d. The
toolkit's rule is the descent lemma's step along the idealized trajectory:

    λ* = max over the idealized flow's trajectory θ(s), 0 ≤ s ≤ horizon, of λ_max(∇² (E)(θ(s))),
    η_rule = 1/λ*, rounded down to two significant digits,

where (E) is the empirical risk on :data:`CURVATURE_SAMPLES` samples (fixed seed), θ(s) = (Â(γ(s), ρ(s)),
v̂ = α(s) w*) the three-value state of the reduced flow (Lemma 4.1), and λ_max the largest eigenvalue of
the Hessian in the trained parameters (Â's off-diagonal entries and v̂). On an L-smooth risk a step
η ≤ 1/L decreases the risk at every step (the descent lemma); 2/L is the edge of stability, past which
GD oscillates or diverges along the top eigendirection.

Why not the curvature at initialisation: there v̂ ~ N(0, ω² I) is tiny and λ_max(0) ≈ 10⁻³ (2/λ ≈ 10³),
while the curvature grows with α during phase I: at D = 32, q = 1/2 it passes 2/η = 0.2 for η = 10 at
s ≈ 2700, where the η = 10 run diverges. The largest curvature is met near T_a, where the flow has
associated: the rule reads the whole trajectory up to the window the runs are judged on.

Shapes: A: (D, D), v: (d,); the Hessian acts on vectors of D(D − 1) + d entries.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

from ..core import data
from ..core.model import symmetric_attention
from ..core.setting import Setting
from ..infra.keyed import KeyedStore
from ..infra.paths import run_dir
from ..reduced import integrate
from ..simulate._kernel import FusedModel
from ..simulate.curvature import hessian_top

#: Samples of the empirical risk whose curvature the rule reads (seed :data:`CURVATURE_SEED`): the curvature
#: is a mean over samples, so its Monte Carlo error is ~1/sqrt(4096) = 1.6% of its spread.
CURVATURE_SAMPLES = 4096
CURVATURE_SEED = 12345
#: Points of the idealized trajectory at which the curvature is read: this many log-spaced from s = 1 (phase I,
#: where the curvature rises fastest, is short) and as many evenly spaced on [0, horizon].
CURVATURE_POINTS = 48
#: The step where the risk has no positive curvature along the flow (the rule bounds nothing there).
NO_CURVATURE_ETA = 10.0
#: The numerics of a stored rule (:func:`curvature_along_flow`'s cache): a change bumps it.
RULE_VERSION = 1


@functools.lru_cache(maxsize=64)
def curvature_along_flow(s: Setting, horizon: float, out: str | None = None) -> dict:
    """λ* = the largest λ_max of the Hessian of (E) over the idealized flow's trajectory on [0, horizon]
    (module docstring), on :data:`CURVATURE_SAMPLES` samples of seed :data:`CURVATURE_SEED`, read at
    2 × :data:`CURVATURE_POINTS` times of the flow (:func:`theorydyn.reduced.integrate`, its default Monte
    Carlo expectation): log-spaced from s = 1 and evenly spaced. Kept in a keyed store (``out``, default the
    run directory's ``stepsize/``): a rule is computed once per setting and horizon.

    Returns:
        dict(lam, s_at, eta, edge): λ*, the s where it is met, the rule's step η = 1/λ* rounded down to two
        significant digits, and the edge of stability 2/λ*.
    """
    if not (math.isfinite(horizon) and horizon > 0):
        raise ValueError(f"horizon must be a finite time > 0, got {horizon!r}")
    folder = Path(out) if out is not None else run_dir("stepsize")
    folder.mkdir(parents=True, exist_ok=True)
    store = KeyedStore(folder / "stepsize_rules.csv", payload_column="params", create=True)
    payload = dict(
        version=RULE_VERSION,
        setting=s.to_dict(),
        horizon=float(horizon),
        samples=CURVATURE_SAMPLES,
        seed=CURVATURE_SEED,
        points=CURVATURE_POINTS,
    )
    got = store.get(payload)
    if got is not None:
        return {k: float(got[k]) for k in ("lam", "s_at", "eta", "edge")}
    grid = np.union1d(np.geomspace(1.0, horizon, CURVATURE_POINTS), np.linspace(0.0, horizon, CURVATURE_POINTS))
    flow = integrate(s, method="flow", s_grid=grid)
    b = data.sample(s, CURVATURE_SAMPLES, seed=CURVATURE_SEED)
    # the flow's three-value states θ(s) = (A(γ, ρ), α w*), then their curvature on the fixed samples
    states = [
        (float(r.s), symmetric_attention(s, r.gamma, r.rho), r.alpha * s.w_star) for r in flow.trajectory.itertuples()
    ]
    fused = FusedModel(b.X, b.y, s.p, s.nu, s.tau)
    best, s_at, at, u = -math.inf, math.nan, None, None
    for s_i, A, v in states:
        lam, u = hessian_top(s, A, v, b.X, b.y, tol=1e-3, model=fused, start=u)
        if lam > best:
            best, s_at, at = lam, s_i, (A, v, u)
    if at is not None:  # the maximum, solved tightly: the rounded step must not hang on the sweep's tolerance
        best, _ = hessian_top(s, at[0], at[1], b.X, b.y, tol=1e-8, model=fused, start=at[2])
    if not (math.isfinite(best) and best > 0):
        # no positive curvature anywhere along the flow: the rule bounds no step (any η is stable there); the
        # runs keep the toolkit's earlier step, and the rows print the edge as inf
        res = dict(lam=float(best), s_at=s_at, eta=NO_CURVATURE_ETA, edge=math.inf)
        store.put(payload, res)
        return res
    res = dict(lam=best, s_at=s_at, eta=round_down(1.0 / best, 2), edge=2.0 / best)
    store.put(payload, res)
    return res


def rule_eta(s: Setting, horizon: float) -> float:
    """The step size of the stated rule at ``s`` for runs judged up to time ``horizon`` (module docstring)."""
    return float(curvature_along_flow(s, float(horizon))["eta"])


def inside_rule(eta: float, s: Setting, horizon: float) -> bool:
    """Whether a step ``eta`` is inside the stated rule at ``s`` (η ≤ the rule's step): a larger one is a
    departure from the theorem's η ≤ 1/poly(d), named in the rows it gives."""
    return bool(eta <= rule_eta(s, horizon) * (1 + 1e-12))


def round_down(x: float, digits: int) -> float:
    """``x`` > 0 rounded down to ``digits`` significant digits (a stated step is a short number, and
    rounding down keeps it inside the rule).

    >>> round_down(3.9287, 2), round_down(0.01379, 2)
    (3.9, 0.013)
    """
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"round_down needs a finite x > 0, got {x!r}")
    e = math.floor(math.log10(x)) - digits + 1
    return float(round(math.floor(x / 10.0**e * (1 + 1e-12)) * 10.0**e, max(0, -e)))
