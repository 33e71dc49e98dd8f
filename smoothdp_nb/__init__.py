"""smoothdp_nb: smoothed differential privacy and smooth-sensitivity releases, for notebooks.

The numerical core (:mod:`smoothdp_nb.core`) is re-exported here; every
name, and the notebook layers (:mod:`.display` for charts, :mod:`.panels`,
the magic), are imported on first use (PEP 562), so that ``import
smoothdp_nb`` costs no numpy, scipy or Altair import (the command line's
``--help`` answers at once) and works without a notebook.  The core's result objects find their charts through the renderer
registry :mod:`smoothdp_nb.core.rendering`, whose loader, installed here,
imports :mod:`.display` the first time a chart or rich display is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .core import __all__ as _core_all
from .core import rendering as _rendering

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .core import *
    from .core.release import release

__version__ = "0.1.0"
__all__ = list(_core_all) + ["release"]


def load_ipython_extension(ip: InteractiveShell) -> None:
    """``%load_ext smoothdp_nb``: register the ``%%smoothdp`` / ``%smoothdp`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ip)


def unload_ipython_extension(ip: InteractiveShell) -> None:
    """``%unload_ext smoothdp_nb``: remove the magics."""
    from .magics import unload_ipython_extension as _unload

    _unload(ip)


def _load_display() -> None:
    """Import the display package, which registers the result charts (needs Altair)."""
    from . import display  # noqa: F401  (imported for its side effect: registering the renderers)


_rendering.renderers.set_loader(_load_display)


def __getattr__(name: str) -> object:
    # Everything is loaded on first use: the core's names (numpy, scipy, pandas) and the notebook
    # layers (Altair, ipywidgets).  `python -m smoothdp_nb ... --help` then imports none of them.
    value: object
    if name in ("panels", "display", "magics", "spec"):
        value = importlib.import_module(f".{name}", __name__)
    elif name == "release":  # the function; smoothdp_nb.core.release is the module
        value = importlib.import_module(".core.release", __name__).release
    elif name in _core_all:
        value = getattr(importlib.import_module(".core", __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
