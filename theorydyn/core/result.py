"""The one result type and trajectory schema of both solvers (docs/theory.md §3, §4).

Both :func:`theorydyn.reduced.integrate` (N = ∞, three scalars) and
:func:`theorydyn.simulate.simulate` (N samples, the full D×D attention) return a
:class:`Result` whose ``trajectory`` has the columns :data:`CORE_COLUMNS`, with the same
meaning, so a finite-sample trajectory and a reduced one overlay without renaming:

    s            time s = η·t (GD steps times the step size; the flow's own time)
    step         GD step (s/η for the flow)
    alpha        α, the value vector along w*: v = α w* (reduced); ⟨v̂, w*⟩ (simulator)
    gamma, rho   in-set and cross-set attention logits: the values of Lemma 4.1's three-value form
                 (reduced); the means of Â's in-set / cross-set off-diagonal entries (simulator)
    in_mass      in-set attention mass, mean over rows i of Σ_{j∈S(i)} S_ij (Λ + (C−1)Γ when reduced)
    association  Definition 2.2: the fraction of rows whose C largest entries are exactly their set
    risk         population risk ℓ_red (reduced); empirical training risk (E) (simulator)
    err_y        Pr[y F ≤ 0]: population (reduced); on fresh test samples (simulator)
    err_f        Pr[f F ≤ 0 | f ≠ 0], against the labelling function f (NaN when f is undefined)
    amb_f        Pr[f = 0], the mass that err_f leaves out

Solver-specific columns follow (reduced: Lambda, Gamma, Xi; simulator: eta, cos_v, v_norm,
in_std, cross_std, cross_absmax, row_spread_max, row_in_max, row_in_median, train_err).
"""

from __future__ import annotations

import errno
import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..infra.atomic import write_with
from .model import symmetric_attention
from .phases import Phases
from .setting import Setting

#: the format of :meth:`Result.save` files (bumped when the layout changes; older files are refused)
SAVE_FORMAT = 1

CORE_COLUMNS = ("s", "step", "alpha", "gamma", "rho", "in_mass", "association", "risk", "err_y", "err_f", "amb_f")


class Status(StrEnum):
    """How a run ended (a str: ``str(Status.OK) == "ok"``). ``DIVERGED``: a non-finite risk, gradient
    or parameter (the trajectory up to the last finite record is kept); ``FAILED``: the ODE solver gave up;
    ``STOPPED``: a stopping rule asked for by the caller ended the run early (``simulate_replicas(stop_after=…)``:
    association lost inside the window a persistence reading judges; the records up to the stop are kept)."""

    OK = "ok"
    DIVERGED = "diverged"
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass
class Result:
    """One run of either solver.

    Attributes:
        solver: ``"reduced"`` or ``"simulate"``.
        setting: the :class:`~theorydyn.core.setting.Setting`.
        trajectory: DataFrame, :data:`CORE_COLUMNS` first (module docstring).
        phases: :class:`~theorydyn.core.phases.Phases`, computed by the one detector.
        status: :class:`Status`; ``message`` says where and why a run stopped early.
        stopped_step: the GD step (or flow time s / η) where divergence was detected, else None.
        options: the solver's options, as passed (JSON-able).
        seconds: wall time.
        A_final, v_final: the final parameters when the solver has them as arrays (simulator:
            the last finite Â (D, D) and v̂ (d,)); see :attr:`A` and :attr:`v`.
    """

    solver: str
    setting: Setting
    trajectory: pd.DataFrame
    phases: Phases
    status: Status = Status.OK
    message: str = ""
    stopped_step: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    A_final: np.ndarray | None = None
    v_final: np.ndarray | None = None

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def __repr__(self) -> str:
        """One short line (< 300 characters): solver, setting, status, steps, rows, time."""
        s, t = self.setting, self.trajectory
        last = t.iloc[-1] if len(t) else None
        steps = f", steps={float(last['step']):g}, s={float(last['s']):g}" if last is not None else ""
        why = f", message={self.message[:60]!r}" if self.message and not self.ok else ""
        return (
            f"Result(solver={self.solver!r}, D={s.D}, C={s.C}, d={s.d}, q={s.q:g}, status={str(self.status)!r}"
            f"{steps}, rows={len(t)}, seconds={self.seconds:.3g}{why})"
        )

    def save(self, path: str | Path) -> Path:
        """Write this result to ``path`` (an ``.npz`` archive, atomically: :mod:`theorydyn.infra.atomic`;
        never through a link). No pickle: the trajectory is stored column by column as plain arrays,
        the rest as JSON text; :meth:`load` reads it back equal (the trajectory bit for bit).
        Returns the path.

        >>> import tempfile, pathlib
        >>> from theorydyn import Setting, integrate
        >>> r = integrate(Setting(D=16, C=4), s_max=200.0)
        >>> back = Result.load(r.save(pathlib.Path(tempfile.mkdtemp()) / "r.npz"))
        >>> back.trajectory.equals(r.trajectory), back.status == r.status
        (True, True)
        """
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        columns = []
        for i, c in enumerate(self.trajectory.columns):
            col = self.trajectory[c].to_numpy()
            if col.dtype == object:
                col = col.astype(str)
            arrays[f"col{i}"] = col
            columns.append(str(c))
        for name in ("A_final", "v_final"):
            v = getattr(self, name)
            if v is not None:
                arrays[name] = np.asarray(v)
        meta = dict(
            format=SAVE_FORMAT,
            solver=self.solver,
            setting=self.setting.to_dict(),
            explicit=sorted(self.setting.explicit),
            columns=columns,
            phases=self.phases.as_dict(),
            status=str(self.status),
            message=self.message,
            stopped_step=self.stopped_step,
            options=self.options,
            seconds=self.seconds,
        )
        arrays["meta"] = np.asarray(json.dumps(meta, default=_jsonable))

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:  # a file object: np.savez adds no ".npz" to the name
                np.savez(fh, **arrays)  # type: ignore[arg-type]

        write_with(path, write)
        return path

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """A :class:`Result` written by :meth:`save` (``allow_pickle=False``: a planted pickle is
        refused, never run).

        Raises:
            FileNotFoundError: nothing at ``path`` (the error names it); IsADirectoryError: a folder.
            ValueError: ``path`` is not a saved Result: the message says what it is instead (a pickle,
                a NumPy array, text, an archive without a Result in it) or which format version it has.

        >>> import tempfile, pathlib
        >>> bad = pathlib.Path(tempfile.mkdtemp()) / "run.py"
        >>> _ = bad.write_text("print('hello')")
        >>> try:
        ...     Result.load(bad)
        ... except ValueError as e:
        ...     print(str(e).split(": it is ")[1])
        a text file, first line "print('hello')"
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, "no saved theorydyn Result there (Result.save writes one)", str(path))
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, "a folder, not a saved theorydyn Result", str(path))
        what = _what_file(path)
        if what is not None:
            raise ValueError(
                f"{path}: not a saved theorydyn Result (an .npz archive written by Result.save): it is {what}"
            )
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(str(arrays.pop("meta")))
            if meta.get("format") != SAVE_FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, this toolkit reads {SAVE_FORMAT}")
            traj = pd.DataFrame({c: arrays[f"col{i}"] for i, c in enumerate(meta["columns"])})
            setting = Setting(**meta["setting"])
            object.__setattr__(setting, "explicit", frozenset(meta["explicit"]))
            return cls(
                solver=meta["solver"],
                setting=setting,
                trajectory=traj,
                phases=Phases(**meta["phases"]),
                status=Status(meta["status"]),
                message=meta["message"],
                stopped_step=meta["stopped_step"],
                options=meta["options"],
                seconds=float(meta["seconds"]),
                A_final=arrays.get("A_final"),
                v_final=arrays.get("v_final"),
            )
        except KeyError as e:
            raise ValueError(
                f"{path}: not a saved theorydyn Result: an .npz archive without the entry {e.args[0]!r} of one"
            ) from None
        except (OSError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: not a saved theorydyn Result ({type(e).__name__}: {e})") from None

    @property
    def A(self) -> np.ndarray:
        """(D, D) final attention logits; for the reduced solver the three-value form at the last record."""
        if self.A_final is not None:
            return self.A_final
        last = self.trajectory.iloc[-1]
        return symmetric_attention(self.setting, float(last["gamma"]), float(last["rho"]))

    @property
    def v(self) -> np.ndarray:
        """(d,) final value vector; α w* at the last record for the reduced solver."""
        if self.v_final is not None:
            return self.v_final
        return float(self.trajectory["alpha"].iloc[-1]) * self.setting.w_star

    def summary(self) -> dict[str, Any]:
        """JSON-able digest: status, setting, options, phases and the last row."""
        fin = self.trajectory.iloc[-1].to_dict() if len(self.trajectory) else {}
        return {
            "solver": self.solver,
            "status": str(self.status),
            "message": self.message,
            "stopped_step": self.stopped_step,
            "seconds": self.seconds,
            "setting": self.setting.to_dict(),
            "options": self.options,
            "phases": self.phases.as_dict(),
            "final": {
                k: (None if v is None or (isinstance(v, float) and not np.isfinite(v)) else float(v))
                for k, v in fin.items()
            },
        }


#: the first bytes of the files a user may hand to :meth:`Result.load` by mistake → what they are
_MAGIC = (
    (b"\x93NUMPY", "a NumPy array (.npy), not an .npz archive of a Result"),
    (b"\x80", "a Python pickle (refused: loading one can run code)"),
    (b"\x89HDF", "an HDF5 file"),
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"SQLite format 3", "a SQLite database (a results store? read it with theorydyn.scan.load_scan)"),
)


def _what_file(path: Path) -> str | None:
    """What the file at ``path`` is, when it cannot be an ``.npz`` archive (None: a zip archive, read on)."""
    with open(path, "rb") as fh:
        head = fh.read(512)
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return None
    if not head:
        return "an empty file"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return f"a binary file (first bytes {head[:8]!r})"
    first = text.splitlines()[0] if text.strip() else ""
    return f"a text file, first line {first[:60]!r}"


def _jsonable(v: Any) -> Any:
    """JSON for the NumPy values an options dict may hold (scalars, arrays) and anything else as text."""
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (set, frozenset, tuple)):
        return list(v)
    return str(v)


def trajectory_problem(path: str | Path) -> str | None:
    """Why the trajectory CSV at ``path`` (as a scan writes it: ``s`` first, then the columns of
    :data:`CORE_COLUMNS` its solver records) cannot be read back, or None. Checked: the file ends with
    a newline (a torn write does not), at least one row, an ``s`` column, every core column present
    numeric, ``s`` and ``step`` finite and non-decreasing. What it cannot tell: whether the numbers
    are the ones the solver computed (docs/reliability.md)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        return f"cannot be read: {e.strerror or e}"
    if not raw.endswith(b"\n"):
        return "its last line is cut (no newline at the end): a torn file"
    try:
        df = pd.read_csv(p)
    except (ValueError, pd.errors.ParserError) as e:
        return f"not a CSV table: {e}"
    if "s" not in df.columns:
        return "lacks the column 's'"
    if df.empty:
        return "has no row"
    present = [c for c in CORE_COLUMNS if c in df.columns]
    if not all(pd.api.types.is_numeric_dtype(df[c]) for c in present):
        return "a core column is not numeric"
    for c in ("s", "step"):
        if c in df.columns:
            x = df[c].to_numpy(dtype=float)
            if not np.isfinite(x).all() or (np.diff(x) < 0).any():
                return f"its {c!r} column is not finite and non-decreasing"
    return None


def read_trajectory(path: str | Path) -> pd.DataFrame:
    """The trajectory CSV at ``path`` after :func:`trajectory_problem`'s checks.

    Raises:
        ValueError: naming the file and what is wrong with it.
    """
    why = trajectory_problem(path)
    if why is not None:
        raise ValueError(f"trajectory {str(path)!r} {why}")
    return pd.read_csv(path)
