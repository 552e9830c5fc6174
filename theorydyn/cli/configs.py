"""Typed, frozen configuration objects: each option's default, rule and help text written once (issue 29).

A configuration is a frozen dataclass whose fields are made by :func:`option`: the default, the rule
(:class:`Rule`: the kind, a range, the choices) and the help text live in the field, and nothing else
repeats them. From the fields come

* the validation: :class:`Config`'s ``__post_init__`` checks every field and raises ``ValueError``
  naming it (``eta must be finite and > 0, got eta=0``; the messages of :mod:`theorydyn.core.validate`);
  :meth:`Config.check_values` applies the same rules to keyword arguments (the solvers' own checks);
* the command-line flags: :func:`add_config_flags` adds one flag per field (``--n-samples`` for
  ``n_samples``, the converter of :func:`theorydyn.cli.tools.number` built from the rule, the help text with
  the default), :func:`config_from_args` builds the configuration back from the parsed flags;
* the scan's option types (:mod:`theorydyn.scan.schema` reads :meth:`Config.rule`).

Seeds have one type: :data:`Seeds`, a tuple of integers ≥ 0, made by :func:`as_seeds` from a count or
from any sequence of seeds.

The configurations: :class:`theorydyn.reduced.config.FlowConfig` (the idealized dynamics),
:class:`theorydyn.simulate.config.SimConfig` (GD on N samples) and
:class:`theorydyn.vision.config.TrainConfig` (the Section 6 training loop). This module imports no
solver: ``--help`` builds its flags without loading NumPy-heavy code beyond the base.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
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

    def check(self, name: str, v: Any) -> None:
        """Raise ValueError naming ``name`` (the wording of :mod:`theorydyn.core.validate`) unless ``v`` obeys."""
        from ..core import validate

        if v is None and self.optional:
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

    def converter(self, flag: str):
        """The argparse ``type=`` of this rule (:func:`theorydyn.cli.tools.number` for numbers: its checks at
        parse time, its attributes for the CLI fuzz tests); None for choices and text."""
        from .tools import number

        if self.kind in (int, float) and self.choices is None:
            return number(
                self.kind,
                flag,
                low=0 if self.positive else self.low,
                high=self.high,
                low_open=self.low_open or self.positive,
                high_open=self.high_open,
                rule=f"must be {self.text}" if self.text else None,
            )
        return None


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
) -> Any:
    """One field of a :class:`Config`: its ``default``, its rule (:class:`Rule`; ``kind`` defaults to
    the default's type) and its ``help``. ``flag`` (default ``--name`` with ``-`` for ``_``), ``dest``
    (default the field's name), ``aliases`` (old spellings, accepted and hidden from ``--help``) and
    ``metavar`` shape its command-line flag; ``cli=False`` keeps it off the command line. ``positive``: an
    integer >= 1 (``low`` 1) whose flag is worded as ``must be > 0`` (:func:`theorydyn.cli.tools.positive`)."""
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
    )
    meta = dict(help=help, rule=rule, flag=flag, dest=dest, aliases=tuple(aliases), metavar=metavar, cli=cli)
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


def flag_of(cls: type, name: str) -> str:
    """The command-line flag of field ``name`` (``--n-samples`` for ``n_samples``)."""
    return _field(cls, name).metadata.get("flag") or "--" + name.replace("_", "-")


def dest_of(cls: type, name: str) -> str:
    """The attribute of the parsed flags that holds field ``name``."""
    return _field(cls, name).metadata.get("dest") or name


def config_flags(cls: type) -> dict[str, str]:
    """Field → flag of every field on the command line (for messages that name a field)."""
    return {f.name: flag_of(cls, f.name) for f in dataclasses.fields(cls) if f.metadata.get("cli", True)}


def _fmt(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def add_config_flags(
    parser: argparse._ActionsContainer,
    cls: type,
    *,
    only: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    defaults: Mapping[str, Any] | None = None,
    notes: Mapping[str, str] | None = None,
) -> None:
    """Add a flag for each field of ``cls`` (in the fields' order; ``only``/``exclude`` pick them) to
    ``parser`` (a parser or an argument group).

    ``defaults`` replaces a field's default on this command line: a value (this command's own default,
    e.g. the simulator CLI's float32 storage) or None (the command resolves it, e.g. from the mode or the
    dataset's preset: :func:`config_from_args` then takes the field's default). ``notes`` adds a word
    to a flag's help (``--method gd only``). A boolean field whose default is False is a switch
    (``--compile``). Old spellings (the field's ``aliases``) are accepted and hidden from ``--help``.
    """
    defaults = dict(defaults or {})
    notes = dict(notes or {})
    names = [n for n in (only if only is not None else cls.names()) if n not in exclude]  # type: ignore[attr-defined]
    for name in names:
        f = _field(cls, name)
        meta = f.metadata
        if not meta.get("cli", True):
            continue
        rule: Rule = meta["rule"]
        flag, dest = flag_of(cls, name), dest_of(cls, name)
        default = defaults.get(name, f.default)
        text = meta["help"]
        if name in defaults and default is None and f.default is not None:
            shown = f"default {_fmt(f.default)}" if name not in notes else notes[name]
        elif name in notes:
            shown = notes[name]
        else:
            shown = "default %(default)s" if default is not None and default is not False else ""
        help_text = f"{text} ({shown})" if shown else text
        kw: dict[str, Any] = dict(dest=dest, default=default, help=help_text)
        if rule.kind is bool and rule.choices is None and f.default is False:
            parser.add_argument(flag, action="store_true", **kw)
            _aliases(parser, meta, dest, action="store_true")
            continue
        if rule.choices is not None:
            kw["choices"] = rule.choices
        else:
            conv = rule.converter(flag)
            if conv is not None:
                kw["type"] = conv
        if meta.get("metavar"):
            kw["metavar"] = meta["metavar"]
        parser.add_argument(flag, **kw)
        extra = {k: v for k, v in kw.items() if k in ("type", "choices")}
        _aliases(parser, meta, dest, **extra)


def _aliases(parser: argparse._ActionsContainer, meta: Mapping[str, Any], dest: str, **kw: Any) -> None:
    for old in meta.get("aliases", ()):
        parser.add_argument(old, dest=dest, default=argparse.SUPPRESS, help=argparse.SUPPRESS, **kw)


def config_from_args(cls: type[C], args: argparse.Namespace, **overrides: Any) -> C:
    """The configuration the parsed flags describe: each field from its flag's attribute (a field whose
    attribute is missing or None takes the field's default, unless the field is optional), then
    ``overrides``.

    Raises:
        ValueError: a value that breaks its field's rule, the message starting with the field's flag
            (``--eta: eta must be …``), for the command to report (exit 2).
    """
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        dest = dest_of(cls, f.name)
        if f.name in overrides or not hasattr(args, dest):
            continue
        v = getattr(args, dest)
        if v is None and not f.metadata["rule"].optional:
            continue  # the command left it to the field's default
        values[f.name] = v
    values.update(overrides)
    try:
        return cls(**values)
    except ValueError as e:
        name = str(e).split(" ", 1)[0]
        prefix = flag_of(cls, name) if name in cls.names() else None
        raise ValueError(f"{prefix}: {e}" if prefix else str(e)) from None
