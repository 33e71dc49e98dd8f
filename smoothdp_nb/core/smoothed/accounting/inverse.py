"""Inverse curves: the smallest epsilon whose delta is at most a target.

* :func:`profile_epsilon` -- per database (Definition 2);
* :func:`dp_epsilon` -- the worst case over all databases of n records (Theorem 1);
* :func:`~smoothdp_nb.core.smoothed.delta.smoothed_epsilon` -- the smoothed delta of Definition 3
  (Algorithm 1, exact), in :mod:`smoothdp_nb.core.smoothed.delta` beside the forward curve.

Every curve ``epsilon -> delta_eps`` is non-increasing, so the answer is found
by bisection on epsilon, all targets at once (one evaluation of the forward
curve per step, vectorised over the targets).  The returned epsilon is always
a point where the forward computation -- a proven upper bound on log delta
(``privacy_profile``, ``dp_delta`` and the exact ``smoothed_delta``, all with
``log=True``: their certified upper ends) -- was evaluated and found ``<=`` a
float at most ``log(delta)`` (the target's log rounded down): the answer is
*certified* (the mechanism is (epsilon, delta) at that database / in the
smoothed sense).  The bisection
stops when the bracket is within ``1e-9`` relative, so the answer is within
``1e-6`` relative (or 1e-15 absolute) of the infimum of the computed curve (which is at least the
true infimum, by at most the forward computation's own accuracy).

References
----------
Liu, Wang, Xia. *Smoothed Differential Privacy* (Definitions 2 and 3, Theorem 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from smoothdp_nb.core.numerics.array_types import FloatArray, FloatOrArray
from smoothdp_nb.core.numerics.enclosures import LIBM_REL, next_down
from smoothdp_nb.core.numerics.validation import as_histograms, as_int
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from smoothdp_nb.core.smoothed.mechanisms.relations import with_neighbours
from smoothdp_nb.core.smoothed.profiles import check_mechanism

__all__ = ["profile_epsilon", "dp_epsilon", "invert_log_delta", "as_log_targets", "INVERSE_REL_TOL"]

#: the bisection stops when the bracket is this narrow (relative)
INVERSE_REL_TOL = 1e-9
# no finite epsilon beyond this is searched: the curve's floor (e.g. an infinite loss) is reached
_EPS_MAX = 512.0
# below this the bracket is not narrowed further (an absolute floor for answers near 0)
_EPS_ABS = 1e-15


def as_log_targets(delta: object, log: bool) -> tuple[FloatArray, bool]:
    """Validated targets as natural logs (shape (D,)) and whether a scalar was given."""
    if isinstance(delta, (bool, np.bool_, str, bytes)):
        raise TypeError(f"delta must be a number or a 1-D array of numbers, got {delta!r}")
    try:
        arr = np.asarray(delta, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"delta must be a number or a 1-D array of numbers, got {delta!r}") from None
    scalar = arr.ndim == 0
    arr = np.atleast_1d(arr)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"delta must be a number or a non-empty 1-D array, got shape {arr.shape}")
    if log:
        if np.any(np.isnan(arr)) or np.any(arr > 0) or np.any(arr == -np.inf):
            raise ValueError("delta (log=True) must hold natural logs of targets in (0, 1]: finite numbers <= 0")
        return arr, scalar
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0) or np.any(arr > 1):
        raise ValueError(f"delta must be in (0, 1] (a target probability), got {delta!r}")
    # a float <= log(target) (log carries LIBM_REL): a curve meeting it meets the target
    lg = np.log(arr)
    out: FloatArray = np.where(lg == 0.0, 0.0, next_down(lg - LIBM_REL * np.abs(lg)))
    return out, scalar


def invert_log_delta(log_delta: Callable[[FloatArray], FloatArray], log_targets: FloatArray, rows: int) -> FloatArray:
    """The smallest epsilon per (row, target) with ``log_delta <= target`` for a
    non-increasing curve per row, shape (R, D).

    ``log_delta(eps)`` takes epsilons of shape (R, E) -- row r at its own E
    epsilons -- and returns log delta of the same shape.  Answers are 0 when
    epsilon = 0 already meets the target, ``inf`` when no epsilon up to 512 does
    (e^epsilon stays in float64 range).  Every finite answer is a point where the
    curve was evaluated and met the target.

    The root of ``log delta - target`` is bracketed by doubling, then narrowed by
    the Illinois variant of regula falsi (log delta is smooth and nearly linear
    in epsilon, so a few evaluations suffice), each secant point kept at least
    half the tolerance inside the bracket so that the bracket closes, and a
    bisection step whenever a secant step did not halve it.
    """
    t = np.asarray(log_targets, dtype=float)
    D = t.size
    tt = np.broadcast_to(t, (rows, D))

    def f(eps: FloatArray) -> FloatArray:
        # far out (e^512) a forward kernel may overflow to nan: nan never meets a target
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out: FloatArray = np.asarray(log_delta(eps), dtype=float).reshape(rows, D) - tt
        return out

    f0 = f(np.zeros((rows, D)))
    lo = np.zeros((rows, D))
    hi = np.full((rows, D), np.inf)
    flo = f0.copy()
    fhi = np.full((rows, D), -np.inf)
    met0 = f0 <= 0
    hi[met0] = 0.0
    todo = ~met0
    e = 1.0
    while todo.any() and e <= _EPS_MAX:
        v = f(np.full((rows, D), e))
        met = todo & (v <= 0)
        hi[met], fhi[met] = e, v[met]
        keep = todo & ~met
        lo[keep], flo[keep] = e, v[keep]
        todo &= ~met
        e *= 2.0
    active = np.isfinite(hi) & (hi > 0)
    last = np.zeros((rows, D), dtype=np.int8)  # +1: hi moved last, -1: lo moved last
    width = hi - lo
    bisect = np.zeros((rows, D), dtype=bool)
    while True:
        active &= (hi - lo) > np.maximum(INVERSE_REL_TOL * hi, _EPS_ABS)
        if not active.any():
            break
        w = np.where(active, hi - lo, 1.0)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            sec = hi - fhi * (hi - lo) / (fhi - flo)
        margin = np.minimum(0.25 * w, 0.5 * np.maximum(INVERSE_REL_TOL * hi, _EPS_ABS))
        use_sec = np.isfinite(sec) & np.isfinite(flo) & np.isfinite(fhi) & ~bisect
        c = np.where(use_sec, np.clip(sec, lo + margin, hi - margin), 0.5 * (lo + hi))
        c = np.where(active, c, hi)
        v = f(c)
        ok = active & (v <= 0)
        up = active & ~ok
        # Illinois: when the same end survives twice, halve its value
        flo = np.where(ok & (last == 1), flo / 2, flo)
        fhi = np.where(up & (last == -1), fhi / 2, fhi)
        hi, fhi = np.where(ok, c, hi), np.where(ok, v, fhi)
        lo, flo = np.where(up, c, lo), np.where(up, v, flo)
        last = np.where(ok, 1, np.where(up, -1, last)).astype(np.int8)
        new_width = hi - lo
        bisect = active & use_sec & (new_width > 0.5 * width)
        width = new_width
    return hi


def _shape(out: FloatArray, single: bool, scalar: bool) -> FloatOrArray:
    res = out[0] if single else out
    if scalar:
        res = res[..., 0]
    return float(res) if np.ndim(res) == 0 else res


def profile_epsilon(
    mechanism: Mechanism,
    hist: npt.ArrayLike,
    delta: npt.ArrayLike,
    *,
    log: bool = False,
    neighbours: str = "replace",
) -> FloatOrArray:
    """The smallest epsilon with ``delta_eps(x) <= delta`` (inverse of Definition 2).

    Parameters
    ----------
    mechanism : Mechanism
    hist : array_like of int, shape (m,) or (k, m)
        The database(s).
    delta : float or 1-D array in (0, 1]
        Target(s); with ``log=True``, their natural logs (so 1e-5000 is ``-5000 ln 10``).
    neighbours : {"replace", "add-remove"}, default "replace"
        The neighbouring relation of the profile (:func:`~smoothdp_nb.privacy_profile`).

    Returns
    -------
    float or ndarray of shape (k,), (D,) or (k, D)
        Certified: :func:`privacy_profile` (a proven upper bound) was
        evaluated at every returned epsilon and is at most the target there;
        tight within 1e-6 relative of the infimum of that curve.  ``inf`` when
        no epsilon up to 512 reaches the target (e.g. below the mass of an
        infinite privacy loss); 0 when epsilon = 0 does.

    References
    ----------
    Liu, Wang, Xia. *Smoothed Differential Privacy* (Definition 2: the privacy profile).

    Examples
    --------
    >>> import smoothdp_nb as sdp
    >>> eps = sdp.profile_epsilon(sdp.SamplingHistogram(eta=0.5), [60, 40], 1e-3)
    >>> float(sdp.privacy_profile(sdp.SamplingHistogram(eta=0.5), [60, 40], eps)) <= 1e-3
    True
    """
    mechanism = with_neighbours(check_mechanism(mechanism), neighbours)
    h, single = as_histograms(hist)
    mechanism.check_histograms(h)
    for size in np.unique(h.sum(axis=1)):
        mechanism.sample_size(int(size))
    t, scalar = as_log_targets(delta, log)

    R = h.shape[0]

    # validated once above: the bisection calls the protocol's hook, not the facade
    def curve(e: FloatArray) -> FloatArray:
        if R * e.size <= 4096:  # one call: every row at every epsilon, keep each row's own
            allv = np.reshape(mechanism._profile(h, np.ravel(e)).upper, (R, R, -1))
            out: FloatArray = allv[np.arange(R), np.arange(R)]
            return out
        return np.stack([np.reshape(mechanism._profile(h[r : r + 1], np.ravel(e[r])).upper, -1) for r in range(R)])

    return _shape(invert_log_delta(curve, t, R), single, scalar)


def dp_epsilon(
    mechanism: Mechanism,
    n: int,
    delta: npt.ArrayLike,
    *,
    categories: int = 2,
    log: bool = False,
    neighbours: str = "replace",
) -> FloatOrArray:
    """The smallest epsilon with ``max_x delta_eps(x) <= delta`` over all databases of n
    records (the inverse of :func:`dp_delta`; certified and tight as
    :func:`profile_epsilon`).  For the sampling histogram the DP delta is
    ``T/n`` at every epsilon, so the answer is 0 or ``inf``.  ``neighbours``: the
    relation (:func:`~smoothdp_nb.dp_delta`)."""
    mechanism = with_neighbours(check_mechanism(mechanism), neighbours)
    n = as_int(n, "n", minimum=1)
    mechanism.sample_size(n)
    t, scalar = as_log_targets(delta, log)
    cats = as_int(categories, "categories", minimum=2)

    def curve(e: FloatArray) -> FloatArray:  # the hook: n and categories validated above
        return np.reshape(mechanism._dp_delta(n, np.ravel(e), categories=cats, log=True), (1, e.size))

    out = invert_log_delta(curve, t, 1)[0]
    return float(out[0]) if scalar else out


def epsilon_on_grid(epsilon: FloatArray, log_delta: FloatArray, delta: npt.ArrayLike) -> FloatOrArray:
    """The smallest epsilon *of a computed grid* whose (upper-bound) delta is at most each
    target: certified, as tight as the grid (``inf`` when no grid point meets it).
    ``log_delta``: (..., E) over the grid ``epsilon`` (E,)."""
    t, scalar = as_log_targets(delta, False)
    order = np.argsort(epsilon)
    e = np.asarray(epsilon, dtype=float)[order]
    ld = np.asarray(log_delta, dtype=float)[..., order]
    met = ld[..., None, :] <= t[:, None]  # (..., D, E)
    first = np.where(met.any(axis=-1), met.argmax(axis=-1), -1)
    out = np.where(first >= 0, e[np.maximum(first, 0)], math.inf)
    if scalar:
        out = out[..., 0]
    return float(out) if np.ndim(out) == 0 else out
