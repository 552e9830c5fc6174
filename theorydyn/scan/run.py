"""``python -m theorydyn.scan``: where do the phases of Section 4.1 hold, and when?

A scan is a grid of Settings × solver options × seeds (:mod:`theorydyn.scan.grid`). Each point
runs the reduced (α, γ, ρ) dynamics (Lemmas 4.1–4.3) and, with ``--simulate``, GD on N samples
(Theorem 4.2), and gives one row: its parameters, T0, T1, T1_mass, T2, the plateau after
Event I, final risk and errors, the Lemma 4.3 increment ratio, whether γ(t) ≥ ρ(t) held, the
patch association (simulated), wall time and status.

Rows are committed to ``scans/results/results.sqlite`` as each point finishes (:mod:`theorydyn.store`:
one transaction per row, several scans may write at once; a ``kill -9`` loses only the points in
flight) and exported to ``scans/results/<scan>.csv`` at the end of each run; trajectories go to
``scans/results/<scan>/<key>.csv``. Rerunning the same command skips finished points
(``--force`` recomputes them). At the end: a summary table on the terminal and plots next to
the results (phase times against each scanned axis; T1, T2 against D in log-log with fitted
exponents when D is scanned; overlaid trajectories).

Examples::

    python -m theorydyn.scan --D 64 --C 4                       # the default scan (docs/theory.md §9)
    python -m theorydyn.scan --D 32 64 128 256 --C 4 --s-max 3e5   # phase scaling in D
    python -m theorydyn.scan --spec scans/scaling_D.toml --workers 4
    python -m theorydyn.scan --D 64 --C 4 --scheduler tcp://10.0.0.5:8786

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._progress import progress_bar
from ..atomic import write_text, write_with
from ..plotting import save
from ..provenance import provenance
from ..stats import mean_ci
from ..store import StoreError
from . import plots as scanplots
from .executor import execute_point, load_runner, make_executor
from .grid import Point, ScanError, ScanSpec, open_store, validate_points

PROG = "python -m theorydyn.scan"
RESULTS_DIR = Path("scans/results")
#: The default scan around docs/theory.md §9: q at these multiples of C²/D (Assumption 2's q = poly(C)/D).
DEFAULT_Q_FACTORS = (0.6, 0.8, 1.0, 1.2, 1.4)
DEFAULT_SEEDS = (0, 1, 2)
SUMMARY_COLUMNS = ("T0", "T1", "T1_mass", "T2", "plateau_alpha", "plateau_err", "final_risk", "final_err_f",
                   "lemma43_ratio", "gamma_ge_rho", "sim_final_association", "sim_final_err_f", "wall_s", "status")


# ---- progress -------------------------------------------------------------------------------
class Progress:
    """The scan's bar (the one progress style, :mod:`theorydyn._progress`): points done of total."""

    def __init__(self, name: str, total: int, skipped: int, enabled: bool = True):
        self.bar = progress_bar(enabled, total=total, desc=name, unit="point")
        self.done = 0
        self.failed = 0

    def update(self, running: int, note: str = "") -> None:
        self.bar.n = self.done + self.failed
        self.bar.set_postfix_str(f"{running} running{f', {self.failed} failed' if self.failed else ''}"
                                 + (f" · {note}" if note else ""), refresh=False)
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


# ---- the run ------------------------------------------------------------------------------------
@dataclass
class ScanOutcome:
    """What a scan did: its rows (this scan's points only), counts and where things went."""

    name: str
    frame: pd.DataFrame
    computed: int
    skipped: int
    failed: list[tuple[str, str]] = field(default_factory=list)
    lost: int = 0
    wall_s: float = 0.0
    results: Path | None = None
    plots: list[Path] = field(default_factory=list)
    exponents: dict[str, Any] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if (self.failed or self.lost) else 0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


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


def _export(store) -> None:
    """The CSV export of the store (re-read: another process's rows too); a failure is a message,
    the rows stay committed in the database."""
    try:
        store.export()
    except (OSError, ValueError) as e:
        print(f"{PROG}: warning: the rows are in {store.db} but the CSV export {store.path} could not be "
              f"written: {e}", file=sys.stderr)


def check_runner(spec: ScanSpec) -> None:
    """Raise :class:`ScanError` before any work if the runner of the scan cannot be imported."""
    try:
        load_runner(spec.runner)
    except (ImportError, AttributeError, ValueError) as e:
        raise ScanError(f"--runner: cannot load {spec.runner!r}: {e}") from None


def run_scan(spec: ScanSpec, *, results_dir: str | Path = RESULTS_DIR, workers: int = 2, scheduler: str | None = None,
             force: bool = False, force_memory: bool = False, progress: bool = True, plots: bool = True,
             summary: bool = True) -> ScanOutcome:
    """Run (or resume) a scan; see the module docstring.

    Every point is checked before any work (:func:`~theorydyn.scan.grid.validate_points`: the exact
    expectation's size, the memory estimate against the machine's, unless ``force_memory``). The
    rows are read through the checked store (:mod:`theorydyn.store`): rows that do not parse, whose
    key does not match their own parameters, or that come from older numerics are moved to its
    rejected table (a :class:`~theorydyn.store.RejectedRowsWarning` gives the count) and their
    points are computed again. A point another process commits meanwhile is not computed twice.
    Each new row carries its provenance (``prov_*`` columns). At the end the CSV export
    ``<name>.csv`` is rewritten atomically with every row of the scan name.

    Raises:
        ScanError: before any work, for a grid, runner or results file that cannot be used.
    """
    t_start = time.perf_counter()
    points = spec.expand()
    check_runner(spec)
    validate_points(points, force=force_memory, concurrent=1 if scheduler else max(workers, 1))
    results_dir = Path(results_dir)
    try:
        store = open_store(results_dir / f"{spec.name}.csv")
    except StoreError as e:
        raise ScanError(f"--results-dir: {e}") from None
    prov = {f"prov_{k}": v for k, v in provenance().items()}
    traj_dir = results_dir / spec.name
    if force:
        store.remove(p.key for p in points)
    todo = [p for p in points if p.key not in store]
    skipped = len(points) - len(todo)
    if progress and skipped:
        print(f"[{spec.name}] {skipped} of {len(points)} points already in {store.path}; computing {len(todo)}",
              file=sys.stderr)
    outcome = ScanOutcome(spec.name, pd.DataFrame(), 0, skipped, results=store.path)
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
                    pending[handle.executor.submit(execute_point, p.runner, p.setting, p.options, p.seed)] = p
                    if len(pending) >= window:
                        break

            refill()
            bar.update(min(len(pending), slots))
            while pending:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for fut in done:
                    p = pending.pop(fut)
                    where = " ".join(f"{k}={_fmt(v)}" for k, v in p.axes.items()) or p.key[:12]
                    try:
                        out = fut.result()
                    except BrokenProcessPool:
                        raise
                    except Exception as e:  # noqa: BLE001 — a bug in one point must not lose the others
                        outcome.failed.append((p.key, f"{type(e).__name__}: {e}"))
                        bar.failed += 1
                        bar.update(min(len(pending), slots), f"FAILED {where}: {type(e).__name__}: {e}")
                        refill()
                        continue
                    _save_outputs(traj_dir, p.key, out)
                    try:
                        store.append({**_row(p, out), **prov})
                    except ValueError as e:  # a runner's row the store would reject on reading
                        outcome.failed.append((p.key, f"row not stored: {e}"))
                        bar.failed += 1
                        refill()
                        continue
                    outcome.computed += 1
                    bar.done += 1
                    t2 = out.get("T2")
                    bar.update(min(len(pending), slots), f"{where} T2={_fmt(t2) if t2 is not None else '—'} "
                                             f"({out.get('wall_s', 0):.1f} s)")
                refill()
        except BrokenProcessPool:
            # Raised by result() or by submit() once a worker died; the rows saved so far stand.
            pending.clear()
            outcome.lost = len(todo) - outcome.computed - len(outcome.failed)
            bar.close()
            print(f"{PROG}: a worker process died (killed, or out of memory); {outcome.lost} point(s) "
                  f"not computed. Rerun the same command to resume.", file=sys.stderr)
        except KeyboardInterrupt:
            cancelled = True
            bar.close()
            print(f"\n{PROG}: interrupted; {outcome.computed} point(s) saved, {len(pending)} not computed. "
                  f"Rerun the same command to resume.", file=sys.stderr)
            handle.close(cancel=True)
            raise
        finally:
            if not cancelled:
                bar.close()
                handle.close(cancel=bool(outcome.lost))
            _export(store)
    else:
        _export(store)
    outcome.frame = store.frame([p.key for p in points])
    outcome.wall_s = time.perf_counter() - t_start
    if plots and len(outcome.frame):
        outcome.plots, outcome.exponents = make_plots(spec, outcome.frame, results_dir)
    if summary:
        print_summary(spec, outcome)
    return outcome


# ---- summary ------------------------------------------------------------------------------------
def summary_table(spec: ScanSpec, df: pd.DataFrame) -> pd.DataFrame:
    """The columns a person reads: the scanned axes, seed, phase times and verdicts."""
    axes = [a for a in spec.axes if a in df.columns]
    cols = axes + [c for c in SUMMARY_COLUMNS if c in df.columns and c not in axes]
    out = df[cols].copy()
    return out.sort_values(axes, kind="stable").reset_index(drop=True) if axes else out


def print_summary(spec: ScanSpec, outcome: ScanOutcome, file=None) -> None:
    file = file or sys.stdout
    df = outcome.frame
    if not len(df):
        print(f"[{spec.name}] no finished points", file=file)
        return
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 200,
                           "display.float_format", lambda v: f"{v:.4g}"):
        print(summary_table(spec, df).to_string(index=False), file=file)
        scanned = [a for a in spec.scanned_axes() if a in df.columns]
        if scanned and "seed" in spec.axes and len(spec.axes["seed"]) > 1:
            phases = [c for c in ("T0", "T1", "T2", "final_err_f") if c in df.columns]
            print("\nmean over seeds:", file=file)
            print(df.groupby(scanned)[phases].mean().to_string(), file=file)
    for ph, fit in outcome.exponents.items():
        if fit is not None:
            print(f"fitted exponent: {ph} ∝ D^{fit['b']:.3f} [95% CI {fit['b_low']:.3f}, {fit['b_high']:.3f}] "
                  f"over {fit['n']} points", file=file)
    ci = seed_ci_table(spec, df)
    if ci is not None:
        print("\nphase times, mean and 95% interval over seeds (Student t):", file=file)
        print(ci.to_string(index=False), file=file)
    print(f"\n{len(df)} point(s) [{outcome.computed} computed, {outcome.skipped} already done] in "
          f"{outcome.wall_s:.1f} s · results: {outcome.results}", file=file)
    for p in outcome.plots:
        print(f"plot: {p}", file=file)
    for key, err in outcome.failed:
        print(f"FAILED {key[:12]}: {err}", file=file)


def seed_ci_table(spec: ScanSpec, df: pd.DataFrame,
                  columns: tuple[str, ...] = ("T0", "T1", "T1_mass", "T2", "final_err_f")) -> pd.DataFrame | None:
    """Per setting of the scanned axes (seed excluded): mean and 95% t-interval over seeds of the
    phase times. A phase not reached by some seed is reported as such ("n/N reached"), never
    averaged over the seeds that reached it as if that were the mean. None without ≥ 2 seeds."""
    if "seed" not in df.columns or df["seed"].nunique() < 2:
        return None
    keys = [a for a in spec.scanned_axes() if a in df.columns and a != "seed"]
    rows = []
    for key, grp in (df.groupby(keys) if keys else [((), df)]):
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=False))
        for c in columns:
            if c not in grp:
                continue
            x = pd.to_numeric(grp[c], errors="coerce").to_numpy(float)
            ok = np.isfinite(x)
            if ok.all():
                m, lo, hi = mean_ci(x)
                row[c] = f"{m:.4g} [{lo:.4g}, {hi:.4g}]"
            else:
                row[c] = f"{ok.sum()}/{len(x)} reached"
        rows.append(row)
    return pd.DataFrame(rows)


def make_plots(spec: ScanSpec, df: pd.DataFrame, results_dir: Path) -> tuple[list[Path], dict]:
    """Plots next to the results file; returns (paths, fitted exponents of T1, T2 against D with CIs)."""
    paths: list[Path] = []
    exps: dict = {}
    base = Path(results_dir) / spec.name
    for axis in spec.scanned_axes():
        if axis in df.columns and pd.api.types.is_numeric_dtype(df[axis]):
            fig = scanplots.plot_phase_times(df, axis, title=f"{spec.name}: phase times against {axis}")
            paths.append(save(fig, Path(f"{base}_phases_{axis}.png")))
    if "D" in spec.scanned_axes():
        fig, exps = scanplots.plot_scaling(df, title=f"{spec.name}: scaling with D")
        paths.append(save(fig, Path(f"{base}_scaling_D.png")))
        exps = {k: v for k, v in exps.items() if k in ("T1", "T2")}
    trajs, groups = {}, {}
    scanned = spec.scanned_axes()
    for _, r in df.iterrows():
        f = base / f"{r['key']}.csv"
        if f.exists():
            label = " ".join(f"{a}={_fmt(r[a])}" for a in spec.axes if a in r) or r["key"][:8]
            trajs[label] = pd.read_csv(f)
            groups[label] = " ".join(f"{a}={_fmt(r[a])}" for a in scanned if a in r) or label
    if trajs:
        fig = scanplots.plot_trajectories(trajs, groups=groups, title=f"{spec.name}: reduced trajectories (colour: "
                                                                        f"{', '.join(scanned) or 'point'})")
        paths.append(save(fig, Path(f"{base}_trajectories.png")))
    return paths, exps
