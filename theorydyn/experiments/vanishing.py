"""The runs behind the vanishing readings of the idealized dynamics (docs/theory.md §10.7, §10.8): Theorem 4.1 (2)'s
error and Event III's risk at the end of the idealized flow, at several D.

"Pr[f F > 0] >= 1 - o(1)" and "the risk becomes o(1)" are statements about D → ∞, so they are read across D
(:mod:`theorydyn.claims.dynamics` judges the trend). The path, fixed before any run:

* C, p, β, τ and the partition rule of the ledger's setting ``s``; D_k = D·2^(k/2) rounded to a multiple of C,
  k = 0 … ``n_sizes`` − 1 (a factor 2 every two sizes);
* q_k (D_k − C) = q (D − C): the expected count of ±w* patches outside the signal set is kept, Assumption 2's
  q = poly(C)/D (at the default q = C²/D this is C² − C³/D at every size); d, σ², ν follow D unless ``s`` set
  them explicitly (Simplification 3.1, ν = 1/d).

Along it the floor of every classifier, Pr[f = 0] ≈ (L − 1)(q/2)^C ∝ D^(1 − C), vanishes (polynomially at
fixed C), so the o(1) readings can succeed there; d^-omega(1) (Theorem 3.2, Definition 2.1) needs C to grow
with D and is read on Definition 2.1's C ≈ log₂ D path instead.

At each size and seed k the flow runs twice on one Monte Carlo bank of ``n_samples``·(D_k/D)² count vectors
drawn with the seed k. The bank grows with D because the errors at the end of the run become rarer, and a flow
on a bank that holds none of the points that carry the population's loss ends far below its population risk
(the claim compares the two: :attr:`VanishingRuns.bank_risk` against :attr:`VanishingRuns.risk`); the end is
measured on a stream of its own for the same reason:

1. :func:`theorydyn.reduced.flows_until_t2` (the ledger's flows: horizon :func:`theorydyn.reduced.default_horizon`
   at D_k, doubled while some seed has not reached T2), which gives T_a = max(T1, T2), the time the idealized
   dynamics needs to end phases II and III (the T_a of Theorem 4.2's windows, docs/theory.md §14);
2. the same flow to s = :data:`READ_FACTOR`·T_a, the end of Theorem 4.2's window [T_a, 3 T_a]: the error is read
   at a multiple of the dynamics' own time at that D, not at a horizon chosen for C = 4 (which at C = 6, D = 576
   ends just after T2). Theorem 4.1's T >= poly(d)/eta holds along the path where T_a is poly(d) (Event II/III).
   A seed that never reaches T2 is read at the end of its horizon, and counted.

The final (α, γ, ρ) is measured on an independent stream of ``n_eval`` samples (seed :data:`EVAL_SEED` + k,
:func:`theorydyn.reduced.population_risk`): Pr[f F <= 0 | f != 0], Pr[f = 0] and the logistic risk. The exact
Pr[f = 0] is the claim's to compute.

:func:`flow_errors_across_D` returns :class:`VanishingRuns`; it judges nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..core.config import Seeds
from ..core.result import Result
from ..core.setting import Setting
from ..reduced import flows_until_t2, integrate, population_risk

#: The evaluation stream of seed k is drawn with this + k: apart from every bank (seeds 0, 1, …).
EVAL_SEED = 1_000_003
#: The error is read at this multiple of T_a = max(T1, T2): the end of Theorem 4.2's window [T_a, 3 T_a].
READ_FACTOR = 3.0


def across_D_settings(s: Setting, n_sizes: int) -> list[Setting]:
    """The settings of the vanishing readings (module docstring): D_k = D·2^(k/2) rounded to a multiple of C, with
    q_k (D_k − C) = q (D − C).

    Raises:
        ValueError: ``n_sizes`` below 2 (a trend needs two sizes at least).

    Example:
        >>> " ".join(f"D={t.D}:q={t.q:.4g}" for t in across_D_settings(Setting(D=64, C=4), 4))
        'D=64:q=0.25 D=92:q=0.1705 D=128:q=0.121 D=180:q=0.08523'

    """
    if int(n_sizes) < 2:
        raise ValueError(f"n_sizes must be >= 2 (a trend across D), got {n_sizes}")
    K = s.q * (s.D - s.C)
    Ds = [s.C * round(s.D * 2 ** (k / 2) / s.C) for k in range(int(n_sizes))]
    return [s.at(D=D, q=K / (D - s.C)) for D in Ds]


def bank_size(n_samples: int, D0: int, D: int) -> int:
    """The Monte Carlo bank of a flow at D when the ledger's is ``n_samples`` at D0: ``n_samples``·(D/D0)²
    (module docstring).

    >>> bank_size(1500, 64, 128)
    6000
    """
    return max(2, int(round(n_samples * (D / D0) ** 2)))


def _state_at(t: Setting, res: Result, target: float, *, seed: int, n_samples: int) -> tuple[np.ndarray, float, str]:
    """The flow ``res`` (on the bank of ``seed`` and ``n_samples``) carried to s = ``target``: from its last recorded
    state at s <= ``target``, integrated for the time left (the flow is autonomous, dθ/ds = g(θ), so this is the
    flow from the start to ``target``, to the solver's tolerance).

    Returns ((α, γ, ρ) at ``target``, the in-bank risk there, the solver's status of the remainder)."""
    tr = res.trajectory
    sv = tr["s"].to_numpy(float)
    j0 = int(np.searchsorted(sv, target, side="right")) - 1
    theta = tr[["alpha", "gamma", "rho"]].to_numpy(float)[j0]
    left = float(target - sv[j0])
    if left <= 0.0:
        return theta, float(tr["risk"].iloc[j0]), "ok"
    init = (float(theta[0]), float(theta[1]), float(theta[2]))
    end = integrate(t, method="flow", s_max=left, seed=seed, n_samples=n_samples, init=init)
    last = end.trajectory.iloc[-1]
    return last[["alpha", "gamma", "rho"]].to_numpy(float), float(last["risk"]), str(end.status)


@dataclass(frozen=True)
class VanishingRuns:
    """What :func:`flow_errors_across_D` measured: one entry per size of ``settings`` (D ascending), each an
    array over ``seeds``.

    Attributes:
        settings: the settings read (:func:`across_D_settings`).
        seeds: the bank seeds k.
        err_given: (n_sizes, n_seeds) Pr[f F <= 0 | f != 0] at the end of the flow, on the evaluation stream.
        amb_mc: (n_sizes, n_seeds) Pr[f = 0] on the evaluation stream (the exact value is the claim's).
        risk: (n_sizes, n_seeds) E log(1 + exp(-y F)) at the end of the flow, on the evaluation stream.
        bank_risk: (n_sizes, n_seeds) the same on the flow's own bank (what the flow minimised).
        horizon: (n_sizes,) the horizon s_max of the first flows (step 1); grown: its multiple of default_horizon(D).
        t_read: (n_sizes, n_seeds) the s each seed was read at (READ_FACTOR·T_a, or the horizon without T2).
        t2_reached: (n_sizes,) how many seeds reached T2 (the error below 2%) by the horizon.
        status: per size, the solver's words that were not "ok" (empty when every flow ended ok).
        n_bank: (n_sizes,) the bank size per flow; n_eval: the evaluation samples per flow.
        seconds: (n_sizes,) wall seconds per size (flows and evaluation; 0 for flows passed in).
    """

    settings: tuple[Setting, ...]
    seeds: Seeds
    err_given: np.ndarray
    amb_mc: np.ndarray
    risk: np.ndarray
    bank_risk: np.ndarray
    horizon: np.ndarray
    grown: np.ndarray
    t_read: np.ndarray
    t2_reached: np.ndarray
    status: tuple[tuple[str, ...], ...]
    n_bank: np.ndarray
    n_eval: int
    seconds: np.ndarray

    @property
    def Ds(self) -> np.ndarray:
        """(n_sizes,) the D of each size."""
        return np.array([t.D for t in self.settings])


def flow_errors_across_D(
    s: Setting,
    seeds: Seeds,
    *,
    n_sizes: int,
    n_samples: int,
    n_eval: int,
    first: Sequence[Result] | None = None,
    first_horizon: tuple[float, int] | None = None,
    progress: Callable[[str], None] | None = None,
) -> VanishingRuns:
    """The idealized flows at every size of :func:`across_D_settings` and their errors at the end (module
    docstring).

    Args:
        s: the ledger's setting (the first size).
        seeds: the bank seeds k.
        n_sizes: how many sizes (D, 1.4D, 2D, 2.8D, …: :func:`across_D_settings`).
        n_samples: the bank at D; at D_k it is ``n_samples``·(D_k/D)².
        n_eval: samples of the independent evaluation stream per flow.
        first: the flows already run at ``s`` with these seeds and ``n_samples`` (the ledger's own), reused
            instead of rerunning them; ``first_horizon`` their (horizon, grown).
        progress: called with a message per flow.

    Returns:
        :class:`VanishingRuns`.
    """
    ks = tuple(seeds)
    if int(n_eval) < 1 or int(n_samples) < 2:
        raise ValueError(f"n_eval must be >= 1 and n_samples >= 2, got n_eval={n_eval}, n_samples={n_samples}")
    settings = across_D_settings(s, n_sizes)
    say = progress or (lambda msg: None)
    shape = (len(settings), len(ks))
    err, amb, risk, bank_risk, t_read = (np.full(shape, np.nan) for _ in range(5))
    horizon, grown, reached, n_bank, secs = (np.zeros(len(settings)) for _ in range(5))
    status: list[tuple[str, ...]] = []
    for i, t in enumerate(settings):
        t0 = time.perf_counter()
        n_bank[i] = bank_size(n_samples, s.D, t.D)
        if i == 0 and first is not None:
            if len(first) != len(ks):
                raise ValueError(f"first holds {len(first)} flows for {len(ks)} seeds")
            runs = list(first)
            horizon[i], grown[i] = first_horizon if first_horizon is not None else (np.nan, 1)
        else:
            say(f"vanishing readings: flows at D={t.D} ({i + 1}/{len(settings)})")
            runs, h, g = flows_until_t2(t, list(ks), None, progress=progress, n_samples=int(n_bank[i]))
            horizon[i], grown[i] = h, g
        reached[i] = sum(r.phases.T2 is not None for r in runs)
        status.append(tuple(sorted({str(r.status) for r in runs} - {"ok"})))
        for j, (k, res) in enumerate(zip(ks, runs, strict=True)):
            ph = res.phases
            if ph.T2 is None:  # never past phase III: read at the end of the horizon
                t_read[i, j] = float(res.trajectory["s"].iloc[-1])
            else:
                t_read[i, j] = READ_FACTOR * max(float(ph.T2), float(ph.T1 if ph.T1 is not None else 0.0))
            theta, bank_risk[i, j], st = _state_at(t, res, t_read[i, j], seed=k, n_samples=int(n_bank[i]))
            if st != "ok":
                status[-1] = tuple(sorted({*status[-1], f"{st} (to {READ_FACTOR:g} T_a)"}))
            a, g_, r_ = (float(x) for x in theta)
            e = population_risk(t, a, g_, r_, method="mc", n_samples=int(n_eval), seed=EVAL_SEED + k)
            err[i, j], amb[i, j], risk[i, j] = e.err_f, e.amb_f, e.risk
        secs[i] = time.perf_counter() - t0
    return VanishingRuns(
        tuple(settings),
        ks,
        err,
        amb,
        risk,
        bank_risk,
        horizon,
        grown.astype(int),
        t_read,
        reached.astype(int),
        tuple(status),
        n_bank.astype(int),
        int(n_eval),
        secs,
    )
