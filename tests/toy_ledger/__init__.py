"""Toy claims for the ledger's tests: real module files, so that Dask worker processes and forked
children import them by path like any claim of theorydyn.claims.REGISTRY.

Each claim appends ``"<name> <pid>"`` to the file ``$TOY_LEDGER_LOG`` (when set) each time it runs,
so a test counts what was computed and where, and sleeps ``$TOY_LEDGER_SLEEP_<NAME>`` seconds (else
``$TOY_LEDGER_SLEEP``, else 0), so a test can kill a run while a given claim is in progress; the claim
named by ``$TOY_LEDGER_INTERRUPT`` raises KeyboardInterrupt (a Ctrl-C while it runs)."""

import os
import time

#: name → module path, in ledger order (register with conftest.register_claims)
CLAIMS = {
    "one": "toy_ledger.one",
    "two": "toy_ledger.two",
    "three": "toy_ledger.three",
}


def ran(name: str) -> None:
    log = os.environ.get("TOY_LEDGER_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(f"{name} {os.getpid()}\n")
    time.sleep(float(os.environ.get(f"TOY_LEDGER_SLEEP_{name.upper()}", os.environ.get("TOY_LEDGER_SLEEP", "0"))))
    if os.environ.get("TOY_LEDGER_INTERRUPT") == name:
        raise KeyboardInterrupt


def computed(log) -> list[str]:
    """The claims computed so far, in order, from the log file ``log``."""
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
