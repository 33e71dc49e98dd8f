"""Shared test configuration."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=25, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

#: The reference tables beside the repository (absent for Binder users).
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--browser",
        action="store_true",
        help="also collect tests/browser: real Chromium, Voila and JupyterLab (needs /usr/bin/chromium; .ci/run uses it)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave tests/browser out unless ``--browser`` is given.

    The README's test command runs on a fresh machine without Chromium; collecting the
    browser tests there could only skip them, and a skip must not pass for a run.
    """
    if collection_path.name == "browser" and collection_path.parent == Path(__file__).parent:
        return not config.getoption("--browser")
    return None


@pytest.fixture(scope="session")
def ipython_shell():
    """IPython's global test shell, started once per process.

    ``globalipapp.get_ipython`` is a placeholder until ``start_ipython`` has run
    and rebinds it; a copy imported by name keeps the placeholder, which returns
    None on its second call, so every test module asks the module for the shell.
    """
    from IPython.testing import globalipapp

    globalipapp.start_ipython()
    return globalipapp.get_ipython()


@pytest.fixture
def unpadded_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Releases inside the test return as soon as their work is done (no sleep to the public deadline).

    For tests of the law of the sampled cells, where thousands of draws at worst-case padding
    would take minutes and time is not what is checked; the padding itself is tested in
    tests/core/test_release_timing.py.
    """
    from smoothdp_nb.core.release import timing

    monkeypatch.setattr(timing, "wait_until", lambda start, deadline: None)
