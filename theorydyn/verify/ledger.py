"""The ledger's unit of work and its store: one claim's rows, computed once, reused while nothing they
depend on has changed.

A claim (one module of :data:`theorydyn.claims.REGISTRY`) is one task: :func:`run_claim` imports it,
runs it (:func:`theorydyn.claims.judge`: the experiment a claim declares, judged by its ``rows``, or its
``checks(s, quick=…, progress=…, **options)``) and returns its rows with the seconds it took. The
same function runs in this process or on a Dask worker (``verify --scheduler``), so a row does not
depend on where it ran.

Stored results. Each finished claim is one row of a :class:`theorydyn.infra.keyed.KeyedStore` (scope
:data:`SCOPE` of ``<out>/results.sqlite``: one SQLite transaction, so a ``kill -9`` leaves a claim
stored whole or not at all). Its ``key`` is :func:`theorydyn.infra.keys.content_key` of the payload
(:func:`payload`)::

    {"claim": name, "module": module path, "setting": Setting.to_dict(), "quick": bool,
     "options": the claim's keyword options, "code": code_fingerprint(module),
     "libraries": versions of python, numpy, scipy, numba, pandas, torch}

``code`` (:func:`code_fingerprint`) is the sha256 of the claim module's source and of every
theorydyn module it imports, directly or not (read from the import statements, the packages'
``__init__`` files and the ``"module:function"`` runner strings, never by importing), so an edit of
any code a claim runs gives a new key and the claim is computed again; an edit elsewhere keeps its
stored rows. A module without a source file (built in memory) has no fingerprint: its rows are never
stored.

Reading checks every stored row (:func:`validate`): its key is the hash of its own payload, its rows
are a JSON list of objects with exactly the ledger's columns, every verdict is a :class:`Verdict`,
every number a number. A row that fails is moved to the store's ``rejected`` table and computed again.

Not reused even when the key matches: a result with a NOT_RUN row (the claim could not run *here*:
its data files were absent, say, which the key does not see; it runs again each time, and its own
caches make that cheap where it trained something), unless the claim module declares what outside
the code it depends on: ``inputs(s, quick, **options)``, a JSON-able value that then enters the key
(``"inputs"``), e.g. the names and sizes of the data files present. A claim that raised, or was not
installed, is never stored.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import json
import math
import re
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .. import claims
from ..claims.check import LEDGER_COLUMNS, Verdict
from ..core.setting import Setting
from ..infra.keyed import KeyedStore, json_column, row_problem
from ..infra.keys import canonical_json
from ..infra.provenance import LIBRARIES
from ..infra.store import DB_NAME

#: The scope of the claims' rows in ``<out>/results.sqlite``.
SCOPE = "ledger_claims"
#: The store's nominal export path in the results folder (never written: the ledger CSV is written
#: by ``verify`` itself; this name only places the store's ``ledger_claims.rejected.csv`` listing).
STORE_FILE = SCOPE + ".csv"
SKIP = "SKIP"
NUMERIC = ("measured", "ci_low", "ci_high")
VERDICTS = frozenset(str(v) for v in Verdict)

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_RUNNER = re.compile(r"(theorydyn(?:\.[A-Za-z_]\w*)+):[A-Za-z_][\w.]*")


# ---- the rows --------------------------------------------------------------------------------------
def normal_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A ledger row in the one form every route gives (computed here, on a worker, or read back from
    the store): the numbers as float (nan for none), every other column as text ("" for none).

    Raises:
        ValueError: a column missing, or a number that is not one.
    """
    out: dict[str, Any] = {}
    for c in LEDGER_COLUMNS:
        if c == "form" and c not in row:  # rows stored before the forms: no form declared
            out[c] = ""
            continue
        if c not in row:
            raise ValueError(f"ledger row has no {c!r} column")
        v = row[c]
        if c in NUMERIC:
            out[c] = math.nan if v is None or v == "" else float(v)
        else:
            out[c] = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
    return out


def _rows_json(rows: list[dict[str, Any]]) -> str:
    """Rows as canonical JSON (nan written as null: the exact float ``repr`` round-trips otherwise)."""
    return canonical_json([{c: (None if c in NUMERIC and math.isnan(r[c]) else r[c]) for c in r} for r in rows])


def _rows_from_json(text: str) -> list[dict[str, Any]]:
    obj = json.loads(text)
    if not isinstance(obj, list) or not all(isinstance(r, dict) for r in obj):
        raise ValueError("rows are not a JSON list of objects")
    rows = []
    for r in obj:
        if set(r) - {"form"} != set(LEDGER_COLUMNS) - {"form"}:
            raise ValueError(f"a row has the columns {sorted(r)}, not the ledger's")
        if r["verdict"] not in VERDICTS:
            raise ValueError(f"verdict {r['verdict']!r} is not one of {sorted(VERDICTS)}")
        if any(r[c] is not None and not isinstance(r[c], (int, float)) for c in NUMERIC):
            raise ValueError("a measured value or interval end is not a number")
        rows.append(normal_row(r))
    return rows


def _row(claim: str, quantity: str, verdict: str, note: str = "") -> dict[str, Any]:
    """A row that measured nothing: these four columns, every other one empty (nan, "")."""
    return normal_row(
        {**dict.fromkeys(LEDGER_COLUMNS), **dict(claim=claim, quantity=quantity, verdict=verdict, note=note)}
    )


def failed_row(where: str, e: BaseException, what: str = "(the check raised)") -> dict[str, Any]:
    """The FAIL row of a claim that raised ``e`` (a check that could not run is not a pass)."""
    tb = traceback.extract_tb(e.__traceback__)
    at = f" [{Path(tb[-1].filename).name}:{tb[-1].lineno}]" if tb else ""
    return _row(where, what, str(Verdict.FAIL), f"{type(e).__name__}: {e}{at}")


# ---- the task --------------------------------------------------------------------------------------
def run_claim(
    name: str,
    module: str,
    s: Setting,
    quick: bool,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run one claim: ``{"name", "status", "rows", "seconds", "code", "libraries"}``.

    ``status`` is ``"computed"`` (its rows), ``"skipped"`` (the module or an extra it needs is not
    installed: one SKIP row) or ``"failed"`` (it raised: one FAIL row with the exception). ``code``
    and ``libraries`` are this process's :func:`code_fingerprint` and :func:`library_versions`, so
    that a driver can tell whether a Dask worker ran the code it keyed the result with. Never raises
    for the claim's own errors (one broken claim must not hide the others' rows).
    """
    t = time.perf_counter()
    where = module
    status = "computed"
    try:
        mod = _load(module)
        judged = claims.judge(mod, s, quick=quick, progress=progress, **dict(options or {}))
        rows = [normal_row(c.row()) for c in judged]
    except ImportError as e:
        rows, status = [_row(where, "(source absent from this installation)", SKIP, str(e))], "skipped"
    except Exception as e:  # noqa: BLE001 — one broken part must not hide the others' results
        rows, status = [failed_row(where, e)], "failed"
    return dict(
        name=name,
        status=status,
        rows=rows,
        seconds=time.perf_counter() - t,
        code=code_fingerprint(module),
        libraries=library_versions(),
    )


def _load(module: str) -> Any:
    """The claim module at ``module`` (:func:`theorydyn.claims.load_path`)."""
    return claims.load_path(module)


# ---- what a result depends on ----------------------------------------------------------------------
@cache
def library_versions() -> dict[str, str | None]:
    """The installed versions of python and :data:`theorydyn.infra.provenance.LIBRARIES` (from the
    distributions' metadata, the same whether a library is imported or not; None: not installed)."""
    out: dict[str, str | None] = {"python": sys.version.split()[0]}
    for module, dist in LIBRARIES.items():
        try:
            out[module] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[module] = None
    return out


def _theorydyn_file(name: str) -> Path | None:
    """The source file of the theorydyn module ``name`` (a package: its ``__init__.py``), found on disk."""
    parts = name.split(".")[1:]
    base = _PACKAGE_DIR.joinpath(*parts)
    for f in ((base.with_suffix(".py"),) if parts else ()) + (base / "__init__.py",):
        if f.is_file():
            return f
    return None


def _source_file(name: str) -> Path | None:
    if name == "theorydyn" or name.startswith("theorydyn."):
        return _theorydyn_file(name)
    mod = sys.modules.get(name)
    if mod is not None:
        f = getattr(mod, "__file__", None)
        return Path(f) if f and f.endswith(".py") and Path(f).is_file() else None
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    f = spec.origin if spec is not None else None
    return Path(f) if f and f.endswith(".py") and Path(f).is_file() else None


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, tree: ast.AST) -> set[str]:
    """The theorydyn modules that the source of module ``name`` names: its imports (anywhere in the
    file but under ``if TYPE_CHECKING:``, relative ones resolved; ``from P import x`` names P and P.x)
    and its runner strings."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    # imports under ``if TYPE_CHECKING:`` never run (the packages' lazy re-exports list their names there
    # for type checkers): they are not the code a claim runs
    typing_only = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and _is_type_checking(block.test)
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _RUNNER.fullmatch(node.value)
            if m:
                found.add(m.group(1))
    out: set[str] = set()
    for mod in found:
        if mod == "theorydyn" or mod.startswith("theorydyn."):
            parts = mod.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # the packages run first
    return out


@cache
def _read(name: str, path: Path) -> tuple[bytes, frozenset[str]]:
    """The source of module ``name`` at ``path`` and the theorydyn modules it names (each file parsed
    once per process: the claims share most of them)."""
    src = path.read_bytes()
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return src, frozenset()  # its bytes are in the hash; importing it fails anyway
    return src, frozenset(_imports(name, path, tree))


def code_sources(module: str) -> dict[str, bytes] | None:
    """The source of ``module`` and of every theorydyn module it imports, transitively (module
    docstring), by module name; None when ``module`` has no source file."""
    first = _source_file(module)
    if first is None:
        return None
    seen: dict[str, bytes] = {}
    todo = [(module, first)]
    while todo:
        name, path = todo.pop()
        if name in seen:
            continue
        seen[name], deps = _read(name, path)
        for dep in deps:
            f = _theorydyn_file(dep)
            if f is not None and dep not in seen:
                todo.append((dep, f))
    return seen


@cache
def code_fingerprint(module: str) -> str | None:
    """sha256 over :func:`code_sources` of ``module`` (each source under its name); None without a
    source file. Cached per process: a result names the code it was computed with at start-up."""
    seen = code_sources(module)
    if seen is None:
        return None
    h = hashlib.sha256()
    for name in sorted(seen):
        h.update(name.encode() + b"\0" + hashlib.sha256(seen[name]).digest())
    return h.hexdigest()


def payload(
    name: str, module: str, s: Setting, quick: bool, options: Mapping[str, Any], code: str | None = None
) -> dict[str, Any] | None:
    """Everything a claim's rows depend on (module docstring), or None when they cannot be keyed
    (no source file, not installed, or its ``inputs`` raised). ``code`` defaults to this process's
    :func:`code_fingerprint`. A claim module may define ``inputs(s, quick, **options)``: a JSON-able
    description of what outside the code its rows depend on (its data files, say), added to the
    payload as ``inputs``; such a claim's NOT_RUN rows are then reused like any other."""
    code = code if code is not None else code_fingerprint(module)
    if code is None:
        return None
    out = dict(
        claim=name,
        module=module,
        setting=s.to_dict(),
        quick=bool(quick),
        options=dict(options),
        code=code,
        libraries=library_versions(),
    )
    try:
        fn = getattr(_load(module), "inputs", None)
        if callable(fn):
            out["inputs"] = fn(s, quick, **options)
        canonical_json(out)  # JSON-able, or not keyed
    except Exception:  # noqa: BLE001 — a claim that cannot say what it depends on is computed, not stored
        return None
    return out


# ---- the store -------------------------------------------------------------------------------------
def _check(row: dict[str, str], p: Mapping[str, Any]) -> str | None:
    """The values of a stored claim row (its key is checked by the store): its rows parse, and are ``n_rows``."""
    try:
        rows = _rows_from_json(row.get("rows", ""))
    except (ValueError, TypeError) as e:
        return f"invalid: {e}"
    if str(len(rows)) != row.get("n_rows"):
        return f"invalid: {len(rows)} rows stored, n_rows says {row.get('n_rows')!r}"
    return None


def validate(row: dict[str, str]) -> str | None:
    """Why a stored claim row cannot be trusted, or None (module docstring; the one validation of
    :func:`theorydyn.infra.keyed.row_problem`, the payload in the column ``payload``)."""
    return row_problem(row, json_column("payload"), check=_check)


def open_store(folder: str | Path) -> KeyedStore:
    """The claims' store of the results folder ``folder`` (``folder/results.sqlite``, scope :data:`SCOPE`).

    Raises:
        theorydyn.infra.store.StoreError: the folder cannot hold it.
    """
    folder = Path(folder)
    return KeyedStore(
        folder / STORE_FILE,
        payload_column="payload",
        check=_check,
        kinds={"seconds": "num", "n_rows": "num"},
        db=folder / DB_NAME,
        scope=SCOPE,
        create=True,
    )


def stored_rows(store: KeyedStore, key: str) -> list[dict[str, Any]] | None:
    """The rows stored under ``key`` when they may be reused, else None: a result with a NOT_RUN row
    is reused only when its claim declares its ``inputs`` (:func:`payload`), which are then in the key."""
    row = store.rows.get(key)
    if row is None:
        return None
    rows = _rows_from_json(row["rows"])
    if any(r["verdict"] == str(Verdict.NOT_RUN) for r in rows) and "inputs" not in json.loads(row["payload"]):
        return None
    return rows


def save(store: KeyedStore, p: Mapping[str, Any], rows: list[dict[str, Any]], seconds: float) -> None:
    """Commit one claim's rows under the key of its payload ``p`` (one transaction), replacing a
    stored result of the same key (one with NOT_RUN rows, or ``--recompute``), so that its time is
    the latest. The replacement is two transactions (the store has no replace): a kill between them
    leaves the claim absent, computed again by the next run, never torn."""
    store.replace(
        p,
        dict(
            claim=p["claim"],
            quick=str(p["quick"]),
            D=str(p["setting"]["D"]),
            payload=canonical_json(p),  # (the store writes it; named here to keep the columns' order)
            rows=_rows_json(rows),
            n_rows=len(rows),
            seconds=float(seconds),
        ),
    )


def last_seconds(store: KeyedStore | None, name: str, s: Setting, quick: bool) -> float | None:
    """The seconds the last stored run of claim ``name`` took, in this mode (quick or not) at this D
    if there is one, else at any D; None when it never ran here. The weights of the progress bar."""
    if store is None:
        return None
    same = [r for r in store.rows.values() if r.get("claim") == name and r.get("quick") == str(bool(quick))]
    at_d = [r for r in same if r.get("D") == str(s.D)]
    for rows in (at_d, same):
        if rows:
            return float(rows[-1]["seconds"])  # rows are in commit order: the last one is the latest
    return None


__all__ = [
    "SCOPE",
    "SKIP",
    "code_fingerprint",
    "code_sources",
    "failed_row",
    "last_seconds",
    "library_versions",
    "normal_row",
    "open_store",
    "payload",
    "run_claim",
    "save",
    "stored_rows",
    "validate",
]
