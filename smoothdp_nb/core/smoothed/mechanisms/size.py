"""The sample size of the sampling mechanisms: a rate eta (T = ceil(eta n),
computed exactly from the decimal the user typed) or a fixed T."""

from __future__ import annotations

import functools
import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

import numpy as np

from smoothdp_nb.core.numerics.enclosures import fraction_down, fraction_up, log_fraction_enclosure, log_one_minus_power
from smoothdp_nb.core.numerics.validation import as_decimal_text, as_int

__all__ = ["SampleSize", "dp_delta_bounds", "sampling_size_spec"]


def _exact_rate(eta: object) -> Fraction:
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


def sampling_size_spec(eta: object, T: object) -> tuple[Fraction | None, float | None, int | None]:
    """Validate "a rate eta or a fixed size T" (exactly one): -> (exact rate, eta, T)."""
    if (eta is None) == (T is None):
        raise ValueError("give exactly one of eta (a sampling rate) or T (a sample size)")
    if eta is not None:
        rate = _exact_rate(eta)
        if not (0 < rate <= 1):
            raise ValueError(f"eta must be in (0, 1], got {eta!r}")
        return rate, float(rate), None
    return None, None, as_int(T, "T", minimum=1)


class SampleSize:
    """Mixin of the mechanisms that read a sample of T of the n records."""

    _rate: Fraction | None
    eta: float | None
    T: int | None
    #: sampling with replacement (a fixed T may then exceed n)
    replace: bool = False

    def _set_size(self, eta: object, T: object) -> None:
        self._rate, self.eta, self.T = sampling_size_spec(eta, T)

    def _size_text(self) -> str:
        """``eta=0.998`` (the exact decimal when there is one) or ``T=15``."""
        if self.T is not None:
            return f"T={self.T}"
        r = self._rate_fraction()
        d = Decimal(r.numerator) / Decimal(r.denominator)
        exact = d * r.denominator == r.numerator
        return f"eta={d.normalize() if exact else float(r)}"

    def _rate_fraction(self) -> Fraction:
        """The exact rate eta (set whenever no fixed T is)."""
        if self._rate is None:
            raise ValueError(f"{type(self).__name__} has a fixed sample size T, not a rate eta")
        return self._rate

    def sample_size(self, n: int) -> int:
        """T for a database of n records: ``ceil(eta * n)`` (exact) or the fixed T.

        Raises ValueError when a fixed T exceeds n (without replacement).
        """
        n = as_int(n, "n", minimum=1)
        if self.T is not None:
            if self.T > n and not self.replace:
                raise ValueError(f"T must be <= n when sampling without replacement, got T={self.T} > n={n}")
            return self.T
        rate = self._rate_fraction()
        num = rate.numerator * n
        return -((-num) // rate.denominator)  # exact ceiling

    def sampled_fraction(self, n: int) -> Fraction:
        """T/n as an exact fraction.

        The probability that a given record is read (without replacement), the
        DP delta of Theorem 3 (iii).

        References
        ----------
        Liu, Wang, Xia, *Smoothed Differential Privacy*: Theorem 3 (iii).
        """
        return Fraction(self.sample_size(n), n)


@functools.lru_cache(maxsize=256)
def dp_delta_bounds(T: int, n: int, replace: bool) -> tuple[float, float, float, float]:
    """(log lower, log upper, lower, upper) of the sampling histogram's DP delta,
    T/n (``replace`` False) or 1 - (1 - 1/n)^T: exact rationals for the linear
    T/n, Arb balls for the logs and the power."""
    if replace:
        if n == 1:
            return 0.0, 0.0, 1.0, 1.0
        llo, lhi = log_one_minus_power(n, T)
        lhi = min(lhi, 0.0)
        return (
            llo,
            lhi,
            float(np.nextafter(math.exp(llo), 0.0)) * (1 - 2**-50),
            min(1.0, float(np.nextafter(math.exp(lhi), 2.0)) * (1 + 2**-50)),
        )
    frac = Fraction(T, n)
    llo, lhi = log_fraction_enclosure(frac)
    return llo, min(lhi, 0.0), fraction_down(frac), fraction_up(frac)
