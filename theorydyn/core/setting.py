"""The setting of the paper: one validated, frozen dataclass shared by every entry point.

It holds the parameters of Assumption 1, Assumption 2 and Simplification 3.1
(docs/theory.md §1) and the derived quantities every module needs: L = D / C, the sets
S_1..S_L, and the in-set / cross-set masks of the attention matrix.

Solver options (step size, number of samples, horizon, seeds) are *not* part of
the setting: they are arguments of the solver that uses them.
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from ..infra.limits import TAU_MIN, VALUE_MAX

PARTITION_KINDS = ("blocks", "grid", "random")

#: The default of a derived field: resolved from D (and d) in ``Setting.__post_init__``. Typed Any so that
#: the fields can be annotated with their resolved, non-Optional types.
AUTO: Any = None

#: The fields whose default depends on D: d = D, q = min(1, C²/D), σ² = 1/d, ν = 1/d.
DERIVED = ("d", "q", "sigma2", "nu")

#: Largest number of patches D (and patch dimension d) a Setting accepts: 2**16 = 65536.
#: Why: a Setting builds its partition eagerly (O(D) tuples, so ``Setting(D=10**12)`` would hang
#: instead of failing), and every computation on the full attention holds D × D arrays; one
#: float64 D × D array at D = 2**16 is 32 GiB, beyond the machines this toolkit targets, while
#: the sizes of docs/theory.md §9 (D ≤ 4096) stay well inside. d is capped the same way since
#: the data X is (N, D, d). Larger runs are refused with a message, not started.
D_MAX = 2**16


def _partition_blocks(D: int, C: int) -> tuple[tuple[int, ...], ...]:
    """S_ℓ = {ℓC, …, ℓC + C − 1} (0-based)."""
    return tuple(tuple(range(l * C, (l + 1) * C)) for l in range(D // C))


def _partition_grid(D: int, C: int) -> tuple[tuple[int, ...], ...]:
    """Patches on a √D × √D grid (row-major) cut into √C × √C tiles, Figure 1b-(1).

    D = 16, C = 4 gives S_1 = {0, 1, 4, 5}, S_2 = {2, 3, 6, 7}, … (0-based).
    """
    H = int(round(D**0.5))
    t = int(round(C**0.5))
    if H * H != D or t * t != C or H % t:
        raise ValueError(
            f"partition='grid' needs D and C perfect squares with sqrt(C) dividing sqrt(D); got D={D}, C={C}"
        )
    sets = []
    for bi in range(H // t):
        for bj in range(H // t):
            sets.append(tuple(sorted((bi * t + a) * H + bj * t + b for a in range(t) for b in range(t))))
    return tuple(sets)


def _partition_random(D: int, C: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """A seeded random partition: non-contiguous sets as in Figure 1b-(2)."""
    perm = np.random.default_rng(seed).permutation(D)
    return tuple(tuple(sorted(int(i) for i in perm[l * C : (l + 1) * C])) for l in range(D // C))


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _is_real(x: Any) -> bool:
    """A real number: int, float, a NumPy integer or floating scalar (or 0-d array); not bool, not text."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    return isinstance(x, (numbers.Real, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


@dataclass(frozen=True)
class Setting:
    """Parameters of the data distribution (Assumption 1) and model (T) (docs/theory.md §1–§2).

    Args:
        D: number of patches (tokens); 2 ≤ D ≤ :data:`D_MAX` = 2¹⁶ and divisible by C.
        C: size of each set S_ℓ; 2 ≤ C < D.
        d: patch dimension, 2 ≤ d ≤ :data:`D_MAX`; ``None`` → D (Simplification 3.1).
        q: probability that a non-signal patch carries ±w* (q/2 each); ``None`` → min(1, C²/D).
        sigma2: noise variance σ² > 0; ``None`` → 1/d (so ‖ξ‖ ≈ ‖w*‖).
        p: degree of the activation σ(x) = x^p + νx; odd, ≥ 3.
        nu: linear part ν > 0 of the activation; ``None`` → 1/d.
        beta: the fixed diagonal β = σ_A of the attention logits.
        tau: softmax temperature τ ≥ :data:`~theorydyn.infra.limits.TAU_MIN` = 1e-12, S = softmax(A/τ)
            row-wise (τ = √d is Definition 3.2's 1/√d).
        partition: ``"blocks"``, ``"grid"``, ``"random"``, or an explicit partition of
            range(D) into L sets of size C (any iterable of iterables; stored as sorted tuples).
        partition_seed: seed of the ``"random"`` partition, an integer ≥ 0.
        feature: the unit feature w*: an int k means the basis vector e_k (default e_0,
            the paper's e_1), or an explicit vector of length d (normalised; must be nonzero).

    Derived: ``L``, ``sets`` (L, C) int array, ``set_of`` (D,) set index of each patch,
    ``same_set`` (D, D) bool (diagonal included), ``in_set_mask`` / ``cross_set_mask``
    (D, D) bool off-diagonal masks, ``w_star`` (d,), ``n_in`` = D(C−1), ``n_cross`` = D(D−C).

    Raises:
        ValueError: naming the parameter and the rule it broke.

    >>> s = Setting(D=16, C=4)
    >>> s.L, s.n_in, s.n_cross
    (4, 48, 192)
    >>> Setting(D=50, C=3)
    Traceback (most recent call last):
    ...
    ValueError: C must divide D, got D=50, C=3
    """

    D: int = 64
    C: int = 4
    # ``AUTO`` (None) asks for the default derived from D (the docstring); after __post_init__ every
    # field holds its resolved value, hence the non-Optional annotations.
    d: int = AUTO
    q: float = AUTO
    sigma2: float = AUTO
    p: int = 3
    nu: float = AUTO
    beta: float = 1.0
    tau: float = 1.0
    partition: Any = "blocks"
    partition_seed: int = 0
    feature: Any = 0
    #: The derived fields (:data:`DERIVED`) that were given explicitly, not left to their default;
    #: :meth:`at` keeps these and re-derives the others.
    explicit: frozenset[str] = dataclasses.field(default=frozenset(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (frozen dataclass)
        set_("explicit", frozenset(name for name in DERIVED if getattr(self, name) is not None))
        for name in ("D", "C", "p", "partition_seed"):
            if not _is_int(getattr(self, name)):
                raise ValueError(f"{name} must be an integer, got {getattr(self, name)!r}")
            set_(name, int(getattr(self, name)))
        D, C = self.D, self.C
        if D < 2:
            raise ValueError(f"D must be at least 2, got D={D}")
        if D > D_MAX:
            raise ValueError(
                f"D must be at most D_MAX = {D_MAX} (D × D attention arrays; see theorydyn.core.setting.D_MAX), "
                f"got D={D}"
            )
        if not 2 <= C < D:
            raise ValueError(f"C must satisfy 2 <= C < D, got C={C}, D={D}")
        if D % C:
            raise ValueError(f"C must divide D, got D={D}, C={C}")
        if self.d is None:
            set_("d", D)
        elif not _is_int(self.d) or not 2 <= self.d <= D_MAX:
            raise ValueError(f"d must be an integer in [2, D_MAX = {D_MAX}], got d={self.d!r}")
        set_("d", int(self.d))
        if self.partition_seed < 0:
            raise ValueError(f"partition_seed must be >= 0, got partition_seed={self.partition_seed}")
        if self.p < 3 or self.p % 2 == 0:
            raise ValueError(f"p must be odd and >= 3, got p={self.p}")
        for name, default in (("q", min(1.0, C * C / D)), ("sigma2", 1.0 / self.d), ("nu", 1.0 / self.d)):
            if getattr(self, name) is None:
                set_(name, float(default))
        for name in ("q", "sigma2", "nu", "beta", "tau"):
            v = getattr(self, name)
            if not _is_real(v):  # text ("0.5") is refused as D="16" is: the API takes numbers, the CLI parses
                raise ValueError(f"{name} must be a real number, got {v!r}")
            v = float(v)
            if not np.isfinite(v):
                raise ValueError(f"{name} must be finite, got {name}={v}")
            if v > VALUE_MAX:  # the flags' ceiling: one rule for the library and the command line
                raise ValueError(f"{name} must be <= {VALUE_MAX:g} (no run needs more), got {name}={v:g}")
            set_(name, v)
        if not 0.0 <= self.q <= 1.0:
            raise ValueError(f"q must lie in [0, 1], got q={self.q}")
        for name in ("sigma2", "nu"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be > 0, got {name}={getattr(self, name)}")
        if not self.tau >= TAU_MIN:  # 1/τ is derived: β/τ overflows the softmax below it (tau=5e-324 divided by 0)
            raise ValueError(f"tau must be >= {TAU_MIN:g} (β/τ overflows the softmax below it), got tau={self.tau:g}")
        set_("partition", self._resolve_partition())
        set_("feature", self._resolve_feature())

    def _resolve_partition(self) -> Any:
        part, D, C = self.partition, self.D, self.C
        if isinstance(part, str):
            if part not in PARTITION_KINDS:
                raise ValueError(f"partition must be one of {PARTITION_KINDS} or an explicit partition, got {part!r}")
            # Validate now, so that a bad grid size fails at construction, not at first use.
            self._build_sets(part)
            return part
        try:
            sets = tuple(tuple(sorted(int(i) for i in S)) for S in part)
        except TypeError:
            raise ValueError(f"partition must be a name or an iterable of sets, got {part!r}") from None
        if len(sets) != D // C or any(len(S) != C for S in sets):
            raise ValueError(
                f"partition must consist of D/C={D // C} sets of size C={C}, got sizes {[len(S) for S in sets]}"
            )
        flat = sorted(i for S in sets for i in S)
        if flat != list(range(D)):
            raise ValueError(f"partition must cover each patch 0..{D - 1} exactly once")
        return tuple(sorted(sets))

    def _resolve_feature(self) -> Any:
        f = self.feature
        if _is_int(f):
            if not 0 <= f < self.d:
                raise ValueError(f"feature must be a basis index in [0, d={self.d}) or a vector, got {f}")
            return int(f)
        try:
            w = np.asarray(f, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"feature must be a basis index or a vector of length d, got {f!r}") from None
        with np.errstate(over="ignore"):  # a norm that overflows is refused (w / inf made w* = 0)
            finite_norm = w.shape == (self.d,) and 0 < np.linalg.norm(w) < np.inf
        if w.shape != (self.d,) or not np.all(np.isfinite(w)) or not finite_norm:
            raise ValueError(f"feature vector must be finite, nonzero and of length d={self.d}")
        return tuple(float(x) for x in w / np.linalg.norm(w))

    def _build_sets(self, kind: str) -> tuple[tuple[int, ...], ...]:
        if kind == "blocks":
            return _partition_blocks(self.D, self.C)
        if kind == "grid":
            return _partition_grid(self.D, self.C)
        return _partition_random(self.D, self.C, self.partition_seed)

    # ---- derived quantities -------------------------------------------------------
    @property
    def L(self) -> int:
        """Number of sets, D / C."""
        return self.D // self.C

    @cached_property
    def sets(self) -> np.ndarray:
        """(L, C) int array: row ℓ lists the patches of S_ℓ (0-based)."""
        raw = self._build_sets(self.partition) if isinstance(self.partition, str) else self.partition
        out = np.array(raw, dtype=np.int64)
        out.setflags(write=False)
        return out

    @cached_property
    def set_of(self) -> np.ndarray:
        """(D,) int array: the index ℓ of the set containing each patch."""
        out = np.empty(self.D, dtype=np.int64)
        for l, S in enumerate(self.sets):
            out[S] = l
        out.setflags(write=False)
        return out

    @cached_property
    def same_set(self) -> np.ndarray:
        """(D, D) bool: i and j lie in the same set (diagonal included)."""
        out = self.set_of[:, None] == self.set_of[None, :]
        out.setflags(write=False)
        return out

    @cached_property
    def in_set_mask(self) -> np.ndarray:
        """(D, D) bool: off-diagonal entries of A inside a set (they share γ; D(C−1) of them)."""
        out = self.same_set & ~np.eye(self.D, dtype=bool)
        out.setflags(write=False)
        return out

    @cached_property
    def cross_set_mask(self) -> np.ndarray:
        """(D, D) bool: entries of A across sets (they share ρ; D(D−C) of them)."""
        out = ~self.same_set
        out.setflags(write=False)
        return out

    @property
    def n_in(self) -> int:
        """Number of in-set off-diagonal entries, D(C−1)."""
        return self.D * (self.C - 1)

    @property
    def n_cross(self) -> int:
        """Number of cross-set entries, D(D−C)."""
        return self.D * (self.D - self.C)

    @cached_property
    def w_star(self) -> np.ndarray:
        """(d,) the unit feature w*."""
        if isinstance(self.feature, int):
            w = np.zeros(self.d)
            w[self.feature] = 1.0
        else:
            w = np.array(self.feature, dtype=float)
        w.setflags(write=False)
        return w

    @property
    def alpha0(self) -> float:
        """α(0) = ν^{1/(p−1)}, the idealized initialisation (Parametrization 3.1)."""
        return self.nu ** (1.0 / (self.p - 1))

    def replace(self, **changes: Any) -> Setting:
        """A new validated Setting with some fields changed and every other field kept as resolved.

        ``Setting(D=64).replace(D=128)`` keeps d = 64, q = 1/4, σ² = ν = 1/64: a literal field edit.
        To move a setting to another size and re-derive its defaults, use :meth:`at`. A derived field
        stays explicit (:attr:`explicit`) if it was, or becomes so when given a value here.
        """
        new = dataclasses.replace(self, **changes)
        given = {k for k, v in changes.items() if k in DERIVED and v is not None}
        cleared = {k for k, v in changes.items() if v is None}
        object.__setattr__(new, "explicit", frozenset((self.explicit - cleared) | given))
        return new

    def at(self, **changes: Any) -> Setting:
        """This setting with some fields changed, every derived default re-derived.

        The fields of :data:`DERIVED` (d = D, q = min(1, C²/D), σ² = 1/d, ν = 1/d) that were set
        explicitly (:attr:`explicit`) keep their values; the others follow the new D and d. So
        ``Setting(D=64).at(D=128)`` has d = 128, q = 16/128, σ² = ν = 1/128, while
        ``Setting(D=64, q=0.3).at(D=128)`` keeps q = 0.3. An explicit partition cannot move to another
        D: with D changed it becomes ``"blocks"`` unless ``partition`` is given.
        """
        reset: dict[str, Any] = {name: None for name in DERIVED if name not in self.explicit and name not in changes}
        if "D" in changes and changes["D"] != self.D and not isinstance(self.partition, str):
            changes.setdefault("partition", "blocks")
        return dataclasses.replace(self, **reset, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The resolved fields, JSON/CSV friendly (an explicit partition becomes a list of lists)."""
        out = {name: getattr(self, name) for name in SETTING_FIELDS}
        if not isinstance(out["partition"], str):
            out["partition"] = [list(S) for S in out["partition"]]
        if isinstance(out["feature"], tuple):
            out["feature"] = list(out["feature"])
        return out

    def __str__(self) -> str:
        part = self.partition if isinstance(self.partition, str) else "explicit"
        return (
            f"Setting(D={self.D}, C={self.C}, d={self.d}, q={self.q:g}, sigma2={self.sigma2:g}, p={self.p}, "
            f"nu={self.nu:g}, beta={self.beta:g}, tau={self.tau:g}, partition={part})"
        )


Q_RULES = ("keep", "count")


def setting_at(s: Setting, D: int, q_rule: str = "keep") -> Setting:
    """``s`` at another number of patches D (:meth:`Setting.at`), with C, p, ν, β, τ, the feature and the
    partition rule kept; d = D and σ² = 1/d re-derived unless ``s`` set them explicitly (Simplification 3.1,
    ‖ξ‖ ≈ ‖w*‖). An explicit partition cannot move to another D, so it becomes ``"blocks"``.

    The q rule is explicit:

    * ``"keep"``: q unchanged (the upstream checks' rule: only D changes). The number of spurious
      ±w* patches, q(D − C), then grows with D, and so does the difficulty of the task itself.
    * ``"count"``: q(D − C) = s.q (s.D − C) = K kept — the expected number of ±w* patches outside
      the signal set, i.e. Assumption 2's q = poly(C)/D. The best accuracy reachable with patch
      association is then the same at every D (the transfer experiment's rule, module docstring).
      ValueError when the new q exceeds 1 (D too small for that K).
    """
    if q_rule not in Q_RULES:
        raise ValueError(f"q_rule must be one of {Q_RULES}, got {q_rule!r}")
    q = s.q if q_rule == "keep" else s.q * (s.D - s.C) / (D - s.C)
    if q > 1:
        raise ValueError(
            f"q_rule='count': q(D−C) = {s.q * (s.D - s.C):g} needs D − C ≥ {s.q * (s.D - s.C):g}, "
            f"got D={D} (q would be {q:.3g} > 1)"
        )
    return s.at(D=D, q=q, nu=s.nu)


def _field_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Setting) if f.init)


SETTING_FIELDS = _field_names()
