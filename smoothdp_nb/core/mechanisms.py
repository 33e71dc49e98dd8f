"""The sampling mechanisms of *Smoothed Differential Privacy* (Liu, Wang, Xia).

* :class:`SamplingHistogram` -- Algorithm 2: draw ``T = ceil(eta n)`` records
  without replacement (or with replacement, Appendix F) and publish the
  histogram of the sample.
* :class:`NoisySamplingHistogram` -- Algorithm 4 (Appendix A.3): the same
  histogram, then published through the exponential mechanism with pmf
  proportional to ``exp(-noise_epsilon/4 * ||hist - out||_1)`` over all
  non-negative integer vectors ``out``.

A mechanism describes its output distribution; the divergences themselves
are computed in :mod:`smoothdp_nb.core.divergence` and combined in
:mod:`smoothdp_nb.core.profiles`.

The key reduction (used by every exact computation here): neighbouring
databases ``x ~ x'`` differ in one record, of category ``a`` in x and ``b`` in
x'.  Write ``u`` and ``v`` for the numbers of *other* records of categories a
and b.  The likelihood ratio of an output depends only on its counts
``(o_a, o_b)`` of the two categories:

* without replacement: ``r = (u+1)/(u+1-o_a) * (v+1-o_b)/(v+1)``;
* with replacement:    ``r = ((u+1)/u)^o_a * (v/(v+1))^o_b``.

So ``d(x, x')`` is a sum over the joint law of ``(o_a, o_b)`` only, and for
two categories (``o_b = T - o_a``) the ratio is monotone in ``o_a``: the
positive part of the hockey-stick divergence is a tail, with a closed-form
threshold.
"""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np
from scipy.special import logsumexp

from . import _lpmf
from ._validate import as_decimal_text, as_histograms, as_int, as_rng
from .budget import ComputationTooLarge
from .divergence import LogConcaveCounts, log1mexp, log_monotone_tail_sum

__all__ = ["SamplingHistogram", "NoisySamplingHistogram"]

# Refuse explicit enumerations above this many (output x component) cells.
MAX_CELLS = 5 * 10**7


def _exact_rate(eta) -> Fraction:
    """The sampling rate as an exact fraction: 0.998 means 998/1000, not the
    binary float nearest to it (so ``ceil(0.998 * 1000)`` is 998, not 999)."""
    if isinstance(eta, bool):
        raise TypeError(f"eta must be a number in (0, 1], got {eta!r}")
    if isinstance(eta, Fraction):
        return eta
    if isinstance(eta, (int, np.integer)):
        return Fraction(int(eta))
    try:
        if isinstance(eta, (float, np.floating)):
            if not math.isfinite(eta):
                raise ValueError
            # repr gives the shortest decimal that round-trips: the number the user typed.
            return Fraction(Decimal(repr(float(eta))))
        if isinstance(eta, str):  # plain ASCII decimal text only (no "0.5_0", no spaces, no other digits)
            return as_decimal_text(eta, "eta")
        return Fraction(Decimal(str(eta)))
    except (InvalidOperation, ValueError) as exc:
        if str(exc).startswith("eta "):
            raise
        raise ValueError(f"eta must be a number in (0, 1], got {eta!r}") from None
    except TypeError:
        raise TypeError(f"eta must be a number in (0, 1], got {eta!r}") from None


def sampling_size_spec(eta, T) -> tuple[Fraction | None, float | None, int | None]:
    """Validate "a rate eta or a fixed size T" (exactly one): -> (exact rate, eta, T)."""
    if (eta is None) == (T is None):
        raise ValueError("give exactly one of eta (a sampling rate) or T (a sample size)")
    if eta is not None:
        rate = _exact_rate(eta)
        if not (0 < rate <= 1):
            raise ValueError(f"eta must be in (0, 1], got {eta!r}")
        return rate, float(rate), None
    return None, None, as_int(T, "T", minimum=1)


class SamplingHistogram:
    """Sampling-histogram mechanism M_H (Algorithm 2; Appendix F with replacement).

    Parameters
    ----------
    eta : float, str, Decimal or Fraction, optional
        Sampling rate in (0, 1]; the sample size is ``T = ceil(eta * n)``,
        computed exactly from the decimal value.
    T : int, optional
        Fixed sample size instead of a rate (give exactly one of eta, T).
    replace : bool, default False
        Sample with replacement (multinomial, Appendix F) instead of without
        (multivariate hypergeometric, Algorithm 2).

    Examples
    --------
    >>> m = SamplingHistogram(eta=0.998)
    >>> m.sample_size(1000)
    998
    """

    def __init__(self, eta=None, *, T: int | None = None, replace: bool = False):
        self._rate, self.eta, self.T = sampling_size_spec(eta, T)
        if not isinstance(replace, (bool, np.bool_)):
            raise TypeError(f"replace must be True or False, got {replace!r}")
        self.replace = bool(replace)

    # -- description -----------------------------------------------------
    def __repr__(self) -> str:
        size = f"eta={self._eta_text()}" if self.T is None else f"T={self.T}"
        extra = ", replace=True" if self.replace else ""
        return f"{type(self).__name__}({size}{extra})"

    def _eta_text(self) -> str:
        r = self._rate
        d = Decimal(r.numerator) / Decimal(r.denominator)
        return str(d.normalize()) if d == Decimal(r.numerator) / Decimal(r.denominator) else str(float(r))

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self):
        return (self._rate, self.T, self.replace)

    @property
    def label(self) -> str:
        """Short human-readable description, e.g. for chart legends."""
        return repr(self)

    # -- sizes -------------------------------------------------------------
    def sample_size(self, n: int) -> int:
        """T for a database of n records: ``ceil(eta * n)`` (exact) or the fixed T.

        Raises ValueError when a fixed T exceeds n (without replacement).
        """
        n = as_int(n, "n", minimum=1)
        if self.T is not None:
            if self.T > n and not self.replace:
                raise ValueError(f"T must be <= n when sampling without replacement, got T={self.T} > n={n}")
            return self.T
        num = self._rate.numerator * n
        return -((-num) // self._rate.denominator)  # exact ceiling

    # -- running the mechanism ------------------------------------------------
    def sample(self, data, rng=None, *, categories=None) -> np.ndarray:
        """Run the mechanism on raw records.

        Parameters
        ----------
        data : array_like of category labels, shape (n,)
        rng : None, int or numpy Generator
        categories : sequence, optional
            The category set X (order of the returned counts).  Defaults to
            the sorted distinct labels of ``data``.

        Returns
        -------
        ndarray of int64, shape (len(categories),): the published histogram.
        """
        data = np.asarray(data)
        if data.ndim != 1 or data.size == 0:
            raise ValueError("data must be a non-empty 1-D array of category labels")
        cats = np.unique(data) if categories is None else np.asarray(categories)
        idx = np.searchsorted(cats, data) if categories is None else _label_index(cats, data)
        hist = np.bincount(idx, minlength=len(cats)).astype(np.int64)
        return self.sample_histogram(hist, rng=rng)

    def sample_histogram(self, hist, rng=None, size: int | None = None) -> np.ndarray:
        """Draw the mechanism's output for a database given by its histogram.

        ``size`` draws independent outputs (shape (size, m)).
        """
        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (m,) here")
        h = h[0]
        n = int(h.sum())
        T = self.sample_size(n)
        gen = as_rng(rng)
        shape = None if size is None else (as_int(size, "size", minimum=1),)
        if self.replace:
            return gen.multinomial(T, h / n, size=shape).astype(np.int64)
        return gen.multivariate_hypergeometric(h, T, size=shape).astype(np.int64)

    # -- exact output distribution -----------------------------------------------
    def output_pmf(self, hist):
        """Exact output distribution for a small histogram (teaching and tests).

        Returns
        -------
        pandas.DataFrame
            One row per possible output: a column per category (``c0``,
            ``c1``, ...), ``probability`` and ``log_probability``.
        """
        import pandas as pd

        h, single = as_histograms(hist)
        if not single:
            raise ValueError("hist must be a single histogram of shape (m,) here")
        outs, logp = self._log_output_pmf(h[0])
        df = pd.DataFrame(outs, columns=[f"c{j}" for j in range(outs.shape[1])])
        df["probability"] = np.exp(logp)
        df["log_probability"] = logp
        return df

    def _log_output_pmf(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = int(h.sum())
        T = self.sample_size(n)
        m = len(h)
        count = math.comb(T + m - 1, m - 1)
        if count > MAX_CELLS:
            raise ComputationTooLarge(
                f"the output space has {count:.3g} histograms (T={T}, m={m}); "
                "output_pmf enumerates them and is meant for small cases"
            )
        outs = _compositions(T, m)
        if self.replace:
            logp = _log_multinomial(outs, h / n)
        else:
            ok = np.all(outs <= h[None, :], axis=1)
            outs = outs[ok]
            logp = _lpmf.log_comb(h[None, :], outs).sum(axis=1) - _lpmf.log_comb(n, T)
        return outs, logp

    # -- the divergence kernel ---------------------------------------------------
    def _log_pair_divergence(self, u, v, n: int, T: int, epsilon: np.ndarray) -> np.ndarray:
        """log d(x, x') for the neighbour pair described in the module docstring.

        ``u``, ``v``: int arrays (B,) of the other records in categories a, b;
        ``n``: database size (all rows); ``epsilon``: (E,).  For ``m > 2`` the
        remaining ``n - 1 - u - v`` records form the merged category "rest"
        (the ratio does not depend on how they split).  Returns (B, E).
        """
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        rest = n - 1 - u - v
        out = np.empty((u.size, epsilon.size))
        binary = rest == 0
        if np.any(binary):
            out[binary] = self._log_pair_divergence_binary(u[binary], v[binary], n, T, epsilon)
        if np.any(~binary):
            out[~binary] = self._log_pair_divergence_grid(u[~binary], v[~binary], n, T, epsilon)
        return out

    def _log_ratio(self, u, v, oa, ob):
        """log P(o)/Q(o) as a function of the counts (o_a, o_b); arrays broadcast."""
        u = np.asarray(u, dtype=float)
        v = np.asarray(v, dtype=float)
        oa = np.asarray(oa, dtype=float)
        ob = np.asarray(ob, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.replace:
                a = np.log1p(1.0 / u)  # +inf when u = 0
                b = np.log1p(1.0 / v)
                ta = np.where(oa == 0, 0.0, oa * a)
                tb = np.where(ob == 0, 0.0, ob * b)
                return ta - tb
            return -np.log1p(-oa / (u + 1.0)) + np.log1p(-ob / (v + 1.0))

    def _binary_dist(self, u, v, n, T) -> LogConcaveCounts:
        """Law of o_a (count of category a in the output) under x, binary case."""
        good = (u + 1).astype(float)
        bad = v.astype(float)
        if self.replace:
            p = good / n
            q = bad / n
            Tf = float(T)

            def logpmf(rows, k):
                return _lpmf.log_binom_pmf(k, Tf, p[rows], q[rows])

            def ratio(rows, k):  # P(k+1)/P(k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    return (Tf - k) / (k + 1.0) * (p[rows] / q[rows])

            lo = np.zeros(u.size, dtype=np.int64)
            hi = np.full(u.size, T, dtype=np.int64)
            mode = np.floor((T + 1) * p).astype(np.int64)
            sd = np.sqrt(T * p * q)
        else:
            Tf = float(T)
            N = float(n)

            def logpmf(rows, k):
                return _lpmf.log_hypergeom_pmf(k, good[rows], bad[rows], Tf)

            shift = bad - Tf + 1.0

            def ratio(rows, k):  # P(k+1)/P(k)
                with np.errstate(divide="ignore", invalid="ignore"):
                    return ((good[rows] - k) * (Tf - k)) / ((k + 1.0) * (k + shift[rows]))

            lo = np.maximum(0, T - v).astype(np.int64)
            hi = np.minimum(u + 1, T).astype(np.int64)
            mode = np.floor((Tf + 1) * (good + 1) / (N + 2)).astype(np.int64)
            var = Tf * (good / N) * (bad / N) * ((N - Tf) / (N - 1)) if n > 1 else np.zeros(u.size)
            sd = np.sqrt(np.maximum(var, 0.0))
        return LogConcaveCounts(logpmf=logpmf, ratio=ratio, lo=lo, hi=hi, mode=mode, sd=sd)

    def _log_pair_divergence_binary(self, u, v, n, T, epsilon):
        """Tail sums from the closed-form threshold, one row per (pair, epsilon).

        Each row is anchored at its own largest term (see
        :func:`log_monotone_tail_sum`), so a divergence far below the
        distribution's mode is as accurate as one near it.
        """
        B, E = u.size, epsilon.size
        # One row per (pair, epsilon): the distribution depends on the pair only.
        uu = np.repeat(u, E)
        vv = np.repeat(v, E)
        ee = np.tile(epsilon, B)
        dist = self._binary_dist(uu, vv, n, T)
        start = self._binary_threshold(uu, vv, T, ee)

        res = log_monotone_tail_sum(dist, start, dist.hi, self._divergence_factor(uu, vv, T, ee))
        return res.reshape(B, E)

    def _divergence_factor(self, u, v, T, epsilon):
        """The factor ``f(rows, k) = max(0, 1 - e^epsilon Q(k)/P(k))`` for the rows
        (u, v, epsilon): P is the law of o_a = k under x, Q under its neighbour x'
        (one a-record turned into b), and each divergence term is ``P(k) f(k)``.
        ``k`` must lie in the support of P."""
        u = np.asarray(u, dtype=float)
        v = np.asarray(v, dtype=float)
        epsilon = np.broadcast_to(np.asarray(epsilon, dtype=float), u.shape)
        if self.replace:

            def factor(rows, k):
                lr = self._log_ratio(u[rows], v[rows], k, T - k)
                with np.errstate(invalid="ignore"):
                    f = -np.expm1(np.minimum(epsilon[rows] - lr, 0.0))
                return np.nan_to_num(f, nan=0.0)  # nan only where P(k) = 0

            return factor
        # Q/P = (u + 1 - o_a)(v + 1) / ((u + 1)(v + 1 - o_b)) with o_b = T - o_a:
        # a rational function, so no logarithm is needed; o_b <= v on the
        # support, so the denominator is >= 1.
        good = u + 1.0
        scale = np.exp(epsilon) * (v + 1.0) / good
        shift = v + 1.0 - T

        def factor(rows, k):
            return np.maximum(1.0 - scale[rows] * (good[rows] - k) / (k + shift[rows]), 0.0)

        return factor

    def _binary_threshold(self, u, v, T, epsilon):
        """Smallest o_a that can have log r > epsilon (one below the closed-form
        root, so rounding can only add a zero term, never drop a positive one)."""
        uf = u.astype(float)
        vf = v.astype(float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.replace:
                a = np.log1p(1.0 / uf)
                b = np.log1p(1.0 / vf)
                # K a - (T - K) b > epsilon  <=>  K > (epsilon + T b) / (a + b)
                k = (epsilon + T * b) / (a + b)
                k = np.where(np.isinf(a) & np.isfinite(b), 0.0, k)
                k = np.where(np.isinf(b), T - 1.0, k)
            else:
                em = np.exp(-epsilon)
                # (u+1)(v+1-T+K) > e^epsilon (v+1)(u+1-K), divided through by e^epsilon
                k = ((vf + 1) * (uf + 1) - em * (uf + 1) * (vf + 1 - T)) / (em * (uf + 1) + (vf + 1))
        k = np.nan_to_num(k, nan=0.0, posinf=float(T), neginf=0.0)
        return np.floor(k).astype(np.int64)

    def _log_pair_divergence_grid(self, u, v, n, T, epsilon):
        """m > 2: sum over the joint law of (o_a, o_b) on the full grid."""
        B, E = u.size, epsilon.size
        cells = B * (T + 1) ** 2
        if cells * E > 20 * MAX_CELLS:  # ~ a minute of vector work
            raise ComputationTooLarge(
                f"exact profile for m > 2 needs ~{cells * E:.3g} grid cells "
                f"({B} neighbour pairs x (T+1)^2 with T={T}); use fewer categories, smaller n, "
                "or method='monte-carlo'"
            )
        out = np.empty((B, E))
        chunk = max(1, MAX_CELLS // (T + 1) ** 2 // 4)
        oa = np.arange(T + 1, dtype=float)[:, None]
        ob = np.arange(T + 1, dtype=float)[None, :]
        for s in range(0, B, chunk):
            uu = u[s : s + chunk, None, None].astype(float)
            vv = v[s : s + chunk, None, None].astype(float)
            rest = n - 1 - uu - vv
            logp = self._log_joint_ab(uu, vv, rest, n, T, oa[None], ob[None])
            lr = self._log_ratio(uu, vv, oa[None], ob[None])
            lp = logp.reshape(logp.shape[0], -1)
            lrr = np.broadcast_to(lr, logp.shape).reshape(lp.shape)
            for j, e in enumerate(epsilon):
                x = e - lrr
                terms = np.where((x < 0) & np.isfinite(lp), lp + log1mexp(np.minimum(x, 0.0)), -np.inf)
                out[s : s + chunk, j] = logsumexp(terms, axis=1)
        return out

    def _log_joint_ab(self, u, v, rest, n, T, oa, ob):
        """log P[(o_a, o_b)] under x (u+1 records of a, v of b, rest others).

        The grid path is for moderate n (m > 2), so a table of log-factorials
        (lgamma, accurate to an ulp) is used: the absolute error of a log-pmf
        is ~n log(n) * 1e-16, i.e. 1e-11 relative for n = 1e4.
        """
        lf = _log_factorials(n)
        oa_i = np.broadcast_to(oa, np.broadcast_shapes(np.shape(oa), np.shape(ob))).astype(np.int64)
        ob_i = np.broadcast_to(ob, oa_i.shape).astype(np.int64)
        u = np.asarray(u, dtype=np.int64)
        v = np.asarray(v, dtype=np.int64)
        rest = np.asarray(rest, dtype=np.int64)
        oc = T - oa_i - ob_i  # records of the other categories in the sample

        def lgc(N, k):
            ok = (k >= 0) & (k <= N)
            kk = np.where(ok, k, 0)
            NN = np.broadcast_to(N, kk.shape)
            return np.where(ok, lf[NN] - lf[kk] - lf[np.maximum(NN - kk, 0)], -np.inf)

        if self.replace:
            with np.errstate(divide="ignore"):
                logs = np.log(np.stack([u + 1.0, v * 1.0, rest * 1.0])) - math.log(n)
            # 0 * log 0 = 0 (a category with no records is never drawn); np.where
            # picks the right branch, the discarded one may be nan
            with np.errstate(invalid="ignore"):
                res = (
                    lf[T] - lf[oa_i] - lf[ob_i] - lf[np.maximum(oc, 0)]
                    + np.where(oa_i > 0, oa_i * logs[0], 0.0)
                    + np.where(ob_i > 0, ob_i * logs[1], 0.0)
                    + np.where(oc > 0, oc * logs[2], 0.0)
                )
            res = np.where(oc >= 0, res, -np.inf)
        else:
            res = lgc(u + 1, oa_i) + lgc(v, ob_i) + lgc(rest, oc) - (lf[n] - lf[T] - lf[n - T])
        return np.where(np.isnan(res), -np.inf, res)


def _log_factorials(n: int) -> np.ndarray:
    """lf[k] = log k! for k = 0..n (cached per size)."""
    cached = _LF_CACHE.get("table")
    if cached is None or len(cached) <= n:
        from scipy.special import gammaln

        cached = gammaln(np.arange(max(n, 1024) + 1, dtype=float) + 1.0)
        _LF_CACHE["table"] = cached
    return cached


_LF_CACHE: dict = {}


class NoisySamplingHistogram(SamplingHistogram):
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
    """

    def __init__(self, eta=None, *, T: int | None = None, noise_epsilon: float):
        super().__init__(eta, T=T, replace=False)
        try:
            ne = float(noise_epsilon)
        except (TypeError, ValueError):
            raise TypeError(f"noise_epsilon must be a positive number, got {noise_epsilon!r}") from None
        if not (ne > 0 and math.isfinite(ne)):
            raise ValueError(f"noise_epsilon must be a finite number > 0, got {noise_epsilon!r}")
        self.noise_epsilon = ne

    def __repr__(self) -> str:
        size = f"eta={self._eta_text()}" if self.T is None else f"T={self.T}"
        return f"NoisySamplingHistogram({size}, noise_epsilon={self.noise_epsilon:g})"

    def _key(self):
        return (self._rate, self.T, self.noise_epsilon)

    def sample_histogram(self, hist, rng=None, size: int | None = None) -> np.ndarray:
        gen = as_rng(rng)
        sampled = super().sample_histogram(hist, rng=gen, size=size)
        lam = self.noise_epsilon / 4.0
        return _sample_truncated_two_sided_geometric(sampled, lam, gen)

    def _log_kernel(self, T: int) -> np.ndarray:
        """log K[s, c]: probability that a coordinate with sampled count s
        (0..T) is published in cell c (0..T-1 exactly, T meaning ">= T")."""
        lam = self.noise_epsilon / 4.0
        s = np.arange(T + 1, dtype=float)[:, None]
        c = np.arange(T + 1, dtype=float)[None, :]
        # log Z(s) = log(1 + r - r^(s+1)) - log(1 - r), with r = e^-lam
        log_one_minus_r = float(log1mexp(-lam))
        log_z = np.log1p(np.exp(-lam) - np.exp(-lam * (s + 1))) - log_one_minus_r
        logk = -lam * np.abs(c - s) - log_z
        # the lumped cell sums r^(k - s) over k >= T
        logk[:, T] = -lam * (T - s[:, 0]) - log_one_minus_r - log_z[:, 0]
        return logk

    def _log_output_pmf(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Output pmf on the lumped space: coordinates 0..T-1 exact, T = '>= T'."""
        samples, logw = SamplingHistogram._log_output_pmf(self, h)
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
        return outs, logsumexp(acc, axis=0)

    def output_pmf(self, hist):
        """Exact output pmf on the lumped space (see class docstring).

        A count equal to T in column ``cj`` stands for the event "out_j >= T"
        (the column ``lumped`` flags such rows); the probabilities sum to 1.
        """
        df = super().output_pmf(hist)
        h, _ = as_histograms(hist)
        T = self.sample_size(int(h.sum()))
        cols = [c for c in df.columns if c.startswith("c")]
        df["lumped"] = (df[cols] >= T).any(axis=1)
        return df


def _label_index(cats: np.ndarray, data: np.ndarray) -> np.ndarray:
    order = np.argsort(cats, kind="stable")
    sorted_cats = cats[order]
    pos = np.searchsorted(sorted_cats, data)
    pos = np.clip(pos, 0, len(cats) - 1)
    if np.any(sorted_cats[pos] != data):
        bad = data[sorted_cats[pos] != data][0]
        raise ValueError(f"data contains the label {bad!r}, which is not in categories")
    return order[pos]


def _compositions(total: int, parts: int) -> np.ndarray:
    """All vectors of ``parts`` non-negative ints summing to ``total`` (stars and bars)."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    bars = np.array(list(itertools.combinations(range(total + parts - 1), parts - 1)), dtype=np.int64)
    padded = np.concatenate(
        [np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), total + parts - 1)], axis=1
    )
    return np.diff(padded, axis=1) - 1


def _log_multinomial(outs: np.ndarray, p: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    T = outs.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(outs > 0, outs * np.log(p)[None, :], 0.0)
    return gammaln(T + 1.0) - gammaln(outs + 1.0).sum(axis=1) + terms.sum(axis=1)


def _sample_truncated_two_sided_geometric(centre: np.ndarray, lam: float, gen) -> np.ndarray:
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
    return np.where(go_left, c - g_left, c + 1 + g_right)
