"""The summary of a scan (:mod:`theorydyn.scan.run`): the table a person reads, the intervals over
seeds of the reduced flow (:func:`seed_ci_table`) and of the simulator beside its N = ∞ reference
(:func:`simulator_table`), the long-form ``<scan>/summary.csv`` (:func:`summary_frame`), the hints for
phases not reached or runs that diverged, and :func:`summary_text` (the text the command prints)."""

from __future__ import annotations

import math
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..core.stats import format_ci
from ..infra.atomic import write_text
from . import plots as scanplots
from .defaults import DEFAULT_Q_FACTORS, DEFAULT_SEEDS, PROG, RESULTS_DIR  # noqa: F401 — re-exported
from .grid import ScanSpec
from .outcome import ScanOutcome
from .reuse import reused_text

SUMMARY_COLUMNS = (
    "T0",
    "T1",
    "T1_mass",
    "T2",
    "plateau_alpha",
    "plateau_err",
    "final_risk",
    "final_err_f",
    "lemma43_ratio",
    "gamma_ge_rho",
    "sim_final_association",
    "sim_final_err_f",
    "wall_s",
    "status",
)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        # a whole number (N = 16384 in a column with NaN is a float) is printed whole, not as 1.638e+04
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}"
    return str(v)


# ---- summary ------------------------------------------------------------------------------------
#: Quantities of the reduced flow summarised over seeds, with their kind of interval (theorydyn.core.stats:
#: "positive" → the t-interval of the logs, centre the geometric mean; "probability" → cut to [0, 1]).
REDUCED_QUANTITIES = (
    ("T0", "positive"),
    ("T1", "positive"),
    ("T1_mass", "positive"),
    ("T2", "positive"),
    ("final_err_f", "probability"),
)
#: the printed tables' width: pandas splits wider tables into blocks of columns (issue 31)
TABLE_WIDTH = 100
INTERVAL_NOTE = (
    "95% interval over seeds: phase times on the log scale (geometric mean [t-interval of the logs]), "
    "fractions cut to [0, 1]; no interval below 3 seeds"
)


def summary_table(spec: ScanSpec, df: pd.DataFrame) -> pd.DataFrame:
    """The columns a person reads: the scanned axes, seed, phase times and verdicts."""
    axes = [a for a in spec.axes if a in df.columns]
    cols = axes + [c for c in SUMMARY_COLUMNS if c in df.columns and c not in axes]
    out = df[cols].copy()
    return out.sort_values(axes, kind="stable").reset_index(drop=True) if axes else out


def _is_simulate(df: pd.DataFrame) -> bool:
    return "sim_status" in df.columns and df["sim_status"].notna().any()


def _groups(df: pd.DataFrame, keys: list[str]):
    if not keys:
        return [((), df)]
    return [(k if isinstance(k, tuple) else (k,), g) for k, g in df.groupby(keys, sort=True)]


def summary_frame(spec: ScanSpec, df: pd.DataFrame) -> pd.DataFrame:
    """The scan's summary in long form, one row per (setting of the scanned axes, solver, quantity):
    ``solver`` ("reduced", N = ∞; or "simulator"), ``quantity``, ``n`` seeds, ``reached`` (seeds with a
    value), ``centre``, ``low``, ``high`` (NaN: not all seeds reached it, or fewer than 3 seeds),
    ``interval`` (how it was computed) and ``horizon`` (the s it had to be reached by). The reduced
    rows group over the scanned axes the reduced flow reads (not N or the simulator's steps: along
    those it is one run repeated)."""
    scanned = [a for a in spec.scanned_axes() if a in df.columns]
    rows: list[dict[str, Any]] = []
    how = {"positive": "log-t", "probability": "t cut to [0, 1]"}
    red_keys = [
        a
        for a in scanned
        if a not in scanplots.SIM_ONLY_OPTIONS
        and not (a == "eta" and "method" in df.columns and (df["method"] == "flow").all())
    ]
    red = scanplots.reduced_rows(df)
    for key, g in _groups(red, red_keys):
        base = dict(zip(red_keys, key, strict=True))
        horizon = float(g["s_max"].max()) if "s_max" in g.columns else math.nan
        for q, kind in REDUCED_QUANTITIES + (("final_association", "probability"),):
            if q in g.columns:
                rows.append(
                    {
                        **base,
                        "solver": "reduced",
                        "quantity": q,
                        "horizon": horizon,
                        **scanplots.interval(pd.to_numeric(g[q], errors="coerce"), kind),
                        "interval": how[kind],
                    }
                )
    if _is_simulate(df):
        for key, g in _groups(df, scanned):
            base = dict(zip(scanned, key, strict=True))
            div = _diverged(g)
            done = g[~div]  # a diverged run's numbers stop at its divergence: not averaged with the others
            horizon = float(done["sim_s_reached"].max()) if "sim_s_reached" in g.columns and len(done) else math.nan
            for q, kind in scanplots.SIM_QUANTITIES:
                if f"sim_{q}" in g.columns:
                    rows.append(
                        {
                            **base,
                            "solver": "simulator",
                            "quantity": q,
                            "horizon": horizon,
                            **scanplots.interval(pd.to_numeric(done[f"sim_{q}"], errors="coerce"), kind),
                            "interval": how[kind],
                            "diverged": int(div.sum()),
                        }
                    )
    return pd.DataFrame(rows)


def write_summary(spec: ScanSpec, df: pd.DataFrame, results_dir: str | Path) -> Path:
    """:func:`summary_frame` to ``<results_dir>/<name>/summary.csv``, beside the scan's trajectories
    (written atomically; not next to the results file, where ``*.csv`` is one file per scan); returns the path."""
    path = Path(results_dir) / spec.name / "summary.csv"
    write_text(path, summary_frame(spec, df).to_csv(index=False))
    return path


_DIVERGED_AT = re.compile(r"at step (\d+)")


def _diverged(g: pd.DataFrame) -> pd.Series:
    """Which seeds of a group had their simulator run diverge (non-finite risk or gradient): their
    phase columns are empty because the run stopped, not because a phase was not reached in time."""
    if "sim_status" not in g.columns:
        return pd.Series(False, index=g.index)
    return g["sim_status"].astype(str).eq("diverged")


def _diverged_steps(g: pd.DataFrame) -> str:
    """'step 375' or 'steps 375–413': where a group's diverged runs stopped (from their messages)."""
    msgs = g.loc[_diverged(g), "sim_message"] if "sim_message" in g.columns else pd.Series(dtype=str)
    steps = sorted(int(m.group(1)) for m in (_DIVERGED_AT.search(str(x)) for x in msgs) if m)
    if not steps:
        return "an unrecorded step"
    return f"step {steps[0]}" if steps[0] == steps[-1] else f"steps {steps[0]}–{steps[-1]}"


def _cell(x: np.ndarray, kind: str) -> str:
    ok = np.isfinite(x)
    if not ok.all():
        return f"{int(ok.sum())}/{len(x)} reached"
    if kind == "positive" and (x <= 0).any():
        return "≤ 0"
    return format_ci(x, kind)


def seed_ci_table(
    spec: ScanSpec, df: pd.DataFrame, columns: tuple[str, ...] = ("T0", "T1", "T1_mass", "T2", "final_err_f")
) -> pd.DataFrame | None:
    """Per setting of the scanned axes (seed excluded): centre and 95% interval over seeds of the
    reduced flow's phase times (log scale) and final error (cut to [0, 1]). A phase not reached by
    some seed is reported as such ("n/N reached"), never averaged over the seeds that reached it as
    if that were the mean; fewer than three seeds give the seeds' range, not an interval.
    None without ≥ 2 seeds."""
    if "seed" not in df.columns or df["seed"].nunique() < 2:
        return None
    kinds = dict(REDUCED_QUANTITIES)
    scanned = [a for a in spec.scanned_axes() if a in df.columns and a != "seed"]
    keys = [a for a in scanned if a not in scanplots.SIM_ONLY_OPTIONS] if _is_simulate(df) else scanned
    rows = []
    for key, grp in _groups(scanplots.reduced_rows(df) if _is_simulate(df) else df, keys):
        row: dict[str, Any] = dict(zip(keys, key, strict=True))
        for c in columns:
            if c in grp:
                row[c] = _cell(pd.to_numeric(grp[c], errors="coerce").to_numpy(float), kinds.get(c, "positive"))
        rows.append(row)
    return pd.DataFrame(rows)


def simulator_table(spec: ScanSpec, df: pd.DataFrame) -> pd.DataFrame | None:
    """The simulator's own summary per setting of the scanned axes (e.g. per N), then its N = ∞
    reference (the reduced flow, ``N = "∞ (reduced)"``): phase times, peak and final association,
    final test errors against f and y, each with its 95% interval over seeds. None without the simulator."""
    if not _is_simulate(df):
        return None
    scanned = [a for a in spec.scanned_axes() if a in df.columns]
    red_keys = [a for a in scanned if a not in scanplots.SIM_ONLY_OPTIONS]
    ref_axis = next((a for a in scanned if a in scanplots.SIM_ONLY_OPTIONS), "N")
    rows = []
    any_diverged = bool(_diverged(df).any())
    for key, g in _groups(df, scanned):
        row: dict[str, Any] = dict(zip(scanned, key, strict=True))
        row.setdefault(ref_axis, int(g["N"].iloc[0]) if "N" in g.columns and ref_axis == "N" else "")
        div = _diverged(g)
        done = g[~div]
        for q, kind in scanplots.SIM_QUANTITIES:
            if f"sim_{q}" in g.columns:
                x = pd.to_numeric(done[f"sim_{q}"], errors="coerce").to_numpy(float)
                row[q] = _cell(x, kind) if len(x) else "diverged"
        if any_diverged:
            row["diverged"] = f"{int(div.sum())}/{len(g)} at {_diverged_steps(g)}" if div.any() else "0"
        rows.append(row)
    for key, g in _groups(scanplots.reduced_rows(df), red_keys):
        row = dict(zip(red_keys, key, strict=True))
        row[ref_axis] = "∞ (reduced)"
        if any_diverged:
            row["diverged"] = "—"
        for q, kind in scanplots.SIM_QUANTITIES:
            if q in g.columns:
                row[q] = (
                    "—"
                    if q in scanplots.NO_REFERENCE
                    else _cell(pd.to_numeric(g[q], errors="coerce").to_numpy(float), kind)
                )
        rows.append(row)
    out = pd.DataFrame(rows)
    cols = list(dict.fromkeys(red_keys + [ref_axis] + [c for c in out.columns if c not in red_keys + [ref_axis]]))
    out = out[cols]
    if red_keys:  # each setting's N values, then its reference
        out = out.sort_values(red_keys, kind="stable")
    return out.fillna("").reset_index(drop=True)


def not_reached_hints(spec: ScanSpec, df: pd.DataFrame) -> list[str]:
    """One line per solver and horizon whose phase times some seed did not reach: where (the scanned
    axes), how many seeds reached each, and how to reach them."""
    hints: list[str] = []
    sf = summary_frame(spec, df)
    if not len(sf):
        return hints
    sf = sf[(sf["reached"] < sf["n"]) & sf["quantity"].str.startswith("T")]  # n: the runs that did not diverge
    meta = ("solver", "quantity", "n", "reached", "centre", "low", "high", "interval", "horizon", "diverged")
    key_cols = [c for c in sf.columns if c not in meta]
    hints += _divergence_hints(spec, df)
    for (solver, horizon), g in sf.groupby(["solver", "horizon"], sort=False):
        parts = []
        keys = [c for c in key_cols if g[c].notna().all()]  # the reduced rows have no N
        for key, gg in g.groupby(keys, sort=False) if keys else [((), g)]:
            where = " ".join(
                f"{k}={_fmt(v)}" for k, v in zip(keys, key if isinstance(key, tuple) else (key,), strict=True)
            )
            counts = ", ".join(f"{r['quantity']} {int(r['reached'])}/{int(r['n'])}" for _, r in gg.iterrows())
            parts.append(f"{where}: {counts}" if where else counts)
        what = "; ".join(parts)
        if solver == "reduced":
            hints.append(
                f"not reached by the reduced flow's horizon s_max = {horizon:.3g} (seeds that reached it): "
                f"{what}. To reach it, raise the horizon: --s-max {2 * horizon:.3g} (or s_max in the spec's "
                f"[options])."
            )
        else:
            hints.append(
                f"not reached by the simulator's horizon η·steps = {horizon:.3g} (seeds that reached it): "
                f"{what}. To reach it, raise --sim-steps (e.g. ×2); T2 (test error < 2%) may stay out of "
                f"reach at small N, where the error floors above 2%."
            )
    return hints


def _divergence_hints(spec: ScanSpec, df: pd.DataFrame) -> list[str]:
    """One line naming the settings whose simulator runs diverged, where, and what to change."""
    if not _is_simulate(df) or not _diverged(df).any():
        return []
    scanned = [a for a in spec.scanned_axes() if a in df.columns and a != "seed"]
    parts = []
    for key, g in _groups(df, scanned):
        div = _diverged(g)
        if div.any():
            where = " ".join(f"{k}={_fmt(v)}" for k, v in zip(scanned, key, strict=True))
            parts.append(f"{where + ': ' if where else ''}{int(div.sum())}/{len(g)} seeds at {_diverged_steps(g)}")
    eta = sorted({_fmt(e) for e in df["eta"].dropna()}) if "eta" in df.columns else []
    return [
        "diverged (non-finite risk or gradient; the run stops there, its phase times are left out, not counted "
        f"as not reached): {'; '.join(parts)}. A smaller GD step --eta (here {', '.join(eta) or 'the default'}) "
        "may keep them finite."
    ]


def _titled(table: pd.DataFrame, title: str) -> list[str]:
    """A table of intervals over seeds under its title (``title; INTERVAL_NOTE:``, wrapped), a blank line before."""
    return [
        "\n" + textwrap.fill(f"{title}; {INTERVAL_NOTE}:", TABLE_WIDTH),
        table.to_string(index=False, line_width=TABLE_WIDTH),
    ]


def summary_text(spec: ScanSpec, outcome: ScanOutcome) -> str:
    """The summary ``python -m theorydyn.scan`` prints at the end (the library returns it, the command
    prints it): the summary table, the intervals over seeds of the reduced flow and of the simulator,
    the fitted exponents against D, the hints for phases not reached, the counts, the files written
    and the points that failed."""
    lines: list[str] = []
    df = outcome.frame
    if not len(df):
        return f"[{spec.name}] no finished points"
    scanned = [a for a in spec.scanned_axes() if a in df.columns]
    with pd.option_context(
        "display.width",
        200,
        "display.max_columns",
        30,
        "display.max_rows",
        200,
        "display.max_colwidth",
        60,
        "display.float_format",
        lambda v: f"{v:.4g}",
    ):
        lines.append(summary_table(spec, df).to_string(index=False, line_width=TABLE_WIDTH))
        ci = seed_ci_table(spec, df)
        if ci is not None:
            where = scanplots.setting_text(scanplots.reduced_rows(df), scanned, False)
            lines += _titled(ci, f"reduced flow (N = ∞), {where}")
        sim = simulator_table(spec, df)
        if sim is not None:
            where = scanplots.setting_text(df, scanned)
            lines += _titled(
                sim, f"simulator (finite N) beside its N = ∞ reference (the reduced flow), {where}; times in s = η·t"
            )
    for ph, fit in outcome.exponents.items():
        if fit is not None:
            note = (
                " — T1 depends on the horizon (its level max_t |ρ(t)| grows with s_max): this exponent is "
                "the horizon's as much as D's; T1_mass is the horizon-free Event II time"
                if ph in scanplots.HORIZON_DEPENDENT
                else ""
            )
            lines.append(
                f"fitted exponent: {ph} ∝ D^{fit['b']:.3f} [95% CI {fit['b_low']:.3f}, {fit['b_high']:.3f}] "
                f"over {fit['n']} points{note}"
            )
    lines += not_reached_hints(spec, df)
    reused = f", {len(outcome.reused)} reused ({reused_text(outcome.reused)})" if outcome.reused else ""
    lines.append(
        f"\n{len(df)} point(s) [{outcome.computed} computed{reused}, {outcome.skipped} already done] in "
        f"{outcome.wall_s:.1f} s · results: {outcome.results}"
    )
    if outcome.summary_csv is not None:
        lines.append(f"summary: {outcome.summary_csv}")
    lines += [f"plot: {p}" for p in outcome.plots]
    lines += [f"FAILED {key[:12]}: {err}" for key, err in outcome.failed]
    return "\n".join(lines)
