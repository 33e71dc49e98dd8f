"""The privacy loss of the usual additive noises at sensitivity one, certified: closed-form
hockey-stick divergences and outward-discretised loss laws, also of their Poisson-subsampled mixtures.

For a noise law N and its translate N_1 (a count that changes by one), the loss of
an output o is ``l(o) = log N_1(o)/N_0(o)``: affine in o for the Gaussian families,
three pieces for the Laplace, two values for the discrete Laplace.  Each family is
described here by its *cells*: sets of outputs with the loss in ``[lo, hi]``, with
their masses under N_1 (P) and under N_0 (Q) as Arb balls.  From the cells:

* :func:`noise_log_delta` -- ``log d_eps(N_1, N_0)`` in closed form (proven bounds on
  both sides; the noises are symmetric, so it is the divergence in both directions);
* :func:`noise_losses` -- :class:`~.law.LossDistribution` objects bounding the loss
  law from above and from below, for the pair ``(A, B) = (g N_1 + (1 - g) N_0, N_0)``
  (``g = 1``: the noise itself; ``g < 1``: the noise after Poisson subsampling) and the
  reverse pair (B, A).

The discretisation.  Under A the loss of an output is ``f(l) = log(g e^l + 1 - g)``,
increasing in the base loss l; a cell of base losses ``[lo, hi]`` has A-mass
``g P + (1 - g) Q`` and B-mass Q.  For the upper bound its A-mass (rounded up)
is placed at the loss ``f(hi)`` widened by twice the ball's radius of the
log-mass, so that the atom's implied B-measure ``A~ e^(-loss)`` is at most the
cell's true B-mass (every output of the cell has loss at most ``f(hi)``): a
measure pair ``A~ >= A``, ``B~ <= B`` on a coarser partition, whose divergence,
and that of any composition, is at least the truth (the argument of
:mod:`.pld`).  A cell reaching ``+inf`` goes to the infinite-loss atom.  The
lower bound is the mirror image (``f(lo)``, masses rounded down, cells reaching
``-inf`` dropped: dropping outputs of both measures removes non-negative terms).
The reverse pair uses ``-f`` with the cells' B-masses.

References
----------
Balle, B. and Wang, Y.-X. "Improving the Gaussian mechanism for differential privacy:
analytical calibration and optimal denoising." ICML 2018 (Theorem 8: the Gaussian curve).
Canonne, C., Kamath, G. and Steinke, T. "The discrete Gaussian for differential privacy."
NeurIPS 2020 (Theorem 7: the discrete Gaussian's curve).
Zhu, Y., Dong, J. and Wang, Y.-X. "Optimal accounting of differential privacy via
characteristic function." AISTATS 2022 (dominating pairs; the pair (g P + (1 - g) Q, Q)
of a Poisson-subsampled mechanism).
Balle, B., Barthe, G. and Gaboardi, M. "Privacy amplification by subsampling: tight
analyses via couplings and divergences." NeurIPS 2018.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np
from flint import arb

from smoothdp_nb.core.numerics.array_types import FloatArray
from smoothdp_nb.core.numerics.ball_arithmetic import working_precision
from smoothdp_nb.core.numerics.enclosures import LogEnclosure
from smoothdp_nb.core.numerics.privacy_loss.law import LossDistribution

__all__ = ["NOISES", "NoiseCells", "noise_cells", "noise_log_delta", "noise_losses"]

#: the noise families, by name
NOISES = ("gaussian", "laplace", "discrete_gaussian", "discrete_laplace")
#: cells of the continuous part of a loss law (the Gaussian, the Laplace's middle piece)
DEFAULT_CELLS = 2**13
#: the Gaussian's cells cover its loss within this many standard deviations of the mean;
#: the mass beyond (below 1e-44 on each side) goes to the end cells
_GAUSS_SPAN = 14.0
#: Arb working precision (bits) of the masses; closed forms retry with more when cancellation eats it
_PREC = 160
# the discrete Gaussian is summed over |k| <= _DG_SIGMAS sigma + _DG_PAD (terms below 2^-1100 beyond)
_DG_SIGMAS = 40.0
_DG_PAD = 10


def _up(x: arb) -> float:
    """A double >= every point of the ball: the upper end converted (to within one ulp,
    inf beyond the range) and moved up two ulps -- cheaper than the tightest
    (:func:`~smoothdp_nb.core.numerics.ball_arithmetic.float_up`), which the cells would call
    tens of thousands of times."""
    if not x.is_finite():
        return math.inf
    v = float(x.upper())
    return math.nextafter(math.nextafter(v, math.inf), math.inf)


def _down(x: arb) -> float:
    """A double <= every point of the ball (:func:`_up` mirrored)."""
    return -_up(-x)


def _log_up(x: arb) -> float:
    """A double >= log of every point of the ball (``-inf`` for a ball at most 0)."""
    top = arb(x.upper())
    if not top > 0:
        return -math.inf
    return _up(top.log())


def _log_down(x: arb) -> float:
    """A double <= log of every point of the ball (``-inf`` when the ball reaches 0)."""
    bottom = arb(x.lower())
    if not bottom > 0:
        return -math.inf
    return _down(bottom.log())


def _phi(y: arb) -> arb:
    """The standard normal cdf, with relative accuracy in both tails."""
    return (-y / arb(2).sqrt()).erfc() / 2


def _tail_or_cdf(z: arb) -> arb:
    """``Phi(z)`` for z <= 0, ``1 - Phi(z)`` above: the small side, to full relative accuracy."""
    return _phi(z) if not z > 0 else _phi(-z)


def _between(z: list[arb], t: list[arb], i: int, j: int) -> arb:
    """``P(z_i < Z <= z_j)`` from the edges' small sides ``t`` (index -1 or len(z): an infinite
    end): upper tails differenced right of 0, cdfs left of it, no cancellation in either tail."""
    a = z[i] if i >= 0 else None
    b = z[j] if j < len(z) else None
    if a is not None and a > 0:  # both ends right of 0: upper tails
        return t[i] - (t[j] if b is not None else arb(0))
    if b is not None and not b > 0:  # both left of 0: cdfs
        return t[j] - (t[i] if a is not None else arb(0))
    upper = (1 - t[j]) if b is not None else arb(1)  # Phi(b), b > 0 (or +inf)
    lower = _phi(a) if a is not None else arb(0)  # a <= 0 or a ball straddling 0
    return upper - lower


@dataclass(frozen=True)
class NoiseCells:
    """The loss law of a noise against its translate by one, as cells of base losses.

    Attributes
    ----------
    lo, hi : list of arb
        The loss range of each cell (``None``: an infinite end).  A cell is a set of
        outputs whose base loss ``log N_1(o)/N_0(o)`` lies in ``[lo, hi]``.
    p, q : list of arb
        The cell's mass under N_1 and under N_0.
    """

    lo: list[arb | None]
    hi: list[arb | None]
    p: list[arb]
    q: list[arb]


def _check(noise: str, scale: float, cells: int) -> None:
    if noise not in NOISES:
        raise ValueError(f"noise must be one of {', '.join(map(repr, NOISES))}, got {noise!r}")
    if not (isinstance(scale, float) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if not (isinstance(cells, int) and 2**6 <= cells <= 2**20):
        raise ValueError(f"cells must be an integer in [64, 2^20], got {cells!r}")


@lru_cache(maxsize=32)
def noise_cells(noise: str, scale: float, cells: int = DEFAULT_CELLS) -> NoiseCells:
    """The cells of ``noise`` with scale ``scale`` (the Gaussian's sigma, the Laplace's b,
    the discrete Laplace's t in ``e^(-|k|/t)``, the discrete Gaussian's sigma), sensitivity 1.

    * Gaussian: ``l = (2o - 1)/(2 sigma^2)``, normal with mean ``+-mu``, ``mu = 1/(2 sigma^2)``,
      variance ``2 mu`` under P and Q; ``cells`` equal cells within ``_GAUSS_SPAN``
      standard deviations of the P-mean, and two end cells to infinity.
    * Laplace: ``l = (|o| - |o - 1|)/b`` -- ``-1/b`` for ``o <= 0`` (masses ``e^(-1/b)/2``
      and 1/2), ``+1/b`` for ``o >= 1`` (1/2 and ``e^(-1/b)/2``), ``(2o - 1)/b`` between,
      cut into ``cells`` equal cells of o.
    * discrete Laplace: two cells, ``-1/t`` (masses ``q/(1+q)``, ``1/(1+q)``, ``q = e^(-1/t)``)
      and ``+1/t`` (the reverse): exact.
    * discrete Gaussian: one cell per integer output ``o`` in ``[1 - K, K]`` with
      ``l = (2o - 1)/(2 sigma^2)``, masses ``e^(-(o-1)^2/(2 sigma^2))/Z`` and
      ``e^(-o^2/(2 sigma^2))/Z``, and two tail cells whose masses are balls ``[0, bound]``
      (Gaussian tail sums bounded by a geometric series).
    """
    _check(noise, scale, cells)
    with working_precision(_PREC):
        s = arb(scale)
        lo: list[arb | None] = []
        hi: list[arb | None] = []
        p: list[arb] = []
        q: list[arb] = []
        if noise == "gaussian":
            mu = 1 / (2 * s * s)
            sd = (2 * mu).sqrt()
            # the cell edges are exact doubles around the P-mean; each edge's cdf once per measure
            mid, width = float(mu.mid()), float(sd.mid())
            edges = [arb(v) for v in np.linspace(mid - _GAUSS_SPAN * width, mid + _GAUSS_SPAN * width, cells + 1)]
            zp = [(a - mu) / sd for a in edges]
            zq = [(a + mu) / sd for a in edges]
            tp = [_tail_or_cdf(z) for z in zp]
            tq = [_tail_or_cdf(z) for z in zq]
            bounds: list[arb | None] = [None, *edges, None]
            for i, (a, b) in enumerate(itertools.pairwise(bounds)):
                lo.append(a)
                hi.append(b)
                p.append(_between(zp, tp, i - 1, i))
                q.append(_between(zq, tq, i - 1, i))
        elif noise == "laplace":
            inv = 1 / s
            e1 = (-inv).exp()
            lo.append(-inv)
            hi.append(-inv)
            p.append(e1 / 2)
            q.append(arb(1) / 2)
            # outputs o in (0, 1) cut into equal cells; loss (2o - 1)/b
            for i in range(cells):
                oa, ob = arb(i) / cells, arb(i + 1) / cells
                lo.append((2 * oa - 1) * inv)
                hi.append((2 * ob - 1) * inv)
                p.append((((ob - 1) * inv).exp() - ((oa - 1) * inv).exp()) / 2)
                q.append(((-oa * inv).exp() - (-ob * inv).exp()) / 2)
            lo.append(inv)
            hi.append(inv)
            p.append(arb(1) / 2)
            q.append(e1 / 2)
        elif noise == "discrete_laplace":
            inv = 1 / s
            qq = (-inv).exp()
            lo += [-inv, inv]
            hi += [-inv, inv]
            p += [qq / (1 + qq), 1 / (1 + qq)]
            q += [1 / (1 + qq), qq / (1 + qq)]
        else:  # discrete_gaussian
            K = math.ceil(_DG_SIGMAS * scale) + _DG_PAD
            two_s2 = 2 * s * s
            w = {k: (-(arb(k) ** 2) / two_s2).exp() for k in range(-K - 1, K + 2)}
            tail = _dg_tail(K + 1, two_s2)  # sum over k >= K + 1 (and, by symmetry, k <= -K - 1)
            Z = sum((w[k] for k in range(-K, K + 1)), arb(0)) + 2 * tail
            # the tail cells: outputs o >= K + 1 (P: k = o - 1 >= K, Q: k >= K + 1), o <= -K (P: k <= -K - 1, Q: k <= -K)
            lo.append(None)
            hi.append((2 * arb(-K) - 1) / two_s2)
            p.append(tail / Z)
            q.append((tail + w[-K]) / Z)
            for o in range(1 - K, K + 1):
                ell = (2 * arb(o) - 1) / two_s2
                lo.append(ell)
                hi.append(ell)
                p.append(w[o - 1] / Z)
                q.append(w[o] / Z)
            lo.append((2 * arb(K + 1) - 1) / two_s2)
            hi.append(None)
            p.append((tail + w[K]) / Z)
            q.append(tail / Z)
        return NoiseCells(lo, hi, p, q)


def _dg_tail(j: int, two_s2: arb) -> arb:
    """A ball ``[0, bound]`` holding ``sum_{k >= j} e^(-k^2/(2 sigma^2))`` (j >= 1): the terms
    fall at least geometrically, ratio ``e^(-(2j + 1)/(2 sigma^2)) < 1``, so the sum is at
    most the first over one minus the ratio."""
    first = (-(arb(j) ** 2) / two_s2).exp()
    ratio = (-(2 * arb(j) + 1) / two_s2).exp()
    bound = first / (1 - ratio)
    return arb(0).union(bound)


def noise_log_delta(noise: str, scale: float, epsilon: FloatArray) -> LogEnclosure:
    """Proven bounds on ``log d_eps(N_1, N_0)`` at every epsilon (E,), sensitivity 1 -- the
    DP delta of the noisy count, equal in both directions (the noises are symmetric).

    * Gaussian (Balle & Wang 2018, Theorem 8):
      ``Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma)``.
    * Laplace: ``1 - e^(-(1/b - eps)/2)`` for ``eps < 1/b``, else 0 (the integral of
      ``(1 - e^(eps - l))_+`` over the three pieces of the loss law).
    * discrete Laplace: ``(1 - e^(eps - 1/t))/(1 + e^(-1/t))`` for ``eps < 1/t``, else 0
      (the two-atom law above).
    * discrete Gaussian (Canonne, Kamath & Steinke 2020, Theorem 7):
      ``P(o >= o*) - e^eps Q(o >= o*)`` over the outputs of loss above eps, ``o* = floor(sigma^2 eps + 1/2) + 1``;
      both candidates around a threshold too close to call are evaluated and the larger
      kept (every threshold gives at most the divergence, the true one gives it).

    Each is evaluated in Arb at increasing precision until the ball is narrower than
    ``2^-40`` relative (or excludes 0); the ends of the final ball are rounded outward.

    References
    ----------
    Balle and Wang, *Improving the Gaussian mechanism for differential privacy*, ICML 2018,
    Theorem 8; Canonne, Kamath and Steinke, *The discrete Gaussian for differential privacy*,
    NeurIPS 2020, Theorem 7.
    """
    e = np.atleast_1d(np.asarray(epsilon, dtype=float))
    lower = np.empty(e.size)
    upper = np.empty(e.size)
    for i, eps in enumerate(e.tolist()):
        lower[i], upper[i] = _one_log_delta(noise, float(scale), float(eps))
    return LogEnclosure(lower, upper)


@lru_cache(maxsize=4096)
def _one_log_delta(noise: str, scale: float, eps: float) -> tuple[float, float]:
    """(lower, upper) of ``log d_eps`` at one epsilon (see :func:`noise_log_delta`)."""
    _check(noise, scale, DEFAULT_CELLS)
    prec = _PREC
    while True:
        with working_precision(prec):
            d = _delta_ball(noise, scale, eps)
            # done when the ball is at most 0 (a zero divergence), or positive and narrow
            ok = d.upper() <= 0 or (d.lower() > 0 and d.rad() <= abs(d.mid()) * 2.0**-40)
            if ok or prec >= 4096:
                d = d.intersection(arb(0).union(arb(1)))
                return _log_down(d), _log_up(d)
        prec *= 2


def _delta_ball(noise: str, scale: float, eps: float) -> arb:
    """A ball holding ``d_eps(N_1, N_0)`` at the current precision."""
    s, x = arb(scale), arb(eps)
    if noise == "gaussian":
        return _phi(1 / (2 * s) - x * s) - x.exp() * _phi(-1 / (2 * s) - x * s)
    if noise in ("laplace", "discrete_laplace"):
        inv = 1 / s
        if not x < inv:  # eps >= 1/scale: no loss above eps (a ball straddling it is resolved by the max below)
            if x > inv:
                return arb(0)
        gap = inv - x
        if noise == "laplace":
            val = -((-gap / 2).expm1())
        else:
            val = -((-gap).expm1()) / (1 + (-inv).exp())
        return arb(0).union(val) if not x < inv else val
    # discrete Gaussian: the threshold o* and its neighbour when the ball cannot tell them apart
    two_s2 = 2 * s * s
    t = x * s * s + arb(1) / 2
    cands = {math.floor(float(t.lower())) + 1, math.floor(float(t.upper())) + 1}
    K = math.ceil(_DG_SIGMAS * scale) + _DG_PAD
    best: arb | None = None
    w = [(-(arb(k) ** 2) / two_s2).exp() for k in range(K + 2)]
    tail = _dg_tail(K + 1, two_s2)
    Z = w[0] + 2 * (sum(w[1 : K + 1], arb(0)) + tail)

    def upper_sum(j: int) -> arb:
        """sum_{k >= j} e^(-k^2/(2 sigma^2)) (any integer j)."""
        if j > K:
            return _dg_tail(j, two_s2) if j >= 1 else tail
        if j >= 0:
            return sum(w[j : K + 1], arb(0)) + tail
        return Z - upper_sum(1 - j)

    for o in sorted(cands):
        # P(o' >= o) = sum_{k >= o - 1} w_k / Z,  Q(o' >= o) = sum_{k >= o} w_k / Z
        val = (upper_sum(o - 1) - x.exp() * upper_sum(o)) / Z
        best = val if best is None else _ball_max(best, val)
    assert best is not None
    return best


def _ball_max(a: arb, b: arb) -> arb:
    """A ball holding max(x, y) for every x in a, y in b."""
    lo = a.lower() if a.lower() > b.lower() else b.lower()
    hi = a.upper() if a.upper() > b.upper() else b.upper()
    return arb(lo).union(arb(hi))


def noise_losses(
    noise: str, scale: float, rate: Fraction | float = 1, cells: int = DEFAULT_CELLS
) -> tuple[LossDistribution, LossDistribution, LossDistribution, LossDistribution]:
    """(forward upper, backward upper, forward lower, backward lower): loss laws bounding
    the pair ``A = g N_1 + (1 - g) N_0`` (``g = rate``, taken exactly: a Fraction or the
    float's own value) against ``B = N_0`` -- forward under A, backward (loss ``log B/A``)
    under B -- outward-discretised as the module docstring states.  ``rate = 1``: the noise itself."""
    return _noise_losses(noise, float(scale), Fraction(rate), int(cells))


@lru_cache(maxsize=32)
def _noise_losses(
    noise: str, scale: float, rate: Fraction, cells: int
) -> tuple[LossDistribution, LossDistribution, LossDistribution, LossDistribution]:
    if not (0 < rate <= 1):
        raise ValueError(f"rate must be in (0, 1], got {rate!r}")
    c = noise_cells(noise, scale, cells)
    with working_precision(_PREC):
        g = arb(rate.numerator) / arb(rate.denominator)  # the exact rate: a ball holding it

        def f(ell: arb) -> arb:
            """The loss of A against B at base loss ell: log(g e^ell + 1 - g), increasing."""
            if rate == 1:
                return ell
            return (g * ell.exp() + 1 - g).log()

        # (forward, upper) -> (losses, log-masses, mass at +inf)
        acc: dict[tuple[bool, bool], tuple[list[float], list[float], list[arb]]] = {
            key: ([], [], []) for key in itertools.product((True, False), (True, False))
        }
        for lo, hi, p, q in zip(c.lo, c.hi, c.p, c.q):
            for forward, mass in ((True, p if rate == 1 else g * p + (1 - g) * q), (False, q)):
                known = bool(mass > 0)  # a ball away from 0: its log has a finite width
                lm = mass.log() if known else None
                width = arb(lm.upper()) - arb(lm.lower()) if lm is not None else None  # log(A_up/A_lo)
                for upper in (True, False):
                    losses, masses, at_inf = acc[(forward, upper)]
                    # the end of the cell in the bound's direction (the pair's loss is f of the
                    # base loss forward, -f backward)
                    end = (hi if upper else lo) if forward else (lo if upper else hi)
                    if end is None or width is None:
                        if upper:  # a cell reaching +inf, or of unknown positive mass: all of it at +inf
                            at_inf.append(mass)
                        continue  # the lower bound drops it (non-negative terms removed)
                    assert lm is not None  # (a width is known only with its log)
                    loss = f(end) if forward else -f(end)
                    if upper:  # P~ = A_up, loss f(end) + log(A_up/A_lo): every implied Q~(o) <= Q(o)
                        losses.append(_up(loss + width))
                        masses.append(_up(lm))
                    else:  # P~ = A_lo, loss f(end) - log(A_up/A_lo): every implied Q~(o) >= Q(o)
                        losses.append(_down(loss - width))
                        masses.append(_down(lm))
        out = []
        for forward in (True, False):
            for upper in (True, False):
                losses, masses, at_inf = acc[(forward, upper)]
                li = _log_up(sum((arb(v.upper()) for v in at_inf), arb(0))) if upper else -math.inf
                out.append(LossDistribution.from_atoms(np.array(losses), np.array(masses), li, upper))
    fu, fl, bu, bl = out
    return fu, bu, fl, bl
