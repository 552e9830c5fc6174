"""Provenance: the versions and commit a result was computed with, no personal data, never a failure."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy

from theorydyn import __version__
from theorydyn.infra import provenance as P
from theorydyn.infra.provenance import NUMERICS_VERSION

ROOT = Path(__file__).resolve().parents[1]
GIT = shutil.which("git")


def test_fields_and_values():
    prov = P.provenance()
    assert list(prov) == [
        "theorydyn_version",
        "git_commit",
        "git_dirty",
        "numerics_version",
        "python",
        "numpy",
        "scipy",
        "numba",
        "pandas",
        "torch",
        "platform",
        "created_utc",
    ]
    assert prov["theorydyn_version"] == __version__ and prov["numerics_version"] == NUMERICS_VERSION
    assert prov["numpy"] == np.__version__ and prov["pandas"] == pd.__version__ and prov["scipy"] == scipy.__version__
    assert prov["python"] == ".".join(map(str, sys.version_info[:3]))
    t = datetime.fromisoformat(prov["created_utc"])
    assert t.utcoffset() == timedelta(0) and abs(datetime.now(UTC) - t) < timedelta(minutes=5)
    json.dumps(prov)  # JSON-ready


def test_no_personal_data():
    text = json.dumps(P.provenance())
    for secret in (socket.gethostname(), getpass.getuser(), str(Path.home()), str(ROOT)):
        if len(secret) >= 4:
            assert secret not in text


def test_commit_is_the_checkouts_head_or_none():
    P.git_state.cache_clear()
    commit, dirty = P.git_state()
    if (ROOT / ".git").exists() and GIT:
        head = subprocess.run(
            [GIT, "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        status = subprocess.run(
            [GIT, "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
        ).stdout
        assert commit == head and len(commit) == 40
        assert dirty is bool(status.strip())
    else:
        assert (commit, dirty) == (None, None)


def test_dirty_flag_in_a_fresh_repository(tmp_path):
    assert P.git_state(str(tmp_path)) == (None, None)  # not a git work tree
    if GIT is None:
        return
    git = [GIT, "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(git + ["init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("one\n")
    subprocess.run(git + ["add", "a.txt"], check=True)
    subprocess.run(git + ["commit", "-qm", "x"], check=True)
    head = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    P.git_state.cache_clear()
    assert P.git_state(str(tmp_path)) == (head, False)
    (tmp_path / "a.txt").write_text("two\n")
    P.git_state.cache_clear()
    assert P.git_state(str(tmp_path)) == (head, True)
    (tmp_path / "untracked.txt").write_text("?")  # untracked files do not make it dirty
    (tmp_path / "a.txt").write_text("one\n")
    P.git_state.cache_clear()
    assert P.git_state(str(tmp_path)) == (head, False)
    P.git_state.cache_clear()


def _child(code: str, **env) -> str:
    e = dict(os.environ, PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd="/", env=e, capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()


def test_without_git_on_the_path_and_without_importing_torch():
    out = _child(
        "import json, sys; from theorydyn.infra.provenance import provenance; p = provenance(); "
        "print(json.dumps([p['git_commit'], p['git_dirty'], p['torch'], 'torch' in sys.modules]))",
        PATH="",
    )
    commit, dirty, torch_version, torch_imported = json.loads(out)
    assert commit is None and dirty is None and torch_imported is False
    try:
        from importlib.metadata import version

        assert torch_version == version("torch")
    except Exception:  # noqa: BLE001 — torch not installed
        assert torch_version is None


def test_attach_to_frame_and_json(tmp_path):
    prov = P.provenance()
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    out = P.attach_to_frame(df, prov)
    assert list(df.columns) == ["x"]  # the input is not changed
    assert [c for c in out.columns if c.startswith(P.PREFIX)] == [P.PREFIX + k for k in prov]
    assert (out[P.PREFIX + "git_commit"] == prov["git_commit"]).all() or prov["git_commit"] is None
    assert out.attrs["provenance"] == prov
    out.to_csv(tmp_path / "t.csv", index=False)
    back = pd.read_csv(tmp_path / "t.csv")
    assert back[P.PREFIX + "numerics_version"].tolist() == [NUMERICS_VERSION] * 3
    assert back[P.PREFIX + "theorydyn_version"].iloc[0] == __version__
    assert len(P.attach_to_frame(pd.DataFrame({"x": []}), prov)) == 0
    j = P.attach_to_json({"a": 1}, prov)
    assert j == {"a": 1, "provenance": prov} and json.loads(json.dumps(j)) == j
    with pytest.raises(ValueError, match="'provenance' is already used"):
        P.attach_to_json({"provenance": "mine"}, prov)
    with pytest.raises(ValueError, match="obj must be a dict"):
        P.attach_to_json([1], prov)


def _genoa(**over):
    info = {
        "model name": "AMD EPYC",
        "cpu family": "25",
        "model": "17",
        "stepping": "1",
        "flags": "fpu sse2 avx2 avx512f avx512bw fma",
    }
    return {**info, **over}


def _host_of(monkeypatch, info):
    monkeypatch.setattr(P, "_cpuinfo", lambda: info)
    P.numerics_host.cache_clear()
    try:
        return P.numerics_host()
    finally:
        P.numerics_host.cache_clear()


def test_two_hosts_of_one_model_name_are_told_apart(monkeypatch):
    # Two VMs both calling themselves "AMD EPYC" gave the reduced flow's phase times 3e-8 apart:
    # the identity must separate CPUs that differ in generation or in the flags the VM exposes,
    # and must not separate two readings of one CPU (flag order is not meaningful).
    base = _host_of(monkeypatch, _genoa())
    assert base.startswith("AMD EPYC · family 25 model 17 stepping 1 · flags ")
    assert _host_of(monkeypatch, _genoa(flags="fma avx512bw avx512f avx2 sse2 fpu")) == base
    assert _host_of(monkeypatch, _genoa(flags="fpu sse2 avx2 fma")) != base  # AVX-512 masked
    assert _host_of(monkeypatch, _genoa(**{"cpu family": "26", "model": "2"})) != base  # another generation
    assert _host_of(monkeypatch, _genoa(stepping="2")) != base


def test_the_host_names_each_blas_kernel_and_the_library_versions():
    import llvmlite
    import numba
    from threadpoolctl import threadpool_info

    P.numerics_host.cache_clear()
    host = P.numerics_host()
    # an independent listing of the BLAS libraries: threadpoolctl's own, straight from the loaded .so files
    for lib in threadpool_info():
        if lib["user_api"] == "blas":
            assert f"{lib['internal_api']} {lib['version']} {lib['architecture']}" in host
    for name, version in (("numpy", np.__version__), ("scipy", scipy.__version__), ("numba", numba.__version__)):
        assert f"{name} {version}" in host
    assert f"llvmlite {llvmlite.__version__}" in host
    assert host.startswith(P.cpu_model() + " · ")
    assert socket.gethostname() not in host.split(" · ")  # no host name: nothing personal


def test_cpuinfo_reads_the_first_processor_only(tmp_path, monkeypatch):
    text = "processor\t: 0\nmodel name\t: A\nflags\t\t: x y\n\nprocessor\t: 1\nmodel name\t: B\nflags\t\t: z\n"
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: real_open(path if f == "/proc/cpuinfo" else f, *a, **k))
    assert P._cpuinfo() == {"processor": "0", "model name": "A", "flags": "x y"}
