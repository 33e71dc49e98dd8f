"""Hypothesis fuzz of the public API: hostile arguments give ValueError/TypeError only; valid
arguments give no exception and results with the invariants of smoothed DP.

Each target runs ``SMOOTHDP_FUZZ_EXAMPLES`` examples (default 300 with CI=1, 100 locally: seconds per target);
set the variable higher for a longer hunt.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import smoothdp_nb as sdp
from smoothdp_nb import release

EXAMPLES = int(os.environ.get("SMOOTHDP_FUZZ_EXAMPLES", "300" if os.environ.get("CI") else "100"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)

# anything a user might pass where a number, a size or a seed is expected
numeric_strings = st.sampled_from(["0.5", "1", " 1 ", "1e3", "0.5_0", "\u0660.\u0665", "nan", "inf", "", "abc"])
scalars = st.one_of(
    st.none(),
    st.booleans(),
    numeric_strings,
    st.integers(-3, 40),
    st.sampled_from([-(10**20), 10**9, 10**12, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
)
anything = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.lists(st.lists(scalars, max_size=3), max_size=3),
    st.builds(np.array, st.lists(st.floats(-5, 50), max_size=4)),
)
mechanisms = st.sampled_from(
    [
        sdp.SamplingHistogram(eta=0.5),
        sdp.SamplingHistogram(eta="0.9"),
        sdp.SamplingHistogram(T=3),
        sdp.SamplingHistogram(T=2, replace=True),
        sdp.NoisySamplingHistogram(T=3, noise_epsilon=0.5),
    ]
)

USER_ERRORS = (ValueError, TypeError)


def check_user_errors_only(fn, *args, **kwargs):
    """Run fn: its result, or None for a ValueError/TypeError that says what is wrong
    (ComputationTooLarge is one); any other exception fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **kwargs)
        except USER_ERRORS as err:
            assert str(err).strip(), f"{type(err).__name__} without a message"
            return None


# ---------------------------------------------------------------- hostile arguments


@FUZZ
@given(mech=mechanisms, hist=anything, epsilon=anything)
def test_privacy_profile_hostile(mech, hist, epsilon):
    out = check_user_errors_only(sdp.privacy_profile, mech, hist, epsilon)
    if out is not None:  # accepted: a probability
        assert np.all((np.asarray(out) >= 0) & (np.asarray(out) <= 1))


@FUZZ
@given(mech=mechanisms, n=anything, epsilon=anything, log=st.one_of(st.booleans(), scalars))
def test_dp_delta_hostile(mech, n, epsilon, log):
    out = check_user_errors_only(sdp.dp_delta, mech, n, epsilon, log=log)
    if out is not None:  # accepted: a probability, or its logarithm
        values = np.asarray(out, dtype=float)
        assert np.all(values <= 0) if log is True else np.all((values >= 0) & (values <= 1))


@FUZZ
@given(
    mech=mechanisms,
    n=st.one_of(st.integers(-2, 25), scalars),
    pi=anything,
    epsilon=anything,
    method=st.sampled_from(["exact", "monte-carlo", "mc", 1]),
    trials=st.one_of(st.integers(-2, 50), scalars),
    rng=scalars,
    budget=st.one_of(st.floats(0.001, 10), scalars),
)
def test_smoothed_delta_hostile(mech, n, pi, epsilon, method, trials, rng, budget):
    out = check_user_errors_only(
        sdp.smoothed_delta,
        mech,
        n,
        pi,
        epsilon,
        method=method,
        trials=trials,
        rng=rng,
        budget=budget,
        candidates=3,
        progress=False,
    )
    if out is not None:  # accepted: a smoothed delta is a probability
        assert np.all(np.asarray(out.log_delta) <= 0)


@FUZZ
@given(pairs=st.one_of(anything, st.lists(st.tuples(scalars, scalars), max_size=3)))
def test_compose_hostile(pairs):
    out = check_user_errors_only(sdp.compose, pairs)
    if out is not None:
        assert 0 <= out.delta <= 1 and out.epsilon >= 0


@FUZZ
@given(mech=mechanisms, hist=anything, t=scalars)
def test_adjusted_utility_hostile(mech, hist, t):
    out = check_user_errors_only(sdp.adjusted_utility, mech, hist, t)
    if out is not None:  # accepted: eq. (3) lies in [0, 1]
        assert np.all((np.asarray(out) >= 0) & (np.asarray(out) <= 1 + 1e-12))


@FUZZ
@given(
    x=anything,
    query=st.sampled_from(["median", "mean", "trimmed_mean", "mode", 3]),
    epsilon=scalars,
    bounds=st.one_of(anything, st.tuples(scalars, scalars)),
    noise=st.sampled_from(["polyplace", "cauchy", "student_t", "laplace", "laplace_log_normal", "gauss"]),
    gamma=scalars,
    delta=scalars,
    shape=scalars,
    trim=scalars,
    rng=scalars,
)
def test_release_hostile(x, query, epsilon, bounds, noise, gamma, delta, shape, trim, rng):
    out = check_user_errors_only(
        release,
        x,
        query=query,
        epsilon=epsilon,
        bounds=bounds,
        noise=noise,
        gamma=gamma,
        delta=delta,
        shape=shape,
        trim=trim,
        rng=rng,
    )
    if out is not None:
        assert math.isfinite(out.value)


def _trials(size, rng):
    return rng.random(size)


@FUZZ
@given(trials=anything, rng=scalars, chunk=anything, executor=st.sampled_from([None, "threads", 3]))
def test_monte_carlo_map_hostile(trials, rng, chunk, executor):
    out = check_user_errors_only(sdp.monte_carlo_map, _trials, trials, rng, executor, chunk)
    if out is not None:  # accepted: the trials' uniform draws, concatenated
        assert out.ndim == 1 and np.all((out >= 0) & (out < 1))


# ---------------------------------------------------------------- valid arguments: no exception, invariants

counts = st.integers(0, 40)
hist2 = st.lists(st.tuples(counts, counts).filter(lambda c: sum(c) >= 3), min_size=1, max_size=4)
epsilons = st.lists(st.floats(0, 6, allow_nan=False), min_size=1, max_size=5)
probs = st.floats(0.0, 1.0, allow_nan=False)


@FUZZ
@given(mech=mechanisms, hists=hist2, eps=epsilons)
def test_privacy_profile_invariants(mech, hists, eps):
    eps = np.sort(np.asarray(eps))
    d = sdp.privacy_profile(mech, hists, eps)
    logd = sdp.privacy_profile(mech, hists, eps, log=True)
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(np.diff(d, axis=1) <= 0)  # non-increasing in epsilon
    # log=True consistent: d is exp(logd) rounded up or the DP delta where that is
    # smaller, so equal to exp(logd) but for the last bit (any bit in the subnormal range)
    np.testing.assert_allclose(np.exp(logd), d, rtol=1e-12, atol=1e-320)
    for row, h in zip(d, hists):
        bound = np.asarray(sdp.dp_delta(mech, sum(h), eps, categories=2))
        assert np.all(row <= bound * (1 + 1e-12))


@FUZZ
@given(
    mech=st.sampled_from(
        [sdp.SamplingHistogram(eta=0.5), sdp.SamplingHistogram(T=3), sdp.SamplingHistogram(eta="0.9")]
    ),
    n=st.integers(3, 25),
    p=st.lists(probs, min_size=1, max_size=3),
    eps=epsilons,
)
def test_smoothed_delta_invariants(mech, n, p, eps):
    eps = np.sort(np.asarray(eps))
    pi = [[q, 1.0 - q] for q in p]
    r = sdp.smoothed_delta(mech, n, pi, eps)
    d = np.asarray(r.delta)
    assert np.all((d >= 0) & (d <= 1))
    assert np.all(d <= r.dp_delta * (1 + 1e-12))
    # non-increasing in epsilon, up to the engines' measured float64 accuracy: each delta agrees with exact
    # arithmetic to ~1.5e-12 relative (README, "How exact is it?"), so two neighbours may cross by ~3e-12
    assert np.all(np.diff(d) <= 1e-11 * np.maximum(d[:-1], 1e-300))
    np.testing.assert_allclose(np.exp(np.asarray(r.log_delta)), d, rtol=1e-12, atol=0)


@FUZZ
@given(n=st.integers(3, 30), q=probs, eps=st.floats(0, 4), trials=st.integers(1, 300), rng=st.integers(0, 2**32))
def test_monte_carlo_interval_invariants(n, q, eps, trials, rng):
    r = sdp.smoothed_delta(
        sdp.SamplingHistogram(eta=0.5), n, [[q, 1 - q]], eps, method="monte-carlo", trials=trials, rng=rng, candidates=2
    )
    lo, hi = np.asarray(r.ci_low_values), np.asarray(r.ci_high_values)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= r.dp_delta * (1 + 1e-12)))
