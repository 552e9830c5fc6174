"""Image datasets as uint8 tensors ``(N, c, n, n)`` on the device, with int64 labels ``(N,)``.

* ``cifar10`` / ``cifar100``: the official python archives ``cifar-10-python.tar.gz`` and
  ``cifar-100-python.tar.gz`` (tar.gz of pickled dicts; rows of 3072 bytes, channel-major).
* ``svhn``: the official ``train_32x32.mat`` / ``test_32x32.mat`` (``X: (32, 32, 3, N)``,
  ``y: (N, 1)`` with label 10 for the digit 0).
* ``digits``: scikit-learn's bundled 8×8 handwritten digits (values 0…16, scaled to 0…255);
  no download; a fixed stratified 80/20 split of 1437 train / 360 test images.

Every archive's md5 is checked *before* it is opened, so a corrupted or substituted file is
never unpickled. Missing files are downloaded when the network allows; otherwise
:class:`DataError` names the files expected and the directory (the CLI turns it into exit 2).
"""

from __future__ import annotations

import hashlib
import io
import pickle
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from scipy.io import loadmat

from ..infra.atomic import atomic_path
from ..infra.paths import data_dir as default_data_dir

DATASETS = ("digits", "cifar10", "cifar100", "svhn")

CIFAR: dict[str, dict[str, Any]] = {
    "cifar10": dict(
        archive="cifar-10-python.tar.gz",
        url="https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz",
        md5="c58f30108f718f92721af3b95e74349a",
        train=[f"cifar-10-batches-py/data_batch_{i}" for i in range(1, 6)],
        test=["cifar-10-batches-py/test_batch"],
        label_key=b"labels",
        classes=10,
    ),
    "cifar100": dict(
        archive="cifar-100-python.tar.gz",
        url="https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz",
        md5="eb9058c3a382ffc7106e4002c42a8d85",
        train=["cifar-100-python/train"],
        test=["cifar-100-python/test"],
        label_key=b"fine_labels",
        classes=100,
    ),
}
SVHN = {
    "train": (
        "train_32x32.mat",
        "http://ufldl.stanford.edu/housenumbers/train_32x32.mat",
        "e26dedcc434d2e4c54c9b2d4a06d8373",
    ),
    "test": (
        "test_32x32.mat",
        "http://ufldl.stanford.edu/housenumbers/test_32x32.mat",
        "eb5a983be6a315427106f1b164d9cef3",
    ),
}

# Per-channel mean/std of the training pixels in [0, 1] (standard values), for normalisation.
STATS = {
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
    "svhn": ((0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970)),
    "digits": ((0.3053,), (0.3758,)),
}


class DataError(Exception):
    """A dataset that cannot be read: the message says which file, where, and what is wrong."""


@dataclass
class ImageData:
    """A train/test split of images ``x_*: (N, c, n, n)`` uint8 and labels ``y_*: (N,)`` int64."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor
    classes: int
    mean: tuple
    std: tuple
    flip: bool  # horizontal flip is label-preserving (not for digits or house numbers)
    pad: int  # crop padding of the augmentation

    @property
    def image_size(self) -> int:
        return self.x_train.shape[-1]

    @property
    def channels(self) -> int:
        return self.x_train.shape[1]

    def to(self, device) -> ImageData:
        """Move the four tensors to ``device``: host → GPU copies go through pinned memory and
        ``non_blocking`` (page-locked staging lets the copy overlap; one sync at the end)."""
        device = torch.device(device)
        fast = device.type == "cuda"
        for k in ("x_train", "y_train", "x_test", "y_test"):
            t = getattr(self, k)
            if fast and t.device.type == "cpu":
                t = t.pin_memory()
            setattr(self, k, t.to(device, non_blocking=fast))
        if fast:
            torch.cuda.synchronize(device)
        return self

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """uint8 ``(B, c, n, n)`` → float32 ``(x/255 − mean)/std`` per channel."""
        m = torch.tensor(self.mean, device=x.device).view(1, -1, 1, 1)
        s = torch.tensor(self.std, device=x.device).view(1, -1, 1, 1)
        return (x.float() / 255.0 - m) / s


def md5sum(path: Path) -> str:
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_md5(path: Path, expected: str) -> None:
    """Raise :class:`DataError` unless ``md5(path) == expected`` (called before opening ``path``)."""
    if not path.is_file():  # a folder, a FIFO or /dev/zero named like the archive: md5sum would fail or never end
        raise DataError(f"{path} is not a regular file (a folder, a pipe or a device); put the archive itself there")
    got = md5sum(path)
    if got != expected:
        raise DataError(
            f"checksum mismatch for {path}: md5 {got}, expected {expected}; the file is corrupted or not the "
            f"official one; delete it and download it again (nothing was read from it)"
        )


def fetch(path: Path, url: str, md5: str, download: bool) -> Path:
    """Make sure ``path`` exists with the right md5, downloading ``url`` if allowed and needed."""
    if not path.exists() and not path.is_symlink() and download:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:  # the one atomic writer: a fresh temporary (never a link), renamed into place when whole
            with atomic_path(path) as tmp, urllib.request.urlopen(url, timeout=20) as r, open(tmp, "xb") as f:
                while chunk := r.read(1 << 20):
                    f.write(chunk)
        except OSError as e:  # URLError, timeouts, DNS failure: all OSError
            raise DataError(f"could not download {url} ({e}); place {path.name} in {path.parent} by hand") from None
    if not path.exists():
        raise DataError(f"missing {path.name} in {path.parent}; download it from {url}")
    verify_md5(path, md5)
    return path


def _expected_files(name: str) -> list[str]:
    return [CIFAR[name]["archive"]] if name in CIFAR else [v[0] for v in SVHN.values()]


def read_cifar(path: Path, name: str, md5: str | None = None):
    """Read an official CIFAR python archive after checking its md5 (default: the official one).

    Returns ``(x_train, y_train, x_test, y_test)`` as numpy uint8 ``(N, 3, 32, 32)`` / int64 ``(N,)``.
    """
    spec = CIFAR[name]
    verify_md5(path, spec["md5"] if md5 is None else md5)
    out = []
    with tarfile.open(path, "r:gz") as tar:
        for members in (spec["train"], spec["test"]):
            xs, ys = [], []
            for m in members:
                try:
                    f = tar.extractfile(m)
                except KeyError:
                    raise DataError(f"{path} has no member {m}: not an official {name} archive") from None
                if f is None:
                    raise DataError(f"{path}: member {m} is not a file: not an official {name} archive")
                d = pickle.load(io.BytesIO(f.read()), encoding="bytes")
                xs.append(np.asarray(d[b"data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
                ys.append(np.asarray(d[spec["label_key"]], dtype=np.int64))
            out += [np.concatenate(xs), np.concatenate(ys)]
    return tuple(out)


def read_svhn(train_path: Path, test_path: Path, md5: dict | None = None):
    """Read the official SVHN .mat files after checking their md5 (``md5={'train':…, 'test':…}``).

    ``X: (32, 32, 3, N)`` becomes ``(N, 3, 32, 32)``; the label 10 (digit 0) becomes 0.
    """
    out = []
    for split, path in (("train", train_path), ("test", test_path)):
        verify_md5(path, (md5 or {}).get(split, SVHN[split][2]))
        m = loadmat(path)
        x = np.ascontiguousarray(np.asarray(m["X"], dtype=np.uint8).transpose(3, 2, 0, 1))
        y = np.asarray(m["y"], dtype=np.int64).reshape(-1) % 10
        out += [x, y]
    return tuple(out)


def read_digits(test_fraction: float = 0.2, seed: int = 0):
    """scikit-learn's 8×8 digits as uint8 ``(N, 1, 8, 8)`` (values ·255/16), split stratified by ``seed``."""
    # scikit-learn (the vision extra) serves only the bundled digits: imported when they are read
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    x = np.round(d.images * (255.0 / 16.0)).astype(np.uint8)[:, None]
    y = d.target.astype(np.int64)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_fraction, random_state=seed, stratify=y)
    return xtr, ytr, xte, yte


def synthetic(
    n_train: int, n_test: int, image_size: int = 32, channels: int = 3, classes: int = 10, seed: int = 0, device="cpu"
) -> ImageData:
    """Random uint8 images ``(N, channels, n, n)`` whose label is the brightest of ``classes``
    horizontal bands (learnable, so a working training step lowers the loss); for the benchmark."""
    if min(n_train, n_test, image_size, channels, classes) < 1 or image_size < classes:
        raise ValueError(
            f"synthetic: sizes must be >= 1 and image_size >= classes, got n_train={n_train}, "
            f"n_test={n_test}, image_size={image_size}, channels={channels}, classes={classes}"
        )
    g = torch.Generator().manual_seed(seed)
    n = n_train + n_test
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randint(0, 160, (n, channels, image_size, image_size), generator=g, dtype=torch.uint8)
    band = torch.arange(image_size) * classes // image_size  # (n,) band of each row
    x = torch.where((band[None, :] == y[:, None])[:, None, :, None], x + 80, x)
    return ImageData(
        "synthetic",
        x[:n_train],
        y[:n_train],
        x[n_train:],
        y[n_train:],
        classes=classes,
        mean=(0.5,) * channels,
        std=(0.25,) * channels,
        flip=False,
        pad=0,
    ).to(device)


def default_device() -> str:
    """``"cuda"`` where a CUDA device is present, else ``"cpu"``: the device every vision entry point
    trains on unless told otherwise (``--device``)."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def load(name: str, data_dir: str | Path | None = None, device="cpu", download: bool = True) -> ImageData:
    """The dataset ``name`` (one of :data:`DATASETS`) on ``device``; raises :class:`DataError`."""
    if name not in DATASETS:
        raise DataError(f"dataset must be one of {DATASETS}, got {name!r}")
    if name == "digits":
        arrays = read_digits()
    else:
        root = Path(data_dir if data_dir is not None else default_data_dir()).expanduser()
        if root.exists() and not root.is_dir():
            raise DataError(f"--data-dir {root} is not a directory")
        try:
            if name in CIFAR:
                spec = CIFAR[name]
                arrays = read_cifar(fetch(root / spec["archive"], spec["url"], spec["md5"], download), name)
            else:
                paths = [fetch(root / f, url, md5, download) for f, url, md5 in SVHN.values()]
                arrays = read_svhn(paths[0], paths[1])
        except DataError as e:
            raise DataError(f"{e}\n  {name} expects {', '.join(_expected_files(name))} in {root.resolve()}") from None
    xtr, ytr, xte, yte = (torch.from_numpy(a) for a in arrays)
    mean, std = STATS[name]
    return ImageData(
        name,
        xtr,
        ytr,
        xte,
        yte,
        classes=CIFAR[name]["classes"] if name in CIFAR else 10,
        mean=mean,
        std=std,
        flip=name.startswith("cifar"),
        pad=1 if name == "digits" else 4,
    ).to(device)
