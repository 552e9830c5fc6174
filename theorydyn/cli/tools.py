"""Command-line plumbing shared by every entry point.

Every CLI builds its :class:`~theorydyn.core.setting.Setting` through
:func:`add_setting_arguments` / :func:`setting_from_args`, so the flags, their
defaults and their validation are the same everywhere. Bad input never produces
a traceback: :func:`fail` prints ``error: <parameter>: <rule>`` and exits with
status 2, like argparse itself.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from ..core.setting import D_MAX, Setting
from ..infra.atomic import atomic_path, write_with
from ..infra.limits import TAU_MIN
from ..infra.limits import VALUE_MAX as _VALUE_MAX
from ..infra.memory import MEMORY_ENV, MemoryEstimate, ResourceError, check_memory
from ..infra.paths import HOME_ENV, RUN, run_name


def _prog() -> str:
    """``python -m theorydyn.X`` for a module run with -m (argv[0] is then its file path)."""
    path = Path(sys.argv[0]) if sys.argv and sys.argv[0] else Path("theorydyn")
    parts = path.with_suffix("").parts
    if path.suffix == ".py" and "theorydyn" in parts:
        mod = parts[len(parts) - 1 - parts[::-1].index("theorydyn") :]
        mod = mod[:-1] if mod[-1] == "__main__" else mod
        return "python -m " + ".".join(mod)
    return path.name


def fail(message: str, prog: str | None = None) -> NoReturn:
    """Print ``prog: error: message`` to stderr and exit with status 2."""
    prog = prog or _prog()
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _partition_arg(text: str):
    """``blocks``/``grid``/``random`` or an explicit partition ``0,1;2,3;…``."""
    if ";" in text or "," in text:
        try:
            return tuple(tuple(int(i) for i in part.split(",")) for part in text.split(";"))
        except ValueError:
            raise argparse.ArgumentTypeError(f"explicit partition must look like '0,1;2,3', got {text!r}") from None
    return text


def add_setting_arguments(parser: argparse.ArgumentParser, D: int = 64, C: int = 4) -> None:
    """Add the flags of every Setting field (docs/theory.md §1) to ``parser``.

    Each numeric flag is checked at parse time by :func:`number` (finite, integer where it must
    be, in the range of :class:`~theorydyn.core.setting.Setting`); the rules that tie fields together
    (C divides D, p odd, …) are Setting's own, reported by :func:`setting_from_args` under the
    flag's name.
    """
    g = parser.add_argument_group("setting (docs/theory.md §1)")
    add_number(g, "--D", int, low=2, high=D_MAX, default=D, help=f"number of patches, 2..{D_MAX} (default %(default)s)")
    add_number(
        g,
        "--C",
        int,
        low=2,
        high=D_MAX,
        default=C,
        help="size of each set S_l, 2 <= C < D, dividing D (default %(default)s)",
    )
    add_number(g, "--d", int, low=2, high=D_MAX, default=None, help="patch dimension (default D)")
    add_number(
        g,
        "--q",
        float,
        low=0,
        high=1,
        rule="q must lie in [0, 1]",
        default=None,
        help="probability of ±w* in a random patch, in [0, 1] (default min(1, C²/D))",
    )
    add_positive(g, "--sigma2", float, default=None, help="noise variance > 0 (default 1/d)")
    add_number(g, "--p", int, low=3, default=3, help="degree of the activation (odd, >= 3)")
    add_positive(g, "--nu", float, default=None, help="linear part of the activation > 0 (default 1/d)")
    add_number(g, "--beta", float, default=1.0, help="fixed attention diagonal (default 1)")
    add_number(g, "--tau", float, low=TAU_MIN, default=1.0, help=f"softmax temperature >= {TAU_MIN:g} (default 1)")
    g.add_argument("--partition", type=_partition_arg, default="blocks", help="blocks | grid | random | '0,1;2,3;…'")
    add_number(g, "--partition-seed", int, low=0, default=0, help="seed of the random partition, an integer >= 0")


#: Setting field → the flag that sets it (for messages).
SETTING_FLAGS = {
    "D": "--D",
    "C": "--C",
    "d": "--d",
    "q": "--q",
    "sigma2": "--sigma2",
    "p": "--p",
    "nu": "--nu",
    "beta": "--beta",
    "tau": "--tau",
    "partition": "--partition",
    "partition_seed": "--partition-seed",
}


def setting_error_message(e: Exception) -> str:
    """A Setting's ValueError prefixed with the flag of the field it names first (``--C: C must …``)."""
    msg = str(e)
    first = re.split(r"[\s=:,]", msg, maxsplit=1)[0]
    flag = SETTING_FLAGS.get(first)
    return f"{flag}: {msg}" if flag else msg


def setting_from_args(args: argparse.Namespace, prog: str | None = None, **overrides) -> Setting:
    """Build a validated Setting from parsed flags; on a rule broken, exit 2 naming its flag."""
    kw = {field: getattr(args, field) for field in SETTING_FLAGS}  # every Setting field, in its order
    kw.update(overrides)
    try:
        return Setting(**kw)
    except ValueError as e:
        fail(setting_error_message(e), prog)


def guard_memory(
    estimate: MemoryEstimate,
    *,
    force: bool = False,
    prog: str | None = None,
    force_flag: str = "--force",
    flags: Mapping[str, str | None] | None = None,
) -> MemoryEstimate:
    """:func:`~theorydyn.infra.memory.check_memory` for a CLI: on refusal exit 2 with the message
    prefixed by the flags of the parameters that drive the largest term (``--n-samples: …``), the
    estimate and the limit; ``force`` (the CLI's ``force_flag``) skips the check.

    ``flags`` maps an estimate's parameter names to the flags that set them (default
    ``--name`` with ``_`` → ``-``; ``None``: a size the CLI fixes itself, not named as a flag).
    """
    flags = flags or {}
    try:
        return check_memory(estimate, force=force, force_name=force_flag)
    except ResourceError as e:
        names = [f for k in estimate.largest.params for f in [flags.get(k, "--" + k.replace("_", "-"))] if f]
        fail(f"{'/'.join(names) or 'memory'}: {e}", prog)
    except ValueError as e:  # $THEORYDYN_MEMORY_LIMIT that is not a size (abc, -5, nan, 1e400)
        fail(str(e) if MEMORY_ENV in str(e) else f"{MEMORY_ENV}: {e}", prog)


#: The ceiling of every numeric flag that names no bound of its own (issue 33: every size has a bound,
#: checked before any work): :data:`theorydyn.infra.limits.VALUE_MAX`, the Setting's ceiling too.
VALUE_MAX = _VALUE_MAX
#: ``--seeds K``: at most this many seeds (a count, so each is a run; 10⁴ runs is far beyond any use,
#: and ``--seeds 1e9`` ended in a MemoryError or ran until killed)
SEEDS_MAX = 10_000
#: ``--epochs``: at most this many passes over the training images
EPOCHS_MAX = 10_000


def number(
    kind=float,
    name: str = "value",
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    rule: str | None = None,
):
    """argparse ``type=`` converter: a finite ``kind`` (int or float) in [low, high] (open ends with
    ``low_open`` / ``high_open``; None: unbounded).

    nan, ±inf, overflow (``1e400``), a fraction for an integer flag (``1e3`` is read as 1000) and
    an empty string are refused at parse time, and argparse's message names the flag
    (``argument --eta: must be > 0, got -1``), so a value that cannot be used never reaches the
    computation. The rule is kept on the converter (``.kind``, ``.low``, ``.high``, ``.low_open``,
    ``.high_open``, ``.flag``) so that tests derive the invalid values of every flag from the
    parser itself (tests/test_cli_fuzz.py). ``rule`` words the range in the message (default
    ``must be >= low and <= high``).
    """
    name = name if name.startswith("--") else f"--{name}"
    if kind not in (int, float):
        raise ValueError(f"kind must be int or float, got {kind!r}")
    ceiling = high is None  # no bound of its own: VALUE_MAX, named only when it is the one broken
    if ceiling:
        high = VALUE_MAX

    def range_text() -> str:
        parts = []
        if low is not None:
            parts.append(f"{'>' if low_open else '>='} {low:g}")
        if high is not None and not ceiling:
            parts.append(f"{'<' if high_open else '<='} {high:g}")
        return " and ".join(parts)

    def conv(text: str):
        what = "an integer" if kind is int else "a number"
        try:
            v = kind(text)
        except (ValueError, TypeError, OverflowError):
            if kind is int:
                try:  # '1e3' is an integer written as a float: accepted when exactly one (below 2^53)
                    f = float(text)
                except (ValueError, TypeError):
                    f = None
                if f is not None and math.isfinite(f) and f == int(f) and abs(f) < 2**53:
                    v = int(f)
                else:
                    raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
            else:
                raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be finite, got {text!r}")
        if ceiling and v > VALUE_MAX:
            raise argparse.ArgumentTypeError(f"must be <= {VALUE_MAX:g} (no run needs more), got {text}")
        if (low is not None and (v < low or (low_open and v == low))) or (
            high is not None and (v > high or (high_open and v == high))
        ):
            raise argparse.ArgumentTypeError(f"{rule}, got {text}" if rule else f"must be {range_text()}, got {text}")
        return v

    conv.__name__ = f"{kind.__name__}_{name.lstrip('-').replace('-', '_')}"
    rule_of: Any = conv  # the rule, kept on the converter for the tests
    rule_of.kind, rule_of.flag, rule_of.low, rule_of.high = kind, name, low, high
    rule_of.low_open, rule_of.high_open = low_open, high_open
    return conv


def positive(kind=float, name: str = "value", allow_zero: bool = False, below: float | None = None):
    """argparse ``type=`` converter: a finite number > 0 (≥ 0 with ``allow_zero``; < ``below`` if given).

    nan and ±inf are refused, so no flag can carry them past parsing; the message names the flag.
    (:func:`number` with ``low=0``.)
    """
    return number(kind, name, low=0, low_open=not allow_zero, high=below, high_open=below is not None)


def add_number(parser: argparse._ActionsContainer, flag: str, kind=float, **kwargs: Any) -> argparse.Action:
    """``parser.add_argument(flag, type=number(kind, flag, …), …)``: a numeric flag whose converter names
    the flag itself. The keywords of :func:`number` (``low``, ``high``, ``low_open``, ``high_open``,
    ``rule``) go to the converter, the rest to ``add_argument``."""
    rule = {k: kwargs.pop(k) for k in ("low", "high", "low_open", "high_open", "rule") if k in kwargs}
    return parser.add_argument(flag, type=number(kind, flag, **rule), **kwargs)


def add_positive(
    parser: argparse._ActionsContainer, flag: str, kind=float, *, allow_zero: bool = False, **kwargs: Any
) -> argparse.Action:
    """``parser.add_argument(flag, type=positive(kind, flag, allow_zero), …)`` (:func:`add_number`)."""
    return parser.add_argument(flag, type=positive(kind, flag, allow_zero=allow_zero), **kwargs)


def path_arg(flag: str = "--out"):
    """argparse ``type=`` converter: a :class:`~pathlib.Path`, refusing a blank value (``Path("")`` would
    silently be the current folder). ``.path`` marks it for the tests (tests/test_cli_vocabulary.py)."""

    def conv(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"must be a path, got {text!r}")
        return Path(text)

    conv.__name__ = f"path_{flag.lstrip('-').replace('-', '_')}"
    marked: Any = conv
    marked.path, marked.flag = True, flag
    return conv


#: What ``--force`` means in every CLI (and only this): the memory guard of :func:`guard_memory`.
FORCE_HELP = (
    "run even where the memory estimate exceeds the {where}'s available memory (or ${env}; default: refuse, exit 2)"
)
#: What ``--quiet`` means in every CLI.
QUIET_HELP = "no progress bar on stderr (default: one bar with an ETA)"


def add_out_argument(parser: argparse._ActionsContainer, default: str | Path | None, help: str) -> None:
    """``--out``: where a CLI writes, as a :class:`~pathlib.Path`. ``help`` says whether it is a folder or
    a file and, for ``default=None``, what the CLI picks; a set default is shown by :class:`HelpFormatter`."""
    parser.add_argument("--out", type=path_arg("--out"), default=None if default is None else Path(default), help=help)


def add_common_arguments(
    parser: argparse._ActionsContainer,
    *,
    seed: int | None = 0,
    seed_help: str = "random seed, an integer >= 0; same seed, same numbers",
    seeds: int | None = None,
    seeds_help: str | None = None,
    first_seed: bool = False,
    out: str | Path | None = None,
    out_help: str = "output folder, created and proven writable before any work",
    quiet: bool = True,
    force: str | None = None,
    recompute: str | None = None,
    fresh: str | None = None,
) -> None:
    """The flags every CLI spells the same way (one meaning each, in every CLI):

    * ``--seed S``: one seed, an integer >= 0, for a single run;
    * ``--seeds K``: always a count, an integer >= 1: seeds 0 … K-1 (with ``first_seed``: ``--first-seed F``
      shifts them to F … F+K-1);
    * ``--out``: the output folder (:func:`output_dir` proves it writable before any work), a Path;
    * ``--quiet``: no progress bar on stderr;
    * ``--force``: only the memory override of :func:`guard_memory` (``force`` names whose memory:
      "machine" or "device");
    * ``--recompute``: recompute results already in a store or cache (``recompute`` names which);
    * ``--fresh``: start over (:func:`add_fresh_argument`; ``fresh`` names what is set aside). The same
      command without it, rerun, resumes from what is stored (every command that stores as it goes).
    """
    if seed is not None:
        parser.add_argument("--seed", type=positive(int, "--seed", allow_zero=True), default=seed, help=seed_help)
    if seeds is not None:
        first = "--first-seed F … F+K-1" if first_seed else "0 … K-1"
        add_seeds(parser, seeds, seeds_help or f"number of seeds, an integer >= 1: seeds {first}")
    if first_seed:
        parser.add_argument(
            "--first-seed",
            type=positive(int, "--first-seed", allow_zero=True),
            default=0,
            metavar="F",
            help="the first of the --seeds seeds, an integer >= 0",
        )
    if out is not None:
        add_out_argument(parser, out, out_help)
    if quiet:
        parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    if force is not None:
        parser.add_argument("--force", action="store_true", help=FORCE_HELP.format(where=force, env=MEMORY_ENV))
    if recompute is not None:
        parser.add_argument(
            "--recompute", action="store_true", help=f"recompute results already in {recompute} (default: reuse them)"
        )
    if fresh is not None:
        add_fresh_argument(parser, fresh)


#: What ``--fresh`` means in every CLI that stores as it goes (scan, verify, transfer, vision)
FRESH_HELP = (
    "start over: {what} are moved aside (files and folders renamed to <name>.old-<UTC time>, stored rows to the "
    "store's rejected table: nothing is overwritten or deleted) and everything is computed again "
    "(default: the same command, rerun, resumes from what is stored)"
)


def add_fresh_argument(parser: argparse._ActionsContainer, what: str, *, aliases: tuple[str, ...] = ()) -> None:
    """``--fresh`` (dest ``fresh``): start over, :data:`FRESH_HELP` with ``what`` (the outputs it sets
    aside). ``aliases``: old spellings of starting over (``--recompute``), accepted and hidden from ``--help``."""
    parser.add_argument("--fresh", action="store_true", help=FRESH_HELP.format(what=what))
    for old in aliases:
        parser.add_argument(old, dest="fresh", action="store_true", help=argparse.SUPPRESS)


def add_seeds(parser: argparse._ActionsContainer, default: int | None, help: str) -> argparse.Action:
    """``--seeds K``: always a count, an integer in 1..:data:`SEEDS_MAX` (its one rule in every CLI)."""
    return add_number(parser, "--seeds", int, low=1, high=SEEDS_MAX, default=default, metavar="K", help=help)


def add_size_arguments(
    parser: argparse._ActionsContainer, *, dest: str, quick_help: str, full_help: str
) -> argparse._MutuallyExclusiveGroup:
    """``--quick`` and ``--full``, the same pair in every command that has two sizes (issue 29): one is
    the default, the other flips it, and both may be given explicitly (not together). ``dest`` keeps
    each command's existing attribute: ``"quick"`` (default full: verify, figures) or ``"full"``
    (default quick: transfer, the theorem checks)."""
    if dest not in ("quick", "full"):
        raise ValueError(f"dest must be 'quick' or 'full', got {dest!r}")
    g = parser.add_mutually_exclusive_group()
    quick_is_flag = dest == "quick"
    g.add_argument(
        "--quick",
        dest=dest,
        action="store_true" if quick_is_flag else "store_false",
        default=False,  # both actions carry the default, so get_default(dest) reads it from either
        help=quick_help,
    )
    g.add_argument(
        "--full",
        dest=dest,
        action="store_false" if quick_is_flag else "store_true",
        default=False,
        help=full_help,
    )
    return g


def setting_name_params(s: Setting) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, defaults) of a Setting for :func:`run_stem`, D and C left out (the stem's prefix names
    them): its fields against the default Setting at the same D, C and d (σ², ν default to 1/d, so
    ``--d 32`` adds ``d32`` alone), with d against its own default D."""
    ref = Setting(D=s.D, C=s.C, d=s.d).to_dict()
    ref["d"] = Setting(D=s.D, C=s.C).d
    skip = ("D", "C")
    return {k: v for k, v in s.to_dict().items() if k not in skip}, {k: v for k, v in ref.items() if k not in skip}


def name_params(
    s: Setting, parser: argparse.ArgumentParser, args: argparse.Namespace, skip: tuple[str, ...] = ()
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(params, defaults) of a run for :func:`run_stem`: the Setting's (:func:`setting_name_params`),
    then each option of ``parser`` (its value in ``args`` against its default, in the parser's order),
    leaving out the Setting's flags, the destinations in ``skip`` and a spelling hidden from ``--help``
    (an old alias such as ``--N-test``: its flag names it)."""
    params, defaults = setting_name_params(s)
    for a in parser._actions:
        if not a.option_strings or a.help == argparse.SUPPRESS or a.dest in skip or a.dest in SETTING_FLAGS:
            continue
        if a.dest in vars(args):
            params[a.dest], defaults[a.dest] = getattr(args, a.dest), a.default
    return params, defaults


def run_stem(prefix: str, params: Mapping[str, Any], defaults: Mapping[str, Any], max_len: int = 100) -> str:
    """The file stem of a run, named by what made it: ``prefix`` then ``name+value`` for every parameter
    of ``params`` whose value differs from ``defaults`` (in the order of ``params``; a name missing from
    ``defaults`` is always written), e.g. ``reduced_flow_D64_C4_q0.3_seed1``. Where a value does not
    make a safe file name (an explicit partition) or the stem would pass ``max_len`` characters, the
    parameters that differ are replaced by ``h`` + 10 hex digits of the sha256 of their JSON, so two
    runs that differ in any parameter never share a file (the JSON summary lists them in full)."""
    return run_name(replace(RUN, max_len=max_len), prefix, params, defaults)


#: A phase time below this fraction of the run's horizon is printed as "≈ 0 (at the start …)": it is the
#: solver's resolution of a crossing at the first instant, not a time to read (the reduced flow's
#: T_assoc: association holds as soon as γ > ρ, which the refined crossing puts at s ≈ 1e-19).
START_FRACTION = 1e-9


def format_time(v: float | None, horizon: float) -> str:
    """A phase time in s = ηt for the terminal: ``not reached`` (None), ``≈ 0 (at the start, s = 1.1e-19)``
    below :data:`START_FRACTION` of ``horizon``, else 4 significant digits."""
    if v is None:
        return "not reached"
    if v == 0:
        return "0"
    if v < START_FRACTION * horizon:
        return f"≈ 0 (at the start, s = {v:.1e})"
    return f"{v:.4g}"


#: Bytes the writability probes write and fsync: an empty probe allocates nothing, so it cannot
#: see a full disk (issue 18: verify ran every check, then lost the ledger to a 0-byte file).
PROBE_BYTES = 1 << 16


def _write_probe(path: Path) -> None:
    with open(path, "wb") as fh:
        fh.write(b"\0" * PROBE_BYTES)
        fh.flush()
        os.fsync(fh.fileno())


def path_source(flag: str, given: bool) -> str:
    """What a message about an output path names as its source: ``flag`` when the flag was given; else,
    when ``$THEORYDYN_HOME`` is set, that variable (the default path lies under it, and the user set
    it, not the flag); else ``flag`` (its default, ``runs/…``)."""
    if given or not os.environ.get(HOME_ENV, "").strip():
        return flag
    return HOME_ENV


def _cannot_write(flag: str, what: str, e: OSError) -> str:
    """``flag: cannot write WHAT: reason``; for a path that came from ``$THEORYDYN_HOME``
    (:func:`path_source`), how to choose another place as well."""
    text = f"{flag}: cannot write {what}: {e.strerror or e}"
    if flag != HOME_ENV:
        return text
    home = os.environ.get(HOME_ENV, "").strip()
    return f"{text} (the default output folder, under ${HOME_ENV}={home}: set it to a writable folder, or give --out)"


def output_dir(path: Path | str, flag: str = "--out") -> Path:
    """Create ``path`` (a folder) and prove it writable, before any work; exit 2 naming ``flag`` if not
    (``flag`` may be ``THEORYDYN_HOME``, :func:`path_source`: the message then says how to choose).

    The probe writes and syncs :data:`PROBE_BYTES` bytes, so a full disk is refused here."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".theorydyn-write-test-{os.getpid()}"
        try:
            _write_probe(probe)
        finally:
            probe.unlink(missing_ok=True)
    except OSError as e:
        fail(_cannot_write(flag, f"to folder {str(path)!r}", e))
    return path


class _ProbeDone(Exception):
    pass


def probe_output(path: str | Path, flag: str = "--out", prog: str | None = None) -> Path:
    """Prove, before any work, that the output file ``path`` can be written atomically; exit 2 naming
    ``flag`` if not: a symbolic link or a non-regular file at ``path``, a name too long for the
    file system (the atomic temporary name included), a folder that cannot be written, a full disk.

    The probe is the temporary file :func:`theorydyn.infra.atomic.atomic_path` will use, filled with
    :data:`PROBE_BYTES` bytes, synced and removed; ``path`` itself is not touched."""
    p = Path(path)
    try:
        with atomic_path(p) as tmp:
            _write_probe(tmp)
            raise _ProbeDone
    except _ProbeDone:
        pass
    except ValueError as e:  # a link or a non-regular file at the path
        fail(f"{flag}: {e}", prog)
    except OSError as e:
        fail(_cannot_write(flag, repr(str(p)), e), prog)
    return p


def write_output(path: str | Path, writer: Callable[[Path], object], prog: str | None = None) -> Path:
    """Write one output file atomically (:func:`theorydyn.infra.atomic.write_with`: ``writer(tmp)``, then
    a rename): a kill leaves the old file or the new one. On a full disk (or any other failed
    write) print ``error: cannot write FILE: reason`` and exit 1; the earlier file stays as it was."""
    p = Path(path)
    try:
        write_with(p, writer)
    except OSError as e:
        print(
            f"{prog or _prog()}: error: cannot write {str(p)!r}: {e.strerror or e}; the previous file, if any, "
            f"is unchanged",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
    return p


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help shows its default: ``(default: X)`` is appended unless the help already
    says it (contains "default") or there is nothing to show (None, False, SUPPRESS)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text.lower() or any(action.default is x for x in (None, False, argparse.SUPPRESS)):
            return text
        if not action.option_strings and action.nargs not in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return text
        return f"{text} (default: %(default)s)" if text else "default: %(default)s"


class RawDescriptionHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """:class:`HelpFormatter` that keeps the description's and epilog's line breaks."""


class ArgumentParser(argparse.ArgumentParser):
    """The parser of every theorydyn CLI: argparse's, with :class:`HelpFormatter` (every default
    shown), which also refuses ``--flag=--``.

    Python 3.11's argparse reads ``--flag=--`` as an empty list without calling the flag's
    converter, so no rule of the flag would ever see it; here it exits 2 naming the flag.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        ns, rest = super().parse_known_args(args, namespace)
        for a in self._actions:
            value = getattr(ns, a.dest, None) if a.option_strings and a.nargs in (None, "+") else None
            if isinstance(value, list) and not value:
                spellings = [o for b in self._actions if b.dest == a.dest for o in b.option_strings]  # aliases too
                self.error(
                    f"argument {'/'.join(dict.fromkeys(spellings))}: expected "
                    f"{'one value' if a.nargs is None else 'values'}, got '--'"
                )
        return ns, rest


def given_flags(parser: argparse.ArgumentParser, argv) -> set[str]:
    """The destinations of the options set explicitly in ``argv`` (a second parse of ``parser``
    with every default suppressed), so that a CLI can refuse a flag that does nothing in a mode."""
    opts = [a for a in parser._actions if a.option_strings]
    saved = [a.default for a in opts]
    for a in opts:
        a.default = argparse.SUPPRESS
    try:
        ns = vars(parser.parse_args(argv))
    finally:
        for a, d in zip(opts, saved, strict=True):
            a.default = d
    return {a.dest for a in opts if a.dest in ns}


def status(text: str, final: bool) -> None:
    """A run's status line on stderr (:data:`theorydyn.vision.train.Status`): an update redraws the line, a
    final one (an epoch's last) stays."""
    print("\r" + text + ("\n" if final else "   "), end="", file=sys.stderr, flush=True)


def shown_flags(parser: argparse.ArgumentParser, given: set[str]) -> dict[str, str]:
    """Destination → flag of the destinations ``given`` (:func:`given_flags`), in the parser's order, each
    flag its first option's last spelling (``--n-test``, not its hidden alias ``--N-test``)."""
    shown: dict[str, str] = {}
    for a in parser._actions:
        if a.option_strings and a.dest in given:
            shown.setdefault(a.dest, a.option_strings[-1])
    return shown


@contextmanager
def unmade_if_refused(*paths: Path | str | None) -> Iterator[None]:
    """The folders of ``paths`` (and their parents) that do not exist yet are removed again (only empty ones,
    deepest first) when the block raises, a refusal's SystemExit included: a refused run leaves nothing."""
    new = {
        q for p in paths if p is not None for q in (Path(p).absolute(), *Path(p).absolute().parents) if not q.exists()
    }
    try:
        yield
    except BaseException:
        for q in sorted(new, key=lambda q: -len(q.parts)):
            try:
                q.rmdir()
            except OSError:
                pass
        raise


def output_file(path: str | Path, flag: str, prog: str | None = None) -> Path:
    """A file a CLI will write: not blank, not a folder, its folder created and proven writable
    before any work (exit 2 naming ``flag`` if not)."""
    p = Path(path)
    if not str(path).strip():
        fail(f"{flag}: must be a file path, got {str(path)!r}", prog)
    if p.is_dir():
        fail(f"{flag}: {str(p)!r} is a folder; give a file path", prog)
    output_dir(p.parent, flag)
    return probe_output(p, flag, prog)
