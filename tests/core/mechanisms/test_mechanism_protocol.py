"""The public Mechanism protocol: structure, the generic code's independence from
private names, the exact DP delta, and the edge cases of the protocol's helpers."""

import ast
import itertools
import math
import pathlib
from fractions import Fraction

import numpy as np
import pytest

import smoothdp_nb as sdp
from smoothdp_nb.core.smoothed.mechanisms import Mechanism
from tests import exact

CORE = pathlib.Path(sdp.__file__).parent / "core"
MECHS = [
    sdp.SamplingHistogram(eta=0.5),
    sdp.SamplingHistogram(T=3, replace=True),
    sdp.NoisySamplingHistogram(eta=0.5, noise_epsilon=1.0),
    sdp.SamplingAverage(T=2, grid=[0.0, 0.5, 1.0]),
    sdp.postprocess(sdp.SamplingHistogram(eta=0.5), sdp.winner),
    sdp.FiniteMechanism(lambda h: {h[0] > h[1]: 1.0}, categories=2, name="majority"),
]


@pytest.mark.parametrize("mech", MECHS, ids=repr)
def test_every_mechanism_implements_the_protocol(mech):
    assert isinstance(mech, sdp.Mechanism)
    m = mech.categories or 2
    h = np.array([3] + [1] * (m - 1))
    outs, logp = mech.log_output_pmf(h)
    assert len(outs) == len(logp) and math.isclose(float(np.logaddexp.reduce(logp)), 0.0, abs_tol=1e-12)
    d = sdp.privacy_profile(mech, h, [0.0, 1.0])
    assert np.all((0 <= d) & (d <= sdp.dp_delta(mech, int(h.sum()), [0.0, 1.0], categories=m)))
    twin = mech
    assert mech == twin and hash(mech) == hash(twin) and mech.label == repr(mech)


def test_shared_identity_methods_are_defined_once():
    from smoothdp_nb.core.smoothed.mechanisms import NoisySamplingHistogram, SamplingHistogram
    from smoothdp_nb.core.smoothed.mechanisms.sampling_average.mechanism import SamplingAverage

    for cls in (SamplingHistogram, NoisySamplingHistogram, SamplingAverage):
        for name in ("__eq__", "__hash__", "label", "sample_size"):
            assert name not in vars(cls), (cls, name)
    assert sdp.SamplingHistogram(eta=0.5) == sdp.SamplingHistogram(eta="0.5")
    assert hash(sdp.SamplingHistogram(eta=0.5)) == hash(sdp.SamplingHistogram(eta=Fraction(1, 2)))
    assert sdp.SamplingHistogram(eta=0.5) != sdp.SamplingHistogram(eta=0.5, replace=True)
    assert sdp.SamplingAverage(T=2, grid=[0, 1]) == sdp.SamplingAverage(T=2, grid=[0.0, 1.0])
    assert sdp.SamplingAverage(T=2, grid=[0, 1]) != sdp.SamplingAverage(eta=0.5, grid=[0, 1])


def test_abstract_base_refuses_incomplete_mechanisms():
    with pytest.raises(TypeError):
        Mechanism()

    class NoLaw(Mechanism):
        categories = 2

    with pytest.raises(TypeError):
        NoLaw()
    with pytest.raises(TypeError, match="Mechanism"):
        sdp.privacy_profile(object(), [1, 1], 0.5)


def _private_calls(path):
    """Attribute accesses ``x._name`` (not on self/cls, not dunders, not one of the
    protocol's documented hooks ``Mechanism.HOOKS``), hasattr calls, and private
    names imported from other packages."""
    tree = ast.parse(path.read_text())
    bad = []
    for node in ast.walk(tree):
        private = (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and node.attr not in Mechanism.HOOKS
        )
        if private and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            bad.append(f"{path.name}:{node.lineno} .{node.attr}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr":
            obj = node.args[0]
            if isinstance(obj, ast.Name) and "mech" in obj.id:  # duck-typing a mechanism
                bad.append(f"{path.name}:{node.lineno} hasattr")
        # private names imported from outside the package (siblings of smoothed/ share theirs)
        outside = path.parent.name != "smoothed" or (isinstance(node, ast.ImportFrom) and node.level != 1)
        if isinstance(node, ast.ImportFrom) and outside:
            bad += [
                f"{path.name}:{node.lineno} import {a.name}"
                for a in node.names
                if a.name.startswith("_") and not (CORE / f"{a.name}.py").exists()
            ]
    return bad


def test_generic_code_uses_only_the_public_protocol():
    files = [CORE / "smoothed" / "profiles.py", *sorted((CORE / "smoothed" / "engines").glob("*.py"))]
    found = [b for f in files for b in _private_calls(f)]
    assert found == []


@pytest.mark.parametrize("eta", ["0.5", "0.998", "0.1", "1", "0.3", "0.7"])
@pytest.mark.parametrize("n", [1, 3, 10, 999, 12345])
def test_dp_delta_is_the_exact_fraction_rounded_up(eta, n):
    # a reported delta is a proven upper bound, so T/n is rounded up
    # (the smallest float >= T/n), not to nearest
    for mech in (sdp.SamplingHistogram(eta=eta), sdp.SamplingAverage(eta=eta, grid=[0.0, 1.0])):
        T = math.ceil(Fraction(eta) * n)
        want = float(Fraction(T, n))
        up = want if Fraction(want) >= Fraction(T, n) else math.nextafter(want, 2.0)
        assert sdp.dp_delta(mech, n) == up
        assert sdp.dp_delta(mech, n, [0.0, 2.0]).tolist() == [up] * 2


# -- edge cases: the DP delta per epsilon, eta = 1, every delta in [0, 1] ---------------
def test_noisy_dp_delta_is_per_epsilon():
    res = sdp.smoothed_delta(
        sdp.NoisySamplingHistogram(eta=1, noise_epsilon=1), 6, [[0.3, 0.7], [0.7, 0.3]], [3.0, 0.1]
    )
    assert res.dp_delta.shape == (2,)
    assert res.dp_delta[0] == 0.0 and res.dp_delta[1] == pytest.approx(0.10371507, rel=1e-6)
    assert np.all(res.delta <= res.dp_delta)
    assert "(DP δ = 0)" in str(res) and "(DP δ ≤ 1.04·10⁻¹)" in str(res)  # 0.10371507 rounded up
    assert res.to_frame()["dp_delta"].tolist() == res.dp_delta.tolist()


def test_eta_one_smoothed_delta_is_exactly_one():
    res = sdp.smoothed_delta(sdp.SamplingHistogram(eta=1), 5, [[0.5, 0.5]], 1.0)
    assert res.delta == 1.0 and res.dp_delta == 1.0
    assert sdp.privacy_profile(sdp.SamplingHistogram(eta=1), [[2, 3], [5, 0]], 1.0).max() == 1.0


def test_dp_delta_half():
    assert sdp.dp_delta(sdp.SamplingHistogram(eta=0.5), 10) == 0.5


def test_remark8_bound_is_a_probability():
    assert sdp.remark8_bound(10, 2, 0.5, 2.0, 0.1) == 1.0
    assert sdp.remark8_bound(10, 2, 0.5, 2.0, 0.1, log=True) == 0.0
    assert sdp.remark8_bound(10**5, 2, 0.5, 2.0, 0.1) < 1e-100  # unchanged where it says something


@pytest.mark.parametrize("mech", MECHS[:4], ids=repr)
def test_every_delta_in_unit_interval_and_below_dp_exactly(mech):
    m = mech.categories or 2
    n = 6
    hists = np.array([h for h in itertools.product(range(n + 1), repeat=m) if sum(h) == n])
    e = np.array([0.0, 0.01, 0.5, 4.0])
    d = sdp.privacy_profile(mech, hists, e)
    dp = sdp.dp_delta(mech, n, e, categories=m)
    assert np.all(d >= 0) and np.all(d <= 1) and np.all(d <= dp[None, :])
    pi = np.full((1, m), 1.0 / m)
    res = sdp.smoothed_delta(mech, n, pi, e)
    assert np.all(res.delta <= res.dp_delta) and np.all(res.delta >= 0)
    assert np.all(res.table.delta <= np.repeat(res.dp_delta, len(res.table) // e.size))


# -- exact Algorithm 1 for the sampling average ---------------------------------------------
@pytest.mark.parametrize("output", ["sum", "rounded_mean"])
def test_sampling_average_exact_algorithm1_matches_enumeration_of_x_n(output):
    """Three grid values, n = 4, T = 2: Definition 3 literally, every database of X^4
    and every 2-subset of records in Fractions, against smoothed_delta(method='exact')."""
    grid = [Fraction(0), Fraction(1, 2), Fraction(1)]
    mech = sdp.SamplingAverage(T=2, grid=[float(g) for g in grid], output=output)

    def law(h):
        sums = exact.sampling_average_law(h, grid, 2)
        if output == "sum":
            return sums
        out = {}
        for s, p in sums.items():  # mean of 2 values rounded to the grid step 1/2, ties away from 0
            k = s / 2 / Fraction(1, 2)
            r = math.floor(k + Fraction(1, 2)) if k >= 0 else -math.floor(-k + Fraction(1, 2))
            out[r] = out.get(r, Fraction(0)) + p
        return out

    pi = [[Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)], [Fraction(1, 10), Fraction(1, 5), Fraction(7, 10)]]
    epsilon = [0.1, 0.8]
    res = sdp.smoothed_delta(mech, 4, [[float(p) for p in row] for row in pi], epsilon)
    for e, d in zip(epsilon, res.delta):
        want = exact.smoothed_of_law(law, pi, 4, e)
        assert d == pytest.approx(float(want), rel=1e-9)


# ---------------------------------------------------------------------------
# the protocol in scipy's shape: few required members, documented optional hooks
# ---------------------------------------------------------------------------
def _coin_law(h):
    """Publishes 1 with probability (1 + #category 0) / (n + 2) (exact fractions)."""
    p = Fraction(1 + h[0], sum(h) + 2)
    return {0: 1 - p, 1: p}


def _coin():
    return sdp.FiniteMechanism(lambda h: {k: float(v) for k, v in _coin_law(h).items()}, categories=2)


def test_the_functions_answer_for_any_mechanism():
    # the constant law has delta 0 everywhere
    assert sdp.dp_delta(sdp.FiniteMechanism(lambda h: {0: 0.5, 1: 0.5}, categories=2), 4, 1.0) == 0.0
    mech = _coin()
    e = [0.0, 0.3, 1.0]
    # DP delta of n = 3 against the brute-force maximum of the exact profiles (50 digits)
    want = [max(exact.profile_of_law(_coin_law, h, ei) for h in exact.all_hists(3, 2)) for ei in e]
    got = sdp.dp_delta(mech, 3, e)
    assert all(g >= w and g <= w * (1 + 1e-12) + 1e-300 for g, w in zip(got, want))
    # one public entry per operation: the functions; the protocol has no method twins
    for name in ("privacy_profile", "dp_delta", "adjusted_utility", "profile_seconds"):
        assert not hasattr(mech, name)
    enc = sdp.privacy_profile_enclosure(mech, [2, 1], 0.3)
    w = exact.profile_of_law(_coin_law, (2, 1), 0.3)
    assert math.exp(enc.lower) <= w <= math.exp(enc.upper)


def test_template_methods_validate_their_input():
    mech = _coin()
    with pytest.raises(ValueError, match="n"):
        sdp.dp_delta(mech, 0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        sdp.privacy_profile(mech, [1, 1], -1.0)
    with pytest.raises(ValueError, match="hist"):
        sdp.privacy_profile(mech, [1, 1, 1], 1.0)
    with pytest.raises(ValueError, match="t"):
        sdp.adjusted_utility(mech, [1, 1], 1.5)
    with pytest.raises(ValueError, match="count"):
        mech.profile_cost(5, 2, count=0)


def test_the_protocol_is_small_and_its_rules_raise_at_class_creation():
    doc = Mechanism.__doc__
    required = doc[doc.index("**Implement these**") : doc.index("**Optional hooks**")]
    assert required.count("``categories") + required.count("``log_output_pmf(") == 2
    assert Mechanism.__abstractmethods__ == {"categories", "log_output_pmf"}
    hooks = doc[doc.index("**Optional hooks**") : doc.index("A subclass may also replace")]
    assert hooks.count("\n    ``") <= 7  # each with what it must promise
    assert not hasattr(Mechanism, "_RENAMED") and not hasattr(Mechanism, "_log_profile_batch")
    assert {"_log_profile_enclosure", "_profile_cost", "_dp_delta", "_profile"} <= Mechanism.HOOKS

    with pytest.raises(TypeError, match="template"):

        class Template(Mechanism):
            categories = 2

            def log_output_pmf(self, hist):
                return np.array([0]), np.zeros(1)

            def _dp_delta(self, n, epsilon, **kw):
                return np.zeros(1)

    # a new profile below a label-symmetric class: stated, or refused (never silently reset)
    with pytest.raises(TypeError, match="label_symmetric"):

        class Unstated(sdp.SamplingHistogram):
            def _log_profile_enclosure(self, hists, n, epsilon):
                return super()._log_profile_enclosure(hists, n, epsilon)

    class Stated(sdp.SamplingHistogram):
        label_symmetric = False

        def _log_profile_enclosure(self, hists, n, epsilon):
            return super()._log_profile_enclosure(hists, n, epsilon)

    assert not Stated(T=2).label_symmetric and sdp.SamplingHistogram(T=2).label_symmetric


def test_engines_never_call_the_validating_facade(monkeypatch):
    mech = _coin()

    def refuse(*args, **kwargs):
        raise AssertionError("an engine called the validating template method")

    from smoothdp_nb.core.smoothed import profiles

    monkeypatch.setattr(profiles, "privacy_profile", refuse)
    monkeypatch.setattr(profiles, "dp_delta", refuse)
    pi = [[0.3, 0.7], [0.6, 0.4]]
    exact_res = sdp.smoothed_delta(mech, 8, pi, [0.5, 1.0], progress=False)
    assert np.all(exact_res.delta <= exact_res.dp_delta)
    sdp.smoothed_delta(mech, 8, pi, 0.5, method="monte-carlo", trials=50, rng=0, progress=False)
    assert sdp.profile_epsilon(mech, [[3, 2], [1, 4]], 0.2).shape == (2,)
    assert sdp.dp_epsilon(mech, 3, 0.4) >= 0
    assert sdp.smoothed_epsilon(mech, 6, pi, 0.2) >= 0


def test_a_user_mechanism_prices_its_memory():
    """The exact method's memory estimate counts a user mechanism's own arrays
    (the neighbour laws and the divergence kernel), within x3 of the traced peak;
    before, a user mechanism's profiles were priced at 0 bytes (x0.09 of the peak here)."""
    import tracemalloc

    from smoothdp_nb.core.smoothed.engines.estimate import estimate_exact

    def law(h):
        n = sum(h)
        p, q = (1 + h[0]) / (n + 3), (1 + h[1]) / (n + 3)
        return {0: p, 1: q, 2: 1 - p - q}

    mech = sdp.FiniteMechanism(law, categories=4)
    assert mech.profile_cost(12, 4, count=455, n_epsilon=3).bytes > 0
    pi = np.full((2, 4), 0.25)
    pi[0, :2] += [0.1, -0.1]
    est = estimate_exact(mech, 12, 4, 2, 3)
    tracemalloc.start()
    try:
        sdp.smoothed_delta(mech, 12, pi, [0.3, 0.6, 1.0], progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / 3 <= est.bytes <= 3 * peak, (est.bytes, peak)
