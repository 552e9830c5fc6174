"""The flag helpers: one ``add_argument`` for each kind of flag that a configuration field does not declare
(issue 40: no ``add_argument`` outside :mod:`theorydyn.cli`). A flag that is a field of a configuration
comes from the field instead (:func:`theorydyn.cli.configs.add_config_flags`: a switch, a list of choices, a
path, a positional argument); these are for the flags of a command that no configuration holds, and the
kinds the fields cannot say yet: a number that may also be ``none``, a mode with an optional path, a flag
of a built parser given another default and help."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..core.config import Rule
from .configs import converter
from .tools import path_arg


def add_selection(
    parser: argparse._ActionsContainer,
    flag: str,
    choices: Sequence[str],
    help: str,
    *,
    metavar: str | None = None,
    default: Any = None,
) -> argparse.Action:
    """``FLAG NAME [NAME …]``: one or more of ``choices`` (``nargs="+"``; a value outside them exits 2
    naming the flag); default None: every one (``--only`` of verify and of the theorem checks)."""
    return parser.add_argument(flag, nargs="+", choices=choices, default=default, metavar=metavar, help=help)


def add_path(
    parser: argparse._ActionsContainer, flag: str, help: str, *, default: Any = None, many: bool = False
) -> argparse.Action:
    """A path (:func:`theorydyn.cli.tools.path_arg`: a blank value is refused, naming the flag); a ``flag``
    without dashes is a positional argument; ``many``: one or more paths."""
    kw: dict[str, Any] = dict(type=path_arg(flag), help=help)
    if many:
        kw["nargs"] = "+"
    if flag.startswith("-"):
        kw["default"] = default
    return parser.add_argument(flag, **kw)


def add_optional_path(parser: argparse._ActionsContainer, flag: str, metavar: str, help: str) -> argparse.Action:
    """``FLAG [PATH]``: a mode of the command with an optional path: absent None, given bare ``""`` (the
    command picks the path), else the path as written (``verify --markdown [CSV]``, ``--figure31 [FILE]``)."""
    return parser.add_argument(flag, nargs="?", const="", default=None, metavar=metavar, help=help)


def number_or_none(rule: Rule, flag: str, none: str = "none"):
    """argparse ``type=``: the word ``none`` (any case, spaces around it allowed) → None, else a number
    that obeys ``rule`` (an optional field's :class:`~theorydyn.core.config.Rule`:
    :func:`theorydyn.cli.configs.converter`)."""
    conv = converter(rule, flag)
    if conv is None:
        raise ValueError(f"{flag}: the rule of a number-or-none flag must be numeric, got kind {rule.kind.__name__}")

    def parse(text: str):
        if text.strip().lower() == none:
            return None
        return conv(text)

    parse.__name__ = conv.__name__
    return parse


def add_number_or_none(
    parser: argparse._ActionsContainer, flag: str, rule: Rule, *, default: Any, help: str
) -> argparse.Action:
    """A number that obeys ``rule`` (a config field's) or ``none`` (:func:`number_or_none`)."""
    return parser.add_argument(flag, type=number_or_none(rule, flag), default=default, help=help)


def restate(parser: argparse.ArgumentParser, flag: str, *, default: Any, help: str | None) -> None:
    """Give ``flag`` (an option string, e.g. ``--quick``) of a built parser another default and help
    (``argparse.SUPPRESS`` hides it): for a command that is another's with one choice fixed
    (``theorems`` is ``verify --only theorems``, quick by default)."""
    for a in parser._actions:
        if flag in a.option_strings:
            a.default, a.help = default, help
