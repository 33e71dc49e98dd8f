"""The usual noisy mechanisms as mechanisms: :class:`NoisyCount`, the count of one category plus
Gaussian, Laplace, discrete Gaussian or discrete Laplace noise, and its subsampled forms.

A noisy count's output law is continuous (or infinite): it has no finite
:meth:`~.base.Mechanism.log_output_pmf`.  Its privacy profile is in closed form
instead, and its privacy-loss distribution on a neighbouring pair is the noise's
own, outward-discretised (:mod:`smoothdp_nb.core.numerics.privacy_loss.noise`), so
:func:`~.composed.repeat` and :func:`~.composed.joint` compose it with every other
mechanism.

Neighbours change the count by at most one, so the profile is the noise's
divergence at sensitivity one for every database (every database has a neighbour
whose count differs): the same under both relations.

Subsampled (:func:`~.subsample.subsample`):

* ``"poisson"`` (rate q): the count of the records kept.  For neighbours whose counts
  differ (the record in question counted in one of them), the two output laws are
  ``(1 - q) R + q R_1`` and ``R``, with R the law of the noisy count of the other
  kept records and ``R_1`` its translate by one -- the image of the pair
  ``(q N_1 + (1 - q) N_0, N_0)`` under adding the independent count of the other
  records, a post-processing; so that pair's loss laws bound the profile and every
  composition (Zhu, Dong & Wang's dominating pair of Poisson subsampling), under the
  replace and the add-remove relation alike.
* ``"without-replacement"`` (a sample of ``T = ceil(rate n)`` records, the replace
  relation): the profile of Balle, Barthe & Gaboardi (Theorem 10):
  ``delta'(eps') <= (T/n) delta(eps)`` with ``eps' = log(1 + (T/n)(e^eps - 1))``.  No
  loss law is stated for it, so it is not composed (use ``"poisson"`` to compose).

References
----------
Balle, B. and Wang, Y.-X. *Improving the Gaussian mechanism for differential privacy:
analytical calibration and optimal denoising*, ICML 2018 (Theorem 8).
Canonne, C., Kamath, G. and Steinke, T. *The discrete Gaussian for differential privacy*, NeurIPS 2020.
Zhu, Y., Dong, J. and Wang, Y.-X. *Optimal accounting of differential privacy via characteristic
function*, AISTATS 2022.
Balle, B., Barthe, G. and Gaboardi, M. *Privacy amplification by subsampling: tight analyses via
couplings and divergences*, NeurIPS 2018 (Theorem 10).
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from fractions import Fraction

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.enclosures import LogEnclosure
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution
from smoothdp_nb.core.numerics.privacy_loss.noise import NOISES, noise_log_delta, noise_losses
from smoothdp_nb.core.numerics.validation import as_choice, as_int, as_real, as_rng
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism, RunLosses

__all__ = ["METHODS", "NOISES", "NoisyCount", "noisy_count"]

#: the subsampling methods
METHODS = ("poisson", "without-replacement")
#: the loss of a pair whose counts agree: 0 with certainty
_NO_LOSS = LossDistribution(np.zeros(1), np.zeros(1))


def exact_rate(rate: object, name: str = "rate") -> Fraction:
    """The rate in (0, 1] as an exact fraction of the decimal typed (0.1 is 1/10)."""
    value = as_real(rate, name, lo=0.0, hi=1.0)
    if value <= 0.0:
        raise ValueError(f"{name} must be in (0, 1], got {rate!r}")
    return Fraction(repr(float(value)))


class NoisyCount(Mechanism):
    """The count of one category plus noise of a given scale (sensitivity 1).

    Parameters
    ----------
    category : int >= 0
        The category counted (a column of the histogram).
    scale : float > 0
        Gaussian and discrete Gaussian: sigma; Laplace: b (density ``e^(-|z|/b)/(2b)``);
        discrete Laplace: t (mass proportional to ``e^(-|k|/t)``).
    noise : {"gaussian", "laplace", "discrete_gaussian", "discrete_laplace"}
    cells : int, optional
        Cells of the discretised loss law of the continuous noises (default 4096);
        more cells narrow the composed bounds.

    Notes
    -----
    The profile of one noisy count is exact to the ball arithmetic's precision
    (:func:`~smoothdp_nb.core.numerics.privacy_loss.noise.noise_log_delta`); a
    composition's is a proven upper bound from the discretised loss law (at the
    default cells, within about 2% of the truth for the Gaussian at delta ~ 1e-5).
    Fewer cells compose faster (a pair's laws compose exactly while the composed
    support is below 2^15 atoms, on the pessimistic grid beyond), more cells more
    tightly.  Drawing an output
    (:meth:`sample_histogram`) simulates the mechanism with numpy's generators (a
    simulation, not a hardened release: see :func:`smoothdp_nb.release`).

    References
    ----------
    Balle and Wang, *Improving the Gaussian mechanism for differential privacy*, ICML 2018,
    Theorem 8; Canonne, Kamath and Steinke, *The discrete Gaussian for differential privacy*,
    NeurIPS 2020.
    """

    label_symmetric = False

    def __init__(
        self,
        category: int,
        scale: float,
        noise: str = "gaussian",
        *,
        cells: int | None = None,
        rate: object = None,
        method: str = "poisson",
    ) -> None:
        self.category = as_int(category, "category", minimum=0)
        self.scale = as_real(scale, "scale", lo=0.0)
        if self.scale <= 0.0:
            raise ValueError(f"scale must be > 0, got {scale!r}")
        self.noise = as_choice(noise, "noise", NOISES)
        self.cells = 2**12 if cells is None else as_int(cells, "cells", minimum=2**6, maximum=2**20)
        self._rate = None if rate is None else exact_rate(rate)
        self.method = as_choice(method, "method", METHODS)

    # -- description -----------------------------------------------------------------
    def _key(self) -> Hashable:
        return (self.category, self.scale, self.noise, self.cells, self._rate, self.method)

    def __repr__(self) -> str:
        base = f"noisy_count({self.category}, {self.scale!r}, noise={self.noise!r})"
        if self._rate is None:
            return base
        return f"subsample({base}, {float(self._rate)!r}, method={self.method!r})"

    @property
    def label(self) -> str:
        return repr(self)

    @property
    def rate(self) -> float | None:
        """The subsampling rate (None: every record counted)."""
        return None if self._rate is None else float(self._rate)

    @property
    def categories(self) -> int | None:
        return None

    def check_histograms(self, hists: IntArray, name: str = "hist") -> None:
        if hists.shape[1] <= self.category:
            raise ValueError(
                f"{name} must have more than {self.category} counts for {self!r} (it counts category "
                f"{self.category}), got {hists.shape[1]}"
            )

    def sample_size(self, n: int) -> int:
        n = as_int(n, "n", minimum=1)
        if self._rate is not None and self.method == "without-replacement":
            return self._sample_t(n)
        return n

    def _sample_t(self, n: int) -> int:
        """``ceil(rate n)``, exactly."""
        assert self._rate is not None
        return -((-self._rate.numerator * n) // self._rate.denominator)

    # -- the law ------------------------------------------------------------------------
    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """Refused (TypeError): a continuous or unbounded noise has no finite output law to list."""
        raise TypeError(
            f"{self!r} has a continuous or infinite output law: its privacy profile and loss laws are in "
            "closed form (privacy_profile, repeat, joint work); output_pmf and postprocess need a finite law"
        )

    def sample_histogram(self, hist: object, rng: object = None, size: int | None = None) -> object:
        """Draw the noisy count on ``hist`` (``size`` draws: an array)."""
        x = self._one_histogram(hist)
        gen = as_rng(rng)
        k = 1 if size is None else as_int(size, "size", minimum=1)
        c, n = int(x[self.category]), int(x.sum())
        if self._rate is None:
            count = np.full(k, c)
        elif self.method == "poisson":
            count = gen.binomial(c, float(self._rate), size=k)
        else:
            count = gen.hypergeometric(c, n - c, self._sample_t(n), size=k)
        draws = count + self._noise(gen, k)
        return draws[0] if size is None else draws

    def _noise(self, gen: np.random.Generator, k: int) -> np.ndarray:
        s = self.scale
        if self.noise == "gaussian":
            return gen.normal(0.0, s, size=k)
        if self.noise == "laplace":
            return gen.laplace(0.0, s, size=k)
        p = -math.expm1(-1.0 / s)
        if self.noise == "discrete_laplace":  # the difference of two geometric laws
            return (gen.geometric(p, size=k) - gen.geometric(p, size=k)).astype(np.int64)
        # discrete Gaussian: a discrete Laplace proposal of scale t = floor(sigma) + 1, accepted
        # with probability exp(-(|y| - sigma^2/t)^2 / (2 sigma^2)) (Canonne, Kamath, Steinke, Algorithm 3)
        t = math.floor(s) + 1
        pt = -math.expm1(-1.0 / t)
        out = np.empty(k, dtype=np.int64)
        todo = np.arange(k)
        while todo.size:
            y = gen.geometric(pt, size=todo.size) - gen.geometric(pt, size=todo.size)
            acc = gen.random(todo.size) < np.exp(-((np.abs(y) - s * s / t) ** 2) / (2 * s * s))
            out[todo[acc]] = y[acc]
            todo = todo[~acc]
        return out

    # -- the profile ----------------------------------------------------------------------
    def _log_delta(self, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Proven bounds on the log profile at every epsilon (E,), for databases of n records."""
        if self._rate is None:
            return noise_log_delta(self.noise, self.scale, epsilon)
        if self.method == "poisson":
            fu, bu, fl, bl = noise_losses(self.noise, self.scale, self._rate, self.cells)
            return LogEnclosure(
                np.maximum(fl.log_delta(epsilon, False), bl.log_delta(epsilon, False)),
                np.maximum(fu.log_delta(epsilon, True), bu.log_delta(epsilon, True)),
            )
        return self._wor_log_delta(n, epsilon)

    def _wor_log_delta(self, n: int, epsilon: FloatArray) -> LogEnclosure:
        """Balle, Barthe & Gaboardi (Theorem 10), gamma = T/n: ``log(gamma delta(eps))`` with
        ``eps = log(1 + (e^eps' - 1)/gamma)``, rounded up (eps rounded down: the base
        profile is non-increasing); the lower bound is 0 (none stated)."""
        g = Fraction(self._sample_t(n), n)
        gf = float(g)
        with np.errstate(over="ignore"):
            base = np.log1p(np.expm1(epsilon) / gf)
        # expm1, the quotient and log1p: a few LIBM_REL relative (the quotient's condition is 1,
        # log1p's at most 1 relative to its value): 1e-14 relative is ample, then two ulps down
        base = np.maximum(np.nextafter(np.nextafter(base * (1 - 1e-14), -np.inf), -np.inf), 0.0)
        d = noise_log_delta(self.noise, self.scale, base).upper
        lg = math.log(gf)  # gf off by u, its log by LIBM_REL: within 4e-15 (1 + |lg|)
        up = np.nextafter(np.nextafter(d + lg + 4e-15 * (np.abs(d) + abs(lg) + 1.0), np.inf), np.inf)
        return LogEnclosure(np.full(epsilon.size, -np.inf), np.minimum(up, 0.0))

    def _log_profile_enclosure(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """The noise's divergence at sensitivity one for every database (see the module)."""
        d = self._log_delta(n, epsilon)
        k = hists.shape[0]
        return LogEnclosure(
            np.broadcast_to(np.asarray(d.lower), (k, epsilon.size)).copy(),
            np.broadcast_to(np.asarray(d.upper), (k, epsilon.size)).copy(),
        )

    def _log_profile_add_remove(self, hists: IntArray, n: int, epsilon: FloatArray) -> LogEnclosure:
        """The same divergence: adding or removing a record of the category moves the count by one."""
        self._check_add_remove()
        return self._log_profile_enclosure(hists, n, epsilon)

    def _check_add_remove(self) -> None:
        if self._rate is not None and self.method == "without-replacement":
            raise ValueError(
                f"{self!r}: subsampling without replacement is analysed under the replace relation only "
                "(its sample size changes with n); use method='poisson' with neighbours='add-remove'"
            )

    def _dp_delta_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = DEFAULT_BUDGET_SECONDS,
    ) -> LogEnclosure:
        """Every database's profile is the same: it is the DP delta."""
        return self._log_delta(n, epsilon)

    def _dp_delta_add_remove_enclosure(
        self,
        n: int,
        epsilon: FloatArray,
        categories: int | None = None,
        budget: float = DEFAULT_BUDGET_SECONDS,
    ) -> LogEnclosure:
        self._check_add_remove()
        return self._log_delta(n, epsilon)

    def _profile_cost(
        self, n: int, m: int, count: int, n_epsilon: int, budget: float = DEFAULT_BUDGET_SECONDS
    ) -> Estimate:
        """A closed form: a few microseconds per epsilon (once), the (count, E) result."""
        return Estimate(1e-3 + 1e-5 * n_epsilon + 1e-8 * count * n_epsilon, 16.0 * count * max(1, n_epsilon))

    # -- composition ------------------------------------------------------------------------
    def _pair_losses(self, x: IntArray, x2: IntArray) -> RunLosses:
        """The loss laws on the pair (x, x'): none when the counts agree, else the noise's
        (or the subsampled pair's) -- the larger count plays ``A = q N_1 + (1 - q) N_0``."""
        d = int(x[self.category]) - int(x2[self.category])
        if d == 0:
            return [(_NO_LOSS, 1)], [(_NO_LOSS, 1)], [(_NO_LOSS, 1)], [(_NO_LOSS, 1)]
        if self._rate is not None and self.method == "without-replacement":
            raise ValueError(
                f"{self!r} has no stated privacy-loss distribution (its profile is a bound of Balle, Barthe "
                "& Gaboardi); compose method='poisson' instead"
            )
        rate = Fraction(1) if self._rate is None else self._rate
        fu, bu, fl, bl = noise_losses(self.noise, self.scale, rate, self.cells)
        if d > 0:
            return [(fu, 1)], [(bu, 1)], [(fl, 1)], [(bl, 1)]
        return [(bu, 1)], [(fu, 1)], [(bl, 1)], [(fl, 1)]


def noisy_count(category: int, scale: float, *, noise: str = "gaussian", cells: int | None = None) -> NoisyCount:
    """The count of category ``category`` plus noise: a :class:`NoisyCount` (see there).

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> m = sdp.noisy_count(0, 2.0, noise="gaussian")
    >>> round(float(sdp.privacy_profile(m, [3, 2], 1.0)), 6)
    0.017327
    """
    return NoisyCount(category, scale, noise, cells=cells)
