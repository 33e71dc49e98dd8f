"""User mechanisms given by their output law: :class:`FiniteMechanism`."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping

import numpy as np

from smoothdp_nb.core.numerics.array_types import FloatArray, IntArray
from smoothdp_nb.core.numerics.validation import as_int
from smoothdp_nb.core.runtime.budget import Estimate, check_budget, current_budget
from smoothdp_nb.core.smoothed.mechanisms.base import Mechanism, factorize_outputs
from smoothdp_nb.core.smoothed.mechanisms.generic import LawBatch

__all__ = ["FiniteMechanism"]

#: the probabilities of an output law must sum to 1 within this tolerance
PMF_SUM_TOL = 1e-9
#: seconds per output of a law, from the pmf's mapping to the divergence kernel (measured 0.6 us
#: for three laws of 10^6 outputs on the project machine at load 8; x3 to err high)
_SECONDS_PER_OUTPUT = 2e-6
#: bytes per output of a law held at once: its key and value gathered, the factorization, the
#: aligned table with its error bounds (measured 65 B traced for laws of 10^6 outputs; x3)
_BYTES_PER_OUTPUT = 200.0


class FiniteMechanism(Mechanism):
    """An anonymous mechanism with a finite output law, given as a function.

    Parameters
    ----------
    pmf : callable ``pmf(hist: tuple[int, ...]) -> Mapping[Hashable, float]``
        The exact output law on the database with histogram ``hist`` (m
        counts): each possible output (any hashable value) and its
        probability.  Outputs of probability 0 may be left out.  Outputs a
        reader can tell apart are distinct outputs: None, strings, tuples,
        ``1``, ``1.0``, ``True``, ``0.0`` and ``-0.0`` are each an output of
        their own, and every NaN is one output (two NaN keys of one law add
        up); see :func:`~smoothdp_nb.core.smoothed.mechanisms.base.factorize_outputs`.  The
        mechanism must be anonymous (depend on the records only through their
        histogram), as everything in smoothed DP assumes.
    categories : int >= 2
        The number of categories m.
    name : str, optional
        Shown in ``repr`` and chart legends (default: the function's name).
    log : bool, default False
        ``pmf`` returns natural logarithms of the probabilities (``-inf``
        for 0), for laws with probabilities below the float64 range.

    Examples
    --------
    Randomized response on one bit per record (kept with probability 3/4),
    publishing the number of reports of category 0:

    >>> from scipy.stats import binom
    >>> def rr(hist):
    ...     h0, h1 = hist
    ...     law = np.convolve(binom.pmf(range(h0 + 1), h0, 0.75), binom.pmf(range(h1 + 1), h1, 0.25))
    ...     return dict(enumerate(law))
    >>> import smoothdp_nb as sdp
    >>> mech = FiniteMechanism(rr, categories=2, name="randomized response")
    >>> round(sdp.dp_delta(mech, 1, 0.0), 12)  # one record: (e^ln3 - 1) / (1 + e^ln3)
    0.5
    """

    def __init__(
        self,
        pmf: Callable[[tuple[int, ...]], Mapping[Hashable, float]],
        *,
        categories: int,
        name: str | None = None,
        log: bool = False,
    ) -> None:
        if not callable(pmf):
            raise TypeError(f"pmf must be a callable hist -> {{output: probability}}, got {type(pmf).__name__}")
        self._pmf = pmf
        self._m = as_int(categories, "categories", minimum=2)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a string, got {name!r}")
        self.name = name if name is not None else getattr(pmf, "__name__", "pmf")
        if not isinstance(log, (bool, np.bool_)):
            raise TypeError(f"log must be True or False, got {log!r}")
        self.log = bool(log)

    def __repr__(self) -> str:
        return f"FiniteMechanism({self.name}, categories={self._m})"

    def _key(self) -> tuple[object, int, str, bool]:
        return (self._pmf, self._m, self.name, self.log)

    @property
    def categories(self) -> int:
        return self._m

    def log_output_pmf(self, hist: IntArray) -> tuple[np.ndarray, FloatArray]:
        """The law returned by ``pmf`` as (outputs (K,) object array, log-probabilities (K,)).

        Raises TypeError/ValueError when ``pmf`` does not return a probability
        law (a mapping of finite non-negative numbers summing to 1 within 1e-9).
        """
        key = tuple(int(c) for c in hist)
        law = self._pmf(key)
        if not isinstance(law, Mapping) or len(law) == 0:
            raise TypeError(f"pmf{key} must return a non-empty mapping {{output: probability}}, got {law!r}")
        outputs = np.empty(len(law), dtype=object)
        outputs[:] = list(law.keys())
        try:
            vals = np.fromiter(law.values(), dtype=float, count=len(law))
        except (TypeError, ValueError):
            raise TypeError(f"pmf{key} must map outputs to numbers, got {law!r}") from None
        if self.log:
            if np.any(np.isnan(vals)) or np.any(vals == np.inf):
                raise ValueError(f"pmf{key} must return log-probabilities (finite or -inf)")
            logp = vals
        else:
            if not np.all(np.isfinite(vals)) or np.any(vals < 0):
                raise ValueError(f"pmf{key} must return finite probabilities >= 0")
            with np.errstate(divide="ignore"):
                logp = np.log(vals)
        # the sum check without scipy's logsumexp (its per-call overhead was most of this
        # method's time at n = 60-200): linear for probabilities, max-shifted for logs
        if self.log:
            top = float(vals.max())
            total = top + math.log(float(np.exp(vals - top).sum())) if top > -math.inf else -math.inf
            mass = math.exp(total)
        else:
            mass = float(vals.sum())
        if not abs(mass - 1.0) <= PMF_SUM_TOL:
            raise ValueError(f"pmf{key} must sum to 1 (within {PMF_SUM_TOL:g}), got {mass!r}")
        # a dict holds distinct NaN objects as distinct keys, yet every NaN is one output
        if sum(1 for o in law if o != o) > 1:
            (codes,), K = factorize_outputs([outputs])
            merged: FloatArray = np.full(K, -np.inf)
            np.logaddexp.at(merged, codes, logp)
            return outputs[np.unique(codes, return_index=True)[1]], merged
        return outputs, logp

    def _check_laws(self, laws: int, outputs: int, first_call: float) -> None:
        """Refuse, from the first law alone (before the others are asked for and before any
        table), ``laws`` laws like it when they would exceed the time or memory budget:
        each costs at least the time ``pmf`` took for the first plus
        :data:`_SECONDS_PER_OUTPUT` per output, and :data:`_BYTES_PER_OUTPUT` per output."""
        check_budget(
            Estimate(laws * (first_call + outputs * _SECONDS_PER_OUTPUT), laws * outputs * _BYTES_PER_OUTPUT),
            current_budget(),
            f"the output laws of {self!r} on {laws} histogram(s) ({outputs:.3g} outputs in the first)",
            "use a pmf with fewer outputs (merge outputs a reader cannot tell apart), fewer records or "
            "fewer categories",
            parameter="pmf",
        )

    def _log_output_pmfs(self, hists: IntArray) -> LawBatch:
        """The laws of many histograms: one call of ``pmf`` each, its outputs and
        values gathered as they come, and every check of :meth:`log_output_pmf`
        done once on all of them (an error names the first histogram at fault).
        Several NaN keys of one law stay separate entries here; the aligned table
        adds their masses (:func:`~smoothdp_nb.core.smoothed.mechanisms.generic.law_table`)."""
        keys: list[object] = []
        parts: list[FloatArray] = []
        tuples = [tuple(h) for h in np.asarray(hists, dtype=np.int64).tolist()]
        sizes = np.empty(len(tuples), dtype=np.int64)
        t0 = time.perf_counter()
        for r, key in enumerate(tuples):
            law = self._pmf(key)
            if not isinstance(law, Mapping) or len(law) == 0:
                raise TypeError(f"pmf{key} must return a non-empty mapping {{output: probability}}, got {law!r}")
            if r == 0:
                self._check_laws(len(tuples), len(law), time.perf_counter() - t0)
            keys.extend(law)
            try:
                parts.append(np.fromiter(law.values(), dtype=float, count=len(law)))
            except (TypeError, ValueError):
                raise TypeError(f"pmf{key} must map outputs to numbers, got {law!r}") from None
            sizes[r] = len(law)
        vals = np.concatenate(parts) if parts else np.zeros(0)
        row = np.repeat(np.arange(len(tuples)), sizes)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        if self.log:
            bad = np.isnan(vals) | (vals == np.inf)
            if bad.any():
                raise ValueError(f"pmf{tuples[row[np.argmax(bad)]]} must return log-probabilities (finite or -inf)")
            logp = vals
            top = np.maximum.reduceat(vals, starts) if vals.size else np.zeros(0)
            ftop = np.where(np.isfinite(top), top, 0.0)
            with np.errstate(divide="ignore"):
                mass = np.where(np.isfinite(top), np.add.reduceat(np.exp(vals - ftop[row]), starts), 0.0)
                mass = np.exp(np.log(mass) + ftop)
        else:
            bad = ~np.isfinite(vals) | (vals < 0)
            if bad.any():
                raise ValueError(f"pmf{tuples[row[np.argmax(bad)]]} must return finite probabilities >= 0")
            with np.errstate(divide="ignore"):
                logp = np.log(vals)
            mass = np.add.reduceat(vals, starts) if vals.size else np.zeros(0)
        off = ~(np.abs(mass - 1.0) <= PMF_SUM_TOL)
        if off.any():
            r = int(np.argmax(off))
            raise ValueError(f"pmf{tuples[r]} must sum to 1 (within {PMF_SUM_TOL:g}), got {float(mass[r])!r}")
        return [np.fromiter(keys, dtype=object, count=len(keys))], logp, sizes
