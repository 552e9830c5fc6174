"""Figure ``nstar``: N*(D), the samples Theorem 4.2 needs against D (docs/theory.md §4, §15).

For each window [T_a, k·T_a] (k = 1.5 and 3, one panel each) and each reading of q (Assumption 2's
q = C²/D and the ledger's fixed q), N_50 at each D as its bracket on log–log axes: the thin bar the 95%
bracket over seeds, the thick bar the point bracket (lo, hi] (:func:`theorydyn.experiments.nstar.n50`);
a size censored above the grid is an upward arrow from N_max. The band is every power law N_50 = c·D^b
passing through each 95% bracket (the envelope of the feasible lines, :func:`bracket_band`), drawn where
one exists; its exponent range is in the legend. The runs are the ledger's N*(D) runs
(:func:`theorydyn.experiments.nstar.run` at :func:`theorydyn.claims.nstar.config`), read back from
their store.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..claims import nstar as claim
from ..core.plotting import OKABE_ITO, axes_or_new, legend_outside, styled
from ..core.setting import Setting
from ..core.stats import bracket_power_law
from ..experiments import nstar as runs_ns
from ..experiments.nstar import n50, nstar_Ds, store_dir
from .record import _num, register


def bracket_band(Ds: list[int], lo: list[float], hi: list[float], grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The envelope over the power laws through every bracket: at each D of ``grid``, the least and the
    largest value a + b·log D over the feasible (a, b) (two linear programs per point); (nan, nan) when no
    power law passes through every bracket."""
    from scipy.optimize import linprog

    lx = np.log(np.asarray(Ds, float))
    A_ub, b_ub = [], []
    for i in range(len(Ds)):
        if lo[i] > 0:
            A_ub.append([-1.0, -lx[i]])
            b_ub.append(-math.log(lo[i]))
        if math.isfinite(hi[i]):
            A_ub.append([1.0, lx[i]])
            b_ub.append(math.log(hi[i]))
    low, high = np.full(len(grid), np.nan), np.full(len(grid), np.nan)
    for j, D in enumerate(grid):
        for sign, out in ((1.0, low), (-1.0, high)):
            r = linprog([sign, sign * math.log(D)], A_ub=np.array(A_ub), b_ub=np.array(b_ub), method="highs",
                        bounds=[(None, None), (None, None)])  # fmt: skip
            if r.status == 0:
                out[j] = math.exp(sign * r.fun)
    return low, high


def _setting(quick: bool) -> dict:
    n = claim.SIZES.pick(quick)
    return dict(D=64, C=4, q=0.25, Ds=list(nstar_Ds(4, n.n_D)), Ns=list(n.Ns), seeds=len(n.seeds), ks=list(n.ks))


@styled
def _draw(data, axes=None):
    st, readings = data["setting"], data["readings"]
    fig, axs = axes_or_new(axes, 1, len(st["ks"]), figsize=(10.0, 5.0), layout="constrained", sharey=True)
    axs = np.atleast_1d(axs)
    styles = {0: dict(color=OKABE_ITO["blue"], marker="o"), 1: dict(color=OKABE_ITO["vermillion"], marker="s")}
    for ax, k in zip(axs, st["ks"], strict=True):
        for i, (label, per_k) in enumerate(readings.items()):
            sty, shift = styles[i % 2], 1.0 + 0.025 * (i - 0.5)  # the readings side by side at each D
            rows = per_k[str(k)]
            for D, r in sorted(rows.items(), key=lambda kv: int(kv[0])):
                x = int(D) * shift
                if r["censored"] == "above":
                    ax.annotate("", xy=(x, r["lo"] * 2.2), xytext=(x, r["lo"]),
                                arrowprops=dict(arrowstyle="-|>", color=sty["color"], lw=1.4))  # fmt: skip
                    ax.plot([x], [r["lo"]], marker="_", ms=10, color=sty["color"])
                    continue
                blo, bhi = max(r["boot_lo"], st["Ns"][0] / 2), r["boot_hi"]
                ax.plot([x, x], [blo, bhi], color=sty["color"], lw=1.0, alpha=0.7)
                ax.plot(
                    [x, x], [max(r["lo"], st["Ns"][0] / 2), r["hi"]], color=sty["color"], lw=4.5, solid_capstyle="butt"
                )
            band = data["bands"][label][str(k)]
            if band is not None:
                g = np.asarray(band["D"], float)
                ax.fill_between(g, band["low"], band["high"], color=sty["color"], alpha=0.13, lw=0)
            fit = data["fits"][label][str(k)]
            if not (fit and fit["feasible"]):
                b_text = "no power law through every bracket" if fit else "fewer than 2 sizes"
            elif math.isfinite(fit["b_max"]):
                b_text = f"b in [{fit['b_min']:.2g}, {fit['b_max']:.2g}]"
            else:
                b_text = f"b >= {fit['b_min']:.2g}"
            ax.plot([], [], color=sty["color"], lw=4.5, label=f"{label}: {b_text}")
        ax.plot([], [], color="0.3", lw=1.0, label="95% bracket over seeds")
        ax.plot([], [], color="0.3", lw=0, marker=r"$\uparrow$", ms=10, label="censored: N_50 > N_max")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(st["Ds"], [str(D) for D in st["Ds"]])
        ax.minorticks_off()
        ax.set_xlabel("D (patches; d = D)")
        ax.set_title(f"window [T_a, {k:g} T_a]")
        legend_outside(ax, where="below", ncol=1, fontsize=7)
    axs[0].set_ylabel("N_50 (training samples)")
    fig.suptitle(
        f"N*(D): samples for persistent patch association (Theorem 4.2), C = {st['C']}, N = {st['Ns'][0]}…"
        f"{st['Ns'][-1]}, {st['seeds']} seeds, step size by the stated rule (1/λ*)",
        fontsize=9,
    )
    return fig


def _numbers(data) -> dict:
    out: dict[str, Any] = {}
    for label, per_k in data["fits"].items():
        for k, fit in per_k.items():
            # k3, as the claim text names it (not k3.0)
            key = f"{'C2_D' if label.startswith('q = C') else 'fixed_q'}_k{float(k):g}"
            out[key] = dict(b_min=_num(fit["b_min"]) if fit else None, b_max=_num(fit["b_max"]) if fit else None)
    return out


def nstar_readings(runs_by_label: dict[str, Any], ks: list[float]) -> dict:
    """Per q reading and k: N_50's bracket at each D (:func:`~theorydyn.experiments.nstar.n50`), the feasible
    exponent range, and the band of the power laws through every bracket."""
    readings: dict[str, dict] = {}
    fits: dict[str, dict] = {}
    bands: dict[str, dict] = {}
    for label, runs in runs_by_label.items():
        runs = runs[runs["N"] > 0]
        readings[label], fits[label], bands[label] = {}, {}, {}
        for k in ks:
            per: dict[str, dict] = {}
            for D, g in runs.groupby("D"):
                Ns = sorted(int(x) for x in g["N"].unique())
                tab = g.pivot(index="seed", columns="N", values=f"success_k{k:g}").reindex(columns=Ns).to_numpy(float)
                r = n50(Ns, tab)
                per[str(int(D))] = {key: r[key] for key in ("lo", "hi", "boot_lo", "boot_hi", "censored")}
            readings[label][str(k)] = per
            Ds = sorted(int(D) for D in per if not math.isnan(per[D]["lo"]))
            if len(Ds) >= 2:
                lo = [per[str(D)]["boot_lo"] if per[str(D)]["censored"] != "below" else 0.0 for D in Ds]
                hi = [per[str(D)]["boot_hi"] if per[str(D)]["censored"] != "above" else math.inf for D in Ds]
                fit = bracket_power_law(Ds, lo, hi)
                fits[label][str(k)] = {key: fit[key] for key in ("feasible", "b_min", "b_max", "shape")}
                grid = np.geomspace(Ds[0] * 0.9, Ds[-1] * 1.1, 40)
                bands[label][str(k)] = None
                if fit["feasible"]:
                    low, high = bracket_band(Ds, lo, hi, grid)
                    bands[label][str(k)] = dict(D=grid.tolist(), low=low.tolist(), high=high.tolist())
            else:
                fits[label][str(k)], bands[label][str(k)] = None, None
    return dict(readings=readings, fits=fits, bands=bands)


@register(
    "nstar",
    "N*(D): N_50 brackets against D, both q readings, both windows, with the power laws through them",
    "N*(D) (Theorem 4.2's N = poly(d)): N_50 at each D as a bracket, censored sizes as arrows; exponents of the "
    "power laws through every bracket, window [T_a, 3 T_a]: q = C²/D {C2_D_k3[b_min]}..{C2_D_k3[b_max]}, fixed q "
    "{fixed_q_k3[b_min]}..{fixed_q_k3[b_max]} (None: no power law, or fewer than 2 sizes).",
    (),
    _draw,
    _setting,
    _numbers,
    # the N*(D) runs' keyed store: a run that reads them back (unchanged) is warm, so the manifest never marks
    # this figure for CI, whose cold run would compute hours of N*(D) passes
    inputs=lambda quick: store_dir(),
    note="Not regenerated in CI: it reads the ledger's N*(D) runs (<run dir>/nstar), hours of GD on 2 cores; the "
    "numbers are in the figure and the manifest.",
    inputs_cost="the full ledger's N*(D) runs: docs/benchmarks.md, section Times",
)
def fig_nstar(quick: bool, recompute: bool = False):
    st = _setting(quick)
    s = Setting(D=st["D"], C=st["C"], q=st["q"])
    res = runs_ns.run(s, claim.config(s, quick))  # the ledger's runs, read back from their store
    return dict(setting=st, **nstar_readings({r.label: r.runs for r in res.readings}, st["ks"]))
