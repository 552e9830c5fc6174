"""CIFAR-10/100 and SVHN readers on small archives in the official formats, written here; checksum
checked before anything is unpickled; the digits split; clear errors for missing files."""

import io
import pickle
import tarfile

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from scipy.io import savemat  # noqa: E402

from theorydyn.vision import data as vdata  # noqa: E402
from theorydyn.vision.data import DataError, load, md5sum, read_cifar, read_digits, read_svhn  # noqa: E402


def _member(tar, name, obj):
    raw = pickle.dumps(obj, protocol=2)
    info = tarfile.TarInfo(name)
    info.size = len(raw)
    tar.addfile(info, io.BytesIO(raw))


def write_cifar(path, name, n_train=(6, 5, 4, 3, 2), n_test=7, seed=0):
    """A tar.gz with the official member names and dict keys; returns the images and labels written."""
    rng = np.random.default_rng(seed)
    classes = 10 if name == "cifar10" else 100
    parts = {}
    with tarfile.open(path, "w:gz") as tar:
        if name == "cifar10":
            splits = [(f"cifar-10-batches-py/data_batch_{i + 1}", n, "train") for i, n in enumerate(n_train)]
            splits.append(("cifar-10-batches-py/test_batch", n_test, "test"))
            _member(tar, "cifar-10-batches-py/batches.meta", {b"label_names": [b"c%d" % i for i in range(10)]})
        else:
            splits = [("cifar-100-python/train", sum(n_train), "train"), ("cifar-100-python/test", n_test, "test")]
            _member(tar, "cifar-100-python/meta", {b"fine_label_names": [b"f%d" % i for i in range(100)]})
        for member, n, split in splits:
            x = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
            y = rng.integers(0, classes, n).tolist()
            d = {b"batch_label": b"x", b"data": x, b"filenames": [b"f.png"] * n}
            if name == "cifar10":
                d[b"labels"] = y
            else:
                d[b"fine_labels"], d[b"coarse_labels"] = y, [v // 5 for v in y]
            _member(tar, member, d)
            xs, ys = parts.setdefault(split, ([], []))
            xs.append(x)
            ys += y
    return {k: (np.concatenate(v[0]), np.array(v[1])) for k, v in parts.items()}


@pytest.mark.parametrize("name", ["cifar10", "cifar100"])
def test_cifar_reader_on_an_official_format_archive(tmp_path, name):
    path = tmp_path / vdata.CIFAR[name]["archive"]
    truth = write_cifar(path, name)
    xtr, ytr, xte, yte = read_cifar(path, name, md5=md5sum(path))
    assert xtr.shape == (20, 3, 32, 32) and xte.shape == (7, 3, 32, 32) and xtr.dtype == np.uint8
    # rows are 1024 red, 1024 green, 1024 blue bytes, each row-major 32×32
    assert np.array_equal(xtr[3, 1, 2, 5], truth["train"][0][3, 1024 + 2 * 32 + 5])
    assert np.array_equal(xtr.reshape(20, -1), truth["train"][0])
    assert np.array_equal(ytr, truth["train"][1]) and np.array_equal(yte, truth["test"][1])


def test_load_puts_uint8_tensors_on_the_device(tmp_path, monkeypatch):
    path = tmp_path / "cifar-10-python.tar.gz"
    truth = write_cifar(path, "cifar10")
    monkeypatch.setitem(vdata.CIFAR["cifar10"], "md5", md5sum(path))
    d = load("cifar10", tmp_path, device="cpu", download=False)
    assert d.x_train.dtype == torch.uint8 and d.x_train.shape == (20, 3, 32, 32)
    assert d.y_test.dtype == torch.int64 and d.y_test.tolist() == truth["test"][1].tolist()
    assert (d.classes, d.image_size, d.channels, d.flip, d.pad) == (10, 32, 3, True, 4)
    z = d.normalize(d.x_train[:2])
    assert z.dtype == torch.float32
    assert torch.allclose(z[0, 2], (d.x_train[0, 2].float() / 255 - d.mean[2]) / d.std[2])


def test_checksum_mismatch_stops_before_anything_is_unpickled(tmp_path, monkeypatch):
    path = tmp_path / "cifar-10-python.tar.gz"
    write_cifar(path, "cifar10")

    def forbidden(*a, **k):
        raise AssertionError("opened or unpickled before the checksum was checked")

    monkeypatch.setattr(vdata.pickle, "load", forbidden)
    monkeypatch.setattr(vdata.tarfile, "open", forbidden)
    with pytest.raises(DataError, match="checksum mismatch.*expected 0{32}"):
        read_cifar(path, "cifar10", md5="0" * 32)
    # the official checksum (default) does not match a self-made archive either
    with pytest.raises(DataError, match="c58f30108f718f92721af3b95e74349a"):
        read_cifar(path, "cifar10")
    with pytest.raises(DataError, match="cifar-10-python.tar.gz"):
        load("cifar10", tmp_path, download=False)


def write_svhn(folder, n_train=9, n_test=5, seed=1):
    rng = np.random.default_rng(seed)
    out = {}
    for split, n in (("train", n_train), ("test", n_test)):
        X = rng.integers(0, 256, (32, 32, 3, n), dtype=np.uint8)
        y = rng.integers(1, 11, (n, 1)).astype(np.uint8)  # 1…10, 10 meaning the digit 0
        y[0, 0] = 10
        savemat(folder / f"{split}_32x32.mat", {"X": X, "y": y})
        out[split] = (X, y)
    return out


def test_svhn_reader_on_official_format_mat_files(tmp_path):
    truth = write_svhn(tmp_path)
    tr, te = tmp_path / "train_32x32.mat", tmp_path / "test_32x32.mat"
    xtr, ytr, xte, yte = read_svhn(tr, te, md5={"train": md5sum(tr), "test": md5sum(te)})
    X, y = truth["train"]
    assert xtr.shape == (9, 3, 32, 32) and xte.shape == (5, 3, 32, 32)
    assert np.array_equal(xtr[4].transpose(1, 2, 0), X[:, :, :, 4])  # (H, W, C, N) → (N, C, H, W)
    assert ytr[0] == 0 and np.array_equal(ytr, y[:, 0] % 10) and ytr.max() <= 9


def test_svhn_checksum_mismatch_and_missing_files(tmp_path, monkeypatch):
    write_svhn(tmp_path)
    monkeypatch.setattr("scipy.io.loadmat", lambda *a, **k: pytest.fail("read before the checksum"))
    tr, te = tmp_path / "train_32x32.mat", tmp_path / "test_32x32.mat"
    with pytest.raises(DataError, match="checksum mismatch"):
        read_svhn(tr, te, md5={"train": "1" * 32, "test": md5sum(te)})
    (tmp_path / "test_32x32.mat").unlink()
    with pytest.raises(DataError) as e:
        load("svhn", tmp_path, download=False)
    msg = str(e.value)
    assert "train_32x32.mat" in msg and "test_32x32.mat" in msg and str(tmp_path.resolve()) in msg


def test_download_failure_is_a_data_error_naming_the_file(tmp_path, monkeypatch):
    def offline(*a, **k):
        raise OSError("network is unreachable")

    monkeypatch.setattr(vdata.urllib.request, "urlopen", offline)
    with pytest.raises(DataError, match=r"could not download .*cifar-100-python.tar.gz.*network is unreachable"):
        load("cifar100", tmp_path, download=True)
    assert list(tmp_path.iterdir()) == []  # no partial file left behind


def test_digits_split_is_stratified_and_scaled():
    xtr, ytr, xte, yte = read_digits()
    assert xtr.shape == (1437, 1, 8, 8) and xte.shape == (360, 1, 8, 8) and xtr.dtype == np.uint8
    assert xtr.max() == 255 and xtr.min() == 0
    full = np.bincount(np.concatenate([ytr, yte]))
    assert np.all(np.abs(np.bincount(yte) - full * 0.2) <= 1)  # stratified: a fifth of every class
    d = load("digits")
    assert (d.classes, d.image_size, d.channels, d.flip, d.pad) == (10, 8, 1, False, 1)
    assert np.isclose(float(d.x_train.float().mean() / 255), d.mean[0], atol=1e-3)
    assert np.isclose(float((d.x_train.float() / 255).std()), d.std[0], atol=1e-3)


def test_unknown_dataset_and_non_directory():
    with pytest.raises(DataError, match="dataset must be one of"):
        load("mnist")
    with pytest.raises(DataError, match="not a directory"):
        load("cifar10", __file__)


def test_synthetic_images_are_seeded_and_labelled_by_their_bright_band():
    from theorydyn.vision.data import synthetic

    a = synthetic(40, 10, seed=3)
    b = synthetic(40, 10, seed=3)
    assert torch.equal(a.x_train, b.x_train) and a.x_train.shape == (40, 3, 32, 32) and a.x_train.dtype == torch.uint8
    band = torch.arange(32) * 10 // 32
    means = torch.stack([a.x_train[:, :, band == k].float().mean((1, 2, 3)) for k in range(10)], 1)
    assert torch.equal(means.argmax(1), a.y_train)
    with pytest.raises(ValueError, match="image_size"):
        synthetic(4, 4, image_size=8, classes=10)
