"""Shared test configuration."""

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: The reference tables beside the repository (absent for Binder users).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
