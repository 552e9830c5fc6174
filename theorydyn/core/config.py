"""Typed, frozen configuration objects: each option's default, rule and help text written once (issues 29, 40).

A configuration is a frozen dataclass whose fields are made by :func:`option`: the default, the rule
(:class:`Rule`: the kind, a range, the choices) and the help text live in the field, and nothing else
repeats them. From the fields come

* the validation: :class:`Config`'s ``__post_init__`` checks every field and raises ``ValueError``
  naming it (``eta must be finite and > 0, got eta=0``; the messages of :mod:`theorydyn.core.validate`);
  :meth:`Config.check_values` applies the same rules to keyword arguments (the solvers' own checks);
* the command-line flags (:mod:`theorydyn.cli.configs`: one flag per field, ``--n-samples`` for
  ``n_samples``, its converter built from the rule, the help text with the default);
* the scan's axes and the store's keys (the fields' names and values).

Seeds have one type: :data:`Seeds`, a tuple of integers >= 0, made by :func:`as_seeds` from a count or
from any sequence of seeds.

The configurations: :class:`theorydyn.reduced.config.FlowConfig` (the idealized dynamics),
:class:`theorydyn.simulate.config.SimConfig` (GD on N samples) and
:class:`theorydyn.vision.config.TrainConfig` (the Section 6 training loop), and the claims' sizes
(:class:`theorydyn.claims.sizes.ClaimSizes`). This module sits under the solvers and imports none of
them, nor the command line: a solver's config and the command that reads it share it.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

#: Seeds of several runs, one type everywhere: a tuple of integers >= 0.
Seeds = tuple[int, ...]

C = TypeVar("C", bound="Config")


def as_seeds(seeds: int | Iterable[int], first: int = 0) -> Seeds:
    """The seeds ``seeds`` names, as :data:`Seeds`: an integer K is a count (seeds ``first`` … ``first``+K−1,
    as ``--seeds K --first-seed F``); a sequence or range is taken as it is (``first`` must then be 0).

    >>> as_seeds(3), as_seeds(2, first=5), as_seeds(range(2)), as_seeds([4, 1])
    ((0, 1, 2), (5, 6), (0, 1), (4, 1))

    Raises:
        ValueError: a count < 1, a seed that is not an integer >= 0, or ``first`` with a sequence.
    """
    if _is_int(seeds):
        k = int(seeds)  # type: ignore[arg-type]
        if k < 1:
            raise ValueError(f"seeds must be a count >= 1 or a sequence of seeds, got seeds={k}")
        if not (_is_int(first) and first >= 0):
            raise ValueError(f"first must be an integer >= 0, got first={first!r}")
        return tuple(range(first, first + k))
    if first != 0:
        raise ValueError("first: only with a count of seeds, not with a sequence of them")
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise ValueError(f"seeds must be a count or a sequence of integers >= 0, got seeds={seeds!r}")
    out = tuple(seeds)
    for i, v in enumerate(out):
        if not (_is_int(v) and v >= 0):
            raise ValueError(f"seeds[{i}] must be an integer >= 0, got seeds[{i}]={v!r}")
    return tuple(int(v) for v in out)


def _is_int(v: Any) -> bool:
    # NumPy integers count (they are registered as Integral); bool does not
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


@dataclass(frozen=True)
class Rule:
    """What a value of one option must be: of ``kind`` (int, float, str, bool or object), in the range
    [``low``, ``high``] (open ends with ``low_open``/``high_open``; None: unbounded), one of ``choices``;
    ``optional``: None is allowed too (the run picks the value). ``text`` words the range in messages
    where the default wording would not say it (``in (0, 1)``)."""

    kind: type = object
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[Any, ...] | None = None
    optional: bool = False
    text: str | None = None
    #: an integer >= 1 whose flag says "must be > 0" (the words of theorydyn.cli.tools.positive)
    positive: bool = False
    #: a non-empty tuple of values, each obeying the rule (a flag with ``nargs="+"``)
    many: bool = False

    def check(self, name: str, v: Any) -> None:
        """Raise ValueError naming ``name`` (the wording of :mod:`theorydyn.core.validate`) unless ``v`` obeys."""
        from . import validate

        if v is None and self.optional:
            return
        if self.many:
            if not isinstance(v, (tuple, list)) or not v:
                raise ValueError(f"{name} must be a non-empty list, got {name}={v!r}")
            one = dataclasses.replace(self, many=False, optional=False)
            for i, x in enumerate(v):
                one.check(f"{name}[{i}]", x)
            return
        if self.choices is not None:
            if v not in self.choices:
                raise ValueError(f"{name} must be one of {list(self.choices)}, got {name}={v!r}")
            return
        if self.kind is bool:
            if not isinstance(v, bool):
                raise ValueError(f"{name} must be true or false, got {name}={v!r}")
            return
        plain = self.text is None and self.low is not None and not self.high_open
        if self.kind is int:
            if not _is_int(v):
                raise ValueError(f"{name} must be an integer, got {name}={v!r}")
            if plain and not self.low_open and self.low is not None:
                validate.check_int(name, v, int(self.low), None if self.high is None else int(self.high))
                return
        elif self.kind is float:
            if not validate._is_real(v):
                raise ValueError(f"{name} must be a real number, got {name}={v!r}")
            if plain and self.low is not None:
                validate.check_real(name, v, low=self.low, high=self.high, open_low=self.low_open)
                return
        else:
            if self.kind is str and not isinstance(v, str):
                raise ValueError(f"{name} must be text, got {name}={v!r}")
            return
        self._range(name, v)

    def _range(self, name: str, v: Any) -> None:
        x = float(v)
        bad = (self.low is not None and (x < self.low or (self.low_open and x == self.low))) or (
            self.high is not None and (x > self.high or (self.high_open and x == self.high))
        )
        if bad or not math.isfinite(x):
            raise ValueError(f"{name} must be {self.text or self.range_text()}, got {name}={v!r}")

    def range_text(self) -> str:
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        return " and ".join(parts) or "any value"


def option(
    default: Any,
    help: str,
    *,
    kind: type | None = None,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    choices: Sequence[Any] | None = None,
    optional: bool = False,
    text: str | None = None,
    positive: bool = False,
    flag: str | None = None,
    dest: str | None = None,
    aliases: Sequence[str] = (),
    metavar: str | None = None,
    cli: bool = True,
    many: bool = False,
    nargs: str | None = None,
    flag_help: str | bool | None = None,
    parse: str | None = None,
    hidden: bool = False,
) -> Any:
    """One field of a :class:`Config`: its ``default``, its rule (:class:`Rule`; ``kind`` defaults to
    the default's type) and its ``help``. ``flag`` (default ``--name`` with ``-`` for ``_``), ``dest``
    (default the field's name), ``aliases`` (old spellings, accepted and hidden from ``--help``) and
    ``metavar`` shape its command-line flag (:mod:`theorydyn.cli.configs`); ``cli=False`` keeps it off the
    command line. ``positive``: an integer >= 1 (``low`` 1) whose flag is worded as ``must be > 0``
    (:func:`theorydyn.cli.tools.positive`). ``many``: a tuple of such values (a flag with ``nargs="+"``).

    How the flag reads, where it is not the plain ``--name VALUE (help, default …)``: ``flag_help``, its
    help text word for word (``True``: ``help`` itself, word for word; the parser's formatter adds
    ``(default: X)`` only where the text names no default); ``hidden``: accepted, not shown; ``nargs`` (a
    ``flag`` without dashes is a positional argument, e.g. ``nargs="?"``); ``parse="path"``: a
    :class:`~pathlib.Path`, a blank value refused."""
    if positive and low is None:
        low = 1
    if kind is None:
        kind = type(default) if default is not None else object
    rule = Rule(
        kind=kind,
        low=low,
        high=high,
        low_open=low_open,
        high_open=high_open,
        choices=None if choices is None else tuple(choices),
        optional=optional,
        text=text,
        positive=positive,
        many=many,
    )
    meta = dict(
        help=help,
        rule=rule,
        flag=flag,
        dest=dest,
        aliases=tuple(aliases),
        metavar=metavar,
        cli=cli,
        nargs=nargs,
        flag_help=help if flag_help is True else flag_help,
        parse=parse,
        hidden=hidden,
    )
    return dataclasses.field(default=default, metadata=meta)


class Config:
    """The base of the configurations: validation of every field on construction, and their rules.

    Subclasses are ``@dataclass(frozen=True)`` with :func:`option` fields."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            rule = f.metadata.get("rule")
            if rule is not None:
                rule.check(f.name, getattr(self, f.name))

    @classmethod
    def rule(cls, name: str) -> Rule:
        """The :class:`Rule` of field ``name``."""
        return _field(cls, name).metadata["rule"]

    @classmethod
    def help_of(cls, name: str) -> str:
        return _field(cls, name).metadata["help"]

    @classmethod
    def default(cls, name: str) -> Any:
        return _field(cls, name).default

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]

    @classmethod
    def check_values(cls, **values: Any) -> None:
        """Check keyword arguments named after fields by the fields' rules (ValueError naming the first
        that breaks its rule); names that are not fields are an error of the caller (KeyError)."""
        for k, v in values.items():
            cls.rule(k).check(k, v)

    @classmethod
    def call_options(cls, where: str, config: Any, options: dict[str, Any], derived: str) -> dict[str, Any]:
        """The options of one call of a solver that takes ``(setting, config=None, **options)``
        (:func:`theorydyn.reduced.integrate`, :func:`theorydyn.simulate.simulate`): every field, ``config``'s,
        or the defaults with field ``derived`` None (the solver derives it from its other inputs) replaced by
        ``options``. The values are checked by the fields' rules where the solver checks its inputs.

        Raises:
            TypeError: ``options`` names what is not a field, or ``config`` is not an instance of ``cls``.
            ValueError: ``options`` beside ``config`` (two values for one option is an error, not a choice).
        """
        unknown = [k for k in options if k not in cls.names()]
        if unknown:
            raise TypeError(
                f"{where}() got an unexpected keyword argument {unknown[0]!r} (options: {cls.__name__}'s fields)"
            )
        if config is None:
            return {**cls().to_dict(), derived: None, **options}
        if not isinstance(config, cls):
            raise TypeError(f"{where}: config must be a {cls.__name__}, got {type(config).__name__}")
        if options:
            raise ValueError(f"{', '.join(options)}: given both in config and as keywords; give each once")
        return config.to_dict()

    def replace(self: C, **changes: Any) -> C:
        """A copy with ``changes`` (checked again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]


def _field(cls: type, name: str) -> dataclasses.Field:
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f
    raise KeyError(f"{cls.__name__} has no field {name!r}")


# ---- a field as an option of a scan point (issue 40) -----------------------------------------------------
class _FieldDefault:
    def __repr__(self) -> str:
        return "FIELD_DEFAULT"


#: A :class:`ScanOption`'s default that is its field's (None may be a scan's own default).
FIELD_DEFAULT: Any = _FieldDefault()


@dataclass(frozen=True)
class ScanOption:
    """How a configuration field is also an option of a scan point (:mod:`theorydyn.scan.schema` reads it):
    the rest (the kind, the choices, the range, the default) is the field's.

    Attributes:
        help: the help text of the scan's flag, word for word; None: no flag (a spec file's key only).
        name: its key in a scan (a spec file, a row, a point's key); default the field's name.
        default: the scan's default where it is not the field's (:data:`FIELD_DEFAULT`: the field's).
        rule: the scan's rule where it is not the field's (None: the field's).
        axis: its flag takes a list (``nargs="+"``, among the scan's axes); else one value.
        when: the point's options under which it changes the numbers, ``((key, value), …)``, any of them
            (empty: always); elsewhere it is left out of the point's key.
    """

    help: str | None
    name: str | None = None
    default: Any = FIELD_DEFAULT
    rule: Rule | None = None
    axis: bool = False
    when: tuple[tuple[str, Any], ...] = ()


def scanned(field: Any, help: str | None, **scan: Any) -> Any:
    """The field ``field`` (made by :func:`option`) as an option of a scan point as well: the same field,
    its metadata holding ``scan`` = :class:`ScanOption` (``help`` and ``scan``'s keywords)."""
    f: dataclasses.Field = field
    return dataclasses.field(default=f.default, metadata={**f.metadata, "scan": ScanOption(help, **scan)})


def scanned_fields(cls: type) -> tuple[tuple[dataclasses.Field, ScanOption], ...]:
    """The fields of ``cls`` made :func:`scanned`, in their order, each with its :class:`ScanOption`."""
    return tuple((f, f.metadata["scan"]) for f in dataclasses.fields(cls) if f.metadata.get("scan") is not None)


def scan_key(f: dataclasses.Field, scan: ScanOption) -> str:
    """The key of a scanned field in a scan (a spec file, a row, a point's key): its ScanOption's name, or
    the field's."""
    return scan.name or f.name
