"""The configuration of one transfer experiment (:class:`TransferConfig`), in a module that imports nothing
heavy: :func:`theorydyn.transfer.experiment.run` and the fitting functions take their defaults and rules
from here, ``python -m theorydyn.transfer`` its flags (:func:`theorydyn.cli.configs.add_config_flags`; the
help text of a flag is its field's) and the ledger its sizes.

Two named instances: :data:`QUICK_RUN` (the CLI's default, the ledger's quick run) and :data:`FULL_RUN`
(``--full``, the ledger's full run, the sizes of the reported run). The field defaults are the library's
(``TransferConfig()``, the experiment's own defaults since before the named sizes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cli.configs import flag_of
from ..cli.tools import SEEDS_MAX, SETTING_FLAGS, setting_error_message
from ..core.config import Config, option
from .sizes import CACHED, DEFAULT_METHODS, FROZEN, METHODS, SCOPE_DS, fine_grid

#: Degree of the polynomial kernel of :func:`~theorydyn.transfer.fitting.fit_kernel`: 2, the lowest degree
#: whose functions can fit f beyond a GLM (Theorem 3.1: degree 1 cannot), fixed before any run.
KERNEL_DEGREE = 2
#: Ridge of :func:`~theorydyn.transfer.fitting.fit_kernel`, relative to the mean diagonal of the kernel
#: matrix: a near-interpolating ("ridgeless") fit, fixed before any run (no tuning on the verdict).
KERNEL_RIDGE = 1e-3
#: K = q(D − C) of a run (:attr:`TransferConfig.count`) unless told otherwise
COUNT = 8.0


@dataclass(frozen=True)
class TransferConfig(Config):
    """Sizes and hyper-parameters of one transfer experiment (Section 5, docs/theory.md §5).

    Ds: the D's run (K = q(D − C) kept; each a multiple of C). Ns: the grid of Ñ (from 1; :func:`fine_grid`).
    Per (D, method) the grid stops at the largest Ñ whose training set Ñ·D·d fits ``budget``
    (``budget_scratch`` for scratch, which also trains A), and ``extra`` grid points after the seed-mean
    accuracy first reaches the target (the rows beyond are not needed for the crossing). count: K = q(D − C)
    (None: keep q, the old rule). target: the one accuracy every method is judged at (the "common" level,
    docs/theory.md §5: 0.75, halfway from chance 0.5 to a* ≈ 1, below every baseline's population ceiling);
    None: a*(D) − eps instead. eps: the theorem level a*(D) − eps, at which the pre-trained Â are also
    judged (Theorem 5.1's near-zero error). sim_max_D / scratch_max_D / logreg_max_D: ``pretrained-sim`` /
    ``scratch`` / ``logreg`` only up to this D (their cost grows like D³, and D·d features for logreg).
    baseline_max_N caps ``init``, ``other-partition`` and ``pretrained-sim``. Every cap is a compute cap: a
    need above it is reported as censored at the cap (a lower bound), never as a measurement.
    upstream_steps · eta = 2·10⁴ by default: the finite-sample GD runs to the same time s = η·t as the
    reduced flow's horizon at D ≤ 64, so the two pre-trained Â are comparable."""

    Ds: tuple[int, ...] = option(SCOPE_DS, "D values, each a multiple of C", kind=int, many=True, low=1)
    Ns: tuple[int, ...] = option(fine_grid(1024), "increasing Ñ grid", kind=int, many=True, low=1)
    seeds: int = option(5, "number of seeds per Ñ, an integer >= 1: seeds 0 … K-1", low=1, high=SEEDS_MAX, metavar="K")
    N_test: int = option(8192, "fresh test samples", positive=True, flag="--n-test", aliases=("--N-test",))
    omega: float = option(1e-3, "initialisation scale ω", low=0.0, low_open=True)
    eta: float = option(10.0, "GD step size", low=0.0, low_open=True)
    steps_v: int = option(300, "fine-tuning steps for ṽ", positive=True)
    steps_scratch: int = option(1200, "GD steps of scratch (A and v trained together)", low=0, cli=False)
    method: str = option("gd", "optimiser of ṽ", choices=("gd", "lbfgs"))
    logreg_max_N: int = option(4096, "largest Ñ of logreg", positive=True, cli=False)
    scratch_max_N: int = option(1024, "largest Ñ of scratch", positive=True, cli=False)
    baseline_max_N: int = option(256, "largest Ñ of init, other-partition, pretrained-sim", positive=True, cli=False)
    scratch_max_D: int = option(32, "train 'scratch' only up to this D", positive=True)
    logreg_max_D: int = option(256, "logreg only up to this D", positive=True, cli=False)
    count: float | None = option(
        COUNT,
        "K = q(D − C), kept across D",
        kind=float,
        low=0.0,
        low_open=True,
        optional=True,
        flag_help=f"K = q(D − C), kept across D (default {COUNT:g}); not with --keep-q",
    )
    eps: float = option(
        0.05,
        "theorem level of the pre-trained Â: accuracy a*(D) − eps, in (0, 0.5)",
        low=0.0,
        high=0.5,
        low_open=True,
        high_open=True,
    )
    target: float | None = option(
        0.75,
        "common target accuracy of every method, in (0.5, 1), below every baseline's ceiling; "
        "'none': a*(D) − eps for every method",
        kind=float,
        low=0.5,
        high=1.0,
        low_open=True,
        high_open=True,
        optional=True,
        cli=False,
    )
    budget: int = option(1 << 20, "largest Ñ·D·d of a training set", positive=True, cli=False)
    budget_scratch: int = option(1 << 20, "largest Ñ·D·d of scratch's training set", positive=True, cli=False)
    extra: int = option(2, "grid points run after the target is first reached", low=0, cli=False)
    sim_max_D: int = option(32, "finite-sample pre-training only up to this D", positive=True)
    kernel_max_N: int = option(4096, "largest Ñ of the kernel learner", positive=True, cli=False)
    kernel_degree: int = option(
        KERNEL_DEGREE, "degree of the kernel learner's polynomial kernel", positive=True, cli=False
    )
    kernel_ridge: float = option(KERNEL_RIDGE, "relative ridge of the kernel learner", low=0.0, cli=False)
    err_eps: float = option(
        0.05, "Theorem 5.2's test error ε, in (0, 0.5)", low=0.0, high=0.5, low_open=True, high_open=True, cli=False
    )
    upstream_N: int = option(8192, "finite-sample pre-training samples", positive=True)
    upstream_steps: int = option(2000, "finite-sample pre-training steps", positive=True)
    flow_n_samples: int = option(2000, "Monte Carlo samples of the reduced flow", positive=True, cli=False)
    test_seed: int = option(10_000, "seed of the downstream test set", low=0, cli=False)
    ceiling_samples: int = option(20000, "Monte Carlo samples of the ceilings", positive=True, cli=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.Ns or any(int(n) < 1 for n in self.Ns) or list(self.Ns) != sorted(set(self.Ns)):
            raise ValueError(f"Ns must be increasing positive integers, got {self.Ns}")
        if not self.Ds or any(int(D) < 1 for D in self.Ds) or len(set(self.Ds)) != len(self.Ds):
            raise ValueError(f"Ds must be distinct positive integers (each D at most once), got {self.Ds}")

    def max_N(self, method: str, s: Any) -> int:
        """The largest Ñ tried for ``method`` at setting ``s`` (the cost cap, class docstring)."""
        cap = {
            "scratch": self.scratch_max_N,
            "logreg": self.logreg_max_N,
            "init": self.baseline_max_N,
            "other-partition": self.baseline_max_N,
            "pretrained-sim": self.baseline_max_N,
            "kernel": self.kernel_max_N,
        }.get(method, max(self.Ns))
        budget = self.budget_scratch if method == "scratch" else self.budget
        # the kernel sees the (Ñ, D) feature values, never X: its cost is Ñ² (the kernel matrix), not Ñ·D·d
        fit = [n for n in self.Ns if n <= cap and (method == "kernel" or n * s.D * s.d <= budget)]
        return max(fit) if fit else min(self.Ns)

    def upstream_base(self, s: Any) -> tuple[Any, str]:
        """The setting each D of the run is taken from and the q rule of
        :func:`~theorydyn.core.setting.setting_at`: ``s`` with K = q(D − C) = ``count`` and rule ``"count"``
        (``count`` None: ``s`` itself, q kept, rule ``"keep"``), every D checked.

        Raises:
            ValueError: starting with the field it is about (``count: …``, ``Ds: …``): a K that gives no
                valid q at ``s``, a D that is no multiple of C larger than C, a setting invalid at a D.
        """
        from ..core.setting import setting_at
        from .task import with_count

        rule = "keep" if self.count is None else "count"
        try:
            base = s if self.count is None else with_count(s, self.count)
        except ValueError as e:
            raise ValueError(f"count: K = {self.count:g} at D={s.D}, C={s.C}: {e}") from None
        for D in self.Ds:
            if D % s.C or D <= s.C:
                raise ValueError(f"Ds: each D must be a multiple of C={s.C} and larger than it, got D={D}")
            try:
                setting_at(base, D, rule)
            except ValueError as e:
                raise ValueError(f"Ds: D={D}: {e}") from None
        return base, rule

    def runs(self, method: str, D: int) -> bool:
        """Whether ``method`` runs at ``D`` (the D caps of scratch, logreg and pretrained-sim)."""
        return not (
            (method == "scratch" and D > self.scratch_max_D)
            or (method == "logreg" and D > self.logreg_max_D)
            or (method == "pretrained-sim" and D > self.sim_max_D)
        )


#: The library's defaults: one object.
TRANSFER_DEFAULTS = TransferConfig()

# Every cap below is a compute cap (a need above it is censored at the cap, never a measurement); the
# quick sizes keep the ledger's transfer source near 2 minutes cold on 2 cores. logreg stops at D = 64
# in quick (its CV fit on Ñ·D·d features costs ~13 s per seed at D = 128, Ñ = 128). scratch does not reach
# test error ε within Ñ ≤ 256 (upstream N* ~ 2^15 at D = 64), so it runs its whole grid (~D³): D ≤ 32 quick.
#: The quick sizes (the CLI's default, the ledger's quick run).
QUICK_RUN = TransferConfig(
    Ds=SCOPE_DS,
    Ns=fine_grid(1024),
    kernel_max_N=1024,
    seeds=5,
    N_test=4096,
    upstream_N=4096,
    upstream_steps=2000,
    logreg_max_N=256,
    scratch_max_N=256,
    baseline_max_N=256,
    budget=1 << 20,
    budget_scratch=1 << 20,
    sim_max_D=32,
    scratch_max_D=32,
    logreg_max_D=64,
)
#: The full sizes (``--full``, the ledger's full run): those of the reported run (pre-trained Â are cached
#: under OUT/upstream_cache).
FULL_RUN = QUICK_RUN.replace(
    Ns=fine_grid(4096),
    kernel_max_N=4096,
    N_test=8192,
    upstream_N=8192,
    logreg_max_N=1024,
    baseline_max_N=1024,
    budget=1 << 26,
    budget_scratch=1 << 22,
    sim_max_D=64,
    scratch_max_D=64,
    logreg_max_D=256,
)

#: The sizes the named runs set, each once (the keys of the former QUICK/FULL dictionaries).
SIZE_FIELDS = (
    "Ds",
    "Ns",
    "kernel_max_N",
    "seeds",
    "N_test",
    "upstream_N",
    "upstream_steps",
    "logreg_max_N",
    "scratch_max_N",
    "baseline_max_N",
    "budget",
    "budget_scratch",
    "sim_max_D",
    "scratch_max_D",
    "logreg_max_D",
)
#: Compatibility aliases: the named sizes as the dictionaries they were (``options_from`` reads them);
#: new code uses :data:`QUICK_RUN` / :data:`FULL_RUN`.
QUICK: dict[str, Any] = {k: getattr(QUICK_RUN, k) for k in SIZE_FIELDS}
FULL: dict[str, Any] = {k: getattr(FULL_RUN, k) for k in SIZE_FIELDS}


def short(x: float) -> str:
    """``x`` in the shorter of ``%g`` and a plain scientific form (``10``, ``0.05``, ``1e-3``), for help texts."""
    g = f"{x:g}"
    mantissa, exponent = f"{x:e}".split("e")
    sci = f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"
    return sci if len(sci) < len(g) else g


def options_from(cfg: dict, **kw: Any) -> TransferConfig:
    """A :class:`TransferConfig` from a QUICK/FULL-style dict (keys it does not know are ignored) and ``kw``."""
    names = set(TransferConfig.names())
    merged: dict[str, Any] = {k: (tuple(v) if k in ("Ns", "Ds") else v) for k, v in cfg.items() if k in names}
    merged.update(kw)
    return TransferConfig(**merged)


def idle_option(config_given: set[str], methods: tuple[str, ...], keep_q: bool) -> str | None:
    """The first option given (by field name, plus the setting's ``q`` and ``D``) that does nothing in this
    mode (with these ``methods``, with or without ``keep_q``), as ``--flag: why``; None when every one acts."""
    given = config_given
    if keep_q and "count" in given:
        return "--count: not used with --keep-q (q stays at --q across D)"
    if not keep_q and "q" in given:
        return "--q: only used with --keep-q (otherwise q = K/(D − C) follows --count)"
    if "D" in given and (not keep_q or "q" in given):
        return "--D: the experiment runs at each D of --Ds; --D only sets the default q = min(1, C²/D) of --keep-q"
    uses = {
        "upstream_N": "pretrained-sim",
        "upstream_steps": "pretrained-sim",
        "sim_max_D": "pretrained-sim",
        "scratch_max_D": "scratch",
    }
    for k, m in uses.items():
        if k in given and m not in methods:
            return f"--{k.replace('_', '-')}: only used by method {m}, which --methods leaves out"
    for k in ("steps_v", "method"):
        if k in given and not set(methods) & set(FROZEN):
            return (
                f"--{k.replace('_', '-')}: only used by the frozen-attention methods ({', '.join(FROZEN)}), "
                f"which --methods leaves out"
            )
    for k in ("eta", "omega"):
        if k in given and set(methods) <= {"logreg"}:
            return f"--{k}: not used by logreg (L2 logistic regression, λ by cross-validation)"
    if "cache" in given and not set(methods) & set(CACHED):
        return f"--cache: only used by the pre-trained methods ({', '.join(CACHED)}), which --methods leaves out"
    return None


# ---- one invocation of python -m theorydyn.transfer ------------------------------------------------------
#: where the ledger rows of Theorems 5.1/5.2 come from (the command no longer prints them: it sits below claims/)
VERIFY_COMMAND = "python -m theorydyn.verify --only transfer"
#: the fields whose flag is left None unless given (the named run's value then stands: QUICK_RUN, or
#: FULL_RUN with ``--full``), in the command's order
RUN_FLAGS = (
    "count",
    "Ds",
    "Ns",
    "seeds",
    "N_test",
    "upstream_N",
    "upstream_steps",
    "scratch_max_D",
    "sim_max_D",
    "steps_v",
    "method",
)
#: the flags of TransferConfig's fields after ``--target``, in the command's order (the help's)
LATER_FLAGS = (*RUN_FLAGS[1:-2], "eta", "omega", *RUN_FLAGS[-2:])
#: what the help of those flags says beside the field's own text: the QUICK and FULL values
NOTES = dict(
    Ds=f"default {' '.join(map(str, QUICK_RUN.Ds))}",
    Ns=f"default powers of 2: 1 … {QUICK_RUN.Ns[-1]}; --full: … {FULL_RUN.Ns[-1]}",
    seeds=f"default {QUICK_RUN.seeds}",
    N_test=f"default {QUICK_RUN.N_test}; --full: {FULL_RUN.N_test}",
    upstream_N=f"method pretrained-sim; default {QUICK_RUN.upstream_N}; --full: {FULL_RUN.upstream_N}",
    upstream_steps=f"method pretrained-sim; default {QUICK_RUN.upstream_steps}",
    scratch_max_D=f"default {QUICK_RUN.scratch_max_D}; --full: {FULL_RUN.scratch_max_D}",
    sim_max_D=f"default {QUICK_RUN.sim_max_D}; --full: {FULL_RUN.sim_max_D}",
    eta=f"default {short(QUICK_RUN.eta)}",
    omega=f"default {short(QUICK_RUN.omega)}",
    steps_v=f"default {QUICK_RUN.steps_v}; frozen-attention methods",
    method=f"default {QUICK_RUN.method}; frozen-attention methods",
)
#: the help of the command's flags that are no field of its configs (``--nu`` is the Setting's, here with the
#: transfer setting's ν; ``--target`` may be ``none``, which no field's flag says yet)
HELP = dict(
    description="Transfer with a frozen attention: accuracy against Ñ and Ñ_target against D (Theorems 5.1, 5.2), "
    "resumable. Quick by default; --full for the report sizes.",
    nu="linear part of the activation > 0 (default 1/64, the transfer setting's)",
    quick="the QUICK sizes (the default)",
    full="the sizes of the reported run (FULL) (default: QUICK)",
    target=f"{TransferConfig.help_of('target')} (default {QUICK_RUN.target:g})",
    out="output folder (rows, CSVs, PNGs); rerunning with the same folder resumes",
    fresh="--out's stored transfer rows of this run and its transfer_* tables and figures (the pre-trained "
    "attentions of --cache are kept: they are validated on use)",
)
#: what the memory estimate's parameters are called on the command line (None: a size it fixes itself)
MEMORY_FLAGS: dict[str, Any] = {
    "D": "--Ds",
    "N": "--Ns",
    "N_test": "--n-test",
    "upstream_N": "--upstream-N",
    "d": "--d",
    "n_samples": None,
    "n_test": None,
}
#: ν of the transfer setting where ``--nu`` is not given (:func:`theorydyn.transfer.experiment.base_setting`)
NU = 1 / 64


@dataclass(frozen=True)
class TransferCommand(Config):
    """One invocation of ``python -m theorydyn.transfer`` beside its :class:`TransferConfig`: the named run
    (``full``: FULL_RUN, else QUICK_RUN), whether q or K = q(D − C) is kept across D, the methods, the folder
    of the pre-trained attentions and the removed ``--checks``."""

    full: bool = option(False, "the sizes of the reported run (FULL_RUN)", cli=False)
    keep_q: bool = option(
        False,
        "keep --q fixed across D instead (the old, censored rule); --q and --D (default q = min(1, C²/D)) act "
        "only with it",
    )
    methods: tuple[str, ...] = option(
        DEFAULT_METHODS,
        "the methods run",
        choices=METHODS,
        many=True,
        metavar="METHOD",
        flag_help=f"a subset of {' '.join(METHODS)} (default {' '.join(DEFAULT_METHODS)})",
    )
    cache: Path | None = option(
        None,
        "folder of pre-trained attentions (.npz; default OUT/upstream_cache)",
        kind=object,
        parse="path",
        optional=True,
    )
    checks: bool = option(
        False, f"removed: the ledger rows (Theorems 5.1, 5.2) are '{VERIFY_COMMAND}' (add --quick for the QUICK sizes)"
    )

    @property
    def chosen(self) -> tuple[str, ...]:
        """The methods, each once, in the order given."""
        return tuple(dict.fromkeys(self.methods))

    def plan(
        self, values: Mapping[str, Any], given: set[str], shown: Mapping[str, str]
    ) -> tuple[TransferConfig, Any, Any, str]:
        """The run's :class:`TransferConfig`, its :class:`~theorydyn.core.setting.Setting` (ν default
        :data:`NU`), and the base setting and q rule of :meth:`TransferConfig.upstream_base`, checked before
        any work. ``values``: the flags' values by field name (those of :data:`RUN_FLAGS` None: the named
        run's); ``given``: the names of those given explicitly; ``shown``: name → flag of those, in the
        command's order.

        Raises:
            ValueError: starting with the flag it is about: ``--checks`` (removed) or a flag given with it,
                a flag that does nothing in this mode (:func:`idle_option`), a value that breaks its field's
                rule, a setting that is not valid (at each D of the run).
        """
        from ..core.setting import Setting

        if self.checks:
            for name, flag in shown.items():
                if name not in ("checks", "full", "out"):
                    raise ValueError(
                        f"{flag}: has no effect with --checks (the ledger runs at fixed sizes; only --full and "
                        f"--out apply)"
                    )
            quick = "" if self.full else " --quick"
            raise ValueError(
                f"--checks: the ledger rows of Theorems 5.1 and 5.2 are printed by '{VERIFY_COMMAND}{quick}'; "
                f"this command runs the experiment only"
            )
        idle = idle_option(given, self.chosen, self.keep_q)
        if idle:
            raise ValueError(idle)
        over = {k: values[k] for k in RUN_FLAGS if values.get(k) is not None}
        over.update({k: tuple(over[k]) for k in ("Ds", "Ns") if k in over})
        if self.keep_q:
            over["count"] = None
        named = FULL_RUN if self.full else QUICK_RUN
        try:
            opts = named.replace(**over, **{k: values[k] for k in ("omega", "eta", "eps", "target")})
        except ValueError as e:
            raise ValueError(_flagged(e)) from None
        nu = values["nu"] if values["nu"] is not None else NU
        try:
            s = Setting(**{**{k: values[k] for k in SETTING_FLAGS}, "nu": nu})
        except ValueError as e:
            raise ValueError(setting_error_message(e)) from None
        try:
            base, rule = opts.upstream_base(s)
        except ValueError as e:
            raise ValueError(_flagged(e)) from None
        return opts, s, base, rule


def _flagged(e: ValueError) -> str:
    """A config's message (``Ns must …``, ``Ds: …``) starting with the flag of its field instead."""
    text = str(e)
    name = text.split(" ", 1)[0].rstrip(":")
    if name not in TransferConfig.names():
        return text
    rest = text[len(name) + 2 :] if text.startswith(f"{name}: ") else text
    return f"{flag_of(TransferConfig, name)}: {rest}"
