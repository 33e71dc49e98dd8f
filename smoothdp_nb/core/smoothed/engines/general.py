"""Algorithm 1 for any number of categories and hull vertices, in log space.

One averaging step per record, vertex by vertex (see :mod:`smoothdp_nb.core.smoothed.delta`);
every expectation is a log-sum-exp of non-negative terms, exact at every magnitude.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 1.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import gammaln, logsumexp

from smoothdp_nb.core.smoothed.mechanisms import compositions

__all__ = ["all_histograms", "exact_general"]


def all_histograms(n: int, m: int) -> np.ndarray:
    """Every histogram of n records on m categories (rows, in a fixed order)."""
    return compositions(n, m)


def exact_general(logdelta: np.ndarray, n: int, m: int, V: np.ndarray, bar: Any) -> tuple[np.ndarray, np.ndarray]:
    """Log space DP for any m and l* (see module docstring).

    Returns (compositions (C, l), log E (C, E))."""
    l = V.shape[0]
    hists = {n: all_histograms(n, m)}
    index: dict[int, dict[tuple[int, ...], int]] = {}

    def of_size(s: int) -> np.ndarray:
        # (not dict.setdefault: it would build the enumeration on every call)
        if s not in hists:
            hists[s] = all_histograms(s, m)
        return hists[s]

    def hist_index(s: int) -> dict[tuple[int, ...], int]:
        if s not in index:
            hs = of_size(s)
            index[s] = {tuple(h): i for i, h in enumerate(hs.tolist())}
        return index[s]

    # up[s][j] = indices in size s+1 of (x + e_j) for every x of size s
    up: dict[int, np.ndarray] = {}

    def up_map(s: int) -> np.ndarray:
        if s not in up:
            hs = of_size(s)
            if m * math.log2(s + 3) < 62:
                # one integer key per histogram (digits base s + 2 < 2^62): a sorted search
                # instead of a dictionary lookup per histogram and category
                w = (s + 2) ** np.arange(m, dtype=np.int64)
                big = of_size(s + 1) @ w
                order = np.argsort(big)
                up[s] = order[np.searchsorted(big[order], (hs @ w)[None, :] + w[:, None])]
            else:
                idx = hist_index(s + 1)
                eye = np.eye(m, dtype=np.int64)
                up[s] = np.array([[idx[tuple(h + eye[j])] for h in hs] for j in range(m)], dtype=np.int64)
        return up[s]

    with np.errstate(divide="ignore"):
        logV = np.log(V)
    comps: list[tuple[int, ...]] = []
    vals: list[np.ndarray] = []

    def log_mult(s: int, v: int) -> np.ndarray:
        hs = of_size(s)

        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(hs > 0, hs * logV[v][None, :], 0.0)
        out: np.ndarray = gammaln(s + 1.0) - gammaln(hs + 1.0).sum(axis=1) + terms.sum(axis=1)
        return out

    def descend(G: np.ndarray, size: int, level: int, counts: tuple[int, ...]) -> None:
        if level == 0:
            lw = log_mult(size, 0)
            comps.append((size,) + counts)
            vals.append(logsumexp(lw[:, None] + G, axis=0))
            if bar is not None:
                bar.update(1)
            return
        for r in range(size + 1):
            descend(G, size - r, level - 1, (r,) + counts)
            if r < size:
                s = size - r - 1
                mp_ = up_map(s)
                G = logsumexp(logV[level][:, None, None] + G[mp_], axis=0)

    descend(logdelta, n, l - 1, ())
    return np.array(comps, dtype=np.int64), np.array(vals)
