"""Up-front cost estimates of the exact engines (they drive refusals, progress bars
and the panels' choice between the exact method and Monte Carlo)."""

from __future__ import annotations

import math

__all__ = ["estimate_exact_seconds"]

# Rough costs used for the up-front estimate (seconds per elementary cell),
# measured on the 2-core reference machine (see benchmarks/README.md).
_COST_FLOAT = 2.5e-9
_COST_LOG = 2.5e-8


def estimate_exact_seconds(n: int, m: int, l: int, E: int) -> float:
    if m == 2 and l <= 2:
        return _COST_FLOAT * E * (n + 1) ** 2 / 2 + 2e-6 * n
    # sum over compositions of the remaining counts of #histograms * m
    hists = math.comb(n + m - 1, m - 1)
    comps = math.comb(n + l - 1, l - 1)
    return _COST_LOG * E * m * hists * comps / max(1, l)
