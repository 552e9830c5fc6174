"""Files the toolkit reads are data, never code (issue 18, item 6): a planted ``checkpoint.pt``
whose pickle would run a command is refused by ``torch.load(weights_only=True)``, and the command
never runs."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")


class _Payload:
    """Unpickling this calls ``os.system`` (what a planted checkpoint would do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _plant(folder: Path, marker: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    ckpt = folder / "checkpoint.pt"
    torch.save({"model": {"pos": torch.zeros(2, 2)}, "record": _Payload(marker)}, ckpt, pickle_protocol=2)
    return ckpt


def test_a_planted_checkpoint_does_not_run_code_in_load_pos(tmp_path):
    from theorydyn.vision.experiments import load_pos

    marker = tmp_path / "pwned"
    _plant(tmp_path / "run", marker)
    with pytest.raises(pickle.UnpicklingError):
        load_pos(tmp_path / "run")
    assert not marker.exists()


def test_a_planted_checkpoint_does_not_run_code_on_resume(tmp_path):
    from types import SimpleNamespace

    from theorydyn.vision.train import TrainConfig, train

    marker = tmp_path / "pwned"
    _plant(tmp_path / "run", marker)
    with pytest.raises(pickle.UnpicklingError):
        data = SimpleNamespace(x_train=torch.zeros(4, 2))  # only its device is read before the checkpoint
        train(torch.nn.Linear(2, 2), data, TrainConfig(), tmp_path / "run", resume=True, progress=False)
    assert not marker.exists()
