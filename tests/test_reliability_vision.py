"""Vision to the store's standard (issue 33, items 1, 2 and 6): checksummed checkpoints, atomic
writes that refuse links, torn histories recomputed, a full disk that leaves no temporary.

Tiny networks (tests/vision_tiny.py) on a slice of the digits: each test takes seconds.
"""

from __future__ import annotations

import errno
import os
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from conftest import link_to_precious  # noqa: E402
from vision_tiny import single, small_digits  # noqa: E402

from theorydyn.vision import checkpoint as tr  # noqa: E402  (the module that writes the checkpoints)
from theorydyn.vision.checkpoint import CheckpointWarning, load_checkpoint, read_history, save_checkpoint  # noqa: E402
from theorydyn.vision.train import TrainConfig, train  # noqa: E402

torch.set_num_threads(1)
CFG = TrainConfig(epochs=3, batch_size=64, lr=2e-3, warmup_epochs=1, seed=1)


@pytest.fixture(scope="module")
def data():
    return small_digits()


def _train(data, out, **kw):
    return train(single("vit", CFG.seed), data, CFG, out, progress=False, **kw)


def _state(out: Path) -> dict:
    st = load_checkpoint(out / "checkpoint.pt")
    assert st is not None
    return st


def _same_weights(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        worst = (a[k].double() - b[k].double()).abs().max().item()
        assert torch.equal(a[k], b[k]), f"{k}: differs by up to {worst:.3g}"


NUMBERS = ["epoch", "train_loss", "test_acc", "lr"]  # the timing columns differ from run to run


def _same_history(a, b) -> None:
    assert a[NUMBERS].equals(b[NUMBERS]), f"histories differ:\n{a[NUMBERS]}\n{b[NUMBERS]}"


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp" in p.name)


@pytest.fixture(scope="module")
def reference(data, tmp_path_factory):
    """An uninterrupted run: its history and final weights."""
    out = tmp_path_factory.mktemp("ref")
    hist = _train(data, out)
    return hist, _state(out)["model"], out


def test_the_checkpoint_records_its_sha256_and_a_clean_resume_matches(data, tmp_path, reference):
    out = tmp_path / "run"
    _train(data, out, stop_after=2)
    side = out / "checkpoint.pt.sha256"
    import hashlib

    assert side.read_text().split() == [hashlib.sha256((out / "checkpoint.pt").read_bytes()).hexdigest()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)  # an intact checkpoint: no warning
        hist = _train(data, out, resume=True)
    _same_history(hist, reference[0])
    _same_weights(_state(out)["model"], reference[1])
    assert _temporaries(out) == []


def test_zeroed_weights_in_the_checkpoint_are_detected_moved_aside_and_retrained(data, tmp_path, reference):
    """Issue 33 item 1: 256 weights zeroed inside checkpoint.pt after 2 of 3 epochs; --resume used to
    continue from them silently."""
    out = tmp_path / "run"
    _train(data, out, stop_after=2)
    ckpt = out / "checkpoint.pt"
    st = torch.load(ckpt, weights_only=True)
    name = next(k for k, v in st["model"].items() if v.numel() >= 256)
    st["model"][name].view(-1)[:256] = 0.0
    torch.save(st, ckpt)  # written behind the toolkit's back: the recorded hash is the old one
    with pytest.warns(CheckpointWarning, match="sha256 does not match"):
        hist = _train(data, out, resume=True)
    aside = [p.name for p in out.iterdir() if p.name.startswith("checkpoint.pt.damaged-")]
    assert len(aside) == 1
    # trained again from scratch: bit for bit the uninterrupted run (CPU)
    _same_history(hist, reference[0])
    _same_weights(_state(out)["model"], reference[1])


def test_a_garbled_or_truncated_checkpoint_is_moved_aside(data, tmp_path):
    out = tmp_path / "run"
    _train(data, out, stop_after=1)
    ckpt = out / "checkpoint.pt"
    ckpt.write_bytes(ckpt.read_bytes()[: ckpt.stat().st_size // 2])
    with pytest.warns(CheckpointWarning, match="damaged"):
        assert load_checkpoint(ckpt) is None
    assert not ckpt.exists()
    # a checkpoint without a record (an older toolkit's) that loads is accepted and recorded
    st = {"model": {}, "opt": {}, "history": [], "epoch": 0, "record": {}}
    save_checkpoint(ckpt, st)
    (out / "checkpoint.pt.sha256").unlink()
    assert load_checkpoint(ckpt) is not None
    assert (out / "checkpoint.pt.sha256").is_file()


def test_a_link_planted_at_history_csv_is_refused_and_its_target_kept(data, tmp_path, reference):
    """Issue 33 item 2: a link at history.csv had its target overwritten."""
    out = tmp_path / "run"
    target = link_to_precious(out / "history.csv", tmp_path / "precious.txt")
    with pytest.raises(ValueError, match="symbolic link"):
        _train(data, out)  # refused before any work
    assert target.read_text() == "keep me\n"
    assert not (out / "checkpoint.pt").exists()
    # a finished run whose history.csv became a link: reading refuses it too
    done = reference[2]
    fresh = tmp_path / "copy"
    fresh.mkdir()
    for name in ("checkpoint.pt", "checkpoint.pt.sha256", "run.json"):
        (fresh / name).write_bytes((done / name).read_bytes())
    (fresh / "history.csv").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        read_history(fresh)
    assert target.read_text() == "keep me\n"


def test_links_at_summary_and_figures_are_refused(tmp_path):
    from theorydyn.vision import experiments as ex

    target = tmp_path / "precious.txt"
    target.write_text("keep me\n")
    (tmp_path / "summary.csv").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        ex._save([dict(run="x", final_test_acc=1.0)], tmp_path)
    assert target.read_text() == "keep me\n"


@pytest.mark.parametrize("cut", ["60%", "nan", "extra"])
def test_a_torn_history_is_detected_and_recomputed_never_plotted(data, tmp_path, reference, cut):
    """Issue 33 item 2: a history.csv cut at 60% survived compare --resume and was plotted."""
    out = reference[2]
    run = tmp_path / "run"
    run.mkdir()
    for name in ("checkpoint.pt", "checkpoint.pt.sha256", "run.json", "history.csv"):
        (run / name).write_bytes((out / name).read_bytes())
    good = (run / "history.csv").read_bytes()
    if cut == "60%":
        (run / "history.csv").write_bytes(good[: int(0.6 * len(good))])
    elif cut == "nan":
        lines = good.decode().splitlines()
        cells = lines[2].split(",")
        cells[2] = ""  # an empty test_acc cell: NaN
        lines[2] = ",".join(cells)
        (run / "history.csv").write_text("\n".join(lines) + "\n")
    else:
        (run / "history.csv").write_bytes(good + good.splitlines(keepends=True)[-1])
    with pytest.warns(CheckpointWarning, match="rewritten from the checkpoint"):
        h = read_history(run)
    assert (run / "history.csv").read_bytes() == good
    assert len(h) == CFG.epochs
    _same_history(h, read_history(out))
    # the resume path (compare --resume on a finished run) rewrites it as well, before anything reads it
    (run / "history.csv").write_bytes(good[: int(0.6 * len(good))])
    _train(data, run, resume=True)
    assert (run / "history.csv").read_bytes() == good


def test_a_torn_history_without_a_valid_checkpoint_is_refused(tmp_path):
    (tmp_path / "history.csv").write_text("epoch,train_loss,test_acc,lr,images_per_s,seconds\n1,0.5,0.9,0.001,1,1\n3,")
    with pytest.raises(ValueError, match="no valid checkpoint"):
        read_history(tmp_path)


def _full_disk_for(monkeypatch, word: str) -> None:
    """``os.fsync`` raises ENOSPC for files whose name holds ``word`` (a full disk seen at the flush)."""
    real = os.fsync

    def fsync(fd):
        try:
            name = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            name = ""
        if word in name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name a file descriptor")
@pytest.mark.parametrize("word", [".checkpoint.", ".history."])
def test_a_full_disk_names_the_file_and_leaves_no_temporary(data, tmp_path, monkeypatch, word):
    """Issue 33 item 6: a full disk left a 1.4 MB temporary checkpoint and a RuntimeError."""
    out = tmp_path / "run"
    _train(data, out, stop_after=1)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _full_disk_for(monkeypatch, word)
    with pytest.raises(OSError, match="No space left") as e:
        _train(data, out, resume=True)
    assert e.value.errno == errno.ENOSPC
    assert ("checkpoint.pt" if "checkpoint" in word else "history.csv") in str(e.value)
    assert _temporaries(out) == []
    monkeypatch.undo()
    # what is left is consistent: the checkpoint matches its record and resuming finishes the run
    assert load_checkpoint(out / "checkpoint.pt") is not None
    assert (out / "checkpoint.pt").read_bytes() == before["checkpoint.pt"]  # the old one, untouched
    assert len(_train(data, out, resume=True)) == CFG.epochs


def test_a_kill_between_record_and_rename_leaves_a_checkpoint_that_matches(tmp_path):
    """The record lists the new and the current digest before the rename: a kill there leaves the old
    checkpoint, which still matches."""
    ckpt = tmp_path / "checkpoint.pt"
    st = {"model": {"w": torch.ones(3)}, "opt": {}, "history": [], "epoch": 1, "record": {}}
    save_checkpoint(ckpt, st)
    old = ckpt.read_bytes()

    def killed(path, data):
        raise KeyboardInterrupt  # the process dies after the record, before the checkpoint is renamed

    real = tr.write_bytes
    tr.write_bytes = killed
    try:
        with pytest.raises(KeyboardInterrupt):
            save_checkpoint(ckpt, dict(st, epoch=2))
    finally:
        tr.write_bytes = real
    assert ckpt.read_bytes() == old
    assert len((tmp_path / "checkpoint.pt.sha256").read_text().split()) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        assert load_checkpoint(ckpt)["epoch"] == 1
