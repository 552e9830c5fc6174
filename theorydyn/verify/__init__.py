"""``python -m theorydyn.verify``: the ledger — every numerical check of the paper's claims, one table.

One row per check (:class:`theorydyn.claims.check.Check`), columns :data:`theorydyn.claims.check.LEDGER_COLUMNS`
(claim, quantity, measured, ci_low, ci_high, threshold, verdict, note, route, params). Verdicts:
PASS, FAIL, DEVIATES (the note says what and why), OUT_OF_SCOPE (the note names the assumption),
INFO (a diagnostic the paper does not claim, a definition, or a proxy), NOT_RUN (the claim's own
experiment could not run here; the note gives the command that would run it). Every number that
depends on randomness is a mean over ≥ 5 independent seeds with its 95% t-interval; exact numbers have ci_low = ci_high.

The claims are the modules of :data:`theorydyn.claims.REGISTRY` (each imported on use, one
protocol: ``checks(s, *, quick, progress)`` and ``memory(s, quick)``; docs/adding_a_claim.md), run
in registry order: ``dynamics`` (Lemma 4.3, Events I–III, Theorem 4.1 on the idealized dynamics),
``theorem31``, ``theorem32``, ``lemma41`` (Lemma 4.1), ``theorem4`` (Theorem 4.2 at finite N, with
Lemma 4.2 and Figure 4 from its runs), ``nstar`` (N*(D)), ``transfer`` (Theorems 5.1, 5.2),
``figure2`` (Figure 2) and ``vision`` (Section 6). ``--only`` also takes the groups of
:data:`theorydyn.claims.GROUPS`: ``reduced`` (= dynamics) and ``theorems`` (= theorem31, theorem32,
lemma41, theorem4, nstar). This module only collects and prints.

A claim that is not installed becomes one SKIP row saying so; a claim that raises becomes a
FAIL row with the exception (a check that could not run is not a pass).

``--markdown`` prints the README table (claim | the paper says | measured (CI) | verdict) from the
ledger CSV written by a previous run (:func:`format_markdown`).

Exit status: 0 unless a row is FAIL (1); 2 on bad input. NOT_RUN, like SKIP, never makes it non-zero.
"""

from __future__ import annotations

import math
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pandas as pd

from .. import claims
from ..claims.check import LEDGER_COLUMNS, Verdict
from ..setting import Setting

PROG = "python -m theorydyn.verify"
COLUMNS = LEDGER_COLUMNS
SKIP = "SKIP"


def _row(claim: str, quantity: str, verdict: str, note: str = "") -> dict[str, Any]:
    return dict(
        claim=claim,
        quantity=quantity,
        measured=math.nan,
        ci_low=math.nan,
        ci_high=math.nan,
        threshold="",
        verdict=verdict,
        note=note,
        route="",
        params="",
    )


def collect(
    s: Setting,
    quick: bool = False,
    only: list[str] | None = None,
    progress: bool = True,
    options: dict[str, dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """Run every selected claim (:func:`theorydyn.claims.select`): the ledger, one row per check
    (columns :data:`COLUMNS`), the claims in registry order.

    ``options`` maps a claim's name to extra keyword arguments of its ``checks`` (e.g. the reduced
    flow's ``s_max``, ``n_samples``, ``seed`` for ``dynamics``). A claim that is not installed gives
    one SKIP row; one that raises gives one FAIL row whose note carries the exception.
    """
    rows: list[dict[str, Any]] = []
    for name in claims.select(only):
        t = time.perf_counter()
        where = claims.REGISTRY[name]
        if progress:
            print(f"[verify] {name} …", file=sys.stderr, flush=True)

        def say(msg: str, name: str = name) -> None:
            if progress:
                print(f"[verify] {name}: {msg} …", file=sys.stderr, flush=True)

        try:
            checks = list(claims.load(name).checks(s, quick=quick, progress=say, **(options or {}).get(name, {})))
        except ImportError as e:
            rows.append(_row(where, "(source absent from this installation)", SKIP, str(e)))
            continue
        except Exception as e:  # noqa: BLE001 — one broken part must not hide the others' results
            last = traceback.extract_tb(e.__traceback__)[-1]
            rows.append(
                _row(
                    where,
                    "(the check raised)",
                    str(Verdict.FAIL),
                    f"{type(e).__name__}: {e} [{Path(last.filename).name}:{last.lineno}]",
                )
            )
            continue
        rows += [c.row() for c in checks]
        if progress:
            print(
                f"[verify] {name}: {len(checks)} checks in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def _fmt(v: Any) -> str:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return "—"
    return "—" if math.isnan(x) else f"{x:.4g}"


def format_measured(measured: Any, lo: Any, hi: Any, params: Any = "") -> str:
    """``0.1506 (exact)`` for an exact row (lo == hi == measured and no ``seeds=`` in params),
    ``0.42 [0.40, 0.44]`` with a 95% interval over seeds, else the bare value."""
    m, a, b = _fmt(measured), _fmt(lo), _fmt(hi)
    if m == "—" or a == "—" or b == "—":
        return m
    if float(lo) == float(hi) == float(measured) and "seeds=" not in str(params):
        return f"{m} (exact)"
    return f"{m} [{a}, {b}]"


def format_table(df: pd.DataFrame) -> str:
    """The ledger as printed text (claim, quantity, measured with its 95% interval, threshold, verdict)."""
    show = pd.DataFrame(
        {
            "claim": df["claim"],
            "quantity": df["quantity"],
            "measured [95% CI]": [
                format_measured(m, a, b, p)
                for m, a, b, p in zip(df["measured"], df["ci_low"], df["ci_high"], df["params"], strict=True)
            ],
            "threshold": df["threshold"].fillna("").astype(str),
            "verdict": df["verdict"],
        }
    )
    with pd.option_context("display.width", 250, "display.max_colwidth", 90, "display.max_rows", 1000):
        return show.to_string(index=False)


def _md(text: Any) -> str:
    return ("" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)).replace("|", "\\|")


def format_markdown(df: pd.DataFrame) -> str:
    """The README table from a ledger: | claim | the paper says | measured (CI) | verdict |.

    "claim" is the claim and the quantity measured; "the paper says" is the threshold the claim
    implies; "measured (CI)" is the value with its 95% interval over seeds, or "(exact)"; DEVIATES,
    OUT_OF_SCOPE and NOT_RUN verdicts carry their note (what and why / which assumption / the
    command that would run it).
    """
    lines = ["| claim | the paper says | measured (CI) | verdict |", "|---|---|---|---|"]
    for r in df.itertuples(index=False):
        verdict = f"**{r.verdict}**"
        if r.verdict in ("DEVIATES", "OUT_OF_SCOPE", "NOT_RUN", "FAIL", SKIP) and isinstance(r.note, str) and r.note:
            verdict += f": {r.note}"
        lines.append(
            f"| {_md(r.claim)}: {_md(r.quantity)} | {_md(r.threshold)} | "
            f"{format_measured(r.measured, r.ci_low, r.ci_high, r.params)} | {_md(verdict)} |"
        )
    return "\n".join(lines)


def default_out(s: Setting, quick: bool) -> Path:
    return Path(f"scans/results/verify_D{s.D}_C{s.C}{'_quick' if quick else ''}.csv")
