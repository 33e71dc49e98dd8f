"""Cost of the curator's odometer: testing one more release, charging one, and the conversions.

Run from the repository root: ``python benchmarks/bench_odometer.py``.  Prints one line per
measurement (median of repeats); figures and machine in benchmarks/ODOMETER.md.
"""

from __future__ import annotations

import statistics
import time

import smoothdp_nb as sdp


def _median_ms(fn, repeats: int = 20) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main() -> None:
    sdp.zcdp_to_dp(0.1, 1e-6)  # load Arb and scipy once
    for n in (10, 100, 1000):
        odo = sdp.PrivacyOdometer(1e9, 1e-6)
        for _ in range(n):
            odo.spend(0.01)
        test = _median_ms(lambda odo=odo: odo.would_spend(0.01))
        print(f"odometer with {n:5d} releases: test one more {test:.2f} ms")
    odo = sdp.PrivacyOdometer(1e9, 1e-6)
    print(f"spend (test, charge, log): {_median_ms(lambda: odo.spend(0.01), 200):.2f} ms")
    print(f"zcdp_to_dp: {_median_ms(lambda: sdp.zcdp_to_dp(0.37, 1e-7)):.2f} ms")
    print(
        f"renyi_to_dp, 22 orders: {_median_ms(lambda: sdp.renyi_to_dp(range(2, 24), [0.1 * a for a in range(2, 24)], 1e-6)):.2f} ms"
    )
    print(f"gdp_to_dp: {_median_ms(lambda: sdp.gdp_to_dp(1.3, 2.0)):.2f} ms")
    print(f"gdp_epsilon: {_median_ms(lambda: sdp.gdp_epsilon(1.3, 1e-6), 5):.1f} ms")


if __name__ == "__main__":
    main()
