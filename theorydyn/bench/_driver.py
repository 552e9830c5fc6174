"""The skeleton every benchmark with a main table and a ``--scaling`` part shares (``reduced``, ``simulate``):
the machine first (the numbers mean something only with it), the main table unless ``--scaling-only``,
the scaling tables with ``--scaling`` or ``--scaling-only``, the load average at the end, and every
table written as CSV with the machine's description (:func:`theorydyn.bench.write_tables`).

Flag parsing stays with each benchmark: :func:`drive` takes the parsed ``args`` (it reads ``scaling``,
``scaling_only`` and ``out``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pandas as pd

from . import format_machine, machine_info, write_tables

#: What a part of a benchmark returns: (name, table) pairs; "main" is written to ``--out``, the others next to it.
Tables = list[tuple[str, pd.DataFrame]]


def drive(
    args: Any,
    prog: str,
    main: Callable[[], Tables],
    scaling: Callable[[dict[str, Any]], Tables],
) -> int:
    """Run a benchmark's parts around the shared skeleton (module docstring) and return its exit status.

    ``main()`` measures and prints the main table(s); a ``RuntimeError`` from it (a contender that
    disagrees with its reference before any ratio is printed) is reported as ``<prog>: error: …`` on
    stderr and the status is 1, with nothing written. ``scaling(info)`` gets the machine's description.
    """
    info = machine_info()
    print(format_machine(info), flush=True)
    tables: Tables = []
    if not args.scaling_only:
        try:
            tables += main()
        except RuntimeError as e:
            print(f"{prog}: error: {e}", file=sys.stderr)
            return 1
    if args.scaling or args.scaling_only:
        tables += scaling(info)
    print(f"\nload average (1 min) at the end: {machine_info()['loadavg_1min']:.2f}")
    write_tables(tables, args.out, info)
    return 0
