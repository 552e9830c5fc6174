"""Flags of the kinds a configuration field cannot declare (:func:`theorydyn.cli.configs.add_config_flags`
makes one flag per scalar field): a switch of the command itself, a list of choices, a folder, a number
that may also be ``none``. Each helper is the one ``add_argument`` of its kind, so that commands declare no
flag by hand (issue 40: no ``add_argument`` outside :mod:`theorydyn.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from ..core.config import Rule
from .configs import converter
from .tools import path_arg


def add_switch(parser: argparse._ActionsContainer, flag: str, help: str) -> argparse.Action:
    """A switch of the command (``store_true``, default False) that is no field of a configuration."""
    return parser.add_argument(flag, action="store_true", help=help)


def add_choice_list(
    parser: argparse._ActionsContainer,
    flag: str,
    choices: Sequence[str],
    *,
    metavar: str,
    help: str,
    default: Any = None,
) -> argparse.Action:
    """One or more of ``choices`` (``nargs="+"``; a value outside them exits 2 naming the flag)."""
    return parser.add_argument(flag, nargs="+", choices=tuple(choices), default=default, metavar=metavar, help=help)


def add_path(parser: argparse._ActionsContainer, flag: str, *, help: str, default: Any = None) -> argparse.Action:
    """A path (:func:`theorydyn.cli.tools.path_arg`: a blank value is refused, naming the flag)."""
    return parser.add_argument(flag, type=path_arg(flag), default=default, help=help)


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
