"""The ledger's collection, naming and printing (the package docstring, :mod:`theorydyn.verify`, says what
it does); the package re-exports these names and loads this module on first use."""

from __future__ import annotations

import math
import shutil
import threading
import time
import warnings
from collections.abc import Mapping
from concurrent.futures import Executor, as_completed
from itertools import zip_longest
from pathlib import Path
from typing import Any

import pandas as pd

from .. import claims
from ..claims.check import LEDGER_COLUMNS
from ..core.setting import SETTING_FIELDS, Setting
from ..infra._progress import progress_bar
from ..infra.keyed import KeyedStore
from ..infra.paths import run_name
from ..infra.store import content_key
from . import ledger
from .defaults import DEFAULT_DIR, PROG  # noqa: F401 — re-exported
from .ledger import SKIP, failed_row, run_claim
from .summary import format_measured, paragraphs, wrap  # noqa: F401 — re-exported (the detail and the summary print alike)

COLUMNS = LEDGER_COLUMNS
#: The verdicts whose note is printed under the row (what and why / which assumption / the command).
NOTED = ("DEVIATES", "OUT_OF_SCOPE", "NOT_RUN", "FAIL", SKIP)
#: Terminal width when it cannot be told (not a terminal, no $COLUMNS).
FALLBACK_WIDTH = 100


class _Bar:
    """One progress bar over the claims still to compute, in expected seconds: each claim weighs the
    seconds its last stored run took (:func:`ledger.last_seconds`), a claim never run here its cold
    time on the CI-class machine (:func:`theorydyn.claims.expected_seconds`), else the mean of the
    others (all equal when none is known). While a claim runs in this process the bar advances
    with the clock, up to 95% of its weight, so that the ETA is the expected time left."""

    def __init__(self, enabled: bool, weights: Mapping[str, float | None]):
        known = [w for w in weights.values() if w is not None and w > 0]
        fallback = sum(known) / len(known) if known else 1.0
        self.w = {k: (w if w is not None and w > 0 else fallback) for k, w in weights.items()}
        self.enabled = enabled and bool(self.w)
        self.total = float(sum(self.w.values()))
        self.bar = progress_bar(
            self.enabled,
            total=self.total,
            desc=f"verify 0/{len(self.w)} claims",
            unit="s",
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}{postfix}",
        )
        self.done = 0.0
        self.finished = 0
        self.running: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if self.enabled:
            threading.Thread(target=self._tick, name="verify-progress", daemon=True).start()

    def _position(self) -> float:
        now = time.monotonic()
        return self.done + sum(min(now - t, 0.95 * self.w[k]) for k, t in self.running.items())

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self.bar.n = min(self._position(), self.total)
                self.bar.refresh()

    def _postfix(self, text: str) -> None:
        # the bar is one line that redraws in place: a message longer than the terminal would wrap it
        room = max(10, terminal_width() - 50)
        self.bar.set_postfix_str(text if len(text) <= room else text[: room - 1] + "…", refresh=True)

    def start(self, name: str) -> None:
        with self._lock:
            self.running[name] = time.monotonic()
            self._postfix(name)

    def say(self, name: str, msg: str) -> None:
        with self._lock:
            self._postfix(f"{name}: {msg}")

    def finish(self, name: str) -> None:
        with self._lock:
            self.running.pop(name, None)
            self.finished += 1
            self.bar.set_description_str(f"verify {self.finished}/{len(self.w)} claims", refresh=False)
            self.done += self.w.get(name, 0.0)
            self.bar.n = min(self._position(), self.total)
            self.bar.refresh()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self.bar.close()


def collect(
    s: Setting,
    quick: bool = False,
    only: list[str] | None = None,
    progress: bool = True,
    options: dict[str, dict[str, Any]] | None = None,
    *,
    store: str | Path | KeyedStore | None = None,
    recompute: bool = False,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Run every selected claim (:func:`theorydyn.claims.select`): the ledger, one row per check
    (columns :data:`COLUMNS`), the claims in registry order.

    ``options`` maps a claim's name to extra keyword arguments of its ``checks`` (e.g. the reduced
    flow's ``s_max``, ``n_samples``, ``seed`` for ``dynamics``). A claim that is not installed gives
    one SKIP row; one that raises gives one FAIL row whose note carries the exception.

    ``store``: a results folder (its ``results.sqlite``) or an open claims store
    (:func:`theorydyn.verify.ledger.open_store`). Each claim computed is committed there as soon as
    it finishes (one transaction), and a claim whose stored result matches its key (setting, quick,
    options, the code it runs, library versions; :mod:`theorydyn.verify.ledger`) is read back
    instead of computed, unless ``recompute``. Without a store every claim is computed.

    ``executor``: where the claims run, one task per claim (e.g. a Dask cluster's, from
    :func:`theorydyn.scan.executor.make_executor`); default: one after the other in this process.
    A task the executor loses (a worker gone) gives a FAIL row saying so, not stored.

    ``progress``: one progress bar on stderr with the expected time left (:class:`_Bar`).

    The result's ``attrs["claims"]`` lists, per claim in registry order, ``name``, ``rows``,
    ``seconds`` (of its computation, now or when it was stored) and ``source`` (``computed``,
    ``stored``, ``failed``, ``skipped``).

    Raises:
        theorydyn.infra.store.StoreError: ``store`` cannot hold the results (before any claim runs).
    """
    names = claims.select(only)
    opts = {n: dict((options or {}).get(n, {})) for n in names}
    st = ledger.open_store(store) if isinstance(store, (str, Path)) else store
    records: dict[str, dict[str, Any]] = {}
    payloads: dict[str, dict[str, Any] | None] = {}
    todo: list[str] = []
    for name in names:
        module = claims.REGISTRY[name]
        p = ledger.payload(name, module, s, quick, opts[name]) if st is not None else None
        payloads[name] = p
        if st is not None and p is not None and not recompute:
            key = content_key(p)
            rows = ledger.stored_rows(st, key)
            if rows is not None:
                records[name] = dict(rows=rows, seconds=float(st.rows[key]["seconds"]), source="stored")
                continue
        todo.append(name)

    def done(name: str, res: dict[str, Any]) -> None:
        records[name] = dict(rows=res["rows"], seconds=res["seconds"], source=res["status"])
        p = payloads[name]
        if st is None or p is None or res["status"] != "computed":
            return  # a claim that raised or is absent runs again next time
        if res["code"] != p["code"] or res["libraries"] != p["libraries"]:
            warnings.warn(
                f"verify: {name} ran on a worker whose code or libraries differ from this process's; "
                "its rows are in the ledger but not stored",
                RuntimeWarning,
                stacklevel=3,
            )
            return
        ledger.save(st, p, res["rows"], res["seconds"])

    # a claim never run in this store weighs its cold time measured on the CI-class machine
    last = {n: ledger.last_seconds(st, n, s, quick) for n in todo}
    bar = _Bar(progress, {n: last[n] if last[n] is not None else claims.expected_seconds(n, quick) for n in todo})
    try:
        if executor is None:
            for name in todo:
                bar.start(name)

                def say(msg: str, name: str = name) -> None:
                    bar.say(name, msg)

                done(name, run_claim(name, claims.REGISTRY[name], s, quick, opts[name], say if progress else None))
                bar.finish(name)
        else:
            futures = {
                executor.submit(run_claim, name, claims.REGISTRY[name], s, quick, opts[name]): name for name in todo
            }
            for fut in as_completed(futures):
                name = futures[fut]
                try:
                    res = fut.result()
                except Exception as e:  # noqa: BLE001 — a lost task must not lose the other claims' rows
                    res = dict(
                        rows=[failed_row(claims.REGISTRY[name], e, "(the claim could not run: rerun to resume)")],
                        seconds=math.nan,
                        status="failed",
                    )
                done(name, res)
                bar.finish(name)
    finally:
        bar.close()
    df = pd.DataFrame([r for n in names for r in records[n]["rows"]], columns=COLUMNS)
    df.attrs["claims"] = [
        dict(name=n, rows=len(records[n]["rows"]), seconds=records[n]["seconds"], source=records[n]["source"])
        for n in names
    ]
    return df


def terminal_width() -> int:
    """The width the ledger is printed to: ``shutil.get_terminal_size`` (``$COLUMNS`` first), else
    :data:`FALLBACK_WIDTH`."""
    return max(20, shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns)


def _cell(v: Any) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def format_table(df: pd.DataFrame, width: int | None = None) -> str:
    """The ledger as printed text, no line longer than ``width`` (default :func:`terminal_width`).

    Columns claim, quantity, measured with its 95% interval, threshold, verdict, each wrapped in its
    column; the note of a DEVIATES, OUT_OF_SCOPE, NOT_RUN, FAIL or SKIP row (what and why, which
    assumption, the command that would run it, the exception) on the lines below it. Where the
    width leaves the quantity fewer than 16 characters, one block per row instead.
    """
    width = width or terminal_width()
    heads = ["claim", "quantity", "measured [95% CI]", "threshold", "verdict"]
    cells = [
        [
            _cell(r.claim),
            _cell(r.quantity),
            format_measured(r.measured, r.ci_low, r.ci_high, r.params),
            _cell(r.threshold),
            _cell(r.verdict),
        ]
        for r in df.itertuples(index=False)
    ]
    notes = [_cell(r.note) if _cell(r.verdict) in NOTED and _cell(r.note) else "" for r in df.itertuples(index=False)]

    def natural(i: int, cap: int) -> int:
        return min(cap, max([len(heads[i])] + [len(c[i]) for c in cells]))

    # claim, measured, threshold at their natural widths (capped), narrowed one character at a time,
    # widest first, down to a floor while the quantity has fewer than 32 characters; verdict stays whole
    w = [natural(0, 26), 0, natural(2, 26), natural(3, 22), natural(4, 12)]
    floor = {0: 12, 2: 16, 3: 10}
    while width - sum(w) - 8 < 32 and any(w[i] > f for i, f in floor.items()):
        i = max(floor, key=lambda i: w[i] - floor[i])
        w[i] -= 1
    w[1] = min(width - sum(w) - 8, natural(1, 10**6))
    lines: list[str] = []
    if w[1] < 16:  # too narrow for five columns: one block per row
        for c, note in zip(cells, notes, strict=True):
            lines += [""] if lines else []
            lines += wrap(f"{c[0]}: {c[1]}", width, "  ")
            lines += wrap(f"    measured {c[2]} · threshold {c[3] or '—'} · {c[4]}", width, "      ")
            lines += wrap(f"    note: {note}", width, "      ") if note else []
        return "\n".join(lines)

    def row(values: list[str]) -> list[str]:
        cols = [wrap(v, wi) for v, wi in zip(values, w, strict=True)]
        return [
            "  ".join(part.ljust(wi) for part, wi in zip(parts, w, strict=True)).rstrip()
            for parts in zip_longest(*cols, fillvalue="")
        ]

    blocks = [
        row(c) + (wrap(f"    note: {note}", width, "          ") if note else [])
        for c, note in zip(cells, notes, strict=True)
    ]
    gap = [""] if any(len(b) > 1 for b in blocks) else []  # rows of several lines: a blank line between rows
    lines += row(heads)
    for b in blocks:
        lines += gap + b
    return "\n".join(lines)


def format_times(info: list[dict[str, Any]], width: int | None = None) -> str:
    """Per claim: its rows, its seconds and where they came from (computed now, read from the store
    — the seconds of the run that stored it —, failed, skipped), and the seconds computed in all."""
    width = width or terminal_width()
    lines = ["per claim (seconds of its computation; 'stored': read back, timed when it was stored):"]
    for r in info:
        secs = "—" if not math.isfinite(r["seconds"]) else f"{r['seconds']:.1f} s"
        lines.append(f"  {r['name']:<14} {r['rows']:>3} rows {secs:>10}  {r['source']}")
    ran = sum(r["seconds"] for r in info if r["source"] != "stored" and math.isfinite(r["seconds"]))
    n_stored = sum(r["source"] == "stored" for r in info)
    lines.append(f"  computed now: {ran:.1f} s; read from the store: {n_stored} of {len(info)} claims")
    return "\n".join(ln for line in lines for ln in wrap(line, width, "      "))


def format_detail(df: pd.DataFrame, s: Setting, width: int) -> str:
    """What ``--detail`` prints before the summary: the setting, every row numbered from 1
    (:func:`format_table`) and, when the ledger's ``attrs["claims"]`` has them, the seconds of each
    claim (:func:`format_times`), each followed by a blank line."""
    table = format_table(df.assign(claim=[f"{i}. {c}" for i, c in enumerate(df["claim"], 1)]), width)
    times = [format_times(df.attrs["claims"], width)] if df.attrs.get("claims") else []
    return "\n".join([paragraphs(f"theorydyn verify at {s}\n", width), table, "", *times, ""])


def _md(text: Any) -> str:
    return ("" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)).replace("|", "\\|")


def format_markdown(df: pd.DataFrame) -> str:
    """The ledger's rows as a Markdown table: | # | claim | the paper says | measured (CI) | verdict |.

    "#" numbers the rows 1… in ledger order (the CSV's data rows; the summary points at them); "claim"
    is the claim and the quantity measured; "the paper says" is the threshold the claim implies;
    "measured (CI)" is the value with its 95% interval over seeds, or "(exact)"; DEVIATES,
    OUT_OF_SCOPE and NOT_RUN verdicts carry their note (what and why / which assumption / the
    command that would run it).
    """
    lines = ["| # | claim | the paper says | measured (CI) | verdict |", "|---|---|---|---|---|"]
    for i, r in enumerate(df.itertuples(index=False), 1):
        verdict = f"**{r.verdict}**"
        if r.verdict in ("DEVIATES", "OUT_OF_SCOPE", "NOT_RUN", "FAIL", SKIP) and isinstance(r.note, str) and r.note:
            verdict += f": {r.note}"
        lines.append(
            f"| {i} | {_md(r.claim)}: {_md(r.quantity)} | {_md(r.threshold)} | "
            f"{format_measured(r.measured, r.ci_low, r.ci_high, r.params)} | {_md(verdict)} |"
        )
    return "\n".join(lines)


def ledger_name(s: Setting, quick: bool, only: list[str] | None = None, extra: Mapping[str, Any] | None = None) -> str:
    """The ledger CSV's name: ``verify_D<D>_C<C>``, then every other Setting field that differs from
    its default at this D and C (``_q0.5``, ``_tau8``, ``_partitionrandom``), the claims when not all
    (``_only-theorem31+theorem32``), the ``extra`` parameters given (``_smax5000``, ``_seed3``) and
    ``_quick`` or ``_full``: two ledgers of different parameters never share a file.

    Raises:
        ValueError: ``only`` names an unknown claim.
    """
    ref = Setting(D=s.D, C=s.C).to_dict()
    here = {k: v for k, v in s.to_dict().items() if k not in ("D", "C")}
    params = [(k, here[k]) for k in SETTING_FIELDS if k in here and here[k] != ref[k]]
    chosen = claims.select(only)
    if chosen != list(claims.REGISTRY):
        params.append(("only-", "+".join(chosen)))
    params += [(k.replace("_", ""), v) for k, v in (extra or {}).items() if v is not None]
    return run_name("verify", f"verify_D{s.D}_C{s.C}", params, suffix="quick" if quick else "full") + ".csv"


def default_out(
    s: Setting,
    quick: bool,
    only: list[str] | None = None,
    extra: Mapping[str, Any] | None = None,
    folder: str | Path = DEFAULT_DIR,
) -> Path:
    """``folder/ledger_name(...)`` (:func:`ledger_name`), by default under :data:`DEFAULT_DIR`."""
    return Path(folder) / ledger_name(s, quick, only, extra)
