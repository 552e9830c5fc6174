"""The configuration of one run of the idealized dynamics (:class:`FlowConfig`), in a module that imports
no solver: the library (:func:`theorydyn.reduced.integrate`) takes its defaults and rules from here, and
the command line (``python -m theorydyn.reduced``) its flags (:func:`theorydyn.cli.configs.add_config_flags`),
so a notebook and the CLI integrate to the same horizon and the same T1 (issue 29), and ``--help``
shows them without loading SciPy or Numba."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.config import Config, option, scanned
from ..core.phases import ERR_TOL
from ..infra.limits import ATOL_MIN, N_POINTS_MAX, S_MAX_MAX, S_MAX_MIN, STEPS_MAX
from .defaults import N_SAMPLES, S_MAX, SOLVERS


@dataclass(frozen=True)
class FlowConfig(Config):
    """One run of :func:`theorydyn.reduced.integrate`: the gradient flow in s = η·t (``method="flow"``) or
    the paper's GD recursion (``method="gd"``) of ℓ_red(α, γ, ρ), from the idealized initialisation.

    The horizon is ``s_max`` (flow; GD: ⌈s_max/η⌉ steps unless ``steps`` is given). The expectation is a
    Monte Carlo bank of ``n_samples`` count vectors drawn with ``seed`` (``expectation="mc"``) or exact.

    A field made :func:`~theorydyn.core.config.scanned` is an option of a scan point as well
    (:mod:`theorydyn.scan.schema`): the scan's flag, spec key, rule and key are read from it.
    """

    method: str = scanned(
        option("flow", "gradient flow in s = eta*t, or the GD recursion", choices=("flow", "gd")),
        "reduced dynamics: gradient flow or GD (default flow)",
    )
    eta: float = option(1.0, "GD step (s = eta*step)", low=0.0, low_open=True)
    steps: int | None = option(
        None, f"GD steps, 1..{STEPS_MAX:.0e} (default s_max/eta)", kind=int, low=1, high=STEPS_MAX, optional=True
    )
    s_max: float = scanned(
        option(S_MAX, f"final time s = eta*t, in [{S_MAX_MIN:g}, {S_MAX_MAX:g}]", low=S_MAX_MIN, high=S_MAX_MAX),
        f"horizon in s = η·t, in [{S_MAX_MIN:g}, {S_MAX_MAX:g}] (default 5e4·max(1, D/64)^1.5, per D)",
        default=5.0e4,  # a scan point's horizon follows its D (theorydyn.scan.point.scan_horizon: 5e4 up to D = 64)
    )
    n_samples: int = scanned(
        option(N_SAMPLES, "Monte Carlo bank size, >= 2 (a standard error needs two samples)", low=2),
        "Monte Carlo count samples, >= 2 (default 4000)",
        when=(("expectation", "mc"),),
    )
    seed: int = option(0, "seed of the Monte Carlo bank, an integer >= 0 (--expectation mc)", low=0)
    expectation: str = scanned(
        option("mc", "Monte Carlo bank or the exact expectation", choices=("mc", "exact")),
        "Monte Carlo or exact (small L; default mc)",
    )
    n_points: int = scanned(
        option(200, f"rows of the trajectory, 2..{N_POINTS_MAX:.0e}", low=2, high=N_POINTS_MAX),
        f"trajectory points, 2..{N_POINTS_MAX:.0e} (default 400)",
        default=400,  # log-spaced: a scan's phase times resolved to about 4%
    )
    solver: str = option(SOLVERS[0], "ODE solver of --method flow", choices=SOLVERS)
    err_tol: float = option(
        ERR_TOL, "T2 tolerance on err_f, in (0, 1)", low=0.0, high=1.0, low_open=True, high_open=True, text="in (0, 1)"
    )
    rtol: float = option(1e-7, "relative tolerance of the ODE solver", low=0.0, high=1.0, low_open=True, cli=False)
    atol: float = option(1e-10, f"absolute tolerance of the ODE solver, >= {ATOL_MIN:g}", low=ATOL_MIN, cli=False)

    def integrate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`theorydyn.reduced.integrate` for this run (``method`` included):
        the GD recursion with ``steps`` given runs exactly those steps (``s_max`` is then not passed)."""
        kw = self.to_dict()
        if self.method == "gd" and self.steps is not None:
            kw["s_max"] = None
        return kw

    @property
    def horizon(self) -> float:
        """The last time s of the run: ``s_max`` (flow), η·steps (GD with ``steps``), else η·⌈s_max/η⌉."""
        if self.method == "flow":
            return float(self.s_max)
        if self.steps is not None:
            return self.eta * self.steps
        import math

        return self.eta * math.ceil(self.s_max / self.eta)


#: The defaults of :func:`theorydyn.reduced.integrate` and of ``python -m theorydyn.reduced``: one object.
FLOW_DEFAULTS = FlowConfig()
