"""Where every command writes, one run directory, and under which names (:func:`run_name`).

Commands write their outputs (scan rows, ledgers, trajectories, figures, vision runs) under one
folder, :func:`run_root`: ``$THEORYDYN_HOME`` when that variable is set and not empty, else
``runs/`` in the current directory. Nothing lands in a checkout unless a command is pointed there
(``--out``): the committed figures under ``figures/`` change only with ``figures --out figures``.

The defaults are read when a command module is imported, so a process sees one run directory.

>>> import os
>>> os.environ.pop(HOME_ENV, None) and None
>>> str(run_dir("ledger"))
'runs/ledger'
>>> os.environ[HOME_ENV] = "/tmp/td"
>>> str(run_dir("scans"))
'/tmp/td/scans'
>>> del os.environ[HOME_ENV]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .keys import content_key

#: the environment variable naming the run directory
HOME_ENV = "THEORYDYN_HOME"


def run_root() -> Path:
    """``$THEORYDYN_HOME`` (``~`` expanded) when set and not blank, else ``runs`` (relative)."""
    home = os.environ.get(HOME_ENV, "").strip()
    return Path(home).expanduser() if home else Path("runs")


def run_dir(*parts: str) -> Path:
    """``run_root() / parts…``: the default folder of one kind of output."""
    return run_root().joinpath(*parts)


def committed_figures() -> Path | None:
    """The ``figures/`` folder of the source checkout this package is imported from (its manifest
    gives the measured costs), or None for an installed copy without one."""
    p = Path(__file__).resolve().parents[2] / "figures"  # <checkout>/theorydyn/infra/paths.py
    return p if (p / "manifest.json").is_file() else None


def data_dir() -> Path:
    """The default folder of the paper's dataset files (``<run dir>/data``: ``$THEORYDYN_HOME/data`` or
    ``runs/data``), where ``python -m theorydyn.vision`` downloads them and the ledger's Section 6 rows look
    for them, unless ``--data-dir`` points elsewhere: inside the run directory, never the checkout."""
    return run_dir("data")


def vision_ledger_dir() -> Path:
    """The cache of the ledger's vision runs (``<run dir>/vision/ledger``), shared by the ledger's
    Section 6 rows, the vision figures and ``theorydyn.vision.figs``: whichever trains a run first,
    the others read it."""
    return run_dir("vision", "ledger")


# ---- the names of runs and of their output files --------------------------------------------------
#: The characters of a file name that needs no hashing: letters, digits and ``. _ + -``.
SAFE_NAME = re.compile(r"[A-Za-z0-9._+-]+")


def _compact_exponent(text: str) -> str:
    """``1e+06`` → ``1e6`` (a ``:g`` float's exponent without its plus sign and leading zeros)."""
    return re.sub(r"e\+?0*(\d)", r"e\1", text)


def _run_value(v: Any) -> str:
    """A run file's value: booleans lower case, floats ``:g`` with a compact exponent (``1e-5``)."""
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float):
        return _compact_exponent(f"{v:g}").replace("e-0", "e-")
    return str(v)


def _exact_value(v: Any) -> str:
    """A ledger's value: ``:g`` where exact, else ``repr`` (never rounded into another value); a list
    (a partition, a feature vector) as ``h`` + 8 hex digits of its hash."""
    if isinstance(v, (list, tuple)):
        return "h" + content_key({"v": v})[:8]
    if isinstance(v, float):
        g = f"{v:g}"
        return g if float(g) == v else repr(v)
    return str(v)


def _scan_value(v: Any) -> str:
    """A scan axis' values, ``-`` between them; floats ``:g`` with a compact exponent (``1e-05`` kept)."""
    vals = v if isinstance(v, (list, tuple)) else [v]
    return "-".join(_compact_exponent(f"{x:g}") if isinstance(x, float) else str(x) for x in vals)


def _params_digest(name: str, varied: Mapping[str, Any]) -> str:
    return "h" + hashlib.sha256(json.dumps(dict(varied), sort_keys=True, default=str).encode()).hexdigest()[:10]


def _name_digest(name: str, varied: Mapping[str, Any]) -> str:
    return "h" + content_key({"name": name})[:12]


def safe_name(name: str) -> str:
    """A free-form name (a scan's ``--name``) as a file name: letters, digits and ``. _ + -``, never
    starting with a dot (so never ``.`` or ``..``: the files stay inside their folder). A name that had
    to be changed, or is over 90 characters, is cut to 80 and gets ``_`` + 8 hex digits of the sha256
    of the name as given, so that distinct names (``a b`` and ``a-b``) never share a file."""
    safe = re.sub(r"[^A-Za-z0-9._+-]+", "-", name).lstrip(".-").rstrip("-")
    if safe != name or len(safe) > 90:
        safe = (safe[:80] or "scan") + "_" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return safe


@dataclass(frozen=True)
class NameScheme:
    """How one family of names writes a parameter and when it hashes them (:func:`run_name`).

    ``label(name)`` and ``value(v)`` write a token ``label + value``; a name over ``max_len``
    characters (or, with ``safe_only``, with a character outside :data:`SAFE_NAME`) keeps its prefix
    and suffix and replaces its tokens by ``digest(name, varied)`` (``h`` + hex digits); ``free``:
    the prefix is a free-form name, made safe by :func:`safe_name` instead."""

    label: Callable[[str], str]
    value: Callable[[Any], str]
    max_len: int = 10**9
    safe_only: bool = False
    digest: Callable[[str, Mapping[str, Any]], str] = _params_digest
    sep: str = "_"
    free: bool = False

    def token(self, name: str, value: Any) -> str:
        """``label(name) + value(value)``: one parameter of a name (``q0.3``, ``smax5000``, ``D64-128``)."""
        return self.label(name) + self.value(value)


def _same(k: str) -> str:
    return k


#: The files of ``reduced`` and ``simulate`` (``reduced_flow_D64_C4_q0.3_seed1``): ``_`` in a name
#: written ``-``; over 100 characters or unsafe: ``<prefix>_h<10 hex of the parameters' JSON>``.
RUN = NameScheme(label=lambda k: k.replace("_", "-"), value=_run_value, max_len=100, safe_only=True)
#: The ledgers of ``verify`` (``verify_D64_C4_q0.3_quick``): exact values; over 150 characters:
#: ``<prefix>_h<12 hex of the name>_<suffix>``.
LEDGER = NameScheme(label=_same, value=_exact_value, max_len=150, digest=_name_digest)
#: The scans (``D64_C4``, ``D64_C4_q0.2-0.3``): an axis' values joined by ``-``; the name made safe
#: by :func:`safe_name`.
SCAN = NameScheme(label=_same, value=_scan_value, free=True)
#: The cached vision runs (``vit-pos-s0-seed0``, then ``-<10 hex of the configuration>``).
VISION = NameScheme(label=_same, value=str, sep="-")
#: The schemes by the kind of run they name.
SCHEMES = {"reduced": RUN, "simulate": RUN, "verify": LEDGER, "scan": SCAN, "vision": VISION}


def run_name(
    scheme: NameScheme | str,
    prefix: str,
    params: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
    defaults: Mapping[str, Any] | None = None,
    *,
    suffix: str | None = None,
) -> str:
    """The one way runs and their output files are named: ``prefix``, a token
    (:meth:`NameScheme.token`) for every parameter of ``params`` (a mapping, or (name, value) pairs)
    whose value differs from ``defaults`` (in the order of ``params``; a name missing from ``defaults``
    is always written), and ``suffix``, joined by the scheme's separator; shortened by the scheme's
    rule (:class:`NameScheme`) so that two runs that differ in any parameter never share a name.
    ``scheme``: a :class:`NameScheme` or a kind of :data:`SCHEMES`.

    >>> run_name("reduced", "reduced_flow_D64_C4", {"q": 0.3, "seed": 0}, {"q": 0.25, "seed": 0})
    'reduced_flow_D64_C4_q0.3'
    >>> run_name("verify", "verify_D64_C4", {"smax": 5000.0}, suffix="quick")
    'verify_D64_C4_smax5000_quick'
    >>> run_name("scan", "_".join([SCAN.token("D", [64]), SCAN.token("C", [4])]))
    'D64_C4'
    >>> run_name("vision", "cnn-na", {"s": 0, "seed": 1})
    'cnn-na-s0-seed1'
    """
    sch = SCHEMES[scheme] if isinstance(scheme, str) else scheme
    pairs = list(params.items() if isinstance(params, Mapping) else params or ())
    varied = [(k, v) for k, v in pairs if defaults is None or k not in defaults or defaults[k] != v]
    tail = [suffix] if suffix else []
    name = sch.sep.join([prefix, *(sch.token(k, v) for k, v in varied), *tail])
    if sch.free:
        return safe_name(name)
    if len(name) > sch.max_len or (sch.safe_only and not SAFE_NAME.fullmatch(name)):
        name = sch.sep.join([prefix, sch.digest(name, dict(varied)), *tail])
    return name
