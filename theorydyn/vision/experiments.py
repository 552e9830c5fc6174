"""The experiments of Section 6, each a set of training runs plus its picture.

* ``single``: one network (``--model``, ``--attention``, ``--shuffle-grid``).
* ``compare`` (Figures 6/7): ViT with positional against vanilla attention over several seeds;
  ``compare.png`` shows the test accuracy per epoch (mean ± std over seeds) and the training loss.
* ``permuted`` (Figure 5a): grid sizes s, ViT against ResNet-18 and VGG-19 (the small CNN on
  digits); ``permuted.png`` shows the final test accuracy against s, and the ViT's similarity maps
  before/after π_s⁻¹ are written for every s (Figure 5c).
* ``robustness`` (Figure 5a, the digits form): ViT and CNN on original and π_s-permuted images,
  over seeds, with the accuracy drop of each (:data:`ROBUSTNESS_DIGITS`: s = 1 and 2 on digits).
* ``demo`` (the digits default): positional and vanilla ViT, one seed, and a table on stdout.

Every run lives in its own folder ``out/<model>-<attention>-s<S>-seed<k>`` (history.csv,
checkpoint.pt, run.json, maps); ``out/summary.csv`` lists the final numbers. :func:`cached_run`
instead keys the folder by a hash of the whole configuration, so that reruns of the same
configuration (the ledger's) reuse the finished run; :func:`cached_runs` trains the seeds of one
configuration that are not cached yet together, as one ensemble (:func:`train_together`; ``compare``
does the same), one folder per seed as if each had been trained alone.

Each finished cached run's summary row is committed to the results store (:mod:`theorydyn.infra.store`)
of its root, ``root/results.sqlite`` under the scope ``vision_runs`` (:func:`open_runs`; export
``root/vision_runs.csv``), keyed by :func:`run_key` (the run's full configuration and the numerics
version). A cached run is served from its row, checked on reading (:func:`row_problem`; with
``weights``, also that its folder still holds the finished checkpoint); a row that fails is moved to
the store's rejected table and the run is computed again. The folders keep the weights.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import textwrap
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure
from tqdm.auto import tqdm

from ..core.plotting import FORMATS, PALETTE, figure, legend_outside, save, styled, with_format
from ..core.stats import mean_ci
from ..infra import keyed
from ..infra._progress import progress_bar
from ..infra.atomic import write_with
from ..infra.keyed import KeyedStore
from ..infra.paths import run_name
from ..infra.provenance import NUMERICS_VERSION
from ..infra.store import RejectedRowsWarning
from .checkpoint import CHECKPOINT, load_checkpoint, read_history
from .data import ImageData
from .grid import grid_permutation
from .maps import plot_maps
from .model import ENSEMBLES, ViTConfig, build_model, ensemble
from .presets import MAPS_OVERRIDES, PRESETS, VIT_KEYS, configs, preset_configs, preset_of  # noqa: F401
from .runspec import (  # noqa: F401  (re-exported: imported from here)
    LEDGER_THREADS,
    RunSpec,
    _config,
    config_key,
    ledger_threads,
    run_key,
    run_params,
)
from .train import Status, TrainConfig, train

#: a ViT run's map of its positional encodings, in its folder (in the ``plot_format`` asked for: ``.pdf`` …)
MAPS = "pos_similarity.png"


def _setup(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, perm_seed: int):
    """What a run of ``spec`` trains: the network's shape, its TrainConfig, π_s and the run's metadata."""
    s = spec.s if spec.s is not None and spec.s < data.image_size else None
    perm = grid_permutation(data.image_size, s, perm_seed) if s else None
    vcfg = dataclasses.replace(vit, attention=spec.attention, patch=spec.patch) if spec.model == "vit" else vit
    cfg = dataclasses.replace(tcfg, seed=spec.seed, shuffle_grid=s)
    meta = dict(
        dataset=data.name, model=spec.model, perm_seed=perm_seed, vit=vcfg.to_dict() if spec.model == "vit" else None
    )
    return vcfg, cfg, perm, meta


def run(
    spec: RunSpec,
    data: ImageData,
    vit: ViTConfig,
    tcfg: TrainConfig,
    out: Path,
    *,
    resume: bool,
    perm_seed: int,
    folder: Path | None = None,
    maps: bool = True,
    progress: bool | tqdm | Status | None = None,
    plot_format: str = "png",
) -> dict:
    """Train one network; return its summary row (final and best test accuracy, speed). ``progress``:
    :func:`theorydyn.vision.train.train`'s (a status function, a job's bar, or None: silent). ``maps``: its
    positional-encoding similarity maps to ``pos_similarity.<plot_format>`` (png, pdf or svg)."""
    vcfg, cfg, perm, meta = _setup(spec, data, vit, tcfg, perm_seed)
    torch.manual_seed(spec.seed)  # initialisation
    model = build_model(spec.model, channels=data.channels, classes=data.classes, vit=vcfg)
    folder = folder or out / spec.name
    maps_file = with_format(folder / MAPS, plot_format)
    if maps and maps_file.is_symlink():  # refused before any training, as train refuses its own files
        raise ValueError(f"{maps_file}: is a symbolic link; theorydyn does not write through links")
    hist = train(model, data, cfg, folder, perm=perm, resume=resume, meta=meta, tag=spec.name, progress=progress)
    s = cfg.shuffle_grid
    pos = getattr(model, "pos", None) if spec.model == "vit" else None
    if maps and isinstance(pos, torch.Tensor):
        where = f"{data.name}, {spec.attention} attention, patch {spec.patch}"
        if perm is None:
            plot_maps(pos, maps_file, f"Figure 1a: positional-encoding similarity ({where})")
        else:
            plot_maps(
                pos,
                maps_file,
                f"Figure 5c: grid size s={s} ({where})",
                perm=perm,
                s=s,
                patch=spec.patch,
            )
    return _summary(spec, data, hist, folder)


def _summary(spec: RunSpec, data: ImageData, hist: pd.DataFrame, folder: Path) -> dict:
    last = hist.iloc[-1]
    return dict(
        run=spec.name,
        model=spec.model,
        attention=spec.attention if spec.model == "vit" else "",
        grid=spec.s or data.image_size,
        seed=spec.seed,
        epochs=int(last.epoch),
        final_test_acc=float(last.test_acc),
        best_test_acc=float(hist.test_acc.max()),
        final_train_loss=float(last.train_loss),
        images_per_s=float(hist.images_per_s.median()),
        seconds=float(hist.seconds.sum()),
        folder=str(folder),
    )


def cache_folder(
    spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, root: Path, perm_seed: int = 0
) -> Path:
    """The folder of :func:`cached_run`: ``root/<name>-<config_key>``, one per (configuration, seed)."""
    return Path(root) / run_name("vision", spec.name, suffix=config_key(spec, data, vit, tcfg, perm_seed))


#: the store scope (and CSV export ``root/vision_runs.csv``) of the cached runs' rows
RUNS_SCOPE = "vision_runs"
#: the columns of a run's summary row (:func:`_summary`) and their types
SUMMARY_TYPES: dict[str, type] = dict(
    run=str,
    model=str,
    attention=str,
    grid=int,
    seed=int,
    epochs=int,
    final_test_acc=float,
    best_test_acc=float,
    final_train_loss=float,
    images_per_s=float,
    seconds=float,
    folder=str,
)
RUN_KINDS = {c: "num" for c, t in SUMMARY_TYPES.items() if t is not str}


def _typed(row: dict[str, str]) -> dict:
    """A stored row (text by column) as the summary dict :func:`run` returns (empty text: NaN)."""
    return {c: (math.nan if t is float and row[c] == "" else t(row[c])) for c, t in SUMMARY_TYPES.items()}


#: a row of other numerics is stale (checked first)
_stale = keyed.version_stale("params", "numerics", NUMERICS_VERSION)


def _check(row: dict[str, str], params: Mapping) -> str | None:
    """Every summary column parses, and the accuracies are finite and in [0, 1]."""
    try:
        r = _typed(row)
    except KeyError as e:
        return f"invalid: no column {e.args[0]!r}"
    except (ValueError, TypeError) as e:
        return f"invalid: {type(e).__name__}: {e}"
    for c in ("final_test_acc", "best_test_acc"):
        if not 0.0 <= r[c] <= 1.0:  # NaN fails too
            return f"invalid: {c}={row[c]!r} not a finite accuracy in [0, 1]"
    return None


def row_problem(row: dict[str, str]) -> str | None:
    """Why a stored run row cannot be trusted, or None (the one validation of
    :func:`theorydyn.infra.keyed.row_problem`): not of other numerics, its key the hash of its own
    ``params``, every summary column parsing, the accuracies finite and in [0, 1]."""
    return keyed.row_problem(row, keyed.json_column("params"), _stale, _check)


def open_runs(root: Path, check=_check) -> KeyedStore:
    """The store of the cached runs' rows under ``root`` (``root/results.sqlite``, scope
    :data:`RUNS_SCOPE`, export ``root/vision_runs.csv``), rows checked by :func:`row_problem`
    (``check``: its last step)."""
    Path(root).mkdir(parents=True, exist_ok=True)
    return KeyedStore(
        Path(root) / f"{RUNS_SCOPE}.csv",
        payload_column="params",
        stale=_stale,
        check=check,
        kinds=RUN_KINDS,
        scope=RUNS_SCOPE,
        create=True,
    )


def cached_run(
    spec: RunSpec,
    data: ImageData,
    vit: ViTConfig,
    tcfg: TrainConfig,
    root: Path,
    *,
    perm_seed: int = 0,
    progress: bool | tqdm | Status | None = None,
    weights: bool = True,
) -> dict:
    """:func:`run` in :func:`cache_folder`, its summary row kept in the store of ``root``
    (:func:`open_runs`): a run with a valid row is served from it without training (with ``weights``,
    the caller needs the folder's weights, e.g. :func:`load_pos`: only while the folder holds the
    finished checkpoint); otherwise a finished folder is read back from its checkpoint, an unfinished
    one resumed, and the row committed (once per key) and exported."""
    folder = cache_folder(spec, data, vit, tcfg, root, perm_seed)
    params = run_params(spec, data, vit, tcfg, perm_seed)
    key = KeyedStore.key(params)

    def check(row: dict[str, str], p: Mapping) -> str | None:
        why = _check(row, p)
        if why is None and weights and row["key"] == key and _epoch_done(folder) < tcfg.epochs:
            why = f"missing weights: {folder / 'checkpoint.pt'} is not a finished checkpoint"
        return why

    store = open_runs(root, check)
    try:
        if (found := store.get(params)) is not None:
            return dict(_typed(found), folder=str(folder))
        finished = _epoch_done(folder) >= tcfg.epochs
        for resume in (True, False) if finished else (True,):
            r = run(
                spec,
                data,
                vit,
                tcfg,
                Path(root),
                resume=resume,
                perm_seed=perm_seed,
                folder=folder,
                maps=False,
                progress=progress,
            )
            row = store.row(params, {c: r[c] for c in SUMMARY_TYPES})
            why = store.problem({k: str(v) for k, v in row.items()})
            if why is None:
                store.append(row)
                store.export()
                break
            if resume and finished:  # the finished folder itself is bad: train the run again
                warnings.warn(
                    f"{folder}: the run read back from its checkpoint fails its checks ({why}); trained again",
                    RejectedRowsWarning,
                    stacklevel=2,
                )
        return r  # a row that would be rejected (a diverged run) is returned, not kept
    finally:
        store.close()


#: the most seeds of one configuration that :func:`cached_runs` trains together as one ensemble
#: (1: one run after another)
MAX_MEMBERS = 10


def _epoch_done(folder: Path) -> int:
    """The epochs held by ``folder``'s checkpoint once its hash is verified (0: none, or damaged and
    moved aside by :func:`~theorydyn.vision.checkpoint.load_checkpoint`, so the run is trained again)."""
    state = load_checkpoint(Path(folder) / CHECKPOINT)
    return 0 if state is None else int(state["epoch"])


def cached_runs(
    specs: Sequence[RunSpec],
    data: ImageData,
    vit: ViTConfig,
    tcfg: TrainConfig,
    root: Path,
    *,
    perm_seed: int = 0,
    progress: bool | tqdm | Status | None = None,
    max_members: int | None = None,
) -> list[dict]:
    """:func:`cached_run` of every spec, in order, with the runs still to train trained together: the
    seeds of one configuration (specs equal but for the seed) that start from the same epoch form an
    ensemble of up to ``max_members`` (default :data:`MAX_MEMBERS`) members, each member exactly the
    single run of its seed (:func:`theorydyn.vision.train.train`), written to its own cache folder."""
    cap = MAX_MEMBERS if max_members is None else max_members
    if cap < 1:
        raise ValueError(f"max_members must be >= 1, got {cap}")
    groups: dict[tuple, list[tuple[RunSpec, Path]]] = {}
    for spec in dict.fromkeys(specs):  # each run once
        folder = cache_folder(spec, data, vit, tcfg, root, perm_seed)
        done = _epoch_done(folder)
        if done < tcfg.epochs and spec.model in ENSEMBLES:
            key = (dataclasses.replace(spec, seed=0), done)
            groups.setdefault(key, []).append((spec, folder))
    for (_, done), members in groups.items():
        for i in range(0, len(members), cap):
            chunk = members[i : i + cap]
            if len(chunk) > 1:  # one alone is trained below, by cached_run
                train_together(
                    [sp for sp, _ in chunk],
                    data,
                    vit,
                    tcfg,
                    [f for _, f in chunk],
                    resume=done > 0,
                    perm_seed=perm_seed,
                    progress=progress,
                )
    return [cached_run(spec, data, vit, tcfg, root, perm_seed=perm_seed, progress=progress) for spec in specs]


def train_together(
    specs: Sequence[RunSpec],
    data: ImageData,
    vit: ViTConfig,
    tcfg: TrainConfig,
    folders: Sequence[Path],
    *,
    resume: bool,
    perm_seed: int,
    progress: bool | tqdm | Status | None = None,
) -> None:
    """Train the runs ``specs`` (one configuration, one seed each) as one ensemble, run ``k`` into
    ``folders[k]`` exactly as :func:`run` writes it; read their rows back with :func:`run` (``resume``)."""
    bases = {dataclasses.replace(sp, seed=0) for sp in specs}
    if len(bases) != 1 or len({sp.seed for sp in specs}) != len(specs):
        raise ValueError(f"train_together: the runs must share one configuration and differ in the seed, got {specs}")
    base = bases.pop()
    seeds = [sp.seed for sp in specs]
    vcfg, cfg, perm, meta = _setup(base, data, vit, tcfg, perm_seed)
    model = ensemble(base.model, seeds, channels=data.channels, classes=data.classes, vit=vcfg)
    train(
        model,
        data,
        cfg,
        list(folders),
        perm=perm,
        resume=resume,
        meta=meta,
        seeds=seeds,
        tag=f"{base.name.rsplit('-seed', 1)[0]}-seeds{','.join(map(str, seeds))}",
        progress=progress,
    )


def load_pos(folder: Path) -> torch.Tensor:
    """The learned positional encodings ``P: (D, E)`` from a run folder's checkpoint."""
    state = load_checkpoint(Path(folder) / CHECKPOINT)
    if state is None:
        raise ValueError(f"{Path(folder) / CHECKPOINT}: no valid checkpoint (missing or damaged); train the run again")
    return state["model"]["pos"]


def initial_pos(vit: ViTConfig, seed: int) -> torch.Tensor:
    """``P: (D, E)`` of the untrained ViT of ``seed`` (the initialisation :func:`run` draws)."""
    torch.manual_seed(seed)
    pos = build_model("vit", channels=vit.channels, classes=vit.classes, vit=vit).pos
    assert isinstance(pos, torch.Tensor)
    return pos.detach().clone()


def write_summary(rows: list[dict], out: Path) -> pd.DataFrame:
    """``rows`` as a DataFrame, written to ``out/summary.csv`` atomically (never through a link)."""
    df = pd.DataFrame(rows)
    write_with(out / "summary.csv", lambda t: df.to_csv(t, index=False))
    return df


_save = write_summary  # the former name (tests/test_reliability_vision.py)


@styled
def compare_figure(hists: dict[str, list[pd.DataFrame]], title: str) -> Figure:
    """Figures 6/7: test accuracy per epoch (mean ± std over seeds, with a zoom on the last half of
    training) and training loss (geometric mean, band from the smallest to the largest seed: a
    mean ± std band would cross zero on the log axis), per attention (``hists[attention]``: one
    history per seed)."""
    fig, (a1, a3, a2) = figure(1, 3, figsize=(14, 4.6), pyplot=False)
    accs = []  # per attention, (epochs, seeds): the zoom's limits come from them
    for att, hs in hists.items():
        acc = pd.concat([h.set_index("epoch").test_acc for h in hs], axis=1)
        accs.append(acc)
        loss = pd.concat([h.set_index("epoch").train_loss for h in hs], axis=1)
        label = "ViT, positional attention (Def. 3.2)" if att == "positional" else "ViT, vanilla attention"
        m, sd = acc.mean(axis=1), acc.std(axis=1).fillna(0)
        for ax in (a1, a3):
            (line,) = ax.plot(m.index, m, label=f"{label}, final {acc.iloc[-1].mean():.4f}")
            ax.fill_between(m.index, m - sd, m + sd, alpha=0.25, color=line.get_color())
        g = np.exp(np.log(loss).mean(axis=1))
        a2.plot(g.index, g, label=label, color=line.get_color())
        a2.fill_between(g.index, loss.min(axis=1), loss.max(axis=1), alpha=0.25, color=line.get_color())
    n = len(next(iter(hists.values())))
    a1.set(xlabel="epoch", ylabel="test accuracy", title=f"{title}: test accuracy ({n} seeds, mean ± std)")
    a1.set_ylim(max(0.0, a1.get_ylim()[0]), 1.0)
    half = int(a1.get_xlim()[1] // 2)
    tail = pd.concat([a.loc[half:] for a in accs], axis=1)
    low, high = float(tail.min().min()), float(tail.max().max())
    a3.set(
        xlim=(half, a1.get_xlim()[1]),
        ylim=(max(0.0, low - 0.005), min(1.0, high + 0.005)),
        xlabel="epoch",
        ylabel="test accuracy",
        title="the same, second half of training",
    )
    a2.set(
        xlabel="epoch",
        ylabel="training loss",
        yscale="log",
        title=f"{title}: training loss\n(geometric mean; band: min–max over seeds)",
    )
    legend_outside(a1, where="below", ncol=1)
    return fig


def overall_bar(progress: bool | tqdm, folders: Sequence[Path], epochs: int, desc: str, *, resume: bool = True):
    """One progress bar with an ETA over a multi-run job: it counts the member-epochs still to train
    (``epochs`` for each folder, less the epochs its checkpoint holds when ``resume``), and every
    :func:`~theorydyn.vision.train.train` of the job advances it (``progress=bar``). A context manager;
    given a bar already (a job inside a job), that bar is used as it is."""
    if not isinstance(progress, bool):
        return contextlib.nullcontext(progress)
    total = sum(max(0, epochs - (_epoch_done(f) if resume else 0)) for f in dict.fromkeys(folders))
    return progress_bar(progress and total > 0, total=total, desc=desc, unit="epoch")


def compare_specs(seeds: Sequence[int], patch: int) -> dict[str, list[RunSpec]]:
    """The runs of :func:`compare`, by attention."""
    return {att: [RunSpec("vit", att, None, seed, patch) for seed in seeds] for att in ("positional", "vanilla")}


def compare(data, vit, tcfg, out, *, seeds, resume, perm_seed, progress=True, plot_format="png") -> pd.DataFrame:
    """Figures 6/7: positional against vanilla attention, ``seeds`` seeds each (``progress``: the
    training progress lines on stderr), drawn to ``compare.<plot_format>``."""
    rows: list[dict] = []
    hists: dict[str, list[pd.DataFrame]] = {}
    by_att = compare_specs(seeds, vit.patch)
    every = [out / sp.name for specs in by_att.values() for sp in specs]
    with overall_bar(progress, every, tcfg.epochs, f"compare {data.name}", resume=resume) as bar:
        for att, specs in by_att.items():
            if len(specs) > 1:  # the seeds train together; their rows (and maps) are read back below
                folders = [out / sp.name for sp in specs]
                train_together(specs, data, vit, tcfg, folders, resume=resume, perm_seed=perm_seed, progress=bar)
            for spec in specs:
                again = resume or len(specs) > 1
                kw = dict(resume=again, perm_seed=perm_seed, progress=bar, plot_format=plot_format)
                rows.append(run(spec, data, vit, tcfg, out, **kw))
                hists.setdefault(att, []).append(read_history(out / spec.name))
    save(compare_figure(hists, data.name), out / "compare", plot_format)
    return write_summary(rows, out)


def grid_sizes(image_size: int, patch: int) -> list[int]:
    """Grid sizes s of Figure 5a: powers of two from the ViT patch size up to the image size."""
    sizes, s = [], patch
    while s <= image_size:
        if image_size % s == 0:
            sizes.append(s)
        s *= 2
    return sizes


def permuted_specs(image_size: int, models: Sequence[str], attention: str, seed: int, patch: int) -> list[RunSpec]:
    """The runs of :func:`permuted`: every grid size s (:func:`grid_sizes`) for each model."""
    return [RunSpec(m, attention, s, seed, patch) for s in grid_sizes(image_size, patch) for m in models]


def permuted(
    data, vit, tcfg, out, *, models, seed, resume, perm_seed, patch=2, progress=True, plot_format="png"
) -> pd.DataFrame:
    """Figure 5a: final test accuracy against the grid size s for the ViT and the CNNs (``progress``: the
    training progress lines on stderr), drawn to ``permuted.<plot_format>``."""
    rows = []
    sizes = grid_sizes(data.image_size, patch)
    specs = permuted_specs(data.image_size, models, vit.attention, seed, patch)
    with overall_bar(progress, [out / sp.name for sp in specs], tcfg.epochs, "permuted", resume=resume) as bar:
        for spec in specs:
            kw = dict(resume=resume, perm_seed=perm_seed, progress=bar, plot_format=plot_format)
            rows.append(run(spec, data, vit, tcfg, out, **kw))
    df = write_summary(rows, out)
    save(permuted_figure(df, models, sizes, patch, data.name), out / "permuted", plot_format)
    return df


@styled
def permuted_figure(df: pd.DataFrame, models, sizes, patch: int, name: str) -> Figure:
    """Figure 5a: the final test accuracy of each model against the grid size s of the permutation π_s."""
    fig, ax = figure(figsize=(7.0, 4.0), pyplot=False)
    names = {"vit": f"ViT (patch {patch})", "resnet18": "ResNet-18", "vgg19": "VGG-19", "cnn": "small CNN"}
    for m in models:
        d = df[df.model == m]
        ax.plot(d.grid, d.final_test_acc, "o-", label=names[m])
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set(
        xlabel="grid shuffle size s (pixels, log scale)",
        ylabel="final test accuracy",
        title=f"Permuted {name} (Figure 5a)",
    )
    legend_outside(ax)
    return fig


#: The permutation settings of the digits robustness experiment (one ledger row each): π_s with tiles
#: of one ViT patch, which the ViT sees as a pure relabelling of positions. π_1 (single pixels, a
#: patch-1 ViT on 64 one-pixel tokens) is the finest, the one that breaks every local pattern a CNN
#: relies on; π_2 (the preset's patch 2) keeps 2×2 blocks intact.
ROBUSTNESS_DIGITS = (dict(s=1, patch=1, cnn="cnn"), dict(s=2, patch=2, cnn="cnn"))
#: Seeds of those runs. With 3 seeds the ViT's drop under π_1 had the interval [−3.4, +3.6] points:
#: two runs differ by 1.4 points (sd) on 360 test images, and t_{0.975,2}/√3 = 2.5 makes that ±3.5,
#: wider than the ±2-point tolerance; 10 seeds give t_{0.975,9}/√10 = 0.72, about ±1 point.
ROBUSTNESS_SEEDS = tuple(range(10))


def robustness_specs(seeds: Sequence[int], attention: str, s: int, patch: int, cnn: str) -> list[RunSpec]:
    """The runs of :func:`robustness`: per seed, the ViT and the CNN on original and π_s-permuted images
    (the CNN ignores the ViT's patch: one spec, one cached run, whatever the patch)."""
    return [
        RunSpec(m, attention, grid, seed, patch if m == "vit" else 0)
        for seed in seeds
        for m in ("vit", cnn)
        for grid in (None, s)
    ]


def robustness(data, vit, tcfg, root, *, seeds, s, patch, cnn="cnn", perm_seed=0, progress=False) -> pd.DataFrame:
    """Figure 5a in the form that can show on small images: for each seed, the ViT (patch ``patch``)
    and the CNN ``cnn`` trained on original and on π_s-permuted images (runs cached in ``root``).

    Returns one row per (model, permuted, seed) with ``final_test_acc``; the drop of a model is
    ``acc(original) − acc(permuted)`` of the same seed.
    """
    specs = robustness_specs(seeds, vit.attention, s, patch, cnn)
    rvit = dataclasses.replace(vit, patch=patch)
    folders = [cache_folder(sp, data, rvit, tcfg, root, perm_seed) for sp in specs]
    with overall_bar(progress, folders, tcfg.epochs, f"robustness π_{s}") as bar:
        runs = cached_runs(specs, data, rvit, tcfg, root, perm_seed=perm_seed, progress=bar)
    rows = [dict(r, permuted=spec.s is not None, s=s) for spec, r in zip(specs, runs, strict=True)]
    df = pd.DataFrame(rows)
    write_with(Path(root) / f"robustness-s{s}-p{patch}.csv", lambda t: df.to_csv(t, index=False))
    return df


def robustness_drops(df: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per model, the per-seed accuracy drop ``acc(original) − acc(permuted)`` (seeds in order)."""
    out = {}
    for m, d in df.groupby("model", sort=False):
        p = d.pivot_table(index="seed", columns="permuted", values="final_test_acc")
        out[m] = (p[False] - p[True]).to_numpy()
    return out


MODEL_NAMES = {"vit": "ViT", "cnn": "small CNN", "resnet18": "ResNet-18", "vgg19": "VGG-19"}


@styled
def robustness_figure(df: pd.DataFrame, title: str, ax=None) -> Figure:
    """Test accuracy on original and π_s-permuted images per model (``df``: the rows of
    :func:`~theorydyn.vision.experiments.robustness`, columns model, permuted, s, seed,
    final_test_acc): each seed as a dot, the mean with its 95% Student-t interval over seeds, and the
    drop (permuted − original, mean and 95% interval of the paired differences) written per model.

    A dot plot, not bars: the accuracies lie within a few points of 1, so bars from 0 would hide the
    differences and bars from 0.93 would misstate the ratios. The y axis does not start at 0, and
    its label says so. Drawn into ``ax`` if given (returns its figure), else into a new figure."""
    if ax is None:
        fig, ax = figure(figsize=(6, 4.6), pyplot=False)
    models = list(dict.fromkeys(df.model))
    for j, perm in enumerate((False, True)):
        d = df[df.permuted == perm]
        for k, m in enumerate(models):
            v = d[d.model == m].sort_values("seed").final_test_acc.to_numpy(float)
            x = k + (j - 0.5) * 0.3
            ax.plot(x + np.linspace(-0.04, 0.04, len(v)), v, ".", color=PALETTE[j], ms=4, alpha=0.6)
            mean, lo, hi = mean_ci(v)
            yerr = None if not np.isfinite(lo) else [[mean - lo], [hi - mean]]
            label = None if k else ("original images" if not perm else f"permuted, π_s with s = {int(df.s.iloc[0])}")
            ax.errorbar([x + 0.09], [mean], yerr=yerr, fmt="o", color=PALETTE[j], capsize=3, ms=6, label=label)
    for k, m in enumerate(models):
        a = df[(df.model == m) & ~df.permuted].set_index("seed").final_test_acc
        b = df[(df.model == m) & df.permuted].set_index("seed").final_test_acc
        diff = (b - a).dropna().to_numpy(float)
        if diff.size:
            mean, lo, hi = mean_ci(diff)
            ci = f" [{lo:+.3f}, {hi:+.3f}]" if np.isfinite(lo) else ""
            ax.text(
                k,
                0.02,
                f"permuted − original:\n{mean:+.3f}{ci}",  # two lines: one line overruns the next model's
                transform=ax.get_xaxis_transform(),
                ha="center",
                fontsize=7,
            )
    ax.set_xticks(np.arange(len(models)), [MODEL_NAMES.get(m, m) for m in models])
    ax.set_xlim(-0.6, len(models) - 0.4)
    lo_y = float(df.final_test_acc.min())
    ax.set_ylim(lo_y - 0.8 * (1.0 - lo_y), 1.0 + 0.05 * (1.0 - lo_y))  # room for the two-line drops
    ax.set_ylabel(f"final test accuracy (axis from {ax.get_ylim()[0]:.3f}, not 0)\nmean ± 95% CI; dots: seeds")
    ax.set_title(textwrap.fill(title, 60))
    legend_outside(ax, where="below")
    return ax.figure


def demo(
    data,
    vit,
    tcfg,
    out,
    *,
    seed,
    resume,
    perm_seed,
    attentions=("positional", "vanilla"),
    progress=True,
    plot_format="png",
) -> pd.DataFrame:
    """The digits default: the ViT with each of ``attentions``, one seed (``progress``: the training
    progress lines on stderr; ``plot_format``: the similarity maps' file format)."""
    specs = demo_specs(attentions, seed, vit.patch)
    kw = dict(resume=resume, perm_seed=perm_seed, plot_format=plot_format)
    with overall_bar(progress, [out / sp.name for sp in specs], tcfg.epochs, "demo", resume=resume) as bar:
        rows = [run(sp, data, vit, tcfg, out, **kw, progress=bar) for sp in specs]
    return write_summary(rows, out)


def demo_specs(attentions: Sequence[str], seed: int, patch: int) -> list[RunSpec]:
    """The runs of :func:`demo`: the ViT with each attention, one seed."""
    return [RunSpec("vit", att, None, seed, patch) for att in attentions]


#: the files each experiment writes beside its run folders (``summary.csv`` for all)
EXPERIMENT_FILES = {
    "single": ("summary.csv",),
    "compare": ("summary.csv", *(f"compare.{f}" for f in FORMATS)),
    "permuted": ("summary.csv", *(f"permuted.{f}" for f in FORMATS)),
    "robustness": ("summary.csv", *(f"robustness.{f}" for f in FORMATS)),
    "demo": ("summary.csv",),
}
