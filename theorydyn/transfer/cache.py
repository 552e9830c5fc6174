"""Pre-trained attentions, cached and checked (the upstream half of the transfer experiment).

``pretrained``: the final (γ, ρ) of the reduced gradient flow (:func:`flow_attention`, Theorem 4.1's
population GD); ``pretrained-sim``: Â from finite-sample GD (:func:`pretrained_attention`,
Theorem 4.2's realistic process). Both are cached as ``.npz`` files in a folder:

* **written atomically** (:func:`theorydyn.infra.atomic.write_with`): a kill or a full disk leaves the
  old file or none, never a torn one;
* **self-describing**: each holds ``params`` (the canonical JSON of everything it was made from:
  the setting, the solver options, the numerics version) and ``sha256``, the hash of its arrays;
* **checked on reading**: unreadable, made from other parameters (the stores' one invalidation rule,
  :func:`theorydyn.infra.keys.payload_problem`: the file's name is its key, its ``params`` the
  payload), a hash that does not match, a wrong shape or a non-finite value (γ = NaN, an A with NaN,
  A = 0) — the file is moved aside (``<name>.rejected-<n>``) with a :class:`CacheWarning` and the
  attention is computed again.

Both functions return the content hash in ``info["cache_sha256"]`` (the same whether read or
computed): the transfer rows put it in their keys, so rows made from a bad cache are never reused
once it is repaired.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from ..core import model
from ..core.setting import Setting
from ..infra.atomic import write_with
from ..infra.keys import canonical_json, payload_problem
from ..infra.provenance import NUMERICS_VERSION
from ..reduced import default_horizon, integrate
from .task import PRETRAIN, pretrain


class CacheWarning(UserWarning):
    """A cached attention failed its checks and was moved aside (it is computed again)."""


def flow_s_max(D: int) -> float:
    """Horizon of the idealized pre-training: the ledger's :func:`theorydyn.reduced.default_horizon`,
    2·10⁴·max(1, D/64)^1.5 (past Event III for C = 4, K = 8)."""
    return default_horizon(D)


def _setting_tag(s: Setting) -> str:
    """Names a cached attention: the setting, and the numerics version (so a change of the solvers'
    numbers never reuses an attention computed by older code)."""
    part = s.partition if isinstance(s.partition, str) else "explicit"
    return (
        f"D{s.D}_C{s.C}_d{s.d}_q{s.q:.6g}_nu{s.nu:g}_beta{s.beta:g}_tau{s.tau:g}_{part}{s.partition_seed}"
        f"_feat{s.feature if isinstance(s.feature, int) else 'vec'}_v{NUMERICS_VERSION}"
    )


def _cache_key(s: Setting, N: int, steps: int, eta: float, omega: float, seed: int) -> str:
    return f"upstream_{_setting_tag(s)}_N{N}_steps{steps}_eta{eta:g}_omega{omega:g}_seed{seed}.npz"


#: Entries a cache keeps but its hash leaves out (they cannot change any number downstream).
UNHASHED = ("wall_s",)


def content_hash(arrays: dict[str, np.ndarray]) -> str:
    """sha256 of named arrays (all but :data:`UNHASHED`): names, dtypes, shapes and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(set(arrays) - set(UNHASHED)):
        a = np.ascontiguousarray(arrays[name])
        h.update(json.dumps([name, a.dtype.str, list(a.shape)]).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _arrays(info: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in info.items()}


def write_cache(path: Path, arrays: dict[str, np.ndarray], params: dict[str, Any]) -> None:
    """Write ``arrays`` with their ``params`` and content hash to ``path`` atomically."""
    meta = {"params": np.asarray(canonical_json(params)), "sha256": np.asarray(content_hash(arrays))}
    savez: Any = np.savez  # (numpy's stub types the keyword arrays as its own options)
    write_with(path, lambda t: savez(t, **arrays, **meta))


def _move_aside(path: Path, why: str) -> None:
    n = 1
    while (dest := path.with_name(f"{path.name}.rejected-{n}")).exists():
        n += 1
    try:
        path.replace(dest)
        where = f"moved to {dest.name}"
    except OSError as e:  # cannot move it: it is overwritten by the recomputed one
        where = f"cannot be moved aside ({e.strerror or e})"
    warnings.warn(f"cached attention {path} {why}; {where}, computing it again", CacheWarning, stacklevel=4)


def read_cache(
    path: Path, params: dict[str, Any], check: Callable[[dict[str, np.ndarray]], str | None]
) -> tuple[dict[str, np.ndarray], str] | None:
    """The arrays of a valid cache at ``path`` and its hash, or None (absent, or bad: moved aside with a
    :class:`CacheWarning`). Valid: readable, made from ``params``, its hash matching, ``check`` passing."""
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: np.array(z[k]) for k in z.files}
    except Exception as e:  # noqa: BLE001 — a torn zip raises BadZipFile, EOFError, ValueError, OSError …
        _move_aside(path, f"cannot be read ({type(e).__name__}: {e})")
        return None
    got_params, got_hash = arrays.pop("params", None), arrays.pop("sha256", None)
    why: str | None
    if got_params is None or got_hash is None or got_params.shape != () or got_hash.shape != ():
        why = "holds no parameters or content hash"
    elif why := payload_problem(str(got_params), params):  # the store's one invalidation rule
        pass
    elif str(got_hash) != content_hash(arrays):
        why = "does not match its content hash"
    else:
        try:
            why = check(arrays)
        except (KeyError, TypeError, ValueError) as e:
            why = f"is malformed ({type(e).__name__}: {e})"
    if why:
        _move_aside(path, why)
        return None
    return arrays, str(got_hash)


def _scalars_problem(arrays: dict[str, np.ndarray], finite: tuple[str, ...], names: tuple[str, ...]) -> str | None:
    missing = [k for k in names if k not in arrays]
    if missing:
        return f"lacks {missing}"
    for k in names:
        if arrays[k].shape != ():
            return f"holds {k} of shape {arrays[k].shape}, not a scalar"
    for k in finite:
        if not np.isfinite(float(arrays[k])):
            return f"holds {k} = {float(arrays[k])}"
    return None


_FLOW = ("gamma", "rho", "alpha", "err_f", "T2", "status", "s_max")
_SIM = ("status", "message", "steps", "test_err_f", "association", "wall_s")


def flow_attention(
    s: Setting, s_max: float | None = None, n_samples: int = 2000, seed: int = 0, cache: str | Path | None = None
) -> tuple[float, float, dict]:
    """(γ, ρ, info) at the end of the reduced gradient flow from the idealized init (Theorem 4.1's
    population GD, docs/theory.md §3), read from / written to ``cache`` (checked .npz, module docstring).
    info: alpha, err_f (population, against f), T2, status, s_max, cached, cache_sha256."""
    s_max = flow_s_max(s.D) if s_max is None else s_max
    params = dict(
        kind="reduced-flow", setting=s.to_dict(), s_max=s_max, n_samples=n_samples, seed=seed, numerics=NUMERICS_VERSION
    )
    path = (
        Path(cache) / f"flow_{_setting_tag(s)}_smax{s_max:g}_n{n_samples}_seed{seed}.npz" if cache is not None else None
    )
    found = (
        read_cache(path, params, lambda a: _scalars_problem(a, ("gamma", "rho", "alpha", "s_max"), _FLOW))
        if path is not None
        else None
    )
    if found is not None:
        arrays, digest = found
        info = {k: arrays[k].item() for k in _FLOW}
        info.update(cached=True, cache_sha256=digest)
        return float(info.pop("gamma")), float(info.pop("rho")), info

    res = integrate(s, method="flow", s_max=s_max, n_samples=n_samples, seed=seed, n_points=40)
    last = res.trajectory.iloc[-1]
    info = dict(
        gamma=float(last["gamma"]),
        rho=float(last["rho"]),
        alpha=float(last["alpha"]),
        err_f=float(last["err_f"]),
        T2=float(res.phases.T2 if res.phases.T2 is not None else np.nan),
        status=str(res.status),
        s_max=float(last["s"]),
    )
    arrays = _arrays(info)
    if path is not None:
        write_cache(path, arrays, params)
    info.update(cached=False, cache_sha256=content_hash(arrays))
    return float(info.pop("gamma")), float(info.pop("rho")), info


def pretrained_attention(
    s: Setting, N: int, steps: int, eta: float, omega: float, seed: int = 0, cache: str | Path | None = None
) -> tuple[np.ndarray, dict]:
    """Â pre-trained upstream by finite-sample GD (:func:`~theorydyn.transfer.task.pretrain`), read from /
    written to ``cache`` (checked .npz, module docstring). Returns (Â, info) with info: status, message
    (where and why a run diverged), steps (the step it stopped at),
    test_err_f, association (Definition 2.2, own sets), wall_s, cached, cache_sha256."""
    run = replace(PRETRAIN, N=N, steps=steps, eta=eta, omega=omega, seed=seed)
    params = dict(
        kind="simulate",
        setting=s.to_dict(),
        **{k: getattr(run, k) for k in ("N", "steps", "eta", "omega", "seed", "dtype")},
        numerics=NUMERICS_VERSION,
    )
    path = Path(cache) / _cache_key(s, N, steps, eta, omega, seed) if cache is not None else None

    def check(a: dict[str, np.ndarray]) -> str | None:
        why = _scalars_problem(a, (), _SIM)
        if why:
            return why
        A = a.get("A")
        if A is None or A.shape != (s.D, s.D):
            return f"holds A of shape {None if A is None else A.shape}, not ({s.D}, {s.D})"
        if not np.all(np.isfinite(A)):
            return "holds an A with non-finite entries"
        if not np.any(A):
            return "holds A = 0"
        return None

    found = read_cache(path, params, check) if path is not None else None
    if found is not None:
        arrays, digest = found
        info = {k: arrays[k].item() for k in _SIM}
        info.update(cached=True, cache_sha256=digest)
        return np.array(arrays["A"]), info
    t = time.perf_counter()
    res = pretrain(s, run)
    last = res.trajectory.iloc[-1]
    info = dict(
        status=str(res.status),
        message=str(res.message),
        # the step it stopped at (the trajectory's last row is only its last *recorded* step: a run
        # that diverged at step 170 has its last row at step 40, recorded every step up to 40)
        steps=int(res.stopped_step) if res.stopped_step is not None else int(last["step"]),
        test_err_f=float(last["err_f"]),
        association=model.association(s, res.A),
        wall_s=time.perf_counter() - t,
    )
    arrays = {"A": np.asarray(res.A), **_arrays(info)}
    if path is not None:
        write_cache(path, arrays, params)
    info.update(cached=False, cache_sha256=content_hash(arrays))
    return res.A, info


def other_partition(s: Setting) -> Setting:
    """``s`` with a random partition (seed + 1): the sets an 'other-partition' Â associates."""
    return s.replace(partition="random", partition_seed=s.partition_seed + 1)
