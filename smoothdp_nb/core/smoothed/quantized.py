"""Quantized noise laws and the continuous limit of the sampling average.

* :func:`quantized_gaussian` -- Definition 5 (Appendix G.1) of *Smoothed
  Differential Privacy* (Liu, Wang, Xia), for any number of bits;
  :func:`quantized_laplace` -- the same construction for a Laplace law;
* :func:`continuous_limit_profile` -- Theorem 4 numerically.

References
----------
Liu, Wang, Xia, *Smoothed Differential Privacy*, Definition 5, Theorem 4 and Appendix G.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import special

from smoothdp_nb.core.numerics.array_types import SeedLike
from smoothdp_nb.core.numerics.divergence import log1mexp
from smoothdp_nb.core.numerics.validation import as_epsilon, as_int, as_rng
from smoothdp_nb.core.runtime.budget import DEFAULT_BUDGET_SECONDS, Estimate, check_budget
from smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism import SamplingAverage, sampling_average_units
from smoothdp_nb.core.smoothed.profiles import privacy_profile

__all__ = ["QuantizedLaw", "quantized_gaussian", "quantized_laplace", "continuous_limit_profile"]

_LogTail = Callable[[np.ndarray], np.ndarray]


# ---------------------------------------------------------------------------
# quantized laws (Definition 5)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class QuantizedLaw:
    """A law on the quantization grid: ``values[i] = (i - 2^(bits-1)) / 2^bits``."""

    values: np.ndarray
    pmf: np.ndarray

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.values, self.pmf))


def _check_bits(bits: Any) -> int:
    b = as_int(bits, "bits")
    if not (1 <= b <= 16):
        raise ValueError(f"bits must be in 1..16, got {b}")
    return b


def _check_positive(x: Any, name: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a positive number, got {x!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive finite number, got {x!r}")
    return v


def _check_mu(mu: Any) -> float:
    try:
        v = float(mu)
    except (TypeError, ValueError):
        raise TypeError(f"mu must be a number, got {mu!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"mu must be finite, got {mu!r}")
    return v


def _log_interval_mass(
    log_cdf: _LogTail, log_sf: _LogTail, lo: np.ndarray, hi: np.ndarray, centre: float
) -> np.ndarray:
    """log P((lo, hi]) from a log-cdf / log-sf pair, using the tail that avoids cancellation."""
    upper = lo >= centre
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(upper, log_sf(lo), log_cdf(hi))  # the larger of the two
        b = np.where(upper, log_sf(hi), log_cdf(lo))
        return np.asarray(a + log1mexp(np.minimum(b - a, 0.0)))


def _quantize(log_cdf: _LogTail, log_sf: _LogTail, centre: float, bits: int) -> QuantizedLaw:
    K = 2**bits
    i = np.arange(K)
    values = (i - K // 2) / K
    lo = values
    hi = (i - K // 2 + 1) / K
    logm = _log_interval_mass(log_cdf, log_sf, lo, hi, centre)
    logm = logm - special.logsumexp(logm)  # normalise by Z = mass of (-1/2, 1/2]
    pmf = np.exp(logm)
    pmf = pmf / pmf.sum()
    values.setflags(write=False)
    pmf.setflags(write=False)
    return QuantizedLaw(values, pmf)


def quantized_gaussian(mu: float, sigma: float, bits: int = 8) -> QuantizedLaw:
    """The quantized Gaussian N_{bits-bit}(mu, sigma^2) of Definition 5 (Appendix G.1).

    With ``K = 2^bits``, the support is ``x_i = (i - K/2) / K`` for
    ``i = 0..K-1`` (for 8 bits: ``(i - 128)/256``, from -1/2 to 127/256), and

        PMF(x_i) = p_{mu,sigma}((x_i, x_i + 1/K]) / Z,   Z = p_{mu,sigma}((-1/2, 1/2]),

    where ``p_{mu,sigma}(I)`` is the N(mu, sigma^2) probability of I.  Each
    point thus receives the mass of the cell *to its right* (a quantizer that
    rounds down), exactly as in Definition 5, and the cells tile (-1/2, 1/2],
    so the law is the Gaussian conditioned on that interval, then quantized.
    Masses are computed as log-differences of the normal cdf (or survival
    function in the upper tail), so far tails keep full relative precision.

    Parameters
    ----------
    mu : float
    sigma : float > 0
    bits : int in 1..16

    Returns
    -------
    QuantizedLaw
        Frozen dataclass with ``values`` and ``pmf`` (read-only arrays of
        length 2^bits, pmf summing to 1 up to rounding); unpacks as
        ``values, pmf = quantized_gaussian(...)``.

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 5.
    """
    mu = _check_mu(mu)
    sigma = _check_positive(sigma, "sigma")
    bits = _check_bits(bits)
    return _quantize(
        lambda x: special.log_ndtr((x - mu) / sigma),
        lambda x: special.log_ndtr((mu - x) / sigma),
        mu,
        bits,
    )


def quantized_laplace(mu: float, scale: float, bits: int = 8) -> QuantizedLaw:
    """The Laplace analogue of Definition 5: Laplace(mu, scale) on (-1/2, 1/2], quantized.

    Same support ``x_i = (i - 2^(bits-1)) / 2^bits`` and the same cells
    ``(x_i, x_i + 2^-bits]`` as :func:`quantized_gaussian`; the mass of a cell
    is its probability under the Laplace law with density
    ``exp(-|x - mu| / scale) / (2 scale)``, normalised by the probability of
    (-1/2, 1/2].

    Parameters
    ----------
    mu : float
    scale : float > 0
    bits : int in 1..16

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Definition 5.
    """
    mu = _check_mu(mu)
    b = _check_positive(scale, "scale")

    def log_cdf(x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=float) - mu) / b
        return np.where(z < 0, z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))

    def log_sf(x: np.ndarray) -> np.ndarray:
        z = (np.asarray(x, dtype=float) - mu) / b
        return np.where(z > 0, -z - math.log(2.0), np.log1p(-0.5 * np.exp(-np.abs(z))))

    return _quantize(log_cdf, log_sf, mu, _check_bits(bits))


# ---------------------------------------------------------------------------
# Theorem 4: the continuous limit
# ---------------------------------------------------------------------------
def continuous_limit_profile(
    cdf: Callable[[np.ndarray], npt.ArrayLike],
    n: int,
    T: int,
    epsilon: npt.ArrayLike,
    *,
    bits: npt.ArrayLike = range(1, 11),
    databases: int = 8,
    rng: SeedLike = None,
    budget: float = DEFAULT_BUDGET_SECONDS,
) -> pd.DataFrame:
    """Theorem 4 numerically: delta of the sampling average of a continuous law, finer and finer grids.

    Records are i.i.d. from a law on [0, 1] with the given ``cdf`` (a callable,
    e.g. ``scipy.stats.beta(2, 3).cdf``), quantized down to the grid
    ``i / 2**b`` (``i = 0 .. 2**b - 1``, probability ``cdf((i+1)/2**b) -
    cdf(i/2**b)``).  For each number of bits ``b`` this draws ``databases``
    databases of ``n`` records and computes each exact ``delta_eps(x)`` of
    :class:`SamplingAverage` (``output="sum"``, every neighbour), i.e. a Monte
    Carlo estimate of the smoothed delta for Pi = {the quantized law}.

    As the grid gets finer the records become distinct and their T-subset
    sums distinct, so the published sum tells whether a given record was
    sampled: delta_eps(x) -> T/n = eta for every epsilon (Theorem 4: with
    continuous values no delta < eta is possible).  The cost of one profile
    grows quickly with the grid (about 1 s at 10 bits, 15 s at 12 bits for
    n = 20, T = 4).

    Parameters
    ----------
    cdf : callable, the law's CDF on [0, 1]
    n, T : int, database size and sample size (1 <= T <= n)
    epsilon : float or 1-D array, finite, >= 0
    bits : int or iterable of int in 1..16
    databases : int >= 1, databases drawn per grid
    rng : None, int seed >= 0 or Generator
    budget : float
        Seconds.  Every grid's cost is estimated before the first starts
        (expected occupied grid values times grid values times possible sums,
        per database) and the whole run refused
        (:class:`~smoothdp_nb.core.runtime.budget.ComputationTooLarge`) if the time
        exceeds ``budget`` or one profile's arrays the memory budget.

    Returns
    -------
    pandas.DataFrame
        One row per (bits, epsilon): ``bits``, ``grid_values``, ``epsilon``,
        ``delta`` (mean over the databases), ``se`` (its standard error),
        ``min_delta``, ``eta`` (= T/n).

    References
    ----------
    Liu, Wang, Xia, *Smoothed Differential Privacy*: Theorem 4.

    Examples
    --------
    >>> from scipy import stats
    >>> df = continuous_limit_profile(stats.uniform.cdf, 10, 2, [1.0], bits=[2, 8], databases=2, rng=0)
    >>> list(df.bits)
    [2, 8]
    """
    if not callable(cdf):
        raise TypeError("cdf must be a callable (the law's CDF on [0, 1])")
    n = as_int(n, "n", minimum=1)
    T = as_int(T, "T", minimum=1)
    if T > n:
        raise ValueError(f"T must be <= n, got T={T} > n={n}")
    databases = as_int(databases, "databases", minimum=1)
    e, _ = as_epsilon(epsilon)
    if not np.all(np.isfinite(e)):
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon!r}")
    if isinstance(bits, (str, bytes)) or not isinstance(
        bits, (numbers.Integral, np.integer, range, list, tuple, np.ndarray)
    ):
        raise TypeError(f"bits must be an integer in 1..16 or a list of them, got {type(bits).__name__}")
    bits_list = [as_int(b, "bits", minimum=1, maximum=16) for b in np.atleast_1d(np.asarray(bits)).tolist()]
    if not bits_list:
        raise ValueError("bits must contain at least one number of bits in 1..16")
    gen = as_rng(rng)
    # every grid's law, and the estimated cost of all of them, before the first profile
    laws = []
    total = Estimate(0.0, 0.0)
    for b in bits_list:
        k = 2**b
        edges = np.arange(k + 1) / k
        p = np.diff(np.asarray(cdf(edges), dtype=float))
        if p.shape != (k,) or not np.all(np.isfinite(p)) or np.any(p < -1e-12) or not abs(p.sum() - 1.0) < 1e-6:
            raise ValueError("cdf must be a CDF of a law on [0, 1] (cdf(0) = 0, cdf(1) = 1, non-decreasing)")
        p = np.clip(p, 0.0, None)
        p /= p.sum()
        occupied = float(np.sum(-np.expm1(n * np.log1p(-np.minimum(p, 1 - 1e-16)))))  # expected distinct values
        sec, nbytes = sampling_average_units(k, T, occupied)
        total = total + Estimate(databases * sec * e.size, nbytes)
        laws.append((b, k, edges, p))
    check_budget(
        total,
        budget,
        f"continuous_limit_profile over bits={bits_list} (n={n}, T={T}, {databases} databases)",
        "use fewer bits or a smaller T",
        parameter="bits",
    )
    rows = []
    for b, k, edges, p in laws:
        mech = SamplingAverage(T=T, grid=edges[:-1])
        hists = gen.multinomial(n, p, size=databases)
        d = np.asarray(_profile(mech, hists, e)).reshape(databases, e.size)
        for j, ej in enumerate(e):
            rows.append(
                {
                    "bits": b,
                    "grid_values": k,
                    "epsilon": float(ej),
                    "delta": float(d[:, j].mean()),
                    "se": float(d[:, j].std(ddof=1) / math.sqrt(databases)) if databases > 1 else math.nan,
                    "min_delta": float(d[:, j].min()),
                    "eta": T / n,
                }
            )
    return pd.DataFrame(rows)


def _profile(mech: SamplingAverage, hists: np.ndarray, epsilon: np.ndarray) -> Any:
    """The profiles (linear, (k, E)) of validated histograms (:func:`~smoothdp_nb.privacy_profile`)."""
    return privacy_profile(mech, hists, epsilon)
