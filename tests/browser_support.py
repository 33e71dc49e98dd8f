"""What the real-browser tests share: Debian's Chromium and how to start it."""

import os

import pytest

CHROMIUM = "/usr/bin/chromium"

#: headless, and quiet on a machine whose only network is the loopback
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def require_chromium() -> None:
    """Skip the calling test module, with the reason, when Chromium is absent."""
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} not found (Debian: apt-get install chromium)", allow_module_level=True)
