"""smoothdp_nb: smoothed differential privacy and smooth-sensitivity releases, for notebooks.

The numerical core (:mod:`smoothdp_nb.core`) is re-exported here; the
notebook layers (magic, panels, charts) are imported lazily so that
``import smoothdp_nb`` stays light and works without a notebook.
"""

from .core import *  # noqa: F401,F403
from .core import __all__ as _core_all
from .core.release import release

__version__ = "0.1.0"
__all__ = list(_core_all) + ["release"]


def load_ipython_extension(ip) -> None:
    """``%load_ext smoothdp_nb``: register the ``%%smoothdp`` / ``%smoothdp`` magics."""
    from .magics import load_ipython_extension as _load

    _load(ip)


def unload_ipython_extension(ip) -> None:
    from .magics import unload_ipython_extension as _unload

    _unload(ip)


def __getattr__(name: str):
    # The notebook layers import Altair/ipywidgets: load them on first use only.
    if name in ("panels", "charts", "magics", "spec"):
        import importlib

        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
