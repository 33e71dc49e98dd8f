"""The noisy sampling histogram of *Smoothed Differential Privacy* (Algorithm 4, Appendix A.3).

The sampled histogram of Algorithm 2, published through the exponential mechanism with pmf
proportional to ``exp(-noise_epsilon/4 * ||hist - out||_1)`` over all non-negative integer
vectors ``out``.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 4, Algorithm 2.
"""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, fraction_up, gamma, lpmf_abs_error, next_up
from smoothdp_nb.core.numerics.validation import as_rng
from smoothdp_nb.core.runtime.budget import ComputationTooLarge, Estimate
from smoothdp_nb.core.smoothed.mechanisms.base import MAX_CELLS, Mechanism
from smoothdp_nb.core.smoothed.mechanisms.sampling_histogram.mechanism import SamplingHistogram
from smoothdp_nb.core.smoothed.mechanisms.size import SampleSize

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NoisySamplingHistogram"]

# seconds per cell of the lumped output space (T+1)^m of one profile and epsilon
_NOISY_CELL = 7e-6


class NoisySamplingHistogram(SampleSize, Mechanism):
    """Sampling histogram with additive discrete noise (Algorithm 4, Appendix A.3).

    The sampled histogram ``hist`` (T records drawn without replacement) is
    published as ``out`` in Z_+^m with probability proportional to
    ``exp(-noise_epsilon/4 * ||hist - out||_1)`` (eq. (4)).

    The support is infinite, but for every coordinate the kernel beyond
    ``out_j >= T`` is ``r^(out_j - hist_j)`` with ``r = e^(-noise_epsilon/4)``
    and ``hist_j <= T``: the factor ``r^out_j`` is common to every component
    of the mixture, so the likelihood ratio between any two databases is
    constant on each set ``{out_j >= T}``.  Lumping those sets into one cell per
    coordinate therefore gives exactly the same hockey-stick divergences
    (a finite, exact computation on the (T+1)^m cells).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Algorithm 4, eq. (4).
    """

    def __init__(self, eta: object = None, *, T: int | None = None, noise_epsilon: float) -> None:
        self._set_size(eta, T)
        # the noise is added to the histogram of a sample drawn without replacement
        self._sampler = SamplingHistogram(eta, T=T)
        try:
            ne = float(noise_epsilon)
        except (TypeError, ValueError):
            raise TypeError(f"noise_epsilon must be a positive number, got {noise_epsilon!r}") from None
        if not (ne > 0 and math.isfinite(ne)):
            raise ValueError(f"noise_epsilon must be a finite number > 0, got {noise_epsilon!r}")
        self.noise_epsilon = ne

    def __repr__(self) -> str:
        return f"NoisySamplingHistogram({self._size_text()}, noise_epsilon={self.noise_epsilon:g})"

    #: the sample's histogram plus noise depending on |out_j - hist_j| only: swapping the
    #: categories leaves every profile unchanged
    label_symmetric = True

    def _key(self) -> tuple[object, int | None, float]:
        return (self._rate, self.T, self.noise_epsilon)

    @property
    def categories(self) -> None:
        """Any number of categories m >= 2."""
        return None

    def _delta_upper_bound(self, n: int, epsilon: FloatArray) -> FloatArray:
        """T/n: the outputs on neighbours differ in law only when the changed
        record is sampled, so every hockey-stick divergence is at most the
        total variation, at most T/n (the noise is post-processing)."""
        return np.full(np.shape(epsilon), fraction_up(self.sampled_fraction(n)))

    def _profile_cost(self, n: int, m: int, count: int, n_epsilon: int, budget: float = math.inf) -> Estimate:
        """Per histogram and epsilon, the lumped output space of (T+1)^m cells at
        7e-6 s each (benchmarks/README.md); four float arrays of it at once."""
        cells = float(self.sample_size(n) + 1) ** m
        return Estimate(count * max(1, n_epsilon) * _NOISY_CELL * cells, 8.0 * cells * 4)

    def log_output_pmf_error(self, hist: IntArray, log_p: FloatArray) -> float:
        """Proven bound on the absolute error of :meth:`log_output_pmf`.

        Each sampled histogram's log-weight is a sum of m + 1 Loader
        log-binomial coefficients (``log_comb = log_binom_pmf(., ., 1/2) + n log 2``:
        :func:`~smoothdp_nb.core.numerics.enclosures.lpmf_abs_error` of the pmf part plus
        ``2u n log 2``); each kernel value ``-lam |c - s| - log Z(s)`` carries
        ``4 LIBM_REL`` of ``lam T + 5`` (exp, log1p and the log of 1 - r) and
        ``2u`` of its size; the sum of the m + 1 parts ``gamma_{m+1}`` of the
        magnitudes; the log-sum-exp over S samples ``4u max + 2 LIBM_REL (1 + log S)
        + gamma_S``."""
        h = np.asarray(hist, dtype=np.int64)
        n = int(h.sum())
        T = self.sample_size(n)
        m = h.size
        lam = self.noise_epsilon / 4.0
        fin = np.asarray(log_p)[np.isfinite(log_p)]
        top = float(np.max(np.abs(fin), initial=0.0))
        big = top + (m + 1) * n * math.log(2.0) + m * (lam * T + 5.0)
        comb = (m + 1) * (float(lpmf_abs_error(big, n, 1)) + 2.0 * U * n * math.log(2.0))
        kern = m * (4 * LIBM_REL * (lam * T + 5.0) + 2.0 * U * (lam * T + 5.0))
        S = math.comb(T + m - 1, m - 1)
        lse = 4 * U * big + 2 * LIBM_REL * (1 + math.log(S)) + float(gamma(S + m + 2)) * big
        return float(next_up(comb + kern + lse))

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> IntArray:
        gen = as_rng(rng)
        sampled = self._sampler.sample_histogram(self._one_histogram(hist), rng=gen, size=size)
        lam = self.noise_epsilon / 4.0
        return _sample_truncated_two_sided_geometric(sampled, lam, gen)

    def _log_kernel(self, T: int) -> FloatArray:
        """log K[s, c]: probability that a coordinate with sampled count s
        (0..T) is published in cell c (0..T-1 exactly, T meaning ">= T")."""
        lam = self.noise_epsilon / 4.0
        s = np.arange(T + 1, dtype=float)[:, None]
        c = np.arange(T + 1, dtype=float)[None, :]
        # log Z(s) = log(1 + r - r^(s+1)) - log(1 - r), with r = e^-lam
        log_one_minus_r = float(log1mexp(np.asarray(-lam)))
        log_z = np.log1p(np.exp(-lam) - np.exp(-lam * (s + 1))) - log_one_minus_r
        logk: FloatArray = -lam * np.abs(c - s) - log_z
        # the lumped cell sums r^(k - s) over k >= T
        logk[:, T] = -lam * (T - s[:, 0]) - log_one_minus_r - log_z[:, 0]
        return logk

    def log_output_pmf(self, h: IntArray) -> tuple[IntArray, FloatArray]:
        """Output pmf on the lumped space: coordinates 0..T-1 exact, T = '>= T'."""
        samples, logw = self._sampler.log_output_pmf(h)
        n = int(h.sum())
        T = self.sample_size(n)
        m = len(h)
        cells = (T + 1) ** m
        if cells * len(logw) > MAX_CELLS:
            raise ComputationTooLarge(
                f"the noisy mechanism's lumped output space has (T+1)^m = {cells:.3g} cells times "
                f"{len(logw)} sampled histograms; too large for an exact computation (T={T}, m={m})"
            )
        logk = self._log_kernel(T)
        outs = np.array(list(itertools.product(range(T + 1), repeat=m)), dtype=np.int64)
        # log P(out) = logsumexp_s [log w(s) + sum_j log K(s_j, out_j)]
        acc = logw[:, None] + sum(logk[samples[:, j]][:, outs[:, j]] for j in range(m))
        log_p: FloatArray = logsumexp(acc, axis=0)  # scipy is untyped
        return outs, log_p

    def output_pmf(self, hist: object) -> pd.DataFrame:
        """Exact output pmf on the lumped space (see class docstring).

        A count equal to T in column ``cj`` stands for the event "out_j >= T"
        (the column ``lumped`` flags such rows); the probabilities sum to 1.
        """
        import pandas as pd  # deferred: a profile or a smoothed delta needs no data frame

        h = self._one_histogram(hist)
        outs, logp = self.log_output_pmf(h)
        df = pd.DataFrame(outs, columns=[f"c{j}" for j in range(outs.shape[1])])
        df["probability"] = np.exp(logp)
        df["log_probability"] = logp
        T = self.sample_size(int(h.sum()))
        cols = list(df.columns[: outs.shape[1]])
        df["lumped"] = (df[cols] >= T).any(axis=1)
        return df


def _sample_truncated_two_sided_geometric(centre: IntArray, lam: float, gen: np.random.Generator) -> IntArray:
    """Draw out >= 0 with P(out) proportional to exp(-lam |out - centre|), per entry."""
    c = np.asarray(centre, dtype=np.int64)
    r = math.exp(-lam)
    # mass of the left part {0..c} and of the right part {c+1, ...}, up to 1/(1-r)
    left = -np.expm1(-lam * (c + 1.0))
    right = r
    go_left = gen.random(c.shape) * (left + right) < left
    u = gen.random(c.shape)
    # left: out = c - G, P(G = g) prop. to r^g on 0..c (inverse cdf of a truncated geometric)
    g_left = np.floor(np.log1p(-u * left) / -lam).astype(np.int64)
    g_left = np.minimum(g_left, c)
    # right: out = c + 1 + G', G' geometric on 0, 1, ...
    g_right = gen.geometric(1.0 - r, size=c.shape) - 1
    out: IntArray = np.where(go_left, c - g_left, c + 1 + g_right)
    return out
