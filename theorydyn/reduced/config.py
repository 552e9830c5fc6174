"""The configuration of one run of the idealized dynamics (:class:`FlowConfig`), in a module that imports
no solver: the library (:func:`theorydyn.reduced.integrate`) takes its defaults and rules from here, and
the command line (``python -m theorydyn.reduced``) its flags (:func:`theorydyn.cli.configs.add_config_flags`),
so a notebook and the CLI integrate to the same horizon and the same T1 (issue 29), and ``--help``
shows them without loading SciPy or Numba. The command's reading of its flags is here too: which fields
are flags and how the mode resolves them (:data:`CLI_FLAGS`, :func:`flow_config`) and the name of a run's
files (:func:`output_stem`)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cli.configs import config_from_args
from ..cli.tools import name_params, run_stem
from ..core.config import Config, option, scanned
from ..core.phases import ERR_TOL
from ..infra.limits import ATOL_MIN, N_POINTS_MAX, S_MAX_MAX, S_MAX_MIN, STEPS_MAX
from .defaults import N_SAMPLES, S_MAX, SOLVERS

if TYPE_CHECKING:
    from ..core.setting import Setting


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

#: The flags of ``python -m theorydyn.reduced`` beside the Setting's (:func:`theorydyn.cli.runner.solver_parser`):
#: the fields that are flags (the mode picks eta, n_samples and solver: their flags default to None, so a
#: flag given in the other mode is refused by :func:`flow_config`, not silently dropped), the switch of
#: the plot and the output folder, whose files :func:`output_stem` names.
CLI_FLAGS: dict[str, Any] = dict(
    title="solver",
    only=("method", "eta", "steps", "s_max", "n_samples", "expectation", "n_points", "solver", "err_tol"),
    defaults=dict(eta=None, n_samples=None, solver=None),
    notes=dict(
        eta=f"default {FLOW_DEFAULTS.eta:g}; --method gd only",
        n_samples=f"default {FLOW_DEFAULTS.n_samples}; --expectation mc only",
        solver=f"default {FLOW_DEFAULTS.solver}; --method flow only",
        s_max="default %(default)g, as the library's integrate",
    ),
    switches={"--no-plot": "skip the PNG"},
    run="reduced",
    out_help="output folder: reduced_<method>_D<D>_C<C>[_<each parameter that differs from its default>]"
    ".csv/.json/.png (or --format), so runs that differ never overwrite each other",
)


def flow_config(args: argparse.Namespace) -> FlowConfig:
    """The :class:`FlowConfig` the parsed flags of ``python -m theorydyn.reduced`` describe (a flag left out
    takes the field's default, the same object as :func:`~theorydyn.reduced.integrate`'s).

    Raises:
        ValueError: a flag given where it does nothing (``--steps`` with the flow, ``--n-samples`` with
            the exact expectation, …) or a value that breaks its rule, the message starting with the flag.
    """
    if args.method == "flow":
        for flag, v in (("--steps", args.steps), ("--eta", args.eta)):
            if v is not None:
                raise ValueError(
                    f"{flag}: only used by --method gd (the flow is integrated in s = eta*t up to --s-max)"
                )
    elif args.solver is not None:
        raise ValueError("--solver: only used by --method flow (the GD recursion is not an ODE solve)")
    if args.expectation == "exact" and args.n_samples is not None:
        raise ValueError("--n-samples: only used by --expectation mc (the exact expectation draws no samples)")
    cfg = config_from_args(FlowConfig, args)
    if cfg.method == "gd" and cfg.steps is None and cfg.s_max / cfg.eta > STEPS_MAX:
        raise ValueError(f"--s-max / --eta: {cfg.s_max / cfg.eta:.3g} GD steps is more than {STEPS_MAX:.0e}")
    return cfg


def check_setting(cfg: FlowConfig, s: Setting) -> None:
    """Refuse a run of ``cfg`` that cannot be computed at the Setting ``s``: the exact expectation over more
    multisets of count types than :data:`theorydyn.reduced.bank.MAX_TERMS`.

    Raises:
        ValueError: naming the flag (``--expectation exact: …; use --expectation mc``).
    """
    from .bank import MAX_TERMS, n_exact_terms

    if cfg.expectation == "exact" and n_exact_terms(s) > MAX_TERMS:
        raise ValueError(
            f"--expectation exact: {n_exact_terms(s):.3g} multisets of count types at D={s.D}, C={s.C} "
            f"(the limit is {MAX_TERMS:.3g}); use --expectation mc"
        )


#: flags left out of the name: they change no number of the run (where and how it is written, the memory
#: override), or :func:`output_stem` adds their value as the mode resolves it
NOT_IN_NAME = ("out", "quiet", "no_plot", "force", "method", "eta", "n_samples", "solver", "steps", "s_max")


def output_stem(ap: argparse.ArgumentParser, args: argparse.Namespace, s: Setting, cfg: FlowConfig) -> str:
    """``reduced_<method>_D<D>_C<C>`` and every parameter that differs from its default: the Setting's
    fields against the default Setting at this D, C (and d: σ², ν follow it), the solver's flags
    against the parser's defaults (:func:`~theorydyn.cli.tools.run_stem`), and the values the mode
    resolves (``cfg``, :func:`flow_config`: eta, n_samples, solver) against the library's, so ``--q 0.3``
    or ``--seed 1`` never overwrite the default run."""
    params, defaults = name_params(s, ap, args, NOT_IN_NAME)
    if cfg.method == "gd":
        params.update(eta=cfg.eta, steps=cfg.steps)
        defaults.update(eta=FLOW_DEFAULTS.eta, steps=None)
        if cfg.steps is None:  # the steps are s_max/eta
            params["s_max"], defaults["s_max"] = cfg.s_max, ap.get_default("s_max")
    else:
        params.update(s_max=cfg.s_max, solver=cfg.solver)
        defaults.update(s_max=ap.get_default("s_max"), solver=FLOW_DEFAULTS.solver)
    if cfg.expectation == "mc":
        params["n_samples"], defaults["n_samples"] = cfg.n_samples, FLOW_DEFAULTS.n_samples
    else:  # the exact expectation draws nothing
        params.pop("seed", None)
    return run_stem(f"reduced_{cfg.method}_D{s.D}_C{s.C}", params, defaults)
