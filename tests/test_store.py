"""The results store reads back exactly its valid rows, whatever else the file holds; spec files
and uncomputable points are refused up front with the parameter named; NUMERICS_VERSION salts keys.

Rows here are real scan rows (parameters of expanded points, key = their hash) with made-up
results: the store's checks are about the file, not the physics.
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from pathlib import Path

import pandas as pd
import pytest
from conftest import TINY_REAL_SCAN
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from theorydyn.infra import store as resultstore
from theorydyn.scan import grid as scangrid

NUMERICS_VERSION, SCAN_KINDS = scangrid.NUMERICS_VERSION, scangrid.SCAN_KINDS
SCAN_TEXT_COLUMNS = scangrid.SCAN_TEXT_COLUMNS
ScanError, ScanSpec, load_spec_file, open_store = (
    scangrid.ScanError,
    scangrid.ScanSpec,
    scangrid.load_spec_file,
    scangrid.open_store,
)
row_problem, validate_points = scangrid.row_problem, scangrid.validate_points
RejectedRowsWarning, ResultStore, StoreError = (
    resultstore.RejectedRowsWarning,
    resultstore.ResultStore,
    resultstore.StoreError,
)
_cell, DB_NAME = resultstore._cell, resultstore.DB_NAME

ROOT = Path(__file__).resolve().parents[1]
GiB = 1 << 30

_POINTS = ScanSpec(
    "t", base={"D": 16, "C": 4, "s_max": 100.0}, axes={"q": [0.1, 0.25], "method": ["flow", "gd"], "seed": [0, 1, 2]}
).expand()
_ODD_POINTS = ScanSpec(
    "odd",
    base={"D": 6, "C": 2, "simulate": True, "dtype": "float32", "N": 300},
    axes={
        "partition": [[[0, 3], [1, 4], [2, 5]], "random"],
        "feature": [1, [0.6, 0.8, 0, 0, 0, 0]],
        "expectation": ["mc", "exact"],
    },
).expand()


def _row(p, t1: float = 1.5, status: str = "ok, fine") -> dict:
    return {"key": p.key, **p.params(), "T1": t1, "T2": None, "gamma_ge_rho": True, "status": status}


def _store(path: Path) -> ResultStore:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RejectedRowsWarning)
        return open_store(path)


def _content(row: dict) -> dict:
    return {k: v for k, v in row.items() if v != ""}


def _put(path: Path, key, data, scope: str = "r") -> None:
    """Write a row behind the store's back (a foreign writer, a hand edit, a bug): insert or overwrite."""
    con = resultstore.connect(path.with_name(DB_NAME))  # the schema, as the store makes it
    con.execute(
        "INSERT INTO rows (scope, key, data, created_utc) VALUES (?, ?, ?, 'x') "
        "ON CONFLICT (scope, key) DO UPDATE SET data = excluded.data",
        (scope, key, data),
    )
    con.close()


def _data(row: dict, **changes) -> str:
    return json.dumps({k: _cell(v) for k, v in {**row, **changes}.items() if k != "key"})


def test_row_of_every_kind_of_point_validates_against_its_own_key(tmp_path):
    st_ = open_store(tmp_path / "r.csv")
    for p in _POINTS + _ODD_POINTS:
        st_.append(_row(p))
    again = open_store(tmp_path / "r.csv")
    assert again.rejected == 0 and len(again) == len(_POINTS) + len(_ODD_POINTS)
    assert all(row_problem(r) is None for r in again.rows.values())
    assert not again.rejected_path.exists()


# ---- the property: valid rows plus any garbage read back as the valid rows -------------------------------
def _mutants(row: dict, other_key: str) -> list[tuple[str, str | bytes]]:
    """(key, data) pairs that look like rows of ``row`` but are not valid rows."""
    key = row["key"]
    return [
        (other_key, _data(row)),  # another key on this row's parameters
        (key, _data(row, q=0.7)),  # this key, other parameters
        (key, _data(row, status="ok\x00")),  # a NUL byte
        (key, _data(row, T1="abc")),  # T1 does not parse
        (key, _data(row, T1="1.5e")),
        (key, _data(row)[:40]),  # cut JSON
        (key, _data(row, numerics_version=NUMERICS_VERSION + 7)),  # stale
        (key, json.dumps({**json.loads(_data(row)), "key": other_key})),  # the data names another key
        (key, json.dumps({"D": 16})),  # parameters missing
        (key, b"\xff\xfe not utf-8"),
    ]


_garbage = st.one_of(
    st.tuples(st.text(max_size=60), st.one_of(st.text(max_size=80), st.binary(max_size=40))),
    st.tuples(st.integers(0, len(_POINTS) - 1), st.integers(0, len(_POINTS) - 1), st.integers(0, 9)).map(
        lambda t: ("mutant",) + t
    ),
    st.just(("", "{}")),
    st.just(("k", json.dumps({"a": 1}))),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(st.just("row"), st.integers(0, len(_POINTS) - 1), st.floats(0, 1e6)),
            st.tuples(st.just("garbage"), _garbage),
        ),
        max_size=25,
    )
)
def test_any_garbage_reads_back_exactly_the_valid_rows(tmp_path_factory, ops):
    path = tmp_path_factory.mktemp("prop") / "r.csv"
    store = open_store(path)
    state: dict[str, dict | None] = {}  # key → its valid row, or None when garbage sits under it
    for op in ops:
        if op[0] == "row":
            p = _POINTS[op[1]]
            if store.append(_row(p, t1=op[2])):
                state[p.key] = _row(p, t1=op[2])
            continue
        g = op[1]
        if g[0] == "mutant":
            p, other = _POINTS[g[1]], _POINTS[g[2]]
            key, data = _mutants(_row(p), other.key if other.key != p.key else "f" * 64)[g[3]]
        else:
            key, data = g
        _put(path, key, data)
        state[key] = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = open_store(path)  # never raises
    expected = {k: r for k, r in state.items() if r is not None}
    assert {k: _content(r) for k, r in got.rows.items()} == {
        k: _content({c: _cell(v) for c, v in r.items()}) for k, r in expected.items()
    }
    n_bad = sum(r is None for r in state.values())
    warned = [w for w in caught if issubclass(w.category, RejectedRowsWarning)]
    assert got.rejected == n_bad and len(warned) == (1 if n_bad else 0)
    if n_bad:
        assert f"{n_bad} row(s) of" in str(warned[0].message)
        rej = pd.read_csv(got.rejected_path, dtype=str, keep_default_na=False)
        assert list(rej.columns) == ["rejected_at", "reason", "key", "line"] and len(rej) == n_bad
    else:
        assert not got.rejected_path.exists()
    again = open_store(path)  # the database now holds exactly the valid rows
    assert again.rejected == 0 and again.rows == got.rows
    for p in _POINTS:  # a rejected point is computed again: its key is free
        if state.get(p.key, 1) is None:
            assert again.append(_row(p)) and p.key in open_store(path)
    if len(again):
        df = again.frame()
        assert pd.api.types.is_float_dtype(df["T1"]) and df.groupby("q")["T1"].mean().notna().all()


# ---- every kind of bad row, by name ---------------------------------------------------------------------
def _written(tmp_path, n=3) -> tuple[Path, list[dict]]:
    path = tmp_path / "r.csv"
    st_ = open_store(path)
    rows = [_row(p) for p in _POINTS[:n]]
    for r in rows:
        st_.append(r)
    return path, rows


def _load_with_warning(path: Path) -> tuple[ResultStore, str | None]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = open_store(path)
    msgs = [str(w.message) for w in caught if issubclass(w.category, RejectedRowsWarning)]
    assert len(msgs) <= 1
    return got, (msgs[0] if msgs else None)


@pytest.mark.parametrize(
    "bad,reason",
    [
        (lambda r: _data(r, T1="oops"), "unparsable"),
        (lambda r: _data(r)[:-1], "not a JSON object"),
        (lambda r: _data(r, status="a\x00\x00"), "NUL byte"),
        (lambda r: b"\xff\xfe", "not UTF-8"),
        (lambda r: json.dumps([1, 2]), "not a JSON object"),
        (lambda r: json.dumps({"D": "16", "numerics_version": str(NUMERICS_VERSION)}), "invalid"),
        (lambda r: json.dumps({**json.loads(_data(r)), "key": "f" * 64}), "key mismatch"),
        (lambda r: _data(r, q=0.7), "key mismatch"),  # a parameter edited, key kept
        (lambda r: _data(r, numerics_version=NUMERICS_VERSION + 1), "stale"),
    ],
)
def test_each_bad_row_is_moved_aside_with_its_reason_and_computed_again(tmp_path, bad, reason):
    path, rows = _written(tmp_path)
    _put(path, rows[1]["key"], bad(rows[1]))
    got, msg = _load_with_warning(path)
    assert len(got) == 2 and got.rejected == 1 and reason in msg, msg
    assert got.rejected_reasons == {reason: 1}
    assert rows[1]["key"] not in got and got.append(rows[1])  # its point is free to be computed again
    again, msg = _load_with_warning(path)
    assert len(again) == 3 and msg is None
    con = sqlite3.connect(tmp_path / DB_NAME)
    assert con.execute("SELECT count(*) FROM rejected").fetchone()[0] == 1  # kept aside, not deleted


def test_a_database_that_is_not_one_and_paths_that_are_not_files(tmp_path):
    db = tmp_path / DB_NAME
    db.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not a theorydyn results database") as e:
        open_store(tmp_path / "r.csv")
    assert isinstance(e.value, ValueError) and db.read_bytes() == b"not a database at all" * 100  # untouched
    db.unlink()
    with pytest.raises(StoreError, match="is a directory"):
        open_store(tmp_path)
    (tmp_path / "elsewhere.sqlite").write_bytes(b"")
    db.symlink_to(tmp_path / "elsewhere.sqlite")
    with pytest.raises(StoreError, match="symbolic link"):
        open_store(tmp_path / "r.csv")


def test_a_csv_the_store_never_wrote_is_moved_aside_never_read(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("key,D,T1\n" + "ab" * 32 + ",16,12.5\n")
    got, msg = _load_with_warning(path)
    assert len(got) == 0 and "moved to" in msg and (tmp_path / "r.legacy.csv").exists() and not path.exists()
    got.append(_row(_POINTS[0]))
    got.export()
    assert len(pd.read_csv(path)) == 1
    path.write_text(path.read_text() + "garbage,1,2\n")  # an export edited by hand is not read back
    assert len(open_store(path)) == 1


def test_append_refuses_a_row_that_loading_would_reject(tmp_path):
    st_ = open_store(tmp_path / "r.csv")
    bad = _row(_POINTS[0])
    bad["q"] = 0.9  # parameters that do not hash to the key
    with pytest.raises(ValueError, match="key mismatch"):
        st_.append(bad)
    with pytest.raises(ValueError, match="T1='x' is not a number"):
        st_.append(_row(_POINTS[0], t1="x"))
    with pytest.raises(ValueError, match="non-empty 'key'"):
        st_.append({"key": "", "a": 1})
    assert len(open_store(tmp_path / "r.csv")) == 0


def test_generic_store_checks_declared_kinds_only(tmp_path):
    path = tmp_path / "g.csv"
    st_ = ResultStore(path, kinds={"x": "num", "ok": "bool"})
    st_.append({"key": "a", "x": 1.0, "ok": True, "note": "3"})
    for key, x, ok, note in (("b", "nan?", "True", "4"), ("c", "2", "yes", "5"), ("d", "-inf", "False", "text")):
        _put(path, key, json.dumps({"x": x, "ok": ok, "note": note}), scope="g")
    (got,) = [ResultStore(path, kinds={"x": "num", "ok": "bool"}, warn=False)]
    assert sorted(got.rows) == ["a", "d"] and got.rejected == 2
    with pytest.raises(ValueError, match="unknown kind"):
        ResultStore(path, kinds={"x": "number"})


# ---- NUMERICS_VERSION ------------------------------------------------------------------------------------
def test_numerics_version_salts_the_key_and_older_rows_are_moved_aside(tmp_path, monkeypatch):
    path, _ = _written(tmp_path)
    old_keys = [p.key for p in _POINTS[:3]]
    monkeypatch.setattr(scangrid, "NUMERICS_VERSION", NUMERICS_VERSION + 1)
    new_keys = [p.key for p in _POINTS[:3]]
    assert set(old_keys).isdisjoint(new_keys)  # the new code never looks the old rows up
    got, msg = _load_with_warning(path)
    assert len(got) == 0 and got.rejected_reasons == {"stale": 3} and "3 stale" in msg
    rej = pd.read_csv(got.rejected_path, dtype=str)
    assert rej["reason"].str.startswith(f"stale: numerics_version={NUMERICS_VERSION}, current").all()
    assert sorted(rej["key"]) == sorted(old_keys) and rej["line"].str.contains('"T1": "1.5"').all()  # kept, whole


def test_rows_written_before_the_salt_are_stale(tmp_path):
    path = tmp_path / "r.csv"
    _put(path, "ab" * 32, json.dumps({"D": "16", "C": "4", "q": "0.25", "seed": "0", "T1": "12.5"}))
    got, msg = _load_with_warning(path)
    assert len(got) == 0 and "stale" in msg and "numerics_version=absent" in got.rejected_path.read_text()


def test_scan_kinds_cover_the_parameters():
    for k in ("D", "q", "s_max", "n_samples", "seed", "T1", "numerics_version"):
        assert SCAN_KINDS[k] == "num"
    assert SCAN_KINDS["simulate"] == "bool" and SCAN_KINDS["gamma_ge_rho"] == "bool"


# ---- spec files --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content,message",
    [
        ("setting = 5\n", "[setting] must be a table"),
        ("axes = [1, 2]\n", "[axes] must be a table"),
        ("[setting]\nDD = 64\n", "unknown key setting.DD"),
        ("[setting]\nseed = 1\n", "seeds go in [axes]"),
        ("[options]\nD = 64\n", "D is a Setting field"),
        ("[setting]\ns_max = 1.0\n", "s_max is a solver option"),
        ("[axes]\nfoo = [1]\n", "unknown key axes.foo"),
        ('[setting]\nD = "64"\n', "setting.D must be an integer, got '64' (str)"),
        ("[setting]\nD = 64.0\n", "setting.D must be an integer"),
        ("[setting]\nq = true\n", "setting.q must be a number, got True (bool)"),
        ('[options]\nsimulate = "yes"\n', "options.simulate must be true or false"),
        ("[options]\nn_samples = 4.5\n", "options.n_samples must be an integer"),
        ("[options]\nmethod = 1\n", "options.method must be one of"),
        ('[axes]\nq = [0.1, "x"]\n', "axes.q must be a number, got 'x'"),
        ("[axes]\nq = []\n", "axes.q has no values"),
        ("[setting]\npartition = [1, 2]\n", "setting.partition must be one of"),
        ("[setting]\nq = 0.2\n[axes]\nq = [0.1]\n", "both fixed"),
        ('name = "../x"\n', "name must be text of letters"),
        ("name = 3\n", "name must be text"),
        ('runner = "nocolon"\n', "runner must look like 'module:function'"),
        ("color = 1\n", "unknown top-level key(s) ['color']"),
        ("[setting\n", "is not valid TOML"),
    ],
)
def test_bad_spec_files_are_named(tmp_path, content, message):
    f = tmp_path / "s.toml"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(ScanError) as e:
        ScanSpec.from_toml(f)
    assert message in str(e.value) and str(e.value).startswith("--spec:")


def test_spec_files_that_are_not_files_or_not_text(tmp_path):
    with pytest.raises(ScanError, match="is a directory"):
        ScanSpec.from_toml(tmp_path)
    with pytest.raises(ScanError, match="no such file"):
        ScanSpec.from_toml(tmp_path / "missing.toml")
    f = tmp_path / "latin1.toml"
    f.write_bytes('name = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ScanError, match=r"not UTF-8 text \(byte 11"):
        ScanSpec.from_toml(f)
    f.write_bytes(b"\x00\x01\x02")
    with pytest.raises(ScanError, match="not valid TOML"):
        ScanSpec.from_toml(f)
    if os.geteuid() != 0:  # root reads anything
        f.write_text("")
        f.chmod(0)
        with pytest.raises(ScanError, match="cannot read"):
            ScanSpec.from_toml(f)


def test_good_spec_files_load(tmp_path):
    f = tmp_path / "ok.toml"
    f.write_bytes(
        "\ufeff# BOM and comments are fine\n[setting]\nD = 6\nC = 2\nfeature = [1.0, 0, 0, 0, 0, 0]\n"
        '[axes]\nq = 0.5\npartition = [[[0, 1], [2, 3], [4, 5]], "random"]\nseed = [0, 1]\n'
        "[options]\nn_samples = 4e3\n".encode("utf-8")
    )
    spec = ScanSpec.from_toml(f)
    assert spec.name == "ok" and spec.axes["q"] == [0.5] and len(spec.expand()) == 4
    (tmp_path / "empty.toml").write_text("")
    assert ScanSpec.from_toml(tmp_path / "empty.toml").expand()[0].setting.D == 64
    for path in sorted((ROOT / "scans").glob("*.toml")):
        assert load_spec_file(path)["name"] == path.stem


# ---- points that cannot be computed ------------------------------------------------------------------------
def test_exact_expectation_beyond_the_solver_limit_is_refused_up_front():
    pts = ScanSpec("t", base={"C": 4, "expectation": "exact"}, axes={"D": [16, 256]}).expand()
    with pytest.raises(ScanError) as e:
        validate_points(pts, available=64 * GiB)
    msg = str(e.value)
    assert "1 scan point(s)" in msg and "expectation='exact' needs" in msg
    assert "D=256" in msg and "use expectation='mc'" in msg
    validate_points(pts[:1], available=64 * GiB)


def test_memory_is_refused_up_front_naming_the_parameter_and_force_overrides():
    big = ScanSpec("t", base={"D": 64, "C": 4, "simulate": True}, axes={"N": [1024, 10**12]}).expand()
    with pytest.raises(ScanError, match=r"N=1000000000000, D=64, d=64: .* more than the 64.0 GiB .*at N=1000000000000"):
        validate_points(big, available=64 * GiB)
    validate_points(big, available=64 * GiB, force=True)
    huge_mc = ScanSpec("t", base={"D": 64, "C": 4, "n_samples": 10**12}).expand()
    with pytest.raises(ScanError, match="n_samples=1000000000000"):
        validate_points(huge_mc, available=64 * GiB)
    # four workers share the memory: a point that fits alone does not fit four times
    one = ScanSpec("t", base={"D": 64, "C": 4, "simulate": True, "N": 600_000}).expand()  # ≈ 19 GiB
    validate_points(one, available=32 * GiB)
    with pytest.raises(ScanError, match="8.0 GiB .* fewer than 4 workers"):
        validate_points(one, available=32 * GiB, concurrent=4)
    custom = ScanSpec("t", base={"D": 64, "C": 4, "n_samples": 10**12}, runner="scan_fake:fake_point").expand()
    validate_points(custom, available=64 * GiB)  # a custom runner's needs are its own


def test_the_saved_grids_pass_validation():
    for path in sorted((ROOT / "scans").glob("*.toml")):
        validate_points(ScanSpec.from_toml(path).expand(), available=8 * GiB)


def test_a_rejected_listing_that_cannot_be_written_still_moves_the_rows_aside(tmp_path):
    path, rows = _written(tmp_path)
    _put(path, rows[0]["key"], "junk")
    (tmp_path / "r.rejected.csv").mkdir()  # the listing cannot be written; the rejected table holds the row
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = open_store(path)
    assert len(got) == 2 and got.rejected == 1 and any("cannot write" in str(w.message) for w in caught)
    con = sqlite3.connect(tmp_path / DB_NAME)
    assert con.execute("SELECT key, data FROM rejected").fetchall() == [(rows[0]["key"], "junk")]


# ---- the rows a scan really writes pass the checks (else they would be recomputed forever) --------------------
def test_rows_written_by_a_scan_validate(tmp_path):
    from theorydyn.scan import run_scan

    spec = ScanSpec(
        "w", base={"D": 16, "C": 4, "s_max": 1e4}, axes={"q": [0.1, 0.3], "seed": [0, 1]}, runner="scan_fake:fake_point"
    )
    run_scan(spec, results_dir=tmp_path, workers=0, progress=False, plots=False, summary=False)
    got, msg = _load_with_warning(tmp_path / "w.csv")
    assert len(got) == 4 and msg is None


@pytest.mark.slow
def test_rows_of_the_real_runner_validate(tmp_path):
    from theorydyn.scan import run_scan

    spec = ScanSpec(
        "real",
        base=TINY_REAL_SCAN,
        axes={"simulate": [False, True], "method": ["flow", "gd"], "seed": [0]},
    )
    out = run_scan(spec, results_dir=tmp_path, workers=0, progress=False, plots=False, summary=False)
    assert out.exit_code == 0
    got, msg = _load_with_warning(tmp_path / "real.csv")
    assert len(got) == 4 and msg is None, msg
    # every column is declared (a new output column must get a kind here: this fails until it does)
    assert set(got.columns) - set(SCAN_KINDS) - set(SCAN_TEXT_COLUMNS) == set()
    assert {"key", "runner", "status", "method"} <= set(got.columns) - set(SCAN_KINDS)
    df = got.frame()
    assert all(
        pd.api.types.is_numeric_dtype(df[c]) or pd.api.types.is_bool_dtype(df[c]) or df[c].isna().any()
        for c in df.columns
        if c in SCAN_KINDS
    )
