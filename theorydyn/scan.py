"""``python -m theorydyn.scan``: where do the phases of Section 4.1 hold, and when?

A scan is a grid of Settings × solver options × seeds (:mod:`theorydyn.scangrid`). Each point
runs the reduced (α, γ, ρ) dynamics (Lemmas 4.1–4.3) and, with ``--simulate``, GD on N samples
(Theorem 4.2), and gives one row: its parameters, T0, T1, T1_mass, T2, the plateau after
Event I, final risk and errors, the Lemma 4.3 increment ratio, whether γ(t) ≥ ρ(t) held, the
patch association (simulated), wall time and status.

Rows go to ``scans/results/<scan>.csv`` as each point finishes (:mod:`theorydyn.resultstore`:
one fsync'ed line per row; a ``kill -9`` loses only the points in flight); trajectories to
``scans/results/<scan>/<key>.csv``. Rerunning the same command skips finished points
(``--force`` recomputes them). At the end: a summary table on the terminal and plots next to
the results (phase times against each scanned axis; T1, T2 against D in log-log with fitted
exponents when D is scanned; overlaid trajectories).

Examples::

    python -m theorydyn.scan --D 64 --C 4                       # the default scan (SPEC §9)
    python -m theorydyn.scan --D 32 64 128 256 --C 4 --s-max 3e5   # phase scaling in D
    python -m theorydyn.scan --spec scans/scaling_D.toml --workers 4
    python -m theorydyn.scan --D 64 --C 4 --scheduler tcp://10.0.0.5:8786

Exit status: 0 all points done; 1 some point failed or a worker died (rerun to resume);
2 bad input (nothing computed); 130 interrupted.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .cli import add_setting_arguments, fail, positive
from .resultstore import ResultStore, atomic_write_text
from .scangrid import DEFAULT_RUNNER, Point, ScanError, ScanSpec

PROG = "python -m theorydyn.scan"
RESULTS_DIR = Path("scans/results")
#: The default scan around SPEC §9: q at these multiples of C²/D (Assumption 2's q = poly(C)/D).
DEFAULT_Q_FACTORS = (0.6, 0.8, 1.0, 1.2, 1.4)
DEFAULT_SEEDS = (0, 1, 2)
SUMMARY_COLUMNS = ("T0", "T1", "T1_mass", "T2", "plateau_alpha", "plateau_err", "final_risk", "final_err_f",
                   "lemma43_ratio", "gamma_ge_rho", "sim_association", "sim_err_f", "wall_s", "status")


# ---- progress -------------------------------------------------------------------------------
class Progress:
    """One line on stderr: done/total, a bar, running, elapsed, estimate of what is left."""

    def __init__(self, name: str, total: int, skipped: int, enabled: bool = True):
        self.name, self.total, self.skipped, self.enabled = name, total, skipped, enabled
        self.done = 0
        self.failed = 0
        self.t0 = time.perf_counter()
        self.tty = sys.stderr.isatty()
        self.last = ""

    def update(self, running: int, note: str = "") -> None:
        if not self.enabled:
            return
        n = self.done + self.failed
        elapsed = time.perf_counter() - self.t0
        left = f" · ~{elapsed / n * (self.total - n):.0f} s left" if n and n < self.total else ""
        width = 20
        fill = int(width * n / max(self.total, 1))
        bar = "#" * fill + "." * (width - fill)
        fails = f" · {self.failed} failed" if self.failed else ""
        line = (f"[{self.name}] {n}/{self.total} [{bar}] · {running} running{fails} · "
                f"{elapsed:.0f} s{left}" + (f" · {note}" if note else ""))
        if self.tty:
            sys.stderr.write("\r" + line[:160].ljust(len(self.last)))
            self.last = line[:160]
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty and self.last:
            sys.stderr.write("\n")
            sys.stderr.flush()


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
    exponents: dict[str, float | None] = field(default_factory=dict)

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
        atomic_write_text(directory / f"{key}{suffix}.csv", tr.to_csv(index=False))
    for suffix, arr in (out.pop("arrays", None) or {}).items():
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory / f".{key}{suffix}.npy.tmp"
        with open(tmp, "wb") as fh:
            np.save(fh, np.asarray(arr))
        tmp.replace(directory / f"{key}{suffix}.npy")


def _row(point: Point, out: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"key": point.key}
    row.update(point.params())
    for k, v in out.items():
        if k not in row and (v is None or isinstance(v, (bool, int, float, str, np.generic))):
            row[k] = v.item() if isinstance(v, np.generic) else v
    return row


def check_runner(spec: ScanSpec, points: list[Point]) -> None:
    """Fail (exit 2) before any work if the code a point needs cannot be imported."""
    from .scanexec import load_runner

    try:
        load_runner(spec.runner)
    except (ImportError, AttributeError) as e:
        fail(f"--runner: cannot load {spec.runner!r}: {e}", PROG)
    if spec.runner == DEFAULT_RUNNER:
        needed = ["theorydyn.reduced"] + (["theorydyn.simulate"] if any(p.options.get("simulate") for p in points) else [])
        for mod in needed:
            try:
                __import__(mod)
            except ImportError as e:
                fail(f"{mod} is not available in this installation ({e}); the scan needs it", PROG)


def run_scan(spec: ScanSpec, *, results_dir: str | Path = RESULTS_DIR, workers: int = 2, scheduler: str | None = None,
             force: bool = False, progress: bool = True, plots: bool = True, summary: bool = True) -> ScanOutcome:
    """Run (or resume) a scan; see the module docstring. Bad input exits 2 before any work."""
    from .scanexec import execute_point, make_executor

    t_start = time.perf_counter()
    try:
        points = spec.expand()
    except ScanError as e:
        fail(str(e), PROG)
    check_runner(spec, points)
    results_dir = Path(results_dir)
    store = ResultStore(results_dir / f"{spec.name}.csv")
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
                    store.append(_row(p, out))
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
            raise SystemExit(130)
        finally:
            if not cancelled:
                bar.close()
                handle.close(cancel=bool(outcome.lost))
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
    for ph, b in outcome.exponents.items():
        if b is not None:
            print(f"fitted exponent: {ph} ∝ D^{b:.3f}", file=file)
    print(f"\n{len(df)} point(s) [{outcome.computed} computed, {outcome.skipped} already done] in "
          f"{outcome.wall_s:.1f} s · results: {outcome.results}", file=file)
    for p in outcome.plots:
        print(f"plot: {p}", file=file)
    for key, err in outcome.failed:
        print(f"FAILED {key[:12]}: {err}", file=file)


def make_plots(spec: ScanSpec, df: pd.DataFrame, results_dir: Path) -> tuple[list[Path], dict]:
    """Plots next to the results file; returns (paths, fitted exponents of T1, T2 against D)."""
    from . import scanplots

    paths: list[Path] = []
    exps: dict = {}
    base = Path(results_dir) / spec.name
    for axis in spec.scanned_axes():
        if axis in df.columns and pd.api.types.is_numeric_dtype(df[axis]):
            paths += scanplots.plot_phase_times(df, axis, Path(f"{base}_phases_{axis}.png"),
                                                title=f"{spec.name}: phase times against {axis}")
    if "D" in spec.scanned_axes():
        p, exps = scanplots.plot_scaling(df, Path(f"{base}_scaling_D.png"), title=f"{spec.name}: scaling with D")
        paths += p
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
        paths += scanplots.plot_trajectories(trajs, Path(f"{base}_trajectories.png"), groups=groups,
                                             title=f"{spec.name}: reduced trajectories (colour: "
                                                   f"{', '.join(scanned) or 'point'})")
    return paths, exps


# ---- command line -------------------------------------------------------------------------------
def _token(name: str, vals: list[Any]) -> str:
    def one(v: Any) -> str:
        return re.sub(r"e\+?0*(\d)", r"e\1", f"{v:g}") if isinstance(v, float) else str(v)

    return name + "-".join(one(v) for v in vals)


def _safe_name(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-") or "scan"
    if len(name) > 90:
        name = name[:80] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return name


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, conflict_handler="resolve",
                                 epilog="With only --D/--C: q in {0.6, 0.8, 1, 1.2, 1.4}·C²/D (when one size) × seeds {0, 1, 2}, "
                                        "reduced gradient flow to s = 5·10⁴ with 4000 Monte Carlo samples.")
    ap.add_argument("--spec", help="a saved grid, scans/NAME.toml (flags given as well override its entries)")
    ap.add_argument("--name", help="scan name (default: derived from the spec or the flags)")
    add_setting_arguments(ap)
    # The axes that take lists replace their single-valued counterparts.
    g = ap.add_argument_group("scan axes (lists)")
    g.add_argument("--D", type=int, nargs="+", default=None, help="number(s) of patches (default 64)")
    g.add_argument("--C", type=int, nargs="+", default=None, help="set size(s) (default 4)")
    g.add_argument("--q", type=float, nargs="+", default=None, help="q value(s) (default: 0.6, 0.8, 1, 1.2, 1.4 × C²/D)")
    g.add_argument("--tau", type=float, nargs="+", default=None, help="softmax temperature(s) (default 1)")
    g.add_argument("--eta", type=float, nargs="+", default=None,
                   help="GD step(s) η: reduced --method gd and the simulator (default 10)")
    g.add_argument("--N", type=int, nargs="+", default=None, help="simulator sample size(s) (default 16384)")
    g.add_argument("--seeds", type=int, nargs="+", default=None, help="seeds (default 0 1 2)")
    o = ap.add_argument_group("solver options")
    o.add_argument("--method", choices=("flow", "gd"), default=None, help="reduced dynamics: gradient flow or GD")
    o.add_argument("--s-max", type=positive(float, "--s-max"), default=None, help="horizon in s = η·t (default 5e4)")
    o.add_argument("--n-samples", type=positive(int, "--n-samples"), default=None,
                   help="Monte Carlo count samples (default 4000)")
    o.add_argument("--expectation", choices=("mc", "exact"), default=None, help="Monte Carlo or exact (small L)")
    o.add_argument("--n-points", type=positive(int, "--n-points"), default=None, help="trajectory points (default 400)")
    o.add_argument("--simulate", action="store_true", default=None, help="also run the finite-sample simulator")
    o.add_argument("--sim-steps", type=positive(int, "--sim-steps"), default=None, help="simulator GD steps (1200)")
    o.add_argument("--omega", type=positive(float, "--omega"), default=None, help="simulator init scale ω (1e-3)")
    o.add_argument("--dtype", choices=("float64", "float32"), default=None, help="simulator dtype of X")
    r = ap.add_argument_group("running")
    r.add_argument("--workers", type=positive(int, "--workers", allow_zero=True), default=2,
                   help="local worker processes; 0 runs in this process (default 2)")
    r.add_argument("--scheduler", help="run on a Dask cluster, e.g. tcp://HOST:8786 (needs the dask extra)")
    r.add_argument("--force", action="store_true", help="recompute points already in the results")
    r.add_argument("--results-dir", default=str(RESULTS_DIR), help="where results go (default %(default)s)")
    r.add_argument("--no-plots", action="store_true", help="skip the plots")
    r.add_argument("--quiet", action="store_true", help="no progress line")
    r.add_argument("--runner", default=None, help="advanced: 'module:function' computing one point")
    return ap


_LIST_FLAGS = {"D": "D", "C": "C", "q": "q", "tau": "tau", "eta": "eta", "N": "N", "seeds": "seed"}
_SINGLE_SETTING = {"d": None, "sigma2": None, "p": 3, "nu": None, "beta": 1.0, "partition": "blocks",
                   "partition_seed": 0}
_OPTION_FLAGS = ("method", "s_max", "n_samples", "expectation", "n_points", "simulate", "sim_steps", "omega", "dtype")


def spec_from_args(args: argparse.Namespace) -> ScanSpec:
    """The scan the flags describe (on top of ``--spec`` when given)."""
    if args.spec:
        try:
            spec = ScanSpec.from_toml(args.spec)
        except ScanError as e:
            fail(str(e), PROG)
        tokens = [spec.name]
    else:
        spec = ScanSpec(name="", base={}, axes={})
        tokens = []
    given: dict[str, Any] = {}
    for flag, axis in _LIST_FLAGS.items():
        vals = getattr(args, flag)
        if vals is not None:
            given[axis] = list(dict.fromkeys(vals))  # keep order, drop repeats
    for k, default in _SINGLE_SETTING.items():
        v = getattr(args, k)
        if v != default:
            given[k] = [v]
    for k in _OPTION_FLAGS:
        v = getattr(args, k)
        if v is not None:
            given[k] = [v]
    if not args.spec:
        # The default scan around SPEC §9.
        D = given.get("D", [64])
        C = given.get("C", [4])
        given.setdefault("D", D)
        given.setdefault("C", C)
        name_tokens = [_token("D", D), _token("C", C)]
        if "q" not in given and len(D) == 1 and len(C) == 1:
            qs = sorted({round(min(1.0, f * C[0] ** 2 / D[0]), 6) for f in DEFAULT_Q_FACTORS})
            spec.axes["q"] = qs
        if "seed" not in given:
            spec.axes["seed"] = list(DEFAULT_SEEDS)
        tokens = name_tokens
    for k, vals in given.items():
        spec.base.pop(k, None)
        spec.axes.pop(k, None)
        if len(vals) > 1 or k == "seed":
            spec.axes[k] = vals
        else:
            spec.base[k] = vals[0]
        is_default = not args.spec and k == "seed" and vals == list(DEFAULT_SEEDS)
        if (args.spec or k not in ("D", "C")) and not is_default:
            tokens.append("sim" if k == "simulate" else _token(k.replace("_", ""), vals))
    if "eta" in given and not (spec.base.get("simulate") or spec.base.get("method") == "gd"
                               or "simulate" in spec.axes or "method" in spec.axes):
        fail("--eta: has no effect on the reduced gradient flow; add --simulate or --method gd", PROG)
    if "N" in given and not (spec.base.get("simulate") or "simulate" in spec.axes):
        fail("--N: is the simulator's sample size; add --simulate", PROG)
    if "seed" in spec.axes:  # seeds vary fastest: the table reads one setting after the other
        spec.axes["seed"] = spec.axes.pop("seed")
    if args.runner:
        spec.runner = args.runner
    spec.name = _safe_name(args.name or "_".join(tokens))
    return spec


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    spec = spec_from_args(args)
    outcome = run_scan(spec, results_dir=args.results_dir, workers=args.workers, scheduler=args.scheduler,
                       force=args.force, progress=not args.quiet, plots=not args.no_plots)
    return outcome.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
