"""Check rows as terminal text that fits the terminal's width (default 100 columns).

One row is a block: the verdict, then the claim and its quantity wrapped beside it, then one line
with the measured value and what the paper says; a note (what and why of a DEVIATES, FAIL,
OUT_OF_SCOPE or NOT_RUN row) wraps under its row. No line is longer than the width, and no word is
lost (a word longer than a line is broken).
"""

from __future__ import annotations

import math
import shutil
import textwrap
from typing import Any

import pandas as pd

#: the width when the terminal's is unknown (output to a file or a pipe)
DEFAULT_WIDTH = 100
#: verdicts whose note is printed under the row (an INFO or PASS note stays in the CSV)
NOTED = ("DEVIATES", "FAIL", "OUT_OF_SCOPE", "NOT_RUN", "SKIP")


def width() -> int:
    """``$COLUMNS`` or the terminal's width, else :data:`DEFAULT_WIDTH`; at least 40."""
    return max(40, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def number_text(v: Any) -> str:
    """``v`` to 4 significant digits (``0.4213``, ``1.2e+04``), ``—`` for NaN or what is not a number."""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.4g}"


def measured_text(row: Any) -> str:
    """``0.42 [0.40, 0.44]`` (a 95% interval over seeds), ``0.1506 (exact)`` when the interval is the
    point itself and no seeds were averaged (``seeds=`` in params), the bare value when there is no
    interval, ``—`` when nothing was measured."""
    m, lo, hi = number_text(row.get("measured")), number_text(row.get("ci_low")), number_text(row.get("ci_high"))
    if m == "—" or lo == "—" or hi == "—":
        return m
    if lo == hi == m and "seeds=" not in str(row.get("params", "")):  # a mean over seeds is never exact
        return f"{m} (exact)"
    return f"{m} [{lo}, {hi}]"


def check_rows_text(df: pd.DataFrame, columns: int | None = None) -> str:
    """The rows of a check table (columns claim, quantity, measured, ci_low, ci_high, threshold,
    verdict, and optionally note) as blocks no wider than ``columns`` (default :func:`width`)."""
    w = max(40, columns or width())
    tag = max([len(str(v)) for v in df.get("verdict", [])] + [4]) + 2
    pad = " " * tag
    lines: list[str] = []
    for row in df.to_dict("records"):
        verdict = str(row.get("verdict", ""))
        head = f"{row.get('claim', '')}: {row.get('quantity', '')}"
        body = textwrap.wrap(head, w - tag, break_on_hyphens=False) or [""]
        lines.append(verdict.ljust(tag) + body[0])
        lines += [pad + b for b in body[1:]]
        said = f"measured {measured_text(row)} · the paper says {row.get('threshold', '')}"
        lines += [pad + b for b in textwrap.wrap(said, w - tag, break_on_hyphens=False)]
        note = row.get("note")
        if verdict in NOTED and isinstance(note, str) and note.strip():
            lines += [pad + "  " + b for b in textwrap.wrap(note, w - tag - 2, break_on_hyphens=False)]
    return "\n".join(lines)
