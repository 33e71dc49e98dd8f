"""smoothdp_nb: smoothed differential privacy and smooth-sensitivity releases, for notebooks.

The numerical core (:mod:`smoothdp_nb.core`) is re-exported here; the
notebook layers (:mod:`.display` for charts, :mod:`.panels`, the magic) are
imported on first use, so that ``import smoothdp_nb`` stays light (Altair
alone takes longer to import than the whole core) and works without a
notebook.  The core's result objects find their charts through the renderer
registry :mod:`smoothdp_nb.core.rendering`, whose loader, installed here,
imports :mod:`.display` the first time a chart or rich display is needed.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING

from .core import *
from .core import __all__ as _core_all
from .core import rendering as _rendering
from .core.release import release

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

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


def __getattr__(name: str) -> ModuleType:
    # The notebook layers import Altair/ipywidgets: load them on first use only.
    if name in ("panels", "display", "magics", "spec"):
        import importlib

        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
