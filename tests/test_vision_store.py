"""Cached vision runs keep their summary rows in the results store (issue 18): one row per run,
served from the store without training, a row that fails its checks moved aside and recomputed."""

import json
import math
import sqlite3

import pandas as pd
import pytest

torch = pytest.importorskip("torch")

import vision_tiny  # noqa: E402

from theorydyn.infra.store import RejectedRowsWarning  # noqa: E402
from theorydyn.vision import experiments as ex  # noqa: E402
from theorydyn.vision.checkpoint import save_checkpoint  # noqa: E402
from theorydyn.vision.data import load  # noqa: E402
from theorydyn.vision.model import ViTConfig  # noqa: E402
from theorydyn.vision.train import TrainConfig  # noqa: E402

torch.set_num_threads(1)

VIT = ViTConfig(**vision_tiny.TINY)
TCFG = TrainConfig(epochs=1, batch_size=64, warmup_epochs=1)
SPEC = ex.RunSpec("vit", "positional", None, 0, 2)


@pytest.fixture(scope="module")
def small_digits():
    return vision_tiny.small_digits(n_train=128, n_test=64)


def cached(data, root, **kw):
    return ex.cached_run(SPEC, data, VIT, TCFG, root, **kw)


def no_training(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("trained, but the run should have been served from the store")

    monkeypatch.setattr(ex, "train", refuse)


def stored_rows(root):
    con = sqlite3.connect(root / "results.sqlite")
    try:
        rows = con.execute("SELECT key, data FROM rows WHERE scope = ?", (ex.RUNS_SCOPE,)).fetchall()
        rejected = con.execute("SELECT key, reason FROM rejected WHERE scope = ?", (ex.RUNS_SCOPE,)).fetchall()
    finally:
        con.close()
    return rows, rejected


def test_a_finished_run_lands_in_the_store_once_and_is_exported(small_digits, tmp_path):
    r1 = cached(small_digits, tmp_path)
    r2 = cached(small_digits, tmp_path)
    assert r1 == r2
    rows, rejected = stored_rows(tmp_path)
    assert len(rows) == 1 and not rejected
    assert rows[0][0] == ex.run_key(SPEC, small_digits, VIT, TCFG, 0)
    csv = pd.read_csv(tmp_path / "vision_runs.csv")
    assert len(csv) == 1 and csv.final_test_acc.iloc[0] == r1["final_test_acc"]
    assert json.loads(csv.params.iloc[0])["numerics"] == ex.NUMERICS_VERSION
    assert r1["folder"] == str(ex.cache_folder(SPEC, small_digits, VIT, TCFG, tmp_path))


def test_a_second_call_is_served_from_the_store_without_training(small_digits, tmp_path, monkeypatch):
    r1 = cached(small_digits, tmp_path)
    no_training(monkeypatch)
    assert cached(small_digits, tmp_path) == r1
    assert ex.cached_runs([SPEC], small_digits, VIT, TCFG, tmp_path) == [r1]
    assert ex.load_pos(r1["folder"]).shape[0] == (8 // 2) ** 2


def test_a_row_with_a_nan_accuracy_is_moved_aside_and_recomputed(small_digits, tmp_path):
    r1 = cached(small_digits, tmp_path)
    con = sqlite3.connect(tmp_path / "results.sqlite")
    with con:
        [(seq, data)] = con.execute("SELECT seq, data FROM rows").fetchall()
        bad = dict(json.loads(data), final_test_acc="")  # NaN, as the store writes it
        con.execute("UPDATE rows SET data = ? WHERE seq = ?", (json.dumps(bad), seq))
    con.close()
    with pytest.warns(RejectedRowsWarning, match="1 invalid"):
        r2 = cached(small_digits, tmp_path)
    assert r2 == r1 and math.isfinite(r2["final_test_acc"])
    rows, rejected = stored_rows(tmp_path)
    assert len(rows) == 1 and json.loads(rows[0][1])["final_test_acc"] == repr(r1["final_test_acc"])
    assert len(rejected) == 1 and "final_test_acc" in rejected[0][1]
    assert (tmp_path / f"{ex.RUNS_SCOPE}.rejected.csv").is_file()


def test_a_row_whose_weights_are_gone_is_recomputed_when_the_weights_are_needed(small_digits, tmp_path, monkeypatch):
    r1 = cached(small_digits, tmp_path)
    ckpt = ex.cache_folder(SPEC, small_digits, VIT, TCFG, tmp_path) / "checkpoint.pt"
    ckpt.unlink()
    with monkeypatch.context() as m:  # the accuracies alone: served from the row
        no_training(m)
        assert cached(small_digits, tmp_path, weights=False) == r1
    with pytest.warns(RejectedRowsWarning, match="missing weights"):
        r2 = cached(small_digits, tmp_path)
    assert ckpt.is_file() and r2["final_test_acc"] == r1["final_test_acc"]
    rows, rejected = stored_rows(tmp_path)
    assert len(rows) == 1 and len(rejected) == 1


def test_a_finished_folder_with_a_nan_accuracy_is_trained_again(small_digits, tmp_path):
    r1 = cached(small_digits, tmp_path)
    ex.open_runs(tmp_path).remove([ex.run_key(SPEC, small_digits, VIT, TCFG, 0)])
    ckpt = ex.cache_folder(SPEC, small_digits, VIT, TCFG, tmp_path) / "checkpoint.pt"
    st = torch.load(ckpt, weights_only=True)
    st["history"][-1]["test_acc"] = float("nan")
    save_checkpoint(ckpt, st)  # a checkpoint that holds a NaN, its hash recorded (not a damaged file)
    with pytest.warns(RejectedRowsWarning, match="trained again"):
        r2 = cached(small_digits, tmp_path)
    assert r2["final_test_acc"] == r1["final_test_acc"]  # a CPU run is reproduced bit for bit
    rows, _ = stored_rows(tmp_path)
    assert len(rows) == 1


def test_a_gpu_run_is_cached_apart_from_the_cpu_run_whose_key_is_unchanged():
    """The device enters a run's key only off the CPU: the CPU ledger's cached runs keep their keys,
    and a GPU run (other kernels, bf16 autocast) never stands in for a CPU one (meta tensors stand in
    for a GPU here)."""
    import dataclasses

    d = load("digits")
    spec = ex.RunSpec("vit", "positional", None, 0, 2)
    vit, tcfg = ex.preset_configs(d)
    assert "device" not in ex._config(spec, d, vit, tcfg, 0)
    elsewhere = dataclasses.replace(d, x_train=d.x_train.to("meta"))
    assert ex._config(spec, elsewhere, vit, tcfg, 0)["device"] == "meta"
    assert ex.config_key(spec, elsewhere, vit, tcfg, 0) != ex.config_key(spec, d, vit, tcfg, 0)
    assert ex.run_key(spec, elsewhere, vit, tcfg, 0) != ex.run_key(spec, d, vit, tcfg, 0)
