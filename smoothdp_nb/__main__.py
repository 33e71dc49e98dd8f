"""``python -m smoothdp_nb``: the command line (:mod:`smoothdp_nb.cli`)."""

from __future__ import annotations

import sys

from smoothdp_nb.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
