"""The command line of the typed configurations (:mod:`theorydyn.core.config`): one flag per field.

:func:`add_config_flags` adds one flag per field of a :class:`~theorydyn.core.config.Config` (``--n-samples``
for ``n_samples``, the converter of :func:`theorydyn.cli.tools.number` built from the rule by
:func:`converter`, the help text with the default), :func:`config_from_args` builds the configuration
back from the parsed flags. The configurations themselves (``Config``, ``option``, ``Rule``, ``Seeds``,
``as_seeds``) live in :mod:`theorydyn.core.config`, under the solvers; they are re-exported here for the
commands. This module imports no solver: ``--help`` builds its flags without loading NumPy-heavy code
beyond the base.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.config import C, Config, Rule, Seeds, _field, as_seeds, option, scan_key, scanned_fields
from .tools import number, path_arg


def converter(rule: Rule, flag: str):
    """The argparse ``type=`` of ``rule`` (:func:`theorydyn.cli.tools.number` for numbers: its checks at
    parse time, its attributes for the CLI fuzz tests); None for choices and text."""
    if rule.kind in (int, float) and rule.choices is None:
        return number(
            rule.kind,
            flag,
            low=0 if rule.positive else rule.low,
            high=rule.high,
            low_open=rule.low_open or rule.positive,
            high_open=rule.high_open,
            rule=f"must be {rule.text}" if rule.text else None,
        )
    return None


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
    The field's ``flag_help``, ``hidden``, ``many``/``nargs``, ``parse`` and a ``flag`` without dashes (a
    positional argument) shape the rest (:func:`theorydyn.core.config.option`).
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
        kw: dict[str, Any] = dict(
            dest=dest, default=default, help=_help(meta, name, default, f.default, defaults, notes)
        )
        if not flag.startswith("-"):  # a positional argument: argparse names its attribute after it
            del kw["dest"]
        if rule.kind is bool and rule.choices is None and f.default is False:
            parser.add_argument(flag, action="store_true", **kw)
            _aliases(parser, meta, dest, action="store_true")
            continue
        if rule.choices is not None:
            kw["choices"] = rule.choices
        elif meta.get("parse") == "path":
            kw["type"] = path_arg(flag)
        else:
            conv = converter(rule, flag)
            if conv is not None:
                kw["type"] = conv
        if meta.get("metavar"):
            kw["metavar"] = meta["metavar"]
        nargs = meta.get("nargs") or ("+" if rule.many else None)
        if nargs is not None:
            kw["nargs"] = nargs
        parser.add_argument(flag, **kw)
        extra = {k: v for k, v in kw.items() if k in ("type", "choices", "nargs")}
        _aliases(parser, meta, dest, **extra)


def scan_flag(key: str) -> str:
    """The scan's flag of the option ``key`` (``--sim-steps`` for ``sim_steps``)."""
    return "--" + key.replace("_", "-")


def add_scanned_flags(parser: argparse._ActionsContainer, configs: Sequence[type], *, axes: bool) -> None:
    """Add to ``parser`` a flag of the scan for each field of ``configs`` made
    :func:`~theorydyn.core.config.scanned` with a help text (in the configurations' order, then the
    fields'): with ``axes``, those the scan sweeps (``ScanOption.axis``: a list, ``nargs="+"``), else
    those that take one value. The flag is :func:`scan_flag` of the option's key, its help the
    ScanOption's word for word, its default None (the option's default, or the spec's); a value is
    checked at parse time by the option's rule (its choices, its converter), a boolean is a switch."""
    for cls in configs:
        for f, scan in scanned_fields(cls):
            if scan.help is None or scan.axis != axes:
                continue
            flag = scan_flag(scan_key(f, scan))
            rule: Rule = scan.rule or f.metadata["rule"]
            kw: dict[str, Any] = {"nargs": "+"} if axes else {}
            if rule.choices is not None:
                kw["choices"] = rule.choices
            elif rule.kind is bool:
                kw["action"] = "store_true"
            else:
                kw["type"] = converter(rule, flag)
            parser.add_argument(flag, default=None, help=scan.help, **kw)


def _help(
    meta: Mapping[str, Any], name: str, default: Any, field_default: Any, defaults: Mapping, notes: Mapping
) -> str:
    """A field's help on the command line: hidden, its ``flag_help`` word for word, or its help with the
    default (or the command's note) in parentheses."""
    if meta.get("hidden"):
        return argparse.SUPPRESS
    if meta.get("flag_help") is not None:
        return meta["flag_help"]
    text = meta["help"]
    if name in defaults and default is None and field_default is not None:
        shown = f"default {_fmt(field_default)}" if name not in notes else notes[name]
    elif name in notes:
        shown = notes[name]
    else:
        shown = "default %(default)s" if default is not None and default is not False else ""
    return f"{text} ({shown})" if shown else text


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
        values[f.name] = tuple(v) if f.metadata["rule"].many and isinstance(v, list) else v
    values.update(overrides)
    try:
        return cls(**values)
    except ValueError as e:
        name = str(e).split(" ", 1)[0]
        prefix = flag_of(cls, name) if name in cls.names() else None
        raise ValueError(f"{prefix}: {e}" if prefix else str(e)) from None


__all__ = [
    "Config",
    "Rule",
    "Seeds",
    "add_config_flags",
    "add_scanned_flags",
    "as_seeds",
    "config_flags",
    "config_from_args",
    "converter",
    "dest_of",
    "flag_of",
    "option",
    "scan_flag",
]
