"""Every output path of every command, in every shape it can take (issue 42): a symbolic link (its
target is never written through), a folder in its place, a read-only run directory and a full disk.

Each command runs once at a tiny size into a fresh folder; the files it wrote are its output paths
(found, not listed by hand, so an output added later is covered). Then, for each output path in
turn, a fresh folder gets a link there to a file outside it (or a folder in its place), and the
same command runs again: the link's target (the folder and what it holds) must be unchanged, and
the command must end with a status of 0, 1 or 2 and no traceback. A link to a *folder* on the way
(``runs/`` → ``/scratch/runs``) is followed on purpose: it is where the user put the folder
(docs/reliability.md).

The read-only and full-disk shapes need a mount (root): a read-only bind mount and a small tmpfs;
where mounting is refused they are skipped, as the other full-disk tests are."""

from __future__ import annotations

import contextlib
import importlib
import io
import subprocess
import traceback
from pathlib import Path

import pytest
from conftest import register_claims
from toy_ledger import CLAIMS

TESTS = Path(__file__).resolve().parent
FAKE = "scan_fake:fake_point"


def _argv(name: str, out: Path) -> list[str]:
    """The tiny run of command ``name`` writing under ``out``."""
    o = str(out)
    return {
        "reduced": ["--D", "8", "--C", "2", "--expectation", "exact", "--s-max", "30", "--n-points", "10", "--quiet"]
        + ["--out", o],
        "simulate": ["--D", "8", "--C", "2", "--N", "64", "--n-test", "32", "--steps", "5", "--quiet", "--out", o],
        "scan": ["--D", "16", "--C", "4", "--q", "0.2", "0.3", "--seeds", "2", "--runner", FAKE, "--workers", "0"]
        + ["--quiet", "--out", o],
        "verify": ["--D", "16", "--C", "4", "--quick", "--quiet", "--out", o],
        "theorems": ["--only", "3.2", "--D", "16", "--C", "4", "--quiet", "--out", str(out / "theorems.csv")],
        "transfer": ["--Ds", "16", "--Ns", "1", "2", "--seeds", "1", "--n-test", "64", "--methods", "oracle"]
        + ["--steps-v", "5", "--quiet", "--out", o],
        "vision": ["digits", "--experiment", "single", "--epochs", "1", "--batch-size", "256", "--width", "16"]
        + ["--depth", "1", "--heads", "2", "--mlp", "16", "--threads", "1", "--device", "cpu", "--quiet", "--out", o],
        "bench-reduced": ["--n-samples", "100", "--s-max", "10", "--repeats", "1", "--settle", "0"]
        + ["--out", str(out / "reduced.csv")],
        "bench-simulate": ["--N", "64", "--D", "16", "--n-test", "32", "--replicas", "1", "--sim-steps", "2"]
        + ["--repeats", "1", "--settle", "0", "--batch", "1", "--no-torch", "--dtypes", "float64"]
        + ["--out", str(out / "simulate.csv")],
        "vision-bench": ["--device", "cpu", "--batches", "8", "--width", "16", "--depth", "1", "--heads", "2"]
        + ["--steps", "1", "--warmup", "1", "--repeats", "1", "--out", str(out / "vision.csv")],
        "figures": ["phases", "--quick", "--quiet", "--out", o],
        "stores": ["merge", str(out / "merged.sqlite"), str(out.parent / "source" / "results.sqlite")],
    }[name]


MODULES = {
    "reduced": "theorydyn.reduced.__main__",
    "simulate": "theorydyn.simulate.__main__",
    "scan": "theorydyn.scan.__main__",
    "verify": "theorydyn.verify.__main__",
    "theorems": "theorydyn.claims.__main__",
    "transfer": "theorydyn.transfer.__main__",
    "vision": "theorydyn.vision.__main__",
    "bench-reduced": "theorydyn.bench.reduced_cli",
    "bench-simulate": "theorydyn.bench.simulate_cli",
    "vision-bench": "theorydyn.vision.bench",
    "figures": "theorydyn.figures.__main__",
    "stores": "theorydyn.stores.__main__",
}
#: the commands whose tiny run takes more than a few seconds
SLOW = {"transfer", "vision", "bench-reduced", "bench-simulate", "vision-bench", "figures", "theorems"}
COMMANDS = [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in MODULES]


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """Each command in a folder of its own: the run directory there, the toy claims as the ledger's
    registry, the fake scan runner importable, a small store to merge."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("THEORYDYN_HOME", str(tmp_path / "home"))
    monkeypatch.syspath_prepend(str(TESTS))
    register_claims(monkeypatch, dict(CLAIMS))
    from theorydyn.infra.store import ResultStore

    src = ResultStore(tmp_path / "source" / "toy.csv", create=True)
    src.append({"key": "k1", "x": 1.0})
    src.close()
    return tmp_path


def _run(name: str, out: Path) -> tuple[object, str]:
    """``main(argv)`` of command ``name`` in this process: (status, stderr); 'exception' with the
    traceback when anything escaped."""
    main = importlib.import_module(MODULES[name]).main
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(_argv(name, out))
        except SystemExit as e:
            code = e.code
        except BaseException:  # noqa: BLE001 — reported as the failure it is
            code = "exception"
            err.write(traceback.format_exc())
    return code, err.getvalue()


def _outputs(name: str, home: Path) -> list[Path]:
    """The files a clean run of ``name`` writes under its folder (relative paths)."""
    out = home / "first"
    code, err = _run(name, out)
    assert code == 0, err[-3000:]
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file() and not p.is_symlink())
    assert files, f"{name} wrote nothing under {out}"
    return files


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _clean(code: object, err: str) -> bool:
    return code in (0, 1, 2) and "Traceback" not in err


@pytest.mark.parametrize("name", COMMANDS)
def test_a_link_planted_at_each_output_leaves_its_target_unchanged(name, home):
    files = _outputs(name, home)
    precious = home / "precious"
    bad = []
    for i, rel in enumerate(files):
        out = home / f"link{i}"
        target = precious / f"{i}.txt"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"precious {i}\n")
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).symlink_to(target)
        code, err = _run(name, out)
        if target.read_text() != f"precious {i}\n" or not _clean(code, err):
            bad.append(f"{rel}: exit {code!r}, target {target.read_text()[:40]!r}; {err[-600:]!r}")
    assert sorted(p.name for p in precious.iterdir()) == sorted(f"{i}.txt" for i in range(len(files)))
    assert not bad, f"{name}: " + "\n".join(bad)


@pytest.mark.parametrize("name", COMMANDS)
def test_a_folder_in_place_of_each_output_is_left_as_it_is(name, home):
    """Left where it is, or moved aside whole (a vision checkpoint that is not a file is moved to
    ``checkpoint.pt.damaged-<time>`` and the run trained again): never emptied, never written into."""
    files = _outputs(name, home)
    bad = []
    for i, rel in enumerate(files):
        out = home / f"dir{i}"
        (out / rel).mkdir(parents=True)
        (out / rel / "mine.txt").write_text("mine\n")
        code, err = _run(name, out)
        kept = [q for q in (out / rel).parent.glob(f"{rel.name}*") if q.is_dir() and not q.is_symlink()]
        if [_snapshot(q) for q in kept] != [{"mine.txt": b"mine\n"}] or not _clean(code, err):
            bad.append(f"{rel}: exit {code!r}, folders now {[_snapshot(q) for q in kept]}; {err[-600:]!r}")
    assert not bad, f"{name}: " + "\n".join(bad)


def _mount(args: list[str], where: Path) -> None:
    r = subprocess.run(["mount", *args, str(where)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount here ({r.stderr.strip()[:80]}): needs root")


@pytest.mark.parametrize("name", [n for n in MODULES if n not in SLOW | {"stores"}])
def test_a_read_only_run_directory_is_refused_before_any_work(name, home):
    base, ro = home / "base", home / "ro"
    base.mkdir()
    ro.mkdir()
    _mount(["--bind", str(base)], ro)
    try:
        _mount(["-o", "remount,bind,ro"], ro)
        code, err = _run(name, ro / "out")
        assert code == 2 and "Read-only file system" in err and "Traceback" not in err, err[-2000:]
        assert "--out" in err, err[-2000:]
    finally:
        subprocess.run(["umount", "-l", str(ro)], capture_output=True)
    assert not list(base.iterdir())  # nothing written beneath it either


@pytest.mark.parametrize("size", ["16k", "96k", "256k"])
@pytest.mark.parametrize("name", [n for n in MODULES if n not in SLOW | {"stores"}])
def test_a_full_disk_at_any_moment_ends_in_one_line_and_leaves_no_temporary(name, size, home, tmpfs):
    """A tmpfs of ``size``: full at the probe (16k), or in the middle of the run's outputs (96k,
    256k). The command ends with 0 (it fitted), 1 or 2, one line naming what it could not write,
    no traceback, and no temporary file of the atomic writer left behind."""
    disk = tmpfs(size)
    code, err = _run(name, disk / "out")
    assert _clean(code, err), err[-2000:]
    if code != 0:
        assert any(w in err for w in ("No space left on device", "cannot write", "disk is full")), err[-2000:]
        assert err.count("error:") == 1, err[-2000:]
    left = [p for p in disk.rglob("*") if ".tmp" in p.name]
    assert not left, left


@pytest.mark.parametrize("side", ["results.sqlite-wal", "results.sqlite-shm"])
def test_a_link_at_the_stores_wal_or_shm_file_is_refused(side, home):
    """SQLite writes the database's -wal and -shm files beside it, following a link there: refused."""
    target = home / "precious.txt"
    target.write_text("precious\n")
    out = home / "out"
    out.mkdir()
    (out / side).symlink_to(target)
    code, err = _run("scan", out)
    assert code == 2 and "symbolic link" in err and side in err and "Traceback" not in err, err[-2000:]
    assert target.read_text() == "precious\n"
