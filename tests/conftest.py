"""Shared test configuration."""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from IPython.testing import globalipapp

# IPython's test shell: globalipapp.get_ipython() starts it on the first call and returns None on
# any later call through a reference imported before that start (test_magics.py,
# test_hostile_specs.py and test_fuzz_spec.py each import it).  Starting it here, before any test
# module is imported, makes every imported get_ipython the one that returns the shell.
globalipapp.start_ipython()

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: The reference tables beside the repository (absent for Binder users).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
