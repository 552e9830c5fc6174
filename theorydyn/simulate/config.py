"""The configuration of one run of GD on N samples (:class:`SimConfig`), in a module that imports no solver:
:func:`theorydyn.simulate.simulate` and :func:`~theorydyn.simulate.simulate_replicas` take their defaults
and rules from here, ``python -m theorydyn.simulate`` its flags (:func:`theorydyn.cli.configs.add_config_flags`)
and the scan its simulator options (:mod:`theorydyn.scan.schema`: the fields made
:func:`~theorydyn.core.config.scanned`; a new one is an option, a flag and a spec key of the scan). The
command's flags (:data:`CLI_FLAGS`) and the name of a run's files (:func:`output_stem`) are here too."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..cli.tools import name_params, run_stem
from ..core.config import Config, Rule, option, scanned
from ..core.phases import ERR_TOL
from ..infra.limits import S_MAX_MAX, S_MAX_MIN, SIM_STEPS_MAX

if TYPE_CHECKING:
    from ..core.setting import Setting

#: what GD moves: both, v̂ alone (Â frozen at its start), Â alone (:mod:`theorydyn.simulate.partial`)
UPDATES = ("Av", "v", "A")


@dataclass(frozen=True)
class SimConfig(Config):
    """One run of :func:`theorydyn.simulate.simulate` (Theorem 4.2, docs/theory.md §4): GD of step η on N
    samples from the realistic initialisation N(0, ω²), ``steps`` steps (or ⌈s_max/η⌉), recorded every
    ``record_every`` steps and every step up to ``dense_until``, tested on ``n_test`` fresh samples.
    ``seed`` → (training data, test data, initialisation).

    A field made :func:`~theorydyn.core.config.scanned` is an option of a scan point that runs the simulator
    (:mod:`theorydyn.scan.schema`): the scan's flag, spec key, rule and key are read from it."""

    N: int = scanned(
        option(16384, "training samples", positive=True), "simulator sample size(s), >= 1 (default 16384)", axis=True
    )
    eta: float = option(10.0, "step size", low=0.0, low_open=True)
    steps: int = scanned(
        option(1200, f"GD steps, 0..{SIM_STEPS_MAX:.0e}", low=0, high=SIM_STEPS_MAX),
        f"simulator GD steps, 1..{SIM_STEPS_MAX:.0e} (default 1200)",
        name="sim_steps",
        rule=Rule(kind=int, low=1, high=SIM_STEPS_MAX),  # a simulated point takes at least one step
    )
    s_max: float | None = option(
        None,
        "horizon in s = eta*t instead of steps (steps = ceil(s_max/eta))",
        kind=float,
        low=S_MAX_MIN,
        high=S_MAX_MAX,
        optional=True,
        cli=False,
    )
    omega: float = scanned(
        option(1e-3, "initialisation scale ω", low=0.0), "simulator init scale ω >= 0 (default 1e-3)"
    )
    seed: int = option(0, "seed of the data and the initialisation, an integer >= 0", low=0)
    # a scan records every 50 steps (no flag: a spec file's key)
    record_every: int = scanned(option(10, "record every k steps", positive=True), None, default=50)
    dtype: str = scanned(
        option(
            "float64",
            "storage of X: float32 is half the memory and time of the step (stepped in float32 with float64 "
            "accumulation; agrees with float64 to ~1e-6 relative); float64 is the exact reference; bfloat16 "
            "rounds the training X to 8 significant bits (half of float32's memory, stepped as float32; it "
            "changes the data)",
            choices=("float64", "float32", "bfloat16"),
        ),
        "simulator storage of X (default float64, as the library's simulate(); bfloat16 rounds the data)",
    )
    n_test: int = option(8192, "fresh test samples", positive=True, aliases=("--N-test",))
    dense_until: int = option(40, "also record every step up to this one (resolves phase I)", low=0)
    err_tol: float = option(
        ERR_TOL, "T2 tolerance on err_f, in (0, 1)", low=0.0, high=1.0, low_open=True, high_open=True, text="in (0, 1)"
    )
    update: str = scanned(
        option("Av", "the parameters GD moves: Av, v (Â frozen) or A", choices=UPDATES, cli=False),
        "what the simulator's GD moves: Av (both), v (Â frozen) or A (default Av)",
        axis=True,
    )
    device: str = option(
        "cpu-numba",
        "where the step runs: cpu-numba (the fused Numba kernel), or cpu, cuda, cuda:<k> (the same step on "
        "torch, the optional extra 'vision'; agrees with Numba to rounding)",
        kind=str,
    )

    def simulate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`theorydyn.simulate.simulate` for this run."""
        return self.to_dict()


#: The defaults of :func:`theorydyn.simulate.simulate`: one object.
SIM_DEFAULTS = SimConfig()
#: ``python -m theorydyn.simulate`` stores X in float32 by default (half the memory and time; the library
#: and the scans keep float64, the exact reference): its one default that is not the library's.
CLI_DEFAULTS = {"dtype": "float32"}
#: The flags of ``python -m theorydyn.simulate`` beside the Setting's (:func:`theorydyn.cli.runner.solver_parser`):
#: the fields that are flags (``--N-test``: the old spelling of ``--n-test``), with its one default that is
#: not the library's, and the output folder, whose files :func:`output_stem` names.
CLI_FLAGS: dict[str, Any] = dict(
    title="simulation",
    only=("N", "eta", "steps", "omega", "record_every", "dtype", "n_test", "dense_until", "device"),
    defaults=CLI_DEFAULTS,
    notes=dict(
        dtype=f"default %(default)s here: half the memory and time; the library's simulate() and the scans "
        f"default to {SIM_DEFAULTS.dtype}, the exact reference"
    ),
    run="simulate",
    out_help="output folder: simulate_D<D>_C<C>[_<each parameter that differs from its default>].csv "
    "(trajectory), .json (summary), .png (Figure 4; or --format), so runs that differ never overwrite each other",
)
#: flags that change no number of the run: left out of the output's name
NOT_IN_NAME = ("out", "quiet", "force", "help")


def output_stem(ap: argparse.ArgumentParser, args: argparse.Namespace, s: Setting) -> str:
    """``simulate_D<D>_C<C>`` and every parameter that differs from its default: the Setting's fields
    against the default Setting at this D, C (:func:`~theorydyn.cli.tools.name_params`), the run's
    flags against the parser's defaults (:func:`~theorydyn.cli.tools.run_stem`)."""
    params, defaults = name_params(s, ap, args, NOT_IN_NAME)
    return run_stem(f"simulate_D{s.D}_C{s.C}", params, defaults)
