"""Figure ``association_window``: Theorem 4.2's patch association along the whole run (issue 30).

Realistic GD (:func:`theorydyn.simulate.simulate`) at one D for several N, one seed, Definition 2.2's
association (fraction of rows) at every recorded step, against the step; the window [T_a, 3 T_a]
that the Theorem 4.2 row judges (:mod:`theorydyn.claims.persistence`, T_a = max(T1, T2) of the
idealized flow at that setting) is shaded, 1.5 T_a marked. Registered in :data:`theorydyn.figures.REGISTRY`
by the imports at the end of :mod:`theorydyn.figures.core`.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.plotting import LIGHT_GREY, axes_or_new, legend_outside
from ..core.setting import Setting
from ..experiments.measure import window_summary
from ..experiments.theorem4 import steps_for
from ..simulate import simulate
from .record import _num, register


def _setting(quick: bool) -> dict:
    Ns = [1024, 4096, 16384] if quick else [1024, 4096, 16384, 65536]
    return dict(D=32, C=4, q=0.25, Ns=Ns, seed=42, eta=10.0, omega=1e-3, k=3.0, preset=250, dtype="float32")


def _draw(data, axes=None):
    fig, ax = axes_or_new(axes, figsize=(9.0, 4.0))
    st, T_a, curves = data["setting"], data["T_a"], data["curves"]
    eta, k = st["eta"], st["k"]
    if T_a is not None:
        ax.axvspan(T_a / eta, k * T_a / eta, color="0.9", label=f"the judged window [T_a, {k:g} T_a]")
        ax.axvline(1.5 * T_a / eta, color=LIGHT_GREY, ls=":", lw=1, label="1.5 T_a")
    for N, tr in curves.items():
        ax.plot(tr["s"] / eta, tr["association"], lw=1.4, label=f"N = {N}")
    ax.set_xlabel("GD step")
    ax.set_ylabel("patch association (fraction of rows)")
    ax.set_ylim(-0.02, 1.05)
    legend_outside(ax, title="realistic GD, N samples")
    ax.set_title(
        f"Theorem 4.2 along the run: D={st['D']}, C={st['C']}, q={st['q']:g}, η={eta:g}, ω={st['omega']:g}, "
        f"seed {st['seed']}\nT_a = max(T1, T2) of the idealized flow" + (f" = {T_a:.4g} (s = η·t)" if T_a else "")
    )
    return fig


def _numbers(data) -> dict:
    T_a, k = data["T_a"], data["setting"]["k"]
    out: dict[str, Any] = {"T_a": _num(T_a)}
    for N, tr in data["curves"].items():
        w = window_summary(tr, T_a, k) if T_a is not None else {}
        out[f"N{N}"] = dict(frac=_num(w.get("frac")), peak=_num(w.get("peak")), first_s=_num(w.get("first_s")))
    return out


@register(
    "association_window",
    "Theorem 4.2 along the run: association against the GD step for several N at D = 32, window marked",
    "Definition 2.2's association (fraction of rows) at every recorded step of realistic GD, N = 1024 … "
    "16384 (quick), with the window [T_a, 3 T_a] (T_a = {T_a:.4g}) that the Theorem 4.2 row judges: at "
    "N = 16384 it holds over {N16384[frac]:.2f} of the window's records (peak {N16384[peak]:.2f}).",
    (),
    _draw,
    _setting,
    _numbers,
)
def fig_association_window(quick: bool, recompute: bool = False):
    st = _setting(quick)
    s = Setting(D=st["D"], C=st["C"], q=st["q"])
    _, T_a = steps_for(s, st["preset"], st["eta"])
    steps = st["preset"] if T_a is None else max(st["preset"], math.ceil(st["k"] * T_a / st["eta"]))
    curves = {}
    for N in st["Ns"]:
        res = simulate(
            s,
            N=N,
            eta=st["eta"],
            steps=steps,
            omega=st["omega"],
            seed=st["seed"],
            record_every=max(1, steps // 100),
            dtype=st["dtype"],
            n_test=512,
        )
        curves[N] = res.trajectory[["s", "association"]].copy()
    return dict(setting=st, T_a=T_a, curves=curves)
