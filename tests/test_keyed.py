"""The one keyed-store helper (:mod:`theorydyn.infra.keyed`) and the one naming function
(:func:`theorydyn.infra.paths.run_name`): a row round-trips under the hash of its payload, a changed
payload is never served the old row, a row that does not match its key or fails its checks is moved
aside, a damaged database is refused; and every command's names are those of the code before them."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings

import pytest

from theorydyn import Setting
from theorydyn.cli import tools as cli
from theorydyn.infra.keyed import KEY_MISMATCH, KeyedStore, json_column, row_problem, version_stale
from theorydyn.infra.keys import OTHER_PAYLOAD, canonical_json, content_key, payload_problem
from theorydyn.infra.paths import SCAN, run_name
from theorydyn.infra.store import RejectedRowsWarning, StoreDamaged

PAYLOAD = {"setting": {"D": 16, "C": 4}, "seed": 0, "numerics": 3}


def _check(row, payload):
    return None if 0.0 <= float(row["acc"]) <= 1.0 else f"invalid: acc={row['acc']} outside [0, 1]"


def _stale(row):
    return None if json.loads(row["params"]).get("numerics") == 3 else "stale: other numerics"


def _open(tmp_path, **kw):
    return KeyedStore(tmp_path / "t.csv", payload_column="params", stale=_stale, check=_check, create=True, **kw)


def test_a_row_round_trips_under_the_hash_of_its_payload(tmp_path):
    st = _open(tmp_path)
    assert st.get(PAYLOAD) is None
    assert st.put(PAYLOAD, {"acc": 0.75})
    assert not st.put(PAYLOAD, {"acc": 0.5})  # the first row of a key stands
    key = hashlib.sha256(json.dumps(PAYLOAD, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert KeyedStore.key(PAYLOAD) == content_key(PAYLOAD) == key  # an independent sha256 of the JSON
    again = _open(tmp_path)
    row = again.get(PAYLOAD)
    assert row is not None and row["acc"] == "0.75" and json.loads(row["params"]) == PAYLOAD
    assert again.replace(PAYLOAD, {"acc": 0.5}) and _open(tmp_path).get(PAYLOAD)["acc"] == "0.5"
    assert again.forget([PAYLOAD]) == 1 and _open(tmp_path).get(PAYLOAD) is None


def test_a_changed_payload_is_recomputed_never_served_the_old_row(tmp_path):
    st = _open(tmp_path)
    st.put(PAYLOAD, {"acc": 0.75})
    changed = {**PAYLOAD, "seed": 1}
    assert st.get(changed) is None  # another key: computed again
    assert payload_problem(canonical_json(PAYLOAD), changed) == OTHER_PAYLOAD  # an entry found by name
    assert payload_problem(PAYLOAD, dict(reversed(list(PAYLOAD.items())))) is None  # order is not content
    assert payload_problem(None, PAYLOAD) == OTHER_PAYLOAD


@pytest.mark.parametrize(
    "edit,reason",
    [
        (lambda d: {**d, "params": canonical_json({**PAYLOAD, "seed": 9})}, "key mismatch"),  # payload edited
        (lambda d: {**d, "params": canonical_json({**PAYLOAD, "numerics": 2})}, "stale"),  # stale first
        (lambda d: {**d, "params": "[1, 2]"}, "invalid"),
        (lambda d: {k: v for k, v in d.items() if k != "params"}, "invalid"),
        (lambda d: {**d, "acc": "1.5"}, "invalid"),
    ],
)
def test_a_row_that_fails_the_one_validation_is_moved_aside(tmp_path, edit, reason):
    st = _open(tmp_path)
    st.put(PAYLOAD, {"acc": 0.75})
    con = sqlite3.connect(st.db)
    (data,) = con.execute("SELECT data FROM rows").fetchone()
    con.execute("UPDATE rows SET data = ?", (json.dumps(edit(json.loads(data))),))
    con.commit()
    con.close()
    with pytest.warns(RejectedRowsWarning):
        again = _open(tmp_path)
    assert again.get(PAYLOAD) is None and again.rejected_reasons == {reason: 1}


def test_the_validation_order_and_messages():
    row = {"key": content_key(PAYLOAD), "params": canonical_json(PAYLOAD), "acc": "0.5"}
    assert row_problem(row, json_column("params"), _stale, _check) is None
    assert row_problem({**row, "key": "0" * 64}, json_column("params")) == KEY_MISMATCH
    assert row_problem({**row, "acc": "2"}, json_column("params"), _stale, _check).startswith("invalid: acc=")
    assert row_problem({"key": "k"}, json_column("params")) == "invalid: no column 'params'"
    stale = version_stale("params", "numerics", 3)
    assert stale(row) is None and stale({"params": "not json"}) is None  # left to the key check
    assert stale({"params": canonical_json({**PAYLOAD, "numerics": 2})}) == "stale: numerics=2, current 3"
    with pytest.raises(ValueError, match="exactly one"):
        KeyedStore("x.csv")


def test_a_row_that_would_be_rejected_is_not_written(tmp_path):
    with pytest.raises(ValueError, match="would be rejected"):
        _open(tmp_path).put(PAYLOAD, {"acc": float("nan")})


def test_a_damaged_database_is_refused_with_the_stores_error(tmp_path):
    st = _open(tmp_path)
    for seed in range(300):  # several pages, so that half the file loses some
        st.put({**PAYLOAD, "seed": seed, "pad": "x" * 200}, {"acc": 0.5})
    st.close()  # the last connection: the WAL goes into the file
    db = st.db
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    with warnings.catch_warnings(), pytest.raises(StoreDamaged, match="damaged") as e:
        warnings.simplefilter("ignore")
        _open(tmp_path)
    assert str(db) in str(e.value)


# ---- one naming function; the names of the code before it (computed on 19938e9) ------------------------
def test_reduced_and_simulate_names_are_unchanged():
    runs = [
        (
            "reduced_flow_D64_C4",
            {"q": 0.3, "seed": 1, "s_max": 20000.0, "eta": 1e-05, "exact": True},
            {"q": 0.25, "seed": 0, "s_max": 20000.0},
        ),
        (
            "simulate_D16_C4",
            {"N": 512, "n_test": 256, "steps": 60, "seed": 2, "dtype": "float64"},
            {"N": 1024, "n_test": 256, "steps": 100, "seed": 0, "dtype": "float32"},
        ),
        ("r", {"partition": ((0, 1), (2, 3))}, {"partition": "blocks"}),
        ("r", {f"k{i}": i for i in range(40)}, {}),
        ("r", {"big": 1e22, "tiny": 1.5e-300}, {}),
    ]
    want = [
        "reduced_flow_D64_C4_q0.3_seed1_eta1e-5_exacttrue",
        "simulate_D16_C4_N512_steps60_seed2_dtypefloat64",
        "r_hadf869eebe",
        "r_h1cb961b938",
        "r_big1e22_tiny1.5e-300",
    ]
    assert [cli.run_stem(*r) for r in runs] == want
    assert [run_name("reduced", *r) for r in runs] == want
    assert cli.run_stem("r", {f"k{i}": i for i in range(10)}, {}, max_len=20) == "r_h11800ccbaa"


def test_ledger_names_are_unchanged():
    from theorydyn.verify import ledger_name

    cases = [
        ((Setting(), True), "verify_D64_C4_quick.csv"),
        ((Setting(q=1 / 3, tau=8.0), False), "verify_D64_C4_q0.3333333333333333_tau8_full.csv"),
        (
            (Setting(partition="random", partition_seed=3), True, None, {"s_max": 5000.0, "seed": 3, "n": None}),
            "verify_D64_C4_partitionrandom_partition_seed3_smax5000_seed3_quick.csv",
        ),
        (
            (Setting(D=32, C=4), True, ["definition21", "dynamics"]),
            "verify_D32_C4_only-definition21+dynamics_quick.csv",
        ),
        ((Setting(partition=[[0, 1], [2, 3]], D=4, C=2), True), "verify_D4_C2_partitionhfffc46bd_quick.csv"),
        (
            (Setting(), True, None, {f"extra_{i}": float(i) / 7 for i in range(12)}),
            "verify_D64_C4_h2401448b83c2_quick.csv",
        ),
    ]
    for args, want in cases:
        assert ledger_name(*args) == want


def test_scan_and_vision_names_are_unchanged():
    from theorydyn.scan.flags import scan_name as _safe_name

    _token = SCAN.token  # what the scan's flags name a grid by (theorydyn.scan.flags.spec_from_args)
    from theorydyn.vision.runspec import RunSpec

    tokens = [("D", [64]), ("q", [0.2, 0.3]), ("smax", [1e6, 1e-05]), ("simulate", [True]), ("seed", [0, 1, 2])]
    assert [_token(*t) for t in tokens] == ["D64", "q0.2-0.3", "smax1e6-1e-05", "simulateTrue", "seed0-1-2"]
    assert [SCAN.token(*t) for t in tokens] == [_token(*t) for t in tokens]
    names = ["D64_C4", "a b", "..", "x" * 100, "日本", "D64_C4_q0.2-0.3"]
    want = ["D64_C4", "a-b_c8687a08", "scan_5ec1f7e7", "x" * 80 + "_09ecb6eb", "scan_cf2abf0c", "D64_C4_q0.2-0.3"]
    assert [_safe_name(n) for n in names] == [run_name("scan", n) for n in names] == want
    assert RunSpec("vit", "pos", None, 0, 4).name == "vit-pos-s0-seed0"
    assert RunSpec("cnn", "pos", 2, 3, 2).name == "cnn-na-s2-seed3"
    assert run_name("vision", "cnn-na-s2-seed3", suffix="0123456789") == "cnn-na-s2-seed3-0123456789"
