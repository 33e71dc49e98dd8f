"""Progress bars for long computations, without pulling in the notebook stack.

``tqdm.auto`` imports IPython and ipywidgets whenever they are installed; the
core must not import them on its own.  So a notebook bar is used only when the
code already runs under IPython (``IPython`` is in ``sys.modules``), and a
plain text bar otherwise.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["progress_bar", "optional_progress_bar"]


def progress_bar(total: int, desc: str, **kwargs: Any) -> Any:
    """A tqdm bar suited to where we run (notebook widget or terminal); ``Any``: tqdm is untyped."""
    if "IPython" in sys.modules:
        from tqdm.auto import tqdm  # deferred: tqdm only when a bar is shown
    else:
        from tqdm import tqdm  # deferred: tqdm only when a bar is shown
    return tqdm(total=total, desc=desc, **kwargs)


def optional_progress_bar(total: int, enabled: bool, desc: str) -> Any:
    """:func:`progress_bar` (not left on screen) when ``enabled``, else None."""
    if not enabled:
        return None
    return progress_bar(total, desc, leave=False)
