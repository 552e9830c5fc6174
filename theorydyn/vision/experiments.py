"""The experiments of Section 6, each a set of training runs plus its picture.

* ``single``: one network (``--model``, ``--attention``, ``--shuffle-grid``).
* ``compare`` (Figures 6/7): ViT with positional against vanilla attention over several seeds;
  ``compare.png`` shows the test accuracy per epoch (mean ± std over seeds) and the training loss.
* ``permuted`` (Figure 5a): grid sizes s, ViT (patch 2) against ResNet-18 and VGG-19 (the small
  CNN on digits); ``permuted.png`` shows the final test accuracy against s, and the ViT's
  similarity maps before/after π_s⁻¹ are written for every s (Figure 5c).
* ``demo`` (the digits default): positional and vanilla ViT, then the permuted variant (the
  smallest grid size) of the ViT against the small CNN; a table on stdout.

Every run lives in its own folder ``out/<model>-<attention>-s<S>-seed<k>`` (history.csv,
checkpoint.pt, run.json, maps); ``out/summary.csv`` lists the final numbers.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from .data import ImageData  # noqa: E402
from .grid import grid_permutation  # noqa: E402
from .maps import plot_maps  # noqa: E402
from .model import ViTConfig, build_model  # noqa: E402
from .train import TrainConfig, train  # noqa: E402


#: Network size and schedule per dataset kind, shared by the CLI and the figures.
PRESETS = {
    # 8×8 digits, no upsampling: 16 patches of 2×2 pixels (measured, seed 0: positional 96.4%, vanilla 96.2%)
    "digits": dict(width=128, depth=2, heads=4, mlp=256, patch=2, epochs=60, batch_size=64, lr=2e-3, warmup=3.0),
    # 32×32 images: the paper's small ViT (SPEC §8) and its 300 epochs at batch 128
    "cifar": dict(width=384, depth=7, heads=12, mlp=384, patch=4, epochs=300, batch_size=128, lr=1e-3, warmup=5.0),
}


def preset_configs(data: ImageData, attention: str = "positional", seed: int = 0,
                   **overrides) -> tuple[ViTConfig, TrainConfig]:
    """The ViT and training configuration of :data:`PRESETS` for ``data`` (digits or 32×32 images);
    ``overrides`` replace preset entries (e.g. ``epochs=15``)."""
    d = {**PRESETS["digits" if data.name == "digits" else "cifar"], **overrides}
    vit = ViTConfig(image_size=data.image_size, patch=d["patch"], channels=data.channels, classes=data.classes,
                    width=d["width"], depth=d["depth"], heads=d["heads"], mlp=d["mlp"], attention=attention)
    tcfg = TrainConfig(epochs=d["epochs"], batch_size=d["batch_size"], lr=d["lr"], warmup_epochs=d["warmup"],
                       seed=seed)
    return vit, tcfg


@dataclasses.dataclass(frozen=True)
class RunSpec:
    model: str
    attention: str
    s: int | None  # tile side of π_s, None for unpermuted images
    seed: int
    patch: int

    @property
    def name(self) -> str:
        att = self.attention if self.model == "vit" else "na"
        return f"{self.model}-{att}-s{self.s or 0}-seed{self.seed}"


def run(spec: RunSpec, data: ImageData, vit: ViTConfig, tcfg: TrainConfig, out: Path, *,
        resume: bool, perm_seed: int) -> dict:
    """Train one network; return its summary row (final and best test accuracy, speed)."""
    s = spec.s if spec.s is not None and spec.s < data.image_size else None
    perm = grid_permutation(data.image_size, s, perm_seed) if s else None
    torch.manual_seed(spec.seed)  # initialisation
    vcfg = dataclasses.replace(vit, attention=spec.attention, patch=spec.patch)
    model = build_model(spec.model, channels=data.channels, classes=data.classes, vit=vcfg)
    cfg = dataclasses.replace(tcfg, seed=spec.seed, shuffle_grid=s)
    meta = dict(dataset=data.name, model=spec.model, perm_seed=perm_seed,
                vit=vcfg.to_dict() if spec.model == "vit" else None)
    folder = out / spec.name
    hist = train(model, data, cfg, folder, perm=perm, resume=resume, meta=meta, tag=spec.name)
    if spec.model == "vit":
        where = f"{data.name}, {spec.attention} attention, patch {spec.patch}"
        if perm is None:
            plot_maps(model.pos, folder / "pos_similarity.png", f"Figure 1a: positional-encoding similarity ({where})")
        else:
            plot_maps(model.pos, folder / "pos_similarity.png", f"Figure 5c: grid size s={s} ({where})",
                      perm=perm, s=s, patch=spec.patch)
    last = hist.iloc[-1]
    return dict(run=spec.name, model=spec.model, attention=spec.attention if spec.model == "vit" else "",
                grid=spec.s or data.image_size, seed=spec.seed, epochs=int(last.epoch),
                final_test_acc=float(last.test_acc), best_test_acc=float(hist.test_acc.max()),
                final_train_loss=float(last.train_loss), images_per_s=float(hist.images_per_s.median()))


def _save(rows: list[dict], out: Path) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    df.to_csv(out / "summary.csv", index=False)
    return df


def compare(data, vit, tcfg, out, *, seeds, resume, perm_seed) -> pd.DataFrame:
    """Figures 6/7: positional against vanilla attention, ``seeds`` seeds each."""
    rows, hists = [], {}
    for att in ("positional", "vanilla"):
        for seed in seeds:
            spec = RunSpec("vit", att, None, seed, vit.patch)
            rows.append(run(spec, data, vit, tcfg, out, resume=resume, perm_seed=perm_seed))
            hists.setdefault(att, []).append(pd.read_csv(out / spec.name / "history.csv"))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for att, hs in hists.items():
        acc = pd.concat([h.set_index("epoch").test_acc for h in hs], axis=1)
        loss = pd.concat([h.set_index("epoch").train_loss for h in hs], axis=1)
        label = "ViT, positional attention (Ours)" if att == "positional" else "ViT, vanilla attention"
        for ax, v in ((a1, acc), (a2, loss)):
            m, sd = v.mean(axis=1), v.std(axis=1).fillna(0)
            ax.plot(m.index, m, label=label)
            ax.fill_between(m.index, m - sd, m + sd, alpha=0.25)
    a1.set(xlabel="epoch", ylabel="test accuracy", title=f"{data.name}: test accuracy ({len(seeds)} seeds)")
    a2.set(xlabel="epoch", ylabel="training loss", title=f"{data.name}: training loss")
    a1.legend()
    fig.tight_layout()
    fig.savefig(out / "compare.png", dpi=120)
    plt.close(fig)
    return _save(rows, out)


def grid_sizes(image_size: int, patch: int) -> list[int]:
    """Grid sizes s of Figure 5a: powers of two from the ViT patch size up to the image size."""
    sizes, s = [], patch
    while s <= image_size:
        if image_size % s == 0:
            sizes.append(s)
        s *= 2
    return sizes


def permuted(data, vit, tcfg, out, *, models, seed, resume, perm_seed, patch=2) -> pd.DataFrame:
    """Figure 5a: final test accuracy against the grid size s for the ViT and the CNNs."""
    rows = []
    sizes = grid_sizes(data.image_size, patch)
    for s in sizes:
        for m in models:
            spec = RunSpec(m, vit.attention, s, seed, patch)
            rows.append(run(spec, data, vit, tcfg, out, resume=resume, perm_seed=perm_seed))
    df = _save(rows, out)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    names = {"vit": f"ViT (patch {patch})", "resnet18": "ResNet-18", "vgg19": "VGG-19", "cnn": "small CNN"}
    for m in models:
        d = df[df.model == m]
        ax.plot(d.grid, d.final_test_acc, "o-", label=names[m])
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [str(s) for s in sizes])
    ax.set(xlabel="grid shuffle size s", ylabel="test accuracy", title=f"Permuted {data.name} (Figure 5a)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "permuted.png", dpi=120)
    plt.close(fig)
    return df


def demo(data, vit, tcfg, out, *, seed, resume, perm_seed, s, cnn="cnn") -> pd.DataFrame:
    """Positional and vanilla ViT, then ViT against a CNN on images permuted with π_s."""
    specs = [RunSpec("vit", "positional", None, seed, vit.patch), RunSpec("vit", "vanilla", None, seed, vit.patch),
             RunSpec("vit", "positional", s, seed, vit.patch), RunSpec(cnn, "positional", s, seed, vit.patch)]
    return _save([run(sp, data, vit, tcfg, out, resume=resume, perm_seed=perm_seed) for sp in specs], out)
