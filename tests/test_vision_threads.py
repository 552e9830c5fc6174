"""The vision commands make OpenMP's waiting threads sleep (theorydyn.vision.threads) before torch loads."""

import os
import subprocess
import sys

import pytest

from theorydyn.vision.threads import describe

CODE = (
    "import os, sys; from theorydyn.vision.threads import passive_wait; p = passive_wait(); "
    "import torch; print(p, os.environ.get('OMP_WAIT_POLICY'))"
)


def _run(env_policy):
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if env_policy:
        env["OMP_WAIT_POLICY"] = env_policy
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_passive_by_default_and_the_users_policy_is_kept():
    assert _run(None) == ["PASSIVE", "PASSIVE"]
    assert _run("ACTIVE") == ["ACTIVE", "ACTIVE"]


def test_too_late_once_torch_is_imported():
    pytest.importorskip("torch")
    code = "import torch, os; from theorydyn.vision.threads import passive_wait; print(passive_wait())"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "default (torch already imported)", out.stderr[-2000:]


def test_the_header_names_threads_and_policy(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert describe(1) == "1 torch thread, OpenMP wait PASSIVE"
    assert describe(2) == "2 torch threads, OpenMP wait PASSIVE"
