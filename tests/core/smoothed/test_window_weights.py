"""The windowed certificate's binomial weights and log-sum-exp bound against mpmath at 50
digits: the weights' bound holds at 1.58e8 records (tilted windows, -7e3 to -1.4e4 nats) and is
about 1e-12, and the log-sum-exp bound covers a float64 evaluation of the window's sum."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.special import logsumexp

from smoothdp_nb.core.numerics.enclosures import log_rel
from smoothdp_nb.core.smoothed.engines.window import _log_weights, _window_rel


def _exact_log_binom(y: int, n: int, p: float) -> mpmath.mpf:
    P = mpmath.mpf(p)  # the float p exactly, q = 1 - p exactly
    return (
        mpmath.loggamma(n + 1)
        - mpmath.loggamma(y + 1)
        - mpmath.loggamma(n - y + 1)
        + y * mpmath.log(P)
        + (n - y) * mpmath.log(1 - P)
    )


@pytest.mark.parametrize(
    ("n", "p", "y0", "count"),
    [
        (158_000_000, 0.3, 46_443_404, 286_998),  # the tilted end window of eta = 0.9, eps = 1
        (158_000_000, 0.6, 94_700_000, 5_000),
        (10_000_000, 0.3, 2_990_000, 20_000),
        (5000, 0.2, 1000, 100),  # short: every weight in double word
        (3000, 0.7, 0, 3001),  # the ends y = 0, n included
    ],
)
def test_window_weights_within_their_bound(n: int, p: float, y0: int, count: int) -> None:
    y = np.arange(y0, y0 + count, dtype=float)
    lw, err = _log_weights(y, n, p)
    idx = np.unique(np.concatenate([np.arange(0, count, max(1, count // 97)), np.arange(min(count, 130)), [count - 1]]))
    with mpmath.workdps(50):
        worst = max(abs(mpmath.mpf(lw[i]) - _exact_log_binom(int(y[i]), n, p)) for i in idx)
    assert worst <= err
    if n > 10**6:
        assert err <= 2e-11  # the a-priori float64 bound there: 2100 u |log w|, up to 3e-9


def test_window_log_sum_exp_bound_covers_float64() -> None:
    """``_window_rel`` bounds the float64 log-sum-exp of ``lw + ld`` at log delta = -1.27e6."""
    rng = np.random.default_rng(5)
    K = 400
    lw = -9969.0 + rng.uniform(-300.0, 0.0, K)
    ld = -1.26e6 + rng.uniform(-300.0, 300.0, (K, 1))
    got = logsumexp(lw[:, None] + ld, axis=0)[0]
    rel = _window_rel(0.0, lw, ld)
    with mpmath.workdps(60):
        exact = mpmath.log(mpmath.fsum(mpmath.exp(mpmath.mpf(a) + mpmath.mpf(b)) for a, b in zip(lw, ld[:, 0])))
        assert abs(mpmath.mpf(got) - exact) <= float(log_rel(rel))
    # sharp: a few u of |log delta| (was 4 u (|lw| + |ld|) plus the weights' 3e-9)
    assert float(log_rel(rel)) <= 4e-10
    assert math.isfinite(rel)
