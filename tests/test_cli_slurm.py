"""``--scheduler slurm[:…]``: a scan on Slurm jobs through dask-jobqueue (issue 29, item 6).

Slurm is not here: the job script one worker would run is rendered and read, and a bad option is
refused before any work, naming --scheduler."""

from __future__ import annotations

import pytest
from test_cli_fuzz import clean

from theorydyn.scan.grid import ScanError

pytest.importorskip("dask_jobqueue")


def test_the_job_script_carries_the_options_and_one_thread_per_pool():
    from theorydyn.scan.executor import slurm_job_script

    script = slurm_job_script("slurm:queue=short,account=proj1,walltime=02:30:00,memory=8GB,cores=2")
    lines = script.splitlines()
    for want in ("#SBATCH -p short", "#SBATCH -A proj1", "#SBATCH -t 02:30:00", "#SBATCH --cpus-per-task=2"):
        assert want in lines, script
    assert "export OMP_NUM_THREADS=1" in lines and "export OPENBLAS_NUM_THREADS=1" in lines
    assert "distributed.cli.dask_worker tcp://SCHEDULER:8786" in script and "--nthreads 2" in script


def test_the_defaults_make_a_job_script():
    from theorydyn.scan.executor import SLURM_DEFAULTS, slurm_job_script

    script = slurm_job_script("slurm")
    assert f"#SBATCH -t {SLURM_DEFAULTS['walltime']}" in script and "#SBATCH -p" not in script


@pytest.mark.parametrize(
    "text",
    ["slurm:queue=a;rm -rf /", "slurm:walltime=1h", "slurm:cores=0", "slurm:nodes=3", "slurm:queue", "slurmx"],
)
def test_a_bad_option_is_refused(text):
    from theorydyn.scan.executor import slurm_options

    with pytest.raises(ScanError, match="--scheduler"):
        slurm_options(text)


def test_scan_refuses_a_bad_slurm_option_before_work():
    ok, why = clean("scan", ["--scheduler", "slurm:queue=a b"], "--scheduler")
    assert ok, why
