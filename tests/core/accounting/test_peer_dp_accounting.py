"""Cross-check d(x, x') with Google's dp-accounting privacy loss distributions.

Its pessimistic and optimistic discretisations bracket the true hockey-stick
divergence; ours must lie between them.
"""

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld

import smoothdp_nb as sdp


def _pmf_dict(m, h):
    df = m.output_pmf(h)
    cols = [c for c in df.columns if c.startswith("c")]
    return {tuple(int(v) for v in row): lp for row, lp in zip(df[cols].to_numpy(), df["log_probability"])}


@pytest.mark.parametrize(
    "hist,eta,replace", [((6, 9), 0.5, False), ((3, 12), 0.9, False), ((2, 3, 5), 0.5, False), ((4, 6), 0.4, True)]
)
def test_bracketed_by_dp_accounting(hist, eta, replace):
    m = sdp.SamplingHistogram(eta=eta, replace=replace)
    h = np.array(hist)
    neighbours = []
    for a in range(len(h)):
        for b in range(len(h)):
            if a != b and h[a] > 0:
                x = h.copy()
                x[a] -= 1
                x[b] += 1
                neighbours.append(x)
    for epsilon in [0.2, 1.0, 2.0]:
        lo_best, hi_best = 0.0, 0.0
        for x in neighbours:
            p, q = _pmf_dict(m, h), _pmf_dict(m, x)
            for upper, lower in [(p, q), (q, p)]:
                pess = pld.from_two_probability_mass_functions(
                    lower, upper, pessimistic_estimate=True, value_discretization_interval=1e-5
                )
                opt = pld.from_two_probability_mass_functions(
                    lower, upper, pessimistic_estimate=False, value_discretization_interval=1e-5
                )
                hi_best = max(hi_best, pess.get_delta_for_epsilon(epsilon))
                lo_best = max(lo_best, opt.get_delta_for_epsilon(epsilon))
        ours = sdp.privacy_profile(m, h, epsilon)
        # ours is a proven upper bound, up to its enclosure width (~1e-11
        # relative here) above the exact value; dp_accounting's bounds are float values
        assert lo_best - 1e-12 <= ours <= hi_best + 1e-10
        assert hi_best - lo_best < 1e-3  # the bracket is informative
