"""Test configuration: under CI (CI=true), hypothesis draws the same examples every run, so a
submission's verdict cannot change from one run to the next; locally it explores afresh."""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
