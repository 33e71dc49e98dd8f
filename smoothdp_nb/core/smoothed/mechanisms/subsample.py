"""Amplification by subsampling, per database: :func:`subsample` runs a mechanism on a random
sample of the records, and :class:`Subsampled` states the exact output law of that on every database.

On a database x the sample's histogram y has the law

* ``"poisson"`` (rate q, every record kept independently): ``prod_j C(x_j, y_j) q^y_j (1 - q)^(x_j - y_j)``;
* ``"without-replacement"`` (``T = ceil(rate n)`` records): ``prod_j C(x_j, y_j) / C(n, T)``,

and the output law is the mixture ``sum_y w(y) M(y)`` -- computed exactly, so every
profile, DP delta, smoothed delta and composition of the package applies to it,
per database: the amplification is the one this database gets, not the worst
case's.  An empty Poisson sample outputs ``None`` (the mechanisms are defined on
databases of at least one record).  A noisy count is subsampled in closed form
(:mod:`.noisy`).

References
----------
Balle, B., Barthe, G. and Gaboardi, M. "Privacy amplification by subsampling: tight
analyses via couplings and divergences." NeurIPS 2018.
Zhu, Y., Dong, J. and Wang, Y.-X. "Optimal accounting of differential privacy via
characteristic function." AISTATS 2022.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Hashable
from fractions import Fraction
from functools import lru_cache

import numpy as np
from flint import arb

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.ball_arithmetic import float_up, working_precision
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, U, next_up
from smoothdp_nb.core.numerics.validation import as_choice, as_int, as_rng
from smoothdp_nb.core.runtime.budget import ComputationTooLarge
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.noisy import METHODS, NoisyCount, exact_rate
from smoothdp_nb.core.smoothed.mechanisms.outputs import factorize_outputs

__all__ = ["Subsampled", "subsample"]

#: most samples a law enumerates (the product of (x_j + 1) over the categories)
MAX_SAMPLES = 2 * 10**5
# laws whose error bounds are remembered for log_output_pmf_error
_ERROR_MEMO = 4096


@lru_cache(maxsize=1024)
def _log_binomials(x: int) -> tuple[FloatArray, FloatArray]:
    """(values, proven absolute errors) of ``log C(x, y)`` for y = 0..x: Arb logs of the exact
    integers, the midpoint as the value and the radius plus one ulp as the error."""
    with working_precision(128):
        balls = [arb(math.comb(x, y)).log() for y in range(x + 1)]
        vals = np.array([float(b.mid()) for b in balls])
        errs = np.array([float_up(b.rad()) for b in balls]) + np.abs(vals) * U
    return vals, errs


@lru_cache(maxsize=256)
def _log_pair(rate: Fraction) -> tuple[float, float, float]:
    """(log q, log(1 - q), a proven bound on the error of both) for q = rate (exact)."""
    with working_precision(128):
        q = arb(rate.numerator) / arb(rate.denominator)
        lq = q.log()
        lr = (1 - q).log() if rate < 1 else arb(0)
        err = max(float_up(lq.rad()), float_up(lr.rad())) + U * max(abs(float(lq.mid())), abs(float(lr.mid())))
        return float(lq.mid()), (float(lr.mid()) if rate < 1 else -math.inf), err


class Subsampled(Mechanism):
    """``mechanism`` run on a random sample of the records (see the module docstring).

    Parameters
    ----------
    mechanism : Mechanism
        Any mechanism with a finite output law.
    rate : float in (0, 1]
        Poisson: the probability of keeping each record; without replacement: the
        sample has ``ceil(rate n)`` of the n records.
    method : {"poisson", "without-replacement"}

    References
    ----------
    Balle, Barthe and Gaboardi, NeurIPS 2018.
    """

    label_symmetric = False

    def __init__(self, mechanism: Mechanism, rate: object, method: str = "poisson") -> None:
        if not isinstance(mechanism, Mechanism):
            raise TypeError(f"mechanism must be a smoothdp_nb Mechanism, got {type(mechanism).__name__}")
        self.mechanism = mechanism
        self._rate = exact_rate(rate)
        self.method = as_choice(method, "method", METHODS)
        self._errors: OrderedDict[tuple[int, ...], FloatArray] = OrderedDict()

    def _key(self) -> Hashable:
        return (self.mechanism, self._rate, self.method)

    def __repr__(self) -> str:
        return f"subsample({self.mechanism!r}, {float(self._rate)!r}, method={self.method!r})"

    @property
    def rate(self) -> float:
        return float(self._rate)

    @property
    def categories(self) -> int | None:
        return self.mechanism.categories

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        self.mechanism.check_histograms(hists, name)

    def sample_size(self, n: int) -> int:
        """The records of the sample: ``ceil(rate n)`` without replacement (checked against the
        mechanism), n for Poisson sampling (every record may be kept)."""
        n = as_int(n, "n", minimum=1)
        if self.method == "poisson":
            return n
        T = -((-self._rate.numerator * n) // self._rate.denominator)
        self.mechanism.sample_size(T)
        return T

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_errors"] = OrderedDict()
        return state

    # -- the law --------------------------------------------------------------------------
    def _samples(self, x: IntArray) -> tuple[IntArray, FloatArray, FloatArray]:
        """(the sample histograms y, shape (S, m); log w(y); proven errors of log w)."""
        x = np.asarray(x, dtype=np.int64)
        count = math.prod(int(v) + 1 for v in x)
        if count > MAX_SAMPLES:
            raise ComputationTooLarge(
                f"{self!r} on a database of {int(x.sum())} records mixes the laws of {count:.3g} samples "
                f"(at most {MAX_SAMPLES}); use fewer records or categories",
                "n",
            )
        ys = np.array(list(itertools.product(*(range(int(v) + 1) for v in x))), dtype=np.int64).reshape(-1, x.size)
        n = int(x.sum())
        if self.method == "without-replacement":
            ys = ys[ys.sum(axis=1) == self.sample_size(n)]
        vals = np.zeros(len(ys))
        errs = np.zeros(len(ys))
        for j, xj in enumerate(x.tolist()):
            v, e = _log_binomials(int(xj))
            vals += v[ys[:, j]]
            errs += e[ys[:, j]]
        if self.method == "poisson":
            lq, lr, e_pair = _log_pair(self._rate)
            kept = ys.sum(axis=1).astype(float)
            with np.errstate(invalid="ignore"):
                a = np.where(kept > 0, kept * lq, 0.0)
                b = np.where(n - kept > 0, (n - kept) * lr, 0.0)
            vals = vals + a + b
            errs += (kept + (n - kept)) * e_pair + U * (np.abs(a) + np.abs(b))
        else:
            v_n, e_n = _log_binomials(n)
            T = self.sample_size(n)
            vals = vals - v_n[T]
            errs += e_n[T]
        # the sums above: m + 3 float additions, each u of its partial result
        errs += (x.size + 3) * U * (np.abs(vals) + 1.0)
        return ys, vals, next_up(errs)

    def _law(self, x: IntArray) -> tuple[np.ndarray, FloatArray, FloatArray]:
        """(outputs, log-probabilities, proven absolute errors) of the mixture on x."""
        ys, lw, ew = self._samples(x)
        empty = ys.sum(axis=1) == 0
        live = ys[~empty]
        parts, logp, sizes = self.mechanism._log_output_pmfs(live) if len(live) else ([], np.zeros(0), np.zeros(0, int))
        codes_parts, K = factorize_outputs(parts) if len(live) else ([], 0)
        codes = np.concatenate(codes_parts) if codes_parts else np.zeros(0, dtype=np.int64)
        # the inner laws' errors: LIBM_REL of each value and the mechanism's own bound
        lp = np.asarray(logp, dtype=float)
        ep = LIBM_REL * np.abs(np.where(np.isfinite(lp), lp, 0.0))
        if self.mechanism._states_pmf_error():
            starts = np.concatenate([[0], np.cumsum(sizes)])
            ep = ep + np.concatenate(
                [
                    np.broadcast_to(
                        np.asarray(self.mechanism.log_output_pmf_error(live[r], lp[starts[r] : starts[r + 1]]), float),
                        (int(sizes[r]),),
                    )
                    for r in range(len(live))
                ]
            )
        row = np.repeat(np.arange(len(live)), sizes)
        lw_live, ew_live = lw[~empty], ew[~empty]
        terms = lw_live[row] + lp
        fin = np.isfinite(terms)
        terr = np.where(fin, ew_live[row] + ep + U * np.abs(np.where(fin, terms, 0.0)), 0.0)
        total = np.full(K + 1, -np.inf)
        np.logaddexp.at(total, codes[fin], terms[fin])
        worst = np.zeros(K + 1)
        np.maximum.at(worst, codes[fin], terr[fin])
        cnt = np.bincount(codes[fin], minlength=K + 1).astype(float)
        top = np.full(K + 1, 0.0)
        np.maximum.at(top, codes[fin], np.abs(terms[fin]))
        # the empty sample: one more output, None
        total[K] = lw[empty][0] if empty.any() else -np.inf
        worst[K] = ew[empty][0] if empty.any() else 0.0
        cnt[K] = 1.0 if empty.any() else 0.0
        # each log-add-exp step: 2u of its operands and LIBM_REL of its log1p
        err = worst + cnt * (2.0 * U * (top + np.abs(np.where(np.isfinite(total), total, 0.0))) + LIBM_REL)
        outs = np.empty(K + 1, dtype=object)
        if K:
            flat = [o for p in parts for o in (p.tolist() if isinstance(p, np.ndarray) else list(p))]
            firsts = np.unique(codes, return_index=True)[1]
            for c, i in zip(np.unique(codes).tolist(), firsts.tolist()):
                o = flat[i]
                outs[c] = tuple(o) if isinstance(o, list) else o
        outs[K] = None
        keep = np.isfinite(total)
        return outs[keep], total[keep], next_up(err[keep])

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        outs, logp, err = self._law(hist)
        key = tuple(int(v) for v in hist)
        self._errors[key] = err
        if len(self._errors) > _ERROR_MEMO:
            self._errors.popitem(last=False)
        return outs, logp

    def log_output_pmf_error(self, hist: IntArray, log_p: FloatArray) -> FloatArray | float:
        """The proven error of the mixture's log-probabilities: each term's (the weight's
        Arb bound, the inner law's ``LIBM_REL`` and own bound, the addition's u), the
        largest over the terms of an output, plus each log-add-exp step's rounding."""
        key = tuple(int(v) for v in hist)
        err = self._errors.get(key)
        if err is None or err.shape != np.shape(log_p):
            err = self._law(hist)[2]
        return err

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> object:
        """Draw a sample of the records, then the mechanism's output on it (None for an empty sample)."""
        x = self._one_histogram(hist)
        gen = as_rng(rng)
        k = 1 if size is None else as_int(size, "size", minimum=1)
        draws = []
        for _ in range(k):
            if self.method == "poisson":
                y = gen.binomial(x, float(self._rate))
            else:
                y = gen.multivariate_hypergeometric(x, self.sample_size(int(x.sum())))
            draws.append(None if y.sum() == 0 else self.mechanism.sample_histogram(y, gen))
        if size is None:
            return draws[0]
        out = np.empty(k, dtype=object)
        out[:] = draws
        return out


def subsample(mechanism: Mechanism, rate: float, *, method: str = "poisson") -> Mechanism:
    """``mechanism`` run on a random sample of the records: amplification by subsampling, per database.

    Parameters
    ----------
    mechanism : Mechanism
        A mechanism with a finite output law (its exact mixture law is computed per
        database: :class:`Subsampled`), or a :func:`~smoothdp_nb.noisy_count` (closed form:
        the dominating pair of Poisson subsampling, or Balle, Barthe & Gaboardi's bound
        without replacement; :mod:`.noisy`).
    rate : float in (0, 1]
    method : {"poisson", "without-replacement"}

    References
    ----------
    Balle, Barthe and Gaboardi, NeurIPS 2018; Zhu, Dong and Wang, AISTATS 2022.

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> m = sdp.subsample(sdp.noisy_count(0, 1.0), 0.1)
    >>> float(sdp.privacy_profile(m, [3, 2], 0.5)) < float(sdp.privacy_profile(sdp.noisy_count(0, 1.0), [3, 2], 0.5))
    True
    """
    if isinstance(mechanism, NoisyCount):
        if mechanism.rate is not None:
            raise ValueError(f"{mechanism!r} is subsampled already")
        return NoisyCount(
            mechanism.category, mechanism.scale, mechanism.noise, cells=mechanism.cells, rate=rate, method=method
        )
    return Subsampled(mechanism, rate, method)
