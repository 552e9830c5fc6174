"""The figure registry and every figure's compute/draw/numbers (the package docstring,
:mod:`theorydyn.figures`, says how to use them), one figure made into a folder (:func:`make`) or several
with their manifest and README text (:func:`make_many`, what ``python -m theorydyn.figures`` runs), and
the listing of the registry (:func:`listing`); the package re-exports the public names and loads this
module on first use."""

from __future__ import annotations

import errno
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.plotting import save
from ..infra._progress import progress_bar
from ..infra.atomic import UnsafeTarget, write_with
from ..infra.provenance import cpu_model, git_state, numerics_host
from . import manifest as mf
from .manifest import COMMITTED_FORMAT, COMMITTED_OUT, DEFAULT_FORMAT
from .record import REGISTRY, Figure, _fmt, _num, register  # noqa: F401 — the names of the figures' record, re-exported

if TYPE_CHECKING:
    from .config import FiguresConfig


#: SQLite's side files come and go with every connection, reads included: not a sign of computing
_TRANSIENT_SUFFIXES = ("-wal", "-shm", "-journal")


#: Files up to this size are told apart by their content, larger ones by their modification time.
_HASHED_BYTES = 8 << 20


def _files_under(path: Path | None) -> frozenset[tuple[str, int, int | str]] | None:
    """(name, size, SHA-256 of the content, or the mtime in ns above :data:`_HASHED_BYTES`) of each file
    under ``path`` (itself if a file), SQLite's transient side files left out; None if ``path`` is not
    given or absent. By content: a table rewritten with the same rows (the robustness CSV of the vision
    runs, written at every read) is no computation."""
    if path is None or not path.exists():
        return None
    files = [path] if path.is_file() else [q for q in path.rglob("*") if q.is_file()]
    out = set()
    for q in files:
        if q.name.endswith(_TRANSIENT_SUFFIXES):
            continue
        try:
            st = q.stat()
        except FileNotFoundError:  # removed meanwhile
            continue
        try:
            stamp: int | str = mf.sha256(q) if st.st_size <= _HASHED_BYTES else st.st_mtime_ns
        except FileNotFoundError:
            continue
        out.add((str(q), st.st_size, stamp))
    return frozenset(out)


def out_flag(out: Path) -> str | None:
    """How a command names the folder ``out``: ``figures`` for the checkout's committed figures, None for
    the default ``<run dir>/figures``, else the path."""
    from ..infra.paths import committed_figures, run_dir

    shipped = committed_figures()
    if shipped is not None and Path(out).resolve() == shipped.resolve():
        return COMMITTED_OUT
    return None if Path(out) == run_dir("figures") else str(out)


def make(name: str, out: Path, quick: bool, recompute: bool = False, format: str = DEFAULT_FORMAT) -> dict:
    """Compute, draw and write ``out/FILE.<format>`` (:data:`theorydyn.core.plotting.FORMATS`; PDF by
    default); returns the figure's manifest entry (setting, key numbers, cost of compute + draw + save,
    the file's hash, the command that remakes it …)."""
    fig = REGISTRY[name]
    inputs = fig.inputs(quick)
    before = _files_under(inputs)
    t = time.perf_counter()
    data = fig.compute(quick, recompute=True) if recompute else fig.compute(quick)
    drawn = fig.draw(data)
    out = Path(out)
    # save writes atomically (temporary file, fsync, rename): a kill or a full disk leaves the old figure or the new
    path = save(drawn, out / fig.filename(format))
    seconds = time.perf_counter() - t
    # cold: this call wrote into its inputs (in compute or, for the vision figures, which train in
    # draw, there); a folder the figures share may exist because another figure filled it with runs
    # this one does not read
    cold = recompute or before is None or _files_under(inputs) != before
    return _entry(
        fig,
        path,
        quick,
        fig.note,
        numbers=mf.jsonable(fig.numbers(data)),
        cost_s=round(seconds, 1),
        cold=bool(cold),
        load_avg_1m=round(os.getloadavg()[0], 2),
        regenerated_in_ci=bool(cold and seconds <= mf.CI_MAX_SECONDS),
        made_utc=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def record_existing(name: str, out: Path, why: str, format: str = COMMITTED_FORMAT) -> dict:
    """The manifest entry of a figure whose file in ``out`` (in ``format``) is kept as it is, not remade
    (e.g. its inputs are not on this machine): its hash, command and setting; no numbers and no cost
    (None), ``regenerated_in_ci`` False, and ``why`` as the note."""
    fig = REGISTRY[name]
    return _entry(fig, Path(out) / fig.filename(format), False, why)


#: the measured fields of a manifest entry as :func:`record_existing` leaves them: nothing measured
_UNMEASURED: dict[str, Any] = dict(
    numbers={}, cost_s=None, cold=False, load_avg_1m=None, regenerated_in_ci=False, made_utc=None
)


def _entry(fig: Figure, path: Path, quick: bool, note: str, **measured) -> dict:
    """The manifest entry of ``fig`` drawn into ``path``: the figure (file, the file's hash, command,
    setting), this machine and checkout, ``note``, and ``measured`` (numbers, cost_s, cold,
    load_avg_1m, regenerated_in_ci, made_utc; those left out as in :data:`_UNMEASURED`), in the
    manifest's order of fields."""
    import matplotlib

    m = {**_UNMEASURED, **measured}
    commit, dirty = git_state()
    return dict(
        file=path.name,
        sha256=mf.sha256(path),
        command=fig.command(quick, path.suffix.lstrip("."), out_flag(path.parent)),
        quick=bool(quick),
        setting=fig.setting(quick),
        numbers=m["numbers"],
        cost_s=m["cost_s"],
        cold=m["cold"],
        load_avg_1m=m["load_avg_1m"],
        cpus=os.cpu_count(),
        cpu=cpu_model(),
        host=numerics_host(),
        regenerated_in_ci=m["regenerated_in_ci"],
        git_commit=commit,
        git_dirty=dirty,
        matplotlib=matplotlib.__version__,
        made_utc=m["made_utc"],
        note=note,
    )


def cost_text(e: dict) -> str:
    """'3.1 s cold (load 0.4), CI' or 'not measured, not regenerated in CI' from a manifest entry."""
    ci = "CI" if e.get("regenerated_in_ci") else "not regenerated in CI"
    if e.get("cost_s") is None:
        return f"cost not measured, {ci}"
    return f"{e['cost_s']:g} s {'cold' if e.get('cold') else 'warm'} (load {e.get('load_avg_1m')}), {ci}"


# ---- the reduced dynamics ------------------------------------------------------------------------


# ---- driver helpers ---------------------------------------------------------------------------------
def available(fig: Figure) -> str | None:
    """None when the figure can be made, else why not."""
    missing = [mod for mod in fig.requires if not _installed(mod)]
    return f"needs {', '.join(missing)} (not installed)" if missing else None


def _installed(module: str) -> bool:
    """Whether ``module`` can be found (found, not imported: ``--list`` stays light)."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # its parent package is absent, or a broken entry in sys.modules
        return False


def inputs_text(fig: Figure, quick: bool = True) -> str:
    """'computed from scratch', 'cached inputs present (PATH)' or 'cached inputs absent (PATH): computes them'."""
    p = fig.inputs(quick)
    if p is None:
        return "computed from scratch"
    if p.exists():
        return f"cached inputs present ({p})"
    return f"cached inputs absent ({p}): would compute them" + (f" ({fig.inputs_cost})" if fig.inputs_cost else "")


def listing(entries: dict[str, dict]) -> list[str]:
    """One line per registered figure: its measured cost (from ``entries``, a manifest), its inputs
    (:func:`inputs_text`), whether it can be made here (:func:`available`) and its title."""
    lines = []
    for fig in REGISTRY.values():
        why = available(fig)
        entry = entries.get(fig.name)
        cost = "cost unknown (not in the manifest)" if entry is None else cost_text(entry)
        state = "can be made" if why is None else f"cannot be made: {why}"
        lines.append(f"{fig.name:22s} {cost}; {inputs_text(fig)}; {state} — {fig.title}")
    return lines


#: a full disk, a quota, a read-only file system: reported in one line, no traceback
_DISK_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO)
#: expected seconds of a figure never measured (the overall bar's ETA weighs figures by cost)
_UNKNOWN_COST_S = 30.0


def make_many(
    names: list[str],
    out: Path,
    entries: dict[str, dict],
    cfg: FiguresConfig,
    *,
    write: Callable[[Path, Callable[[Path], object]], object] = write_with,
    progress: bool = True,
) -> list[str]:
    """:func:`make` each figure of ``names`` into ``out`` as ``cfg`` says (its sizes, caches and format),
    then the README text (:func:`readme`) into ``out/README.generated.md`` (``cfg.write_readme``: into
    ``out/README.md`` too); returns the names that failed. A figure whose extras are missing is skipped
    (:func:`available`), one that raises is reported in a line on stderr (a full disk or an unsafe target
    without a traceback) and the others are still made.

    ``entries`` (the manifest of ``out``) gets each made figure's entry (a warm run keeping the measured
    cold cost, :func:`~theorydyn.figures.manifest.keep_cold_cost`) and is written to ``out/manifest.json``
    after every figure (``write(path, writer)``: atomically, :func:`theorydyn.infra.atomic.write_with`), so
    a later failure or a kill keeps the entries of the figures already made. One bar (``progress``) runs
    over every figure, weighed by its last measured cost, so its ETA is in seconds."""
    runnable = []
    for name in names:
        why = available(REGISTRY[name])
        if why is None:
            runnable.append(name)
        else:
            print(f"[figures] {name}: skipped, {why}", file=sys.stderr)
    expected = {n: float(entries.get(n, {}).get("cost_s") or _UNKNOWN_COST_S) for n in runnable}
    failed = []
    with progress_bar(progress and bool(runnable), round(sum(expected.values()), 1), "figures", unit="s") as bar:
        for name in runnable:
            bar.set_postfix_str(name)
            try:
                entry = make(name, out, cfg.quick, recompute=cfg.recompute, format=cfg.format)
            except Exception as e:  # noqa: BLE001 — one broken figure must not stop the others
                failed.append(name)
                if isinstance(e, OSError) and e.errno in _DISK_ERRORS:  # the earlier files stay (atomic writes)
                    bar.write(f"[figures] {name}: FAILED: cannot write into {out}: {e.strerror}", file=sys.stderr)
                elif isinstance(e, UnsafeTarget):  # a link or a folder at its file: never written through
                    bar.write(f"[figures] {name}: FAILED: {e}", file=sys.stderr)
                else:
                    bar.write(f"[figures] {name}: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
                    traceback.print_exc(limit=3, file=sys.stderr)
                bar.update(expected[name])
                continue
            entries[name] = mf.keep_cold_cost(entries.get(name), entry)
            write(out / mf.NAME, lambda t: t.write_text(mf.dumps(entries)))
            bar.write(f"[figures] {name}: {out / entry['file']} ({entry['cost_s']:g} s)", file=sys.stderr)
            bar.update(expected[name])
    text = readme(out, entries)
    for name in ("README.generated.md", "README.md") if cfg.write_readme else ("README.generated.md",):
        write(out / name, lambda t: t.write_text(text))
    return failed


class _Keys(dict):
    """A dict that ``str.format`` can index with '256' or 256 alike (format turns digit keys into ints)."""

    def __missing__(self, key):
        if str(key) in self:
            return dict.__getitem__(self, str(key))
        raise KeyError(key)


def _keys(x):
    if isinstance(x, dict):
        return _Keys({str(k): _keys(v) for k, v in x.items()})
    return [_keys(v) for v in x] if isinstance(x, list) else x


def claim_text(fig: Figure, numbers: dict | None) -> str:
    """The figure's claim with its ``{placeholders}`` filled from the manifest's key numbers (the
    numbers the figure shows), or each shown as '…' when the figure has no numbers yet.

    Raises:
        KeyError, IndexError, TypeError, ValueError: a placeholder the numbers do not fill.
    """
    if not numbers:
        return re.sub(r"\{[^{}]*\}", "…", fig.claim)
    return fig.claim.format_map(_keys(numbers))


def readme(out: Path, entries: dict[str, dict]) -> str:
    """The text of ``figures/README.md``: each figure, its file, the command that remakes it, its
    setting, the claim it shows, its measured cost and whether CI regenerates it (from ``entries``,
    the manifest)."""
    lines = [
        "# Figures",
        "",
        "Every figure here is computed by theorydyn, in one style (`theorydyn/core/plotting.py`), as SVG: "
        "vector, and shown inline by GitHub and the docs. `manifest.json` records, for each file, the command "
        "that remakes it, its setting, the key numbers it shows, its measured cost (compute + draw + save, "
        "cold, with the load average at the time), the commit and the file's SHA-256. "
        "`tests/test_figures_manifest.py` recomputes the numbers of every figure marked *CI* and fails when "
        "they or a file's hash differ from the manifest; the others are checked by hash only.",
        "",
        "Remake one with its command below (into `figures/`, updating `manifest.json`; the committed files "
        "change only with `--out figures`). Without `--out` and `--format` the same command writes a PDF "
        "into `<run dir>/figures/` (`--format png` a 150 dpi PNG); `python -m theorydyn.figures --list` "
        "gives each figure's cost and whether its cached inputs are present; `--write-readme` rewrites this "
        "file from the registry and the manifest.",
        "",
        "| figure | command | setting | what it shows | cost |",
        "|---|---|---|---|---|",
    ]
    for fig in REGISTRY.values():
        e = entries.get(fig.name)
        file = e["file"] if e is not None else fig.filename()
        shown = f"[`{file}`]({file})" if (out / file).exists() else "(not made)"
        if e is None:
            cmd, setting, cost = f"`{fig.command(True)}`", "", "not made"
        else:
            cmd = f"`{e['command']}`"
            setting = ", ".join(f"{k}={v}" for k, v in e["setting"].items())
            cost = cost_text(e)
        note = e.get("note") if e is not None else fig.note
        claim = claim_text(fig, e["numbers"] if e is not None else None) + (f" *Note:* {note}" if note else "")
        lines.append(f"| **{fig.name}** {shown}: {fig.title} | {cmd} | {setting} | {claim} | {cost} |")
    lines += [
        "",
        "Scan plots (phase times against the scanned axis, T1/T2 scaling in D, overlaid trajectories) are "
        "written next to each scan's results in `runs/scans/` by `python -m theorydyn.scan`.",
        "",
    ]
    return "\n".join(lines)


# the figures by topic register themselves on import (their record, .record), in this order (the registry's,
# --list's and the README's); the association-along-the-run figure (issue 30) last
from . import (  # noqa: E402, F401, I001
    reduced_figs,
    simulator_figs,
    section3_figs,
    transfer_figs,
    vision_figs,
    association_window,
    nstar_figs,
)
