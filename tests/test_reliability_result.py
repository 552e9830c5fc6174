"""Result.save / Result.load, a short repr, ResultStore(create=...) and merge_stores (issue 31 item 7)."""

from __future__ import annotations

import json
import pickle
import sqlite3

import numpy as np
import pandas as pd
import pytest

from theorydyn.core.phases import Phases
from theorydyn.core.result import Result, Status
from theorydyn.core.setting import Setting
from theorydyn.infra.store import DB_NAME, ResultStore, StoreDamaged, StoreError, content_key
from theorydyn.infra.store_merge import merge_stores


def _result(**kw) -> Result:
    s = Setting(D=16, C=4, q=0.3, partition="random", partition_seed=3)
    traj = pd.DataFrame(
        dict(
            s=[0.0, 0.5, 1.0 / 3.0],
            step=[0, 1, 2],
            alpha=[0.1, np.nan, np.inf],
            association=[0.0, 0.5, 1.0],
            flag=[True, False, True],
            note=["a", "b", "c"],
        )
    )
    base = dict(
        solver="simulate",
        setting=s,
        trajectory=traj,
        phases=Phases(T0=0.5, T2=None, gamma_ge_rho=True, final_alpha=0.1),
        status=Status.DIVERGED,
        message="risk not finite at step 2 " * 10,
        stopped_step=2.0,
        options=dict(eta=np.float64(0.5), steps=2, s_grid=np.array([0.0, 1.0]), init=None),
        seconds=1.25,
        A_final=np.arange(256, dtype=float).reshape(16, 16) / 7,
        v_final=np.linspace(-1, 1, 16),
    )
    return Result(**{**base, **kw})


def test_save_and_load_round_trip(tmp_path):
    r = _result()
    path = r.save(tmp_path / "run.result")  # any suffix: the archive is written through a file object
    assert path.read_bytes()[:2] == b"PK" and [p.name for p in tmp_path.iterdir()] == ["run.result"]
    got = Result.load(path)
    pd.testing.assert_frame_equal(got.trajectory, r.trajectory, check_exact=True)
    assert got.setting == r.setting and got.setting.explicit == r.setting.explicit
    assert got.phases == r.phases and got.status is Status.DIVERGED and got.message == r.message
    assert got.stopped_step == 2.0 and got.seconds == 1.25 and got.solver == "simulate"
    assert got.options == dict(eta=0.5, steps=2, s_grid=[0.0, 1.0], init=None)
    np.testing.assert_array_equal(got.A_final, r.A_final)
    np.testing.assert_array_equal(got.v_final, r.v_final)
    again = _result(A_final=None, v_final=None, status=Status.OK, message="")
    assert Result.load(again.save(tmp_path / "b.npz")).A_final is None


def test_a_real_solver_result_round_trips(tmp_path):
    from theorydyn.reduced import integrate

    r = integrate(Setting(D=8, C=2), method="gd", eta=0.5, steps=6, n_samples=50, n_points=4)
    got = Result.load(r.save(tmp_path / "r.npz"))
    pd.testing.assert_frame_equal(got.trajectory, r.trajectory, check_exact=True)
    assert got.phases == r.phases and got.summary()["final"] == r.summary()["final"]


def test_save_refuses_a_link_and_load_refuses_pickles_and_other_files(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep")
    (tmp_path / "link.npz").symlink_to(target)
    with pytest.raises(ValueError, match="symbolic link"):
        _result().save(tmp_path / "link.npz")
    assert target.read_text() == "keep"
    np.savez(tmp_path / "obj.npz", meta=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ValueError, match="not a saved theorydyn Result"):
        Result.load(tmp_path / "obj.npz")
    (tmp_path / "p.npz").write_bytes(pickle.dumps({"a": 1}))
    with pytest.raises(ValueError, match="not a saved theorydyn Result"):
        Result.load(tmp_path / "p.npz")
    np.savez(tmp_path / "v2.npz", meta=np.asarray(json.dumps({"format": 99})))
    with pytest.raises(ValueError, match="format 99"):
        Result.load(tmp_path / "v2.npz")


def test_repr_is_short_and_says_what_the_run_is():
    text = repr(_result())
    assert len(text) < 300, len(text)
    for part in ("simulate", "D=16", "C=4", "q=0.3", "diverged", "steps=2", "rows=3"):
        assert part in text, text


# ---- ResultStore(create=...) ---------------------------------------------------------------------------
def test_a_store_in_a_missing_folder_is_refused_unless_created(tmp_path):
    with pytest.raises(StoreError, match="does not exist; pass create=True"):
        ResultStore(tmp_path / "nope" / "missing.csv").frame()
    assert not (tmp_path / "nope").exists()  # nothing created
    st = ResultStore(tmp_path / "nope" / "missing.csv", create=True)
    assert len(st) == 0 and (tmp_path / "nope" / DB_NAME).is_file()


# ---- merge_stores -------------------------------------------------------------------------------------
def _row(i: int, **extra) -> dict:
    params = dict(i=i, numerics="n1")
    return dict(key=content_key(params), params=json.dumps(params, sort_keys=True), x=repr(i / 3), **extra)


def _validate(scope: str, row: dict) -> str | None:
    """The scans' kind of check: the key is the hash of the row's own parameters."""
    return None if content_key(json.loads(row["params"])) == row["key"] else "key mismatch"


def test_merge_brings_rows_in_once_checked(tmp_path):
    (tmp_path / "here").mkdir()
    (tmp_path / "there").mkdir()
    local = ResultStore(tmp_path / "here" / "mix.csv")
    for i in range(3):
        local.append(_row(i))
    other = ResultStore(tmp_path / "there" / "mix.csv")
    for i in range(2, 6):  # 2 is a duplicate
        other.append(_row(i))
    other.append(dict(_row(1), x="99"))  # same key as a local row, other values: a conflict
    other_vision = ResultStore(tmp_path / "there" / "v.csv")
    other_vision.append(_row(10))
    other.close()
    other_vision.close()
    con = sqlite3.connect(tmp_path / "there" / DB_NAME)  # two planted bad rows
    con.execute("INSERT INTO rows (scope, key, data, created_utc) VALUES ('mix', 'k-bad', '[1]', 'x')")
    forged = dict(_row(7), x="0.5")
    forged_data = json.dumps({k: v for k, v in forged.items() if k != "key"})
    con.execute("INSERT INTO rows (scope, key, data, created_utc) VALUES ('mix', ?, ?, 'x')", ("f" * 64, forged_data))
    con.commit()
    con.close()
    rep = merge_stores(tmp_path / "here", tmp_path / "there" / DB_NAME, validate=_validate)
    assert (rep.added, rep.duplicate, rep.conflict, rep.rejected) == (4, 1, 1, 2)
    assert rep.by_scope == {"mix": 3, "v": 1} and rep.reasons == {
        "not a JSON object (of text values)": 1,
        "key mismatch": 1,
    }
    got = local.load()
    assert len(got) == 6 and got.rows[_row(1)["key"]]["x"] == _row(1)["x"]  # the local row stands
    rep2 = merge_stores(tmp_path / "here", tmp_path / "there", validate=_validate)
    assert (rep2.added, rep2.duplicate) == (0, 5)  # idempotent


def test_merge_refuses_a_damaged_source_and_the_same_file(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ResultStore(tmp_path / "a" / "r.csv").append(_row(1))
    with pytest.raises(StoreError, match="same database"):
        merge_stores(tmp_path / "a", tmp_path / "a" / DB_NAME)
    src = tmp_path / "b" / DB_NAME
    src.write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)
    with pytest.raises(StoreDamaged, match=str(src)):
        merge_stores(tmp_path / "a", src)
    assert len(ResultStore(tmp_path / "a" / "r.csv")) == 1
