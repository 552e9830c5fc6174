"""The one result type and trajectory schema of both solvers (docs/theory.md §3, §4).

Both :func:`theorydyn.reduced.integrate` (N = ∞, three scalars) and
:func:`theorydyn.simulate.simulate` (N samples, the full D×D attention) return a
:class:`Result` whose ``trajectory`` has the columns :data:`CORE_COLUMNS`, with the same
meaning, so a finite-sample trajectory and a reduced one overlay without renaming:

    s            time s = η·t (GD steps times the step size; the flow's own time)
    step         GD step (s/η for the flow)
    alpha        α, the value vector along w*: v = α w* (reduced); ⟨v̂, w*⟩ (simulator)
    gamma, rho   in-set and cross-set attention logits: the values of Lemma 4.1's three-value form
                 (reduced); the means of Â's in-set / cross-set off-diagonal entries (simulator)
    in_mass      in-set attention mass, mean over rows i of Σ_{j∈S(i)} S_ij (Λ + (C−1)Γ when reduced)
    association  Definition 2.2: the fraction of rows whose C largest entries are exactly their set
    risk         population risk ℓ_red (reduced); empirical training risk (E) (simulator)
    err_y        Pr[y F ≤ 0]: population (reduced); on fresh test samples (simulator)
    err_f        Pr[f F ≤ 0 | f ≠ 0], against the labelling function f (NaN when f is undefined)
    amb_f        Pr[f = 0], the mass that err_f leaves out

Solver-specific columns follow (reduced: Lambda, Gamma, Xi; simulator: eta, cos_v, v_norm,
in_std, cross_std, cross_absmax, row_spread_max, row_in_max, row_in_median, train_err).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from .model import symmetric_attention
from .phases import Phases
from .setting import Setting

CORE_COLUMNS = ("s", "step", "alpha", "gamma", "rho", "in_mass", "association", "risk", "err_y", "err_f", "amb_f")


class Status(StrEnum):
    """How a run ended (a str: ``str(Status.OK) == "ok"``). ``DIVERGED``: a non-finite risk, gradient
    or parameter (the trajectory up to the last finite record is kept); ``FAILED``: the ODE solver gave up."""

    OK = "ok"
    DIVERGED = "diverged"
    FAILED = "failed"


@dataclass
class Result:
    """One run of either solver.

    Attributes:
        solver: ``"reduced"`` or ``"simulate"``.
        setting: the :class:`~theorydyn.setting.Setting`.
        trajectory: DataFrame, :data:`CORE_COLUMNS` first (module docstring).
        phases: :class:`~theorydyn.phases.Phases`, computed by the one detector.
        status: :class:`Status`; ``message`` says where and why a run stopped early.
        stopped_step: the GD step (or flow time s / η) where divergence was detected, else None.
        options: the solver's options, as passed (JSON-able).
        seconds: wall time.
        A_final, v_final: the final parameters when the solver has them as arrays (simulator:
            the last finite Â (D, D) and v̂ (d,)); see :attr:`A` and :attr:`v`.
    """

    solver: str
    setting: Setting
    trajectory: pd.DataFrame
    phases: Phases
    status: Status = Status.OK
    message: str = ""
    stopped_step: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    A_final: np.ndarray | None = None
    v_final: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    @property
    def A(self) -> np.ndarray:
        """(D, D) final attention logits; for the reduced solver the three-value form at the last record."""
        if self.A_final is not None:
            return self.A_final
        last = self.trajectory.iloc[-1]
        return symmetric_attention(self.setting, float(last["gamma"]), float(last["rho"]))

    @property
    def v(self) -> np.ndarray:
        """(d,) final value vector; α w* at the last record for the reduced solver."""
        if self.v_final is not None:
            return self.v_final
        return float(self.trajectory["alpha"].iloc[-1]) * self.setting.w_star

    def summary(self) -> dict[str, Any]:
        """JSON-able digest: status, setting, options, phases and the last row."""
        fin = self.trajectory.iloc[-1].to_dict() if len(self.trajectory) else {}
        return {
            "solver": self.solver,
            "status": str(self.status),
            "message": self.message,
            "stopped_step": self.stopped_step,
            "seconds": self.seconds,
            "setting": self.setting.to_dict(),
            "options": self.options,
            "phases": self.phases.as_dict(),
            "final": {
                k: (None if v is None or (isinstance(v, float) and not np.isfinite(v)) else float(v))
                for k, v in fin.items()
            },
        }
