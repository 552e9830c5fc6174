"""What each benchmark measures, one frozen validated configuration per benchmark
(:class:`theorydyn.core.config.Config`): :class:`ReducedBench` (``python -m theorydyn.bench reduced``) and
:class:`SimulateBench` (``python -m theorydyn.bench simulate``). Each field is one flag of the command
(:func:`theorydyn.cli.configs.add_config_flags`): its default, its range and its help are written here only.
The measurements (:func:`theorydyn.bench.reduced.measure`, :func:`theorydyn.bench.simulate.measure`) take
them; :data:`REDUCED_PARTS` and :data:`SIMULATE_PARTS` say which fields belong to which part of a run
(the main table, both, ``--scaling``).

Imports nothing heavy: ``python -m theorydyn.bench NAME --help`` loads no solver.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import Config, option
from ..core.setting import D_MAX
from ..infra.limits import S_MAX_MAX, S_MAX_MIN
from .timing import BATCH, SETTLE

#: the storage dtypes of X that the simulator's step is timed at
DTYPES = ("float64", "float32")


@dataclass(frozen=True)
class BenchParts:
    """The fields of a benchmark with a main table and a ``--scaling`` part, by part, in their order on
    the command line: ``main`` (the main table only), ``common`` (both parts), ``scaling`` (``--scaling``
    only); the switches ``scaling`` and ``scaling_only`` come between ``common`` and ``scaling``."""

    main: tuple[str, ...]
    common: tuple[str, ...]
    scaling: tuple[str, ...]


@dataclass(frozen=True)
class ReducedBench(Config):
    """What :func:`theorydyn.bench.reduced.measure` measures: ``n_samples`` Monte Carlo samples of the main
    table, ``repeats`` timed calls per measurement, ``settle`` s of pause before each, ``no_flow`` to skip
    the flow's timing, ``s_max`` the flow's horizon; ``scaling`` / ``scaling_only`` add the largest-D search
    (only it), running to ``s_max``·(D/64)^``s_max_exponent`` up to ``D_max``, stopping past ``budget_s``
    seconds a flow."""

    n_samples: int = option(100_000, "Monte Carlo samples, >= 2", low=2)
    repeats: int = option(7, "timed calls per measurement", low=1)
    settle: float = option(
        0.2,
        "pause before each timed call, 0..10 s",
        low=0,
        high=10,
        flag_help="pause before each timed call, 0..10 s (lets spinning BLAS threads sleep; default 0.2)",
    )
    no_flow: bool = option(False, "skip the flow timing")
    s_max: float = option(
        1e5,
        "horizon of the timed flow and of --scaling at D = 64",
        low=S_MAX_MIN,
        high=S_MAX_MAX,
        flag_help="horizon of the timed flow and of --scaling at D = 64 (default 1e5)",
    )
    scaling: bool = option(False, "the largest D whose default flow fits in --budget-s")
    scaling_only: bool = option(False, "only the --scaling part")
    s_max_exponent: float = option(
        1.5,
        "--scaling runs to s_max·(D/64)^this (0 keeps s_max)",
        low=0,
        flag_help="--scaling runs to s_max·(D/64)^this (default 1.5; 0 keeps s_max)",
    )
    budget_s: float = option(
        60.0, "time budget per flow, s", low=0, low_open=True, flag_help="time budget per flow, s (default 60)"
    )
    D_max: int = option(65536, f"largest D tried by --scaling, 64..{D_MAX}", low=64, high=D_MAX)


REDUCED_PARTS = BenchParts(
    main=("n_samples", "repeats", "settle", "no_flow"),
    common=("s_max",),
    scaling=("s_max_exponent", "budget_s", "D_max"),
)


@dataclass(frozen=True)
class SimulateBench(Config):
    """What :func:`theorydyn.bench.simulate.measure` measures (the module docstring of
    :mod:`theorydyn.bench.simulate` says what each part times)."""

    N: int = option(16384, "training samples", low=2)
    D: tuple[int, ...] = option(
        (64, 128),
        "patches, multiples of C = 4, one table each (d = D)",
        kind=int,
        many=True,
        low=8,
        high=D_MAX,
        flag_help="patches, multiples of C = 4, one table each (d = D; default 64 128)",
    )
    n_test: int = option(8192, "test samples of the timed simulate() run", low=1)
    replicas: int = option(8, "replicas sharing one X", low=1)
    sim_steps: int = option(
        50,
        "steps of each timed simulate()",
        low=1,
        flag_help="steps of each timed simulate() (default 50: records at 0 and 50, its default rate)",
    )
    dtypes: tuple[str, ...] = option(
        DTYPES,
        "storage dtypes of X",
        kind=str,
        many=True,
        choices=DTYPES,
        flag_help="storage dtypes of X (default float64 float32)",
    )
    no_torch: bool = option(False, "skip the autograd reference")
    no_simulate: bool = option(False, "skip timing simulate() per step")
    nstar: str | None = option(
        None,
        "also time the N*(D) grid of the quick or full ledger, before issue 32 (a run per (D, N, seed)) "
        "and now (one draw per seed, every N in one pass)",
        choices=("quick", "full"),
        optional=True,
    )
    nstar_only: bool = option(False, "only the --nstar part (no step table)")
    repeats: int = option(7, "timed calls per measurement", low=1, flag_help=True)
    settle: float = option(
        SETTLE,
        "pause before each repeat's calls, 0..10 s",
        low=0,
        high=10,
        flag_help="pause before each repeat's calls, 0..10 s (default %(default)s: lets spinning BLAS threads sleep)",
    )
    batch: int = option(
        BATCH,
        "calls timed back to back per repeat, after one untimed call",
        low=1,
        high=100,
        flag_help="calls timed back to back per repeat, after one untimed call "
        "(default %(default)s: a GD loop's steady state)",
    )
    scaling: bool = option(False, "step time against N and D, memory per sample")
    scaling_only: bool = option(False, "only the --scaling part")
    no_memory: bool = option(False, "skip the memory runs of --scaling")
    scaling_N: tuple[int, ...] = option(
        (4096, 16384, 65536),
        "N of the runs against N",
        kind=int,
        many=True,
        low=1,
        flag_help="N of the runs against N (default 4096 16384 65536)",
    )
    scaling_D: tuple[int, ...] = option(
        (16, 32, 64, 128),
        "D of the runs against D, multiples of 4, >= 8",
        kind=int,
        many=True,
        low=8,
        flag_help="multiples of 4, >= 8 (default 16 32 64 128)",
    )
    scaling_N_for_D: int = option(4096, "N of the runs against D", low=1)
    scaling_dtype: str = option(
        "float32", "storage dtype of X in --scaling", choices=("float32", "float64"), flag_help="default float32"
    )
    memory_N: tuple[int, ...] = option(
        (4096, 16384),
        "the two N of the memory runs, increasing",
        kind=int,
        many=True,
        low=1,
        flag_help="the two N of the memory runs, increasing (default 4096 16384)",
    )
    memory_budget_gib: float = option(
        24.0,
        "memory budget of the N_max extrapolation, GiB",
        low=0,
        low_open=True,
        flag_help="memory budget of the N_max extrapolation, GiB (default 24)",
    )


SIMULATE_PARTS = BenchParts(
    main=("N", "D", "n_test", "replicas", "sim_steps", "dtypes", "no_torch", "no_simulate", "nstar", "nstar_only"),
    common=("repeats", "settle", "batch"),
    scaling=(
        "no_memory",
        "scaling_N",
        "scaling_D",
        "scaling_N_for_D",
        "scaling_dtype",
        "memory_N",
        "memory_budget_gib",
    ),
)
