"""``python -m theorydyn.scan``: where do the phases of Section 4.1 hold, and when?

A scan is a grid of Settings × solver options × seeds (:mod:`theorydyn.scan.grid`). Each point
runs the reduced (α, γ, ρ) dynamics (Lemmas 4.1–4.3) and, with ``--simulate``, GD on N samples
(Theorem 4.2), and gives one row: its parameters, T0, T1, T1_mass, T2, the plateau after
Event I, final risk and errors, the Lemma 4.3 increment ratio, whether γ(t) ≥ ρ(t) held, the
patch association (simulated), wall time and status.

Rows are committed to ``<run dir>/scans/results.sqlite`` (:mod:`theorydyn.infra.paths`) as each point
finishes (:mod:`theorydyn.infra.store`: one transaction per row, several scans may write at once; a
``kill -9`` loses only the points in flight) and exported to ``<run dir>/scans/<scan>.csv`` at the
end of each run; trajectories go to ``<run dir>/scans/<scan>/<key>.csv``. Rerunning the same command
skips finished points; ``--fresh`` starts over, setting the earlier rows and files aside (never
overwriting them). A Ctrl-C answers at once with the points saved and not computed. At the end:
plots next to the results (phase times against each scanned axis; T1, T2 against D in log-log with
fitted exponents when D is scanned; overlaid trajectories) and ``<scan>/summary.csv``, the summary
in long form (one row per setting, solver and quantity, with its interval). :func:`run_scan` prints
nothing: its messages go to a ``report`` callback, and the command prints them, then the summary
table on the terminal (:func:`theorydyn.scan.summary.summary_text`).

With ``--simulate`` the summary and the plots show the simulator's own numbers per N (phase times,
peak and final patch association, test errors against f and y) beside its N = ∞ reference, the
reduced flow. Intervals over seeds respect the quantity's range (:mod:`theorydyn.core.stats`): phase times
on the log scale, fractions cut to [0, 1], fewer than three seeds reported as such. A phase that some
seed did not reach is reported with the horizon it missed and the flag that extends it. Without
``s_max`` a point's horizon follows D (:func:`theorydyn.scan.point.scan_horizon`).

Examples::

    python -m theorydyn.scan --D 64 --C 4                       # the default scan (docs/theory.md §9)
    python -m theorydyn.scan --D 32 64 128 256 --C 4 --s-max 3e5   # phase scaling in D
    python -m theorydyn.scan --spec scans/scaling_D.toml --workers 4
    python -m theorydyn.scan --D 64 --C 4 --scheduler tcp://10.0.0.5:8786

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from ..core.plotting import FORMATS, save
from ..core.result import trajectory_problem
from ..infra._progress import progress_bar
from ..infra.atomic import UnsafeTarget, check_targets, set_aside_all, write_text, write_with
from ..infra.interrupt import Interrupted
from ..infra.provenance import provenance
from ..infra.store import DB_NAME, StoreDamaged, StoreError, move_aside
from . import plots as scanplots
from .defaults import DEFAULT_Q_FACTORS, DEFAULT_SEEDS, PROG, RESULTS_DIR  # noqa: F401 — re-exported
from .executor import execute_point, make_executor
from .grid import Point, ScanError, ScanSpec, open_store, runner_function, validate_points
from .outcome import ScanOutcome
from .reuse import reuse_stored, reused_text
from .schema import with_option_defaults
from .summary import _fmt, _is_simulate, summary_text, write_summary

#: Where a scan's messages go: a callable taking one line, or None (silent)
Report: TypeAlias = Callable[[str], None] | None


# ---- progress -------------------------------------------------------------------------------
class Progress:
    """The scan's bar (the one progress style, :mod:`theorydyn.infra._progress`): points done of total."""

    def __init__(self, name: str, total: int, skipped: int, enabled: bool = True):
        self.bar = progress_bar(enabled, total=total, desc=name, unit="point")
        self.done = 0
        self.failed = 0

    def update(self, running: int, note: str = "") -> None:
        self.bar.n = self.done + self.failed
        self.bar.set_postfix_str(
            f"{running} running{f', {self.failed} failed' if self.failed else ''}" + (f" · {note}" if note else ""),
            refresh=False,
        )
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


# ---- the run ------------------------------------------------------------------------------------
#: the figures of a scan, ``<name>_<figure>.<format>`` beside its results (:func:`make_plots`)
FIGURE_STEMS = ("phases_*", "simulator_*", "scaling_D", "trajectories")
FIGURE_SUFFIXES = tuple(f".{f}" for f in FORMATS)


def scan_outputs(results_dir: str | Path, name: str) -> list[Path]:
    """The files of scan ``name`` in ``results_dir`` that ``--fresh`` sets aside (those that exist): its
    CSV export, its folder (trajectories, arrays, summary.csv) and its figures. The results database,
    shared by every scan of the folder, stays: the scan's rows in it are set aside in its rejected
    table (listed, with every row ever set aside, in ``<name>.rejected.csv``)."""
    d = Path(results_dir)
    found = [d / f"{name}.csv", d / name]
    for stem in FIGURE_STEMS:
        found += sorted(q for q in d.glob(f"{name}_{stem}.*") if q.suffix in FIGURE_SUFFIXES)
    return [q for q in found if q.exists() or q.is_symlink()]


#: the files a point writes in its scan's folder, ``<key><suffix>`` (:func:`_save_outputs`)
POINT_FILES = (".csv", "_sim.csv", "_A.npy", "_v.npy")


def check_output_files(results_dir: str | Path, name: str, keys: list[str]) -> None:
    """Refuse, before any work, an output file of the scan that is a link or not a regular file (a folder
    in its place): the CSV export and its rejected-rows listing, each point's trajectory and arrays, the
    summary and the figures (:class:`~theorydyn.infra.atomic.UnsafeTarget`, naming the file). Only
    ``lstat``: cheap for every point. A scan folder that is a link to a folder is followed (the user put
    it there); one that is a file is refused."""
    d = Path(results_dir)
    folder = d / name
    if folder.exists() and not folder.is_dir():
        raise UnsafeTarget(f"{folder}: exists and is not a folder (the scan's trajectories go there)")
    files = [d / f"{name}.csv", d / f"{name}.rejected.csv", folder / "summary.csv"]
    files += [folder / f"{k}{suffix}" for k in keys for suffix in POINT_FILES]
    files += [q for q in scan_outputs(d, name) if q != folder and q.suffix != ".csv"]  # the figures
    check_targets(files)


def check_results_folder(results_dir: str | Path, spec: ScanSpec, *, fresh: bool = False) -> None:
    """Refuse, before any work, a results CSV or a ``.rejected.csv`` that is a symbolic link (the toolkit
    never writes through a link it did not create) or not a regular file (a FIFO or a device: reading it
    would block or never end), and unless ``fresh`` (which sets the earlier files aside, links and folders
    in their place too) every output file of the scan that is (:func:`check_output_files`).

    Raises:
        ScanError: naming ``--out`` and the file.
    """
    for path in (Path(results_dir) / f"{spec.name}.csv", Path(results_dir) / f"{spec.name}.rejected.csv"):
        try:
            if path.is_symlink():
                raise ScanError(
                    f"--out: {path} is a symbolic link; theorydyn does not write through links "
                    f"(remove it, or use another --name or --out)"
                )
            if path.exists() and not path.is_file():
                raise ScanError(
                    f"--out: {path} exists and is not a regular file (a folder, a pipe or a device); "
                    f"use another --name or --out"
                )
        except OSError as e:
            raise ScanError(f"--out: cannot use {str(path)!r}: {e.strerror or e}") from None
    if not fresh:
        try:
            check_output_files(results_dir, spec.name, [p.key for p in spec.expand()])
        except UnsafeTarget as e:
            raise ScanError(f"--out: {e} (remove it, or use another --name or --out)") from None


def interrupt_account(total: int, outcome: ScanOutcome) -> str:
    """What a Ctrl-C leaves of a scan of ``total`` points, in counts that add up to ``total``: the points
    saved (stored before this run, or computed by it), those that failed, those not computed (in flight
    or never started), and what the same command, rerun, does.

    >>> interrupt_account(8, ScanOutcome("s", pd.DataFrame(), computed=2, skipped=1)).split(";")[0]
    '8 point(s): 3 saved (1 before this run, 2 now), 5 not computed'
    """
    reused = len(outcome.reused)
    saved = outcome.skipped + reused + outcome.computed
    failed = len(outcome.failed)
    left = total - saved - failed
    other = f", {reused} reused from other scans" if reused else ""
    parts = [f"{saved} saved ({outcome.skipped} before this run{other}, {outcome.computed} now)"]
    if failed:
        parts.append(f"{failed} failed")
    parts.append(f"{left} not computed")
    again = left + failed
    return (
        f"{total} point(s): {', '.join(parts)}; the same command, rerun, computes only those {again} "
        f"(--fresh starts over)"
    )


def _save_outputs(directory: Path, key: str, out: dict[str, Any]) -> None:
    """Trajectories and arrays of a point, each written atomically, before its row."""
    for suffix, tr in (out.pop("trajectories", None) or {}).items():
        write_text(directory / f"{key}{suffix}.csv", tr.to_csv(index=False))
    for suffix, arr in (out.pop("arrays", None) or {}).items():
        write_with(directory / f"{key}{suffix}.npy", _npy_writer(np.asarray(arr)))


def _npy_writer(a: np.ndarray):
    def write(tmp: Path) -> None:
        np.save(tmp, a)

    return write


def _row(point: Point, out: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"key": point.key}
    row.update(point.params())
    for k, v in out.items():
        if k not in row and (v is None or isinstance(v, (bool, int, float, str, np.generic))):
            row[k] = v.item() if isinstance(v, np.generic) else v
    return row


def _export(store, report: Report) -> bool:
    """The CSV export of the store (re-read: another process's rows too); a failure is a message
    through ``report`` (and exit status 1), the rows stay committed in the database. Returns whether it
    was written."""
    try:
        store.export()
    except (OSError, ValueError) as e:
        if report is not None:
            report(
                f"{PROG}: warning: the rows are in {store.db} but the CSV export {store.path} could not be written: {e}"
            )
        return False
    return True


def check_runner(spec: ScanSpec) -> None:
    """Raise :class:`ScanError` before any work if the runner of the scan cannot be imported."""
    runner_function(spec.runner)


def _record(
    p: Point, fut, outcome: ScanOutcome, bar: Progress, store, traj_dir: Path, prov: dict, running: int
) -> bool:
    """Take the finished future ``fut`` of point ``p``: its trajectory saved, its row (with the provenance
    ``prov``) committed to ``store``, ``outcome`` and the bar (``running``: the points still in flight)
    updated. Returns True when the point failed (its runner raised, or the store refused its row); a dead
    worker (BrokenProcessPool) propagates."""
    where = " ".join(f"{k}={_fmt(v)}" for k, v in p.axes.items()) or p.key[:12]
    try:
        out = fut.result()
    except BrokenProcessPool:
        raise
    except Exception as e:  # noqa: BLE001 — a bug in one point must not lose the others
        outcome.failed.append((p.key, f"{type(e).__name__}: {e}"))
        bar.failed += 1
        bar.update(running, f"FAILED {where}: {type(e).__name__}: {e}")
        return True
    _save_outputs(traj_dir, p.key, out)
    try:
        store.append({**_row(p, out), **prov})
    except ValueError as e:  # a runner's row the store would reject on reading
        outcome.failed.append((p.key, f"row not stored: {e}"))
        bar.failed += 1
        return True
    outcome.computed += 1
    bar.done += 1
    t2 = out.get("T2")
    bar.update(running, f"{where} T2={_fmt(t2) if t2 is not None else '—'} ({out.get('wall_s', 0):.1f} s)")
    return False


#: what the command says after an OSError of the run (a full disk under the store or an output)
ROWS_KEPT = "the rows committed so far stay in the store: free space and rerun the same command to resume"


@dataclass(frozen=True)
class ScanReport:
    """A scan as the command ends it: its outcome, the summary text (stdout) and the lines for stderr."""

    outcome: ScanOutcome
    summary: str
    notes: tuple[str, ...]


def run_scan_report(spec: ScanSpec, *, results_dir: str | Path, fresh: bool, **run: Any) -> ScanReport:
    r""":func:`check_results_folder`, then :func:`run_scan` (``force`` = ``fresh``, the other keywords
    ``run``'s) and the summary text (:func:`~theorydyn.scan.summary.summary_text`), the store's
    :class:`~theorydyn.infra.store.RejectedRowsWarning`\ s caught meanwhile (the summary's too) and
    returned as ``warning: …`` notes; where no point finished, each failure as a ``FAILED <key>: …`` note
    too (the summary lists failures only beside finished points; ``--quiet`` hid the bar).

    Raises:
        ScanError: as :func:`check_results_folder` and :func:`run_scan`.
        OSError: a full disk under the store or an output (the rows committed so far stay: :data:`ROWS_KEPT`).
    """
    from ..infra.store import RejectedRowsWarning

    check_results_folder(results_dir, spec, fresh=fresh)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RejectedRowsWarning)
        outcome = run_scan(spec, results_dir=results_dir, force=fresh, **run)
        text = summary_text(spec, outcome)
    notes = [f"warning: {w.message}" for w in caught if issubclass(w.category, RejectedRowsWarning)]
    if not len(outcome.frame):
        notes += [f"FAILED {key[:12]}: {err}" for key, err in outcome.failed]
    return ScanReport(outcome, text, tuple(notes))


def run_scan(
    spec: ScanSpec,
    *,
    results_dir: str | Path = RESULTS_DIR,
    workers: int = 2,
    scheduler: str | None = None,
    force: bool = False,
    force_memory: bool = False,
    progress: bool = False,
    plots: bool = True,
    plot_format: str = "png",
    summary: bool = False,
    report: Report = None,
) -> ScanOutcome:
    """Run (or resume) a scan; see the module docstring. It prints nothing itself.

    ``report``: where its messages go, one line or paragraph per call (``python -m theorydyn.scan``
    prints them on stderr): the points already done (with ``progress``), a CSV export that could not
    be written, a worker that died, an interrupt; None: silent. ``force`` (the command's ``--fresh``):
    start over: the scan's earlier files (:func:`scan_outputs`) are renamed to ``<name>.old-<UTC time>``,
    its points' rows moved to the store's rejected table (nothing deleted), a damaged store moved
    aside, and every point computed again. Without it the same scan, rerun, computes only the points
    not stored yet, and reuses every point another scan of the results folder stored, under any name.
    ``progress``: a progress bar on stderr (:mod:`theorydyn.infra._progress`). ``plot_format``: the
    plots' file format (png, pdf or svg). ``summary``: the summary text
    (:func:`~theorydyn.scan.summary.summary_text`) through ``report`` too, at the end (the command
    prints it on stdout itself).

    Every point is checked before any work (:func:`~theorydyn.scan.grid.validate_points`: the exact
    expectation's size, the memory estimate against the machine's, unless ``force_memory``). The
    rows are read through the checked store (:mod:`theorydyn.infra.store`): rows that do not parse, whose
    key does not match their own parameters, or that come from older numerics are moved to its
    rejected table (a :class:`~theorydyn.infra.store.RejectedRowsWarning` gives the count) and their
    points are computed again. A point another process commits meanwhile is not computed twice.
    Each new row carries its provenance (``prov_*`` columns). At the end the CSV export
    ``<name>.csv`` is rewritten atomically with every row of the scan name.

    A Ctrl-C stops the workers (within :data:`~theorydyn.scan.executor.STOP_GRACE_S` s) and raises
    :class:`~theorydyn.infra.interrupt.Interrupted` whose account (:func:`interrupt_account`, reported at
    once through ``report``) counts the points saved and not computed, adding up to the scan's size.

    Raises:
        ScanError: before any work, for a grid, runner or results file that cannot be used.
        theorydyn.infra.interrupt.Interrupted: on a Ctrl-C, once the workers are stopped.
    """
    t_start = time.perf_counter()
    points = spec.expand()
    check_runner(spec)
    validate_points(points, force=force_memory, concurrent=1 if scheduler else max(workers, 1))
    results_dir = Path(results_dir)
    if not force:  # (--fresh sets the earlier files aside, links and folders in their place too)
        check_output_files(results_dir, spec.name, [p.key for p in points])
    if force:  # start over: nothing of before is overwritten (scan_outputs, and the rows below)
        moved = set_aside_all(scan_outputs(results_dir, spec.name))
        if moved and report is not None:
            report(f"[{spec.name}] --fresh: {len(moved)} earlier output(s) moved aside, e.g. {moved[0]}")
    try:
        store = open_store(results_dir / f"{spec.name}.csv")
    except StoreDamaged as e:
        if not force:
            raise ScanError(f"--out: {e}") from None
        aside = move_aside(results_dir / DB_NAME)  # --fresh on a damaged store: moved aside, a new one begun
        if report is not None:
            report(f"[{spec.name}] --fresh: the damaged results database was moved to {aside}")
        store = open_store(results_dir / f"{spec.name}.csv")
    except StoreError as e:
        raise ScanError(f"--out: {e}") from None
    prov = {f"prov_{k}": v for k, v in provenance().items()}
    traj_dir = results_dir / spec.name
    reused: dict[str, str] = {}
    if force:
        store.remove(p.key for p in points)  # set aside in the store's rejected table, not deleted
    else:  # a point is its content: any scan of this folder may have computed it, under any name
        reused = reuse_stored(store, [p.key for p in points if p.key not in store], results_dir)
    todo = [p for p in points if p.key not in store]
    skipped = len(points) - len(todo) - len(reused)
    if progress and (skipped or reused) and report is not None:
        report(
            f"[{spec.name}] {skipped + len(reused)} of {len(points)} points already in {store.path}"
            f"{f' ({reused_text(reused)})' if reused else ''}; computing {len(todo)}"
        )
    outcome = ScanOutcome(spec.name, pd.DataFrame(), 0, skipped, results=store.path, reused=reused)
    if todo:
        handle = make_executor(workers, scheduler)
        bar = Progress(spec.name, len(todo), skipped, progress)
        pending = {}
        cancelled = False
        try:
            # A bounded window of submitted points: the in-process executor then saves each
            # point before starting the next, and a pool never holds more than it can run soon.
            slots = len(todo) if scheduler else max(workers, 1)
            window = len(todo) if scheduler else (1 if workers == 0 else 2 * workers)
            queue = iter(todo)

            def refill() -> None:
                for p in queue:
                    if store.committed(p.key):  # another process on the same store computed it
                        outcome.skipped += 1
                        bar.done += 1
                        continue
                    if not force and (got := reuse_stored(store, [p.key], results_dir)):  # ... under another name
                        outcome.reused.update(got)
                        bar.done += 1
                        continue
                    pending[handle.executor.submit(execute_point, p.runner, p.setting, p.options, p.seed)] = p
                    if len(pending) >= window:
                        break

            refill()
            bar.update(min(len(pending), slots))
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    p = pending.pop(fut)
                    if _record(p, fut, outcome, bar, store, traj_dir, prov, min(len(pending), slots)):
                        refill()  # a failed point frees its slot at once
                refill()
        except BrokenProcessPool:
            # Raised by result() or by submit() once a worker died; the rows saved so far stand.
            pending.clear()
            outcome.lost = len(todo) - outcome.computed - len(outcome.failed)
            bar.close()
            if report is not None:
                report(
                    f"{PROG}: a worker process died (killed, or out of memory); {outcome.lost} point(s) "
                    f"not computed. Rerun the same command to resume."
                )
        except KeyboardInterrupt:
            # Answer at once (the account is known now), then stop the workers (within STOP_GRACE_S s):
            # the points in flight are lost, every row committed so far stays.
            cancelled = True
            bar.close()
            account = interrupt_account(len(points), outcome)
            if report is not None:
                report(f"\n{PROG}: interrupted; {account}")
            handle.close(cancel=True)
            raise Interrupted(account, reported=report is not None) from None
        finally:
            if not cancelled:
                bar.close()
                handle.close(cancel=bool(outcome.lost))
            outcome.export_failed = not _export(store, report)
    else:
        outcome.export_failed = not _export(store, report)
    outcome.frame = with_option_defaults(store.frame([p.key for p in points]))
    outcome.wall_s = time.perf_counter() - t_start
    if plots and len(outcome.frame):
        outcome.plots, outcome.exponents = make_plots(spec, outcome.frame, results_dir, plot_format)
    if len(outcome.frame):
        outcome.summary_csv = write_summary(spec, outcome.frame, results_dir)
    if summary and report is not None:
        report(summary_text(spec, outcome))
    return outcome


#: The most panels (one per value of the other scanned axes) a scan figure draws; beyond, the first ones.
MAX_FACETS = 6


def _facets(df: pd.DataFrame, others: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """The rows of each value of the ``others`` axes (one panel each: pooling seeds across another
    scanned axis would mix settings), labelled ``N=512 · q=0.3``; one unlabelled group when none."""
    if not others:
        return [("", df)]
    out = []
    for key, g in df.groupby(others, sort=True):
        vals = key if isinstance(key, tuple) else (key,)
        out.append((" · ".join(f"{a}={_fmt(v)}" for a, v in zip(others, vals, strict=True)), g))
    return out


def _panels(facets: list[tuple[str, pd.DataFrame]], ncols: int, width: float, height: float):
    """A styled figure of one row of ``ncols`` panels per facet (at most :data:`MAX_FACETS`)."""
    from ..core.plotting import figure

    n = min(len(facets), MAX_FACETS)
    fig, axes = figure(n, ncols, figsize=(width, height * n), squeeze=False)
    return fig, axes, facets[:n]


def _suptitle(fig, what: str, df: pd.DataFrame, skip: list[str], shown: int, total: int, sim: bool = False) -> None:
    more = f" (the first {shown} of {total} settings of the other axes)" if total > shown else ""
    fig.suptitle(f"{what}{more}\n{scanplots.setting_text(df, skip, None if sim else False)}")


def make_plots(spec: ScanSpec, df: pd.DataFrame, results_dir: Path, format: str = "png") -> tuple[list[Path], dict]:
    """Plots next to the results file, in ``format`` (:data:`theorydyn.core.plotting.FORMATS`); returns
    (paths, fitted exponents of T1, T1_mass, T2 against D with CIs, when D is the only axis the reduced
    flow reads).

    The reduced phase times are drawn against each scanned axis the reduced flow reads; with the
    simulator, its own numbers against every scanned axis beside the reduced (N = ∞) reference. Where
    other axes are scanned too, each of their settings gets its own row of panels (never pooled). The
    title states the setting (every fixed parameter), never the scan's name."""
    paths: list[Path] = []
    exps: dict = {}
    base = Path(results_dir) / spec.name
    sim = _is_simulate(df)
    scanned = spec.scanned_axes()
    red_axes = [a for a in scanned if a not in scanplots.SIM_ONLY_OPTIONS] if sim else scanned
    red = scanplots.reduced_rows(df) if sim else df
    for axis in scanned:
        if axis not in df.columns or not pd.api.types.is_numeric_dtype(df[axis]):
            continue
        if axis in red_axes:  # along N the reduced flow is one run repeated
            facets = _facets(red, [a for a in red_axes if a != axis])
            fig, axes, shown = _panels(facets, 1, 8.4, 3.6)
            for i, (label, g) in enumerate(shown):
                scanplots.plot_phase_times(g, axis, ax=axes[i, 0], title=label, legend=i == 0)
            _suptitle(fig, f"Reduced flow (N = ∞): phase times against {axis}", red, red_axes, len(shown), len(facets))
            paths.append(save(fig, Path(f"{base}_phases_{axis}.png"), format))
        if sim:
            facets = _facets(df, [a for a in scanned if a != axis])
            fig, axes, shown = _panels(facets, 2, 13.0, 3.6)
            for i, (label, g) in enumerate(shown):
                scanplots.plot_simulator(g, axis, axes=axes[i], title="", legend=i == 0)
                if label:
                    axes[i, 0].set_title(f"{label}: phase times, simulator (solid) and N = ∞ (dashed)")
                    axes[i, 1].set_title(f"{label}: final patch association and test errors")
            what = f"Simulator (finite N) against {axis}, beside its N = ∞ reference"
            _suptitle(fig, what, df, scanned, len(shown), len(facets), sim=True)
            paths.append(save(fig, Path(f"{base}_simulator_{axis}.png"), format))
    if "D" in scanned:
        facets = _facets(red, [a for a in red_axes if a != "D"])
        fig, axes, shown = _panels(facets, 1, 8.4, 4.0)
        for i, (label, g) in enumerate(shown):
            _, fits = scanplots.plot_scaling(g, ax=axes[i, 0], title=label)
            if len(facets) == 1:
                exps = {k: v for k, v in fits.items() if k in ("T1", "T1_mass", "T2")}
        _suptitle(fig, "Phase times of the reduced flow against D", red, red_axes, len(shown), len(facets))
        paths.append(save(fig, Path(f"{base}_scaling_D.png"), format))
    trajs, groups = {}, {}
    for _, r in red.iterrows():  # with the simulator: each reduced run once (along N it is repeated)
        f = base / f"{r['key']}.csv"
        if f.exists():
            why = trajectory_problem(f)
            if why is not None:  # a torn or altered file is left out of the figure, never drawn
                warnings.warn(f"trajectory {str(f)!r} {why}: not plotted (rerun the point to rewrite it)", stacklevel=2)
                continue
            label = " ".join(f"{a}={_fmt(r[a])}" for a in spec.axes if a in r) or r["key"][:8]
            trajs[label] = pd.read_csv(f)
            groups[label] = " ".join(f"{a}={_fmt(r[a])}" for a in red_axes if a in r) or label
    if trajs:
        fig = scanplots.plot_trajectories(
            trajs,
            groups=groups,
            title=f"Trajectories of the reduced flow (N = ∞), one colour per {', '.join(red_axes) or 'point'}\n"
            f"{scanplots.setting_text(red, red_axes, False)}",
        )
        paths.append(save(fig, Path(f"{base}_trajectories.png"), format))
    return paths, exps
