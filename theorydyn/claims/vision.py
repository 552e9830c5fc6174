"""Ledger rows of Section 6: the paper's datasets when their files are there, and 8×8 digits as a proxy.

The paper's claims are about CIFAR-10/100, SVHN and ImageNet (:func:`paper_rows`): for each of
CIFAR-10, CIFAR-100 and SVHN, Figures 6/7 run (the same :func:`accuracy_check` on the same cached
runs as below, at the CIFAR preset) when the official files are in ``data_dir`` (default ``<run dir>/data``,
the default ``--data-dir`` of ``python -m theorydyn.vision``), else a NOT_RUN row gives the command
that runs them; Figure 5a and Figure 1a on CIFAR-10, and anything on ImageNet (no loader in
:mod:`theorydyn.vision`), are NOT_RUN rows saying so.

The digits rows below are a proxy, not the paper's claim: their claim text says "(digits, a proxy
for CIFAR)" and their verdict is INFO, with the verdict the rule gives on digits in the note
(:func:`proxy`). On digits the ViT half of Figure 5a is invariant by construction (i.i.d. P, the
permutation applied after augmentation), and the Figure 1a contrast is driven by the digits' blank
border.

Four claims (five rows) on digits, each from the paper's own experiment, each able to fail:

1. Figures 6/7 — positional attention performs on par with vanilla attention: the per-seed
   difference ``acc_pos − acc_van`` of final test accuracies (same seed, same data order); PASS iff
   its 95% t-interval lies inside ``[−tol, +tol]`` (``tol`` = :data:`ACC_TOL`).
2. Figure 5a — permuting the image grid leaves the ViT's accuracy unchanged and hurts a CNN: per
   seed the drops ``δ_m = acc_m(original) − acc_m(π_s-permuted)``; FAIL if the ViT's drop is not
   within :data:`VIT_DROP_TOL` (its 95% upper bound), PASS if moreover ``δ_CNN − δ_ViT`` has a 95%
   interval above 0, DEVIATES (the CNN does not degrade measurably) otherwise. One row per setting
   of :data:`theorydyn.vision.experiments.ROBUSTNESS_DIGITS`: π_1 with a patch-1 ViT and π_2 with a
   patch-2 ViT, tiles of one patch each, which the ViT sees as a relabelling of positions.
3. Figure 1a — learned positional encodings concentrate their similarity on spatial neighbours:
   on runs whose P starts as in the paper's ViT (``MAPS_OVERRIDES``: N(0, 0.02²)), with the cosine
   similarity of the encodings and the distance profile ``ρ(k)`` of
   :func:`theorydyn.vision.maps.distance_profile`, the contrast ``ρ(1) − ρ(g−1)`` per seed; PASS iff
   its 95% interval is above 0 and above the untrained initialisation's mean contrast, DEVIATES when
   it is significantly below both (similarity rising with distance), FAIL otherwise.
4. Figure 5c — on π_s-permuted images (tiles of one patch, the Figure 1a runs' configuration
   otherwise), the learned similarity shows no local structure on the network's positions and a
   local one once π_s⁻¹ is applied: the contrast after π_s⁻¹ per seed (:func:`recovery_check`).

The verdict functions (:func:`accuracy_check`, :func:`robustness_check`, :func:`decay_check`) take
the per-seed numbers, so that tests can feed them synthetic values; this module runs nothing. The runs and
their measurements are :mod:`theorydyn.experiments.vision` (:func:`~theorydyn.experiments.vision.run` for
digits, :func:`~theorydyn.experiments.vision.real_accuracies` for the paper's datasets), cached under
``<run dir>/vision/ledger`` (:func:`theorydyn.infra.paths.vision_ledger_dir`) in folders keyed by a hash of
their whole configuration (:func:`theorydyn.vision.experiments.cached_runs`): a second call with the same
configuration trains nothing, and the seeds of one configuration still to train are trained together as one
ensemble (each member exactly the single run of its seed, written to its own folder).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.config import Seeds, as_seeds
from ..core.setting import Setting
from ..core.stats import mean_ci
from ..experiments import vision as vision_exp
from ..experiments.vision import DigitsResults
from ..infra.memory import MemoryEstimate
from ..infra.paths import data_dir as default_data_dir
from .check import Check, Verdict, interval_verdict
from .sizes import ClaimSizes, Sizes, seeds_option

ACC_TOL = 0.02  # two accuracy points: "on par" in Figures 6/7
VIT_DROP_TOL = 0.02  # the ViT's drop under π_s: within two points (3 seeds give a wide t-interval)
ROUTE_ATTENTION = (
    "positional attention against a per-image loop of softmax(P W_Q (P W_K)ᵀ/√d_h) V; vanilla "
    "against an explicit softmax(QKᵀ/√d_h)V; patch permutation equivariance of the ViT "
    "(tests/test_vision_model.py)"
)
ROUTE_GRID = "π_s against its inverse and tile-by-tile bookkeeping (tests/test_vision_grid.py)"
ROUTE_MAPS = "distance profile against a per-pair loop over the grid (tests/test_vision_claims.py)"

#: Every row uses the CLI's digits preset in both modes (the same cached runs as the figures);
#: entries here override the preset (tests).
QUICK: dict = {}
FULL: dict = {}


@dataclass(frozen=True)
class VisionSizes(ClaimSizes):
    """The sizes of the Section 6 rows besides the digits preset's training (its overrides :data:`QUICK`,
    :data:`FULL`; the Figure 5a rows' seeds are :data:`theorydyn.vision.experiments.ROBUSTNESS_SEEDS`)."""

    seeds: Seeds = seeds_option(3, "the seeds of each configuration's runs (trained together, one ensemble)")


#: Full mode's vision rows are the quick mode's: the same runs, read from the same cache.
SIZES = Sizes(quick=VisionSizes(), full=VisionSizes())


def _bounds(values: Sequence[float] | np.ndarray) -> tuple[float, float, float]:
    """(mean, low, high): the 95% interval over seeds (:func:`~theorydyn.core.stats.mean_ci`); with one seed
    there is no interval, and the mean stands for both bounds, so the mean decides the verdict."""
    m, lo, hi = mean_ci(values)
    return (m, lo, hi) if not np.isnan(lo) else (m, m, m)


def _row(
    claim: str,
    quantity: str,
    values,
    threshold: str,
    verdict: Verdict,
    params,
    note: str,
    route: str,
    why: dict[Verdict, str] | None = None,
) -> Check:
    """A row over seeds of the per-seed ``values`` (:meth:`Check.over_seeds`), params copied; ``why``
    maps a verdict to the reason appended to the note when the row gets it."""
    note += (why or {}).get(verdict, "")
    return Check.over_seeds(
        claim, quantity, values, threshold, verdict, params=dict(params or {}), note=note, route=route
    )


def accuracy_check(
    acc_pos: Sequence[float], acc_van: Sequence[float], tol: float = ACC_TOL, params: dict | None = None
) -> Check:
    """Row 1 from per-seed final test accuracies (paired by seed), read as an equivalence test:
    PASS when the 95% interval of the difference lies inside ±tol (on par shown), FAIL when it
    lies wholly outside (a difference shown), INFO when it straddles a bound (too few seeds to
    tell: neither on par nor a difference is shown)."""
    d = np.asarray(acc_pos, float) - np.asarray(acc_van, float)
    m, low, high = _bounds(d)
    note = (
        f"positional {np.mean(acc_pos):.4f} ({', '.join(f'{a:.4f}' for a in acc_pos)}), vanilla "
        f"{np.mean(acc_van):.4f} ({', '.join(f'{a:.4f}' for a in acc_van)}) per seed"
    )
    return _row(
        "Section 6, Figures 6/7",
        "final test accuracy, positional − vanilla attention (digits)",
        d.tolist(),
        f"95% CI inside [-{tol}, +{tol}]",
        interval_verdict(low, high, inside=(-tol, tol)),  # one seed: _bounds gives low = high = m
        params,
        note,
        ROUTE_ATTENTION,
        why={Verdict.INFO: f"; inconclusive: the 95% interval straddles ±{tol}, more seeds are needed to tell"},
    )


def robustness_check(
    vit_drop: Sequence[float] | np.ndarray,
    cnn_drop: Sequence[float] | np.ndarray,
    tol: float = VIT_DROP_TOL,
    params: dict | None = None,
    baseline: dict | None = None,
) -> Check:
    """Row 2 from per-seed accuracy drops under π_s (paired by seed); ``params`` names ``s`` and the
    ViT's ``patch``.

    Two parts: the ViT's drop is within ``tol`` (95% upper bound ≤ tol) and the CNN drops more than
    the ViT (95% interval of ``δ_CNN − δ_ViT`` above 0). PASS: both shown. FAIL: either contradicted
    (the ViT's drop above ``tol`` at its 95% lower bound, or the CNN − ViT interval below 0).
    DEVIATES: the ViT is shown robust but the CNN does not degrade measurably. INFO: neither shown
    nor contradicted, i.e. too few seeds for the run-to-run noise.
    """
    vit_d, cnn_d = np.asarray(vit_drop, float), np.asarray(cnn_drop, float)
    vm, vlo, vhi = _bounds(vit_d)
    gap = cnn_d - vit_d
    m, lo, hi = _bounds(gap)
    base = "" if not baseline else "; " + ", ".join(f"{k} {v:.4f}" for k, v in baseline.items())
    cm, clo, _ = mean_ci(cnn_d)
    note = (
        f"ViT drop {vm:+.4f} [{vlo:+.4f}, {vhi:+.4f}], CNN drop {cm:+.4f} (95% lower {clo:+.4f}), "
        f"{len(gap)} seeds{base}"
    )
    # the ViT's drop: shown within tol (95% upper bound <= tol) or shown above it (lower bound > tol)
    vit = interval_verdict(vlo, vhi, above=tol, below=tol, edge="below", if_above=Verdict.FAIL, if_below=Verdict.PASS)
    # the CNN − ViT gap: shown above 0, or below 0
    gap_v = interval_verdict(lo, hi, above=0.0, below=0.0)
    if Verdict.FAIL in (vit, gap_v):
        verdict = Verdict.FAIL
        note += "; the ViT is not robust to π_s" if vit is Verdict.FAIL else "; the ViT degrades more than the CNN"
    elif vit is Verdict.PASS and gap_v is Verdict.PASS:
        verdict = Verdict.PASS
    elif vit is Verdict.PASS:
        verdict = Verdict.DEVIATES
        note += "; the CNN does not degrade measurably more than the ViT, so the contrast of Figure 5a does not show"
    else:
        verdict = Verdict.INFO
        note += (
            f"; inconclusive: the ViT's drop is not shown within ±{tol}"
            + ("" if gap_v is Verdict.PASS else " and the CNN − ViT gap not shown above 0")
            + " at this number of seeds"
        )
    where = f"π_{params['s']}, ViT patch {params['patch']}" if params and "s" in params else "π_s"
    return _row(
        "Section 6, Figure 5a",
        f"accuracy drop under {where}, CNN − ViT (digits)",
        gap.tolist(),
        f"ViT drop 95% upper <= {tol} and CNN − ViT 95% CI > 0",
        verdict,
        params,
        note,
        f"{ROUTE_ATTENTION}; {ROUTE_GRID}",
    )


def decay_check(
    contrast: Sequence[float],
    init_contrast: Sequence[float],
    params: dict | None = None,
    vanilla_contrast: Sequence[float] | None = None,
    ink: tuple[float, float] | None = None,
) -> Check:
    """Row 3 from per-seed contrasts ``ρ(1) − ρ(g−1)`` of trained and untrained encodings; ``ink`` (mean
    pixel of the border-ring patches, of the inner ones; :func:`theorydyn.experiments.vision.ring_ink`) goes
    into the note of a DEVIATES row, as the measured property of the images that the pairs at distance g−1
    share."""
    m, low, high = _bounds(contrast)
    init = float(np.mean(init_contrast))
    note = f"untrained initialisation {init:+.4f}"
    if vanilla_contrast is not None:
        note += f", vanilla-attention ViT {np.mean(vanilla_contrast):+.4f}"
    verdict = interval_verdict(
        low, high, above=max(0.0, init), below=min(0.0, init), if_below=Verdict.DEVIATES, otherwise=Verdict.FAIL
    )
    rises = "; similarity RISES with grid distance: the pairs at distance g−1 are patches of the border ring" + (
        f", whose mean pixel is {ink[0]:.3f} of 1 against {ink[1]:.3f} for the inner patches" if ink is not None else ""
    )
    return _row(
        "Section 6, Figure 1a",
        "cosine similarity of positional encodings, ρ(1) − ρ(far) (positional-attention ViT, digits)",
        list(contrast),
        "PASS: 95% CI > max(0, init); DEVIATES: 95% CI < min(0, init)",
        verdict,
        params,
        note,
        f"{ROUTE_ATTENTION}; {ROUTE_MAPS}",
        why={
            Verdict.DEVIATES: rises,
            Verdict.FAIL: "; no decay with grid distance beyond what the initialisation shows",
        },
    )


def recovery_check(
    before: Sequence[float], after: Sequence[float], params: dict | None = None, unpermuted: float | None = None
) -> Check:
    """Figure 5c from per-seed contrasts ``ρ(1) − ρ(g−1)`` of encodings learned on π_s-permuted images:
    ``before`` on the network's (permuted) positions, ``after`` once π_s⁻¹ is applied
    (:func:`theorydyn.vision.maps.unpermuted`). The paper: no spatially localized structure
    as learned, localized patterns after π_s⁻¹. PASS iff the 95% intervals of ``after`` and of
    ``after − before`` are above 0; DEVIATES iff the interval of ``after`` is below 0 (similarity
    rising with distance, as Figure 1a's digits row); FAIL otherwise. ``unpermuted`` (the mean
    contrast of runs on original images) goes into the note."""
    b, a = np.asarray(before, float), np.asarray(after, float)
    m, low, high = _bounds(a)
    _, dlow, _ = _bounds(a - b)
    note = f"as learned (permuted positions) {np.mean(b):+.4f}, after π_s⁻¹ − as learned: lower bound {dlow:+.4f}"
    if unpermuted is not None:
        note += f"; runs on original images {unpermuted:+.4f}"
    verdict = interval_verdict(low, high, above=0.0, below=0.0, if_below=Verdict.DEVIATES, otherwise=Verdict.FAIL)
    if verdict is Verdict.PASS and not dlow > 0:  # a PASS needs the rise over the as-learned contrast shown too
        verdict = Verdict.FAIL
    return _row(
        "Section 6, Figure 5c",
        "cosine similarity of positional encodings learned on π_s-permuted images, ρ(1) − ρ(far) after π_s⁻¹",
        list(a),
        "PASS: 95% CI of after > 0 and of after − as learned > 0",
        verdict,
        params,
        note,
        f"{ROUTE_GRID}; {ROUTE_MAPS}",
        why={
            Verdict.DEVIATES: "; after π_s⁻¹ the similarity RISES with grid distance (as the Figure 1a row)",
            Verdict.FAIL: "; π_s⁻¹ does not bring out a decay with grid distance",
        },
    )


#: the claim text of a digits row: a proxy of the paper's datasets
PROXY = "(digits, a proxy for CIFAR)"
#: the paper's datasets that theorydyn.vision can load, with the files it expects
PAPER_DATASETS = ("cifar10", "cifar100", "svhn")


def proxy(c: Check) -> Check:
    """A digits row as a proxy: claim text marked :data:`PROXY`, verdict INFO, and the verdict the
    paper's rule gives on digits (with the note's reason) kept in the note."""
    return dataclasses.replace(
        c,
        claim=f"{c.claim} {PROXY}",
        verdict=Verdict.INFO,
        note=f"proxy on digits, not the paper's datasets: the rule gives {c.verdict} here"
        + (f"; {c.note}" if c.note else ""),
    )


def paper_rows(
    data_dir: str | Path | None = None,
    *,
    quick: bool = True,
    seeds: Seeds | None = None,
    root: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
    accuracies: Callable[..., tuple[list[float], list[float], dict]] | None = None,
) -> list[Check]:
    """Section 6 on the paper's datasets: Figures 6/7 per dataset of :data:`PAPER_DATASETS` where its
    files are in ``data_dir`` (:func:`accuracy_check` on :func:`real_accuracies`, or ``accuracies``
    in tests), a NOT_RUN row with the command otherwise; NOT_RUN rows for Figure 5a and Figure 1a on
    CIFAR-10 (not wired into the ledger) and for ImageNet (no loader). ``seeds``: default :data:`SIZES`'s."""
    seeds = SIZES.pick(quick).seeds if seeds is None else seeds
    root_dir = Path(data_dir if data_dir is not None else default_data_dir())
    flag = f" --data-dir {data_dir}" if data_dir is not None else ""
    run = accuracies or vision_exp.real_accuracies
    out = []
    for name in PAPER_DATASETS:
        files = vision_exp.expected_files(name)
        missing = [f for f in files if not (root_dir / f).is_file()]
        claim = f"Section 6, Figures 6/7 ({name})"
        quantity = f"final test accuracy, positional − vanilla attention ({name})"
        if missing:
            out.append(
                Check.not_run(
                    claim,
                    quantity,
                    f"95% CI inside [-{ACC_TOL}, +{ACC_TOL}]",
                    f"{', '.join(missing)} not in {root_dir}/ (the data directory)",
                    f"python -m theorydyn.vision {name} --experiment compare --seeds {len(seeds)}"
                    f"{flag} --no-download (then the ledger, with the files in {root_dir}/)",
                    params=dict(dataset=name, seeds=len(seeds)),
                )
            )
            continue
        acc_pos, acc_van, params = run(name, root_dir, quick=quick, seeds=seeds, root=root, progress=progress)
        c = accuracy_check(acc_pos, acc_van, params=dict(params, dataset=name))
        out.append(dataclasses.replace(c, claim=claim, quantity=quantity))
    cmd = "python -m theorydyn.vision cifar10 --experiment {}" + flag
    out.append(
        Check.not_run(
            "Section 6, Figure 5a (cifar10)",
            "accuracy drop under π_s, CNN − ViT (cifar10)",
            "ViT unchanged, CNN degrades",
            "not wired into the ledger (the digits proxy row is)",
            cmd.format("robustness"),
            params=dict(dataset="cifar10"),
        )
    )
    out.append(
        Check.not_run(
            "Section 6, Figure 1a (cifar10)",
            "similarity of learned positional encodings (cifar10)",
            "decays with grid distance",
            "not wired into the ledger (the digits proxy row is)",
            cmd.format("single --attention positional"),
            params=dict(dataset="cifar10"),
        )
    )
    out.append(
        Check.not_run(
            "Section 6, Figure 5c (cifar100)",
            "positional-encoding similarity after π_s⁻¹, ViT trained on permuted cifar100",
            "no local structure as learned, local after π_s⁻¹",
            "not wired into the ledger (the digits proxy row is)",
            f"python -m theorydyn.vision cifar100 --experiment permuted{flag}",
            params=dict(dataset="cifar100", s=2),
        )
    )
    out.append(
        Check(
            "Section 6, Figures 6/7 (ImageNet)",
            "final test accuracy, positional − vanilla attention (ImageNet)",
            float("nan"),
            f"95% CI inside [-{ACC_TOL}, +{ACC_TOL}]",
            Verdict.NOT_RUN,
            params=dict(dataset="imagenet"),
            note=f"no command runs it: theorydyn.vision has no ImageNet loader (datasets: digits, "
            f"{', '.join(PAPER_DATASETS)})",
        )
    )
    return out


def inputs(s: Setting | None, quick: bool, data_dir: str | Path | None = None, **options) -> dict:
    """What :func:`checks` reads besides its code: the paper's dataset files present in ``data_dir``
    (name → size in bytes), which decide between a NOT_RUN row and a run; in the ledger's key, so a
    stored NOT_RUN row is reused only while the same files are there (:mod:`theorydyn.verify.ledger`)."""
    root = Path(data_dir if data_dir is not None else default_data_dir())
    present = {}
    for name in PAPER_DATASETS:
        for f in vision_exp.expected_files(name):
            p = root / f
            if p.is_file():
                present[f] = p.stat().st_size
    return {"data_dir": str(root), "present": present}


def memory(s: Setting | None = None, quick: bool = True) -> MemoryEstimate:
    """Peak of :func:`checks` (``s`` not used): one ViT training step of the digits preset with the overrides
    :data:`QUICK` / :data:`FULL` (:func:`theorydyn.experiments.vision.memory`); nothing when the vision extra
    is absent (then :func:`checks` gives a SKIP row)."""
    return vision_exp.memory(QUICK if quick else FULL)


def checks(
    s: Setting | None = None,
    *,
    quick: bool = True,
    seeds: Seeds | None = None,
    progress: Callable[[str], None] | None = None,
    root: str | Path | None = None,
    data_dir: str | Path | None = None,
    paper: bool = True,
    **digits: Any,
) -> list[Check]:
    """The four Section 6 rows on digits, as proxies (:func:`proxy`), then the rows of the paper's
    datasets (:func:`paper_rows` on ``data_dir``; ``paper=False`` leaves them out); module docstring;
    the ledger's ``s`` is not used. ``digits``: the other options of :func:`digits_rows` (``data``,
    ``robustness_seeds``); ``seeds``: default :data:`SIZES`'s."""
    seeds = SIZES.pick(quick).seeds if seeds is None else seeds
    rows = [proxy(c) for c in digits_rows(quick=quick, seeds=seeds, progress=progress, root=root, **digits)]
    if paper:
        rows += paper_rows(data_dir, quick=quick, seeds=seeds, root=root, progress=progress)
    return rows


def digits_rows(
    *,
    quick: bool = True,
    seeds: Seeds | None = None,
    progress: Callable[[str], None] | None = None,
    root: str | Path | None = None,
    data=None,
    robustness_seeds=None,
) -> list[Check]:
    """The four Section 6 rows on digits with the verdicts of the paper's rules (:func:`checks` marks
    them as proxies), from the runs of :func:`theorydyn.experiments.vision.run` at the digits preset
    with :data:`QUICK` / :data:`FULL`: ``data`` defaults to the bundled digits; the Figure 5a rows run over
    ``robustness_seeds`` (default :data:`~theorydyn.vision.experiments.ROBUSTNESS_SEEDS`), the others
    over ``seeds``; the runs are cached under ``root`` (default
    :func:`~theorydyn.infra.paths.vision_ledger_dir`). The rows are :func:`rows`'."""
    seeds = SIZES.pick(quick).seeds if seeds is None else as_seeds(seeds)
    results = vision_exp.run(
        quick=quick,
        seeds=seeds,
        overrides=QUICK if quick else FULL,
        progress=progress,
        root=root,
        data=data,
        robustness_seeds=robustness_seeds,
    )
    return rows(results)


def rows(r: DigitsResults) -> list[Check]:
    """The digits rows from the runs ``r`` (pure judging: runs nothing), in the ledger's order: Figures 6/7
    (:func:`accuracy_check`), Figure 5a per setting of π_s (:func:`robustness_check`), Figure 1a
    (:func:`decay_check`), Figure 5c (:func:`recovery_check`)."""
    common = r.params
    return [
        accuracy_check(r.acc["positional"], r.acc["vanilla"], params=common),
        *(robustness_check(x.vit_drop, x.cnn_drop, baseline=x.baseline, params=x.params) for x in r.robustness),
        decay_check(
            r.contrasts["positional"],
            r.init,
            params=dict(common, pos_std=r.pos_std),
            vanilla_contrast=r.contrasts["vanilla"],
            ink=r.ink,
        ),
        recovery_check(
            r.before,
            r.after,
            params=dict(common, pos_std=r.pos_std, s=r.s5c, perm_seed=0),
            unpermuted=float(np.mean(r.contrasts["positional"])),
        ),
    ]
