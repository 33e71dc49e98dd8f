"""The numerics both halves stand on: how a number is certified, and the kernels built on that.

Here live the proven enclosures (:mod:`.enclosures`: outward rounding, error bounds, and why each
privacy number is an upper bound), Arb's working precision (:mod:`.ball_arithmetic`), accurate
log-pmfs for counts of any size (:mod:`.lpmf`), double-word arithmetic with proven bounds
(:mod:`.double_double`), the log of a weighted sum of enclosed terms rounded once
(:mod:`.weighted_log_sum`), hockey-stick divergences in log space
(:mod:`.divergence`), privacy-loss distributions and their outward-rounded composition
(:mod:`.privacy_loss`), the certified conversions of zCDP, Renyi DP and Gaussian DP to
(epsilon, delta) (:mod:`.conversions`), the hull reduction of Proposition 7 (:mod:`.hull`), confidence intervals
(:mod:`.intervals`), the text forms of tiny probabilities (:mod:`.formatting`), the array types
(:mod:`.array_types`) and the one vocabulary of input checks (:mod:`.validation`).

May import: numpy, scipy, pandas, mpmath, python-flint, and other modules of this folder.
Never the two halves (:mod:`smoothdp_nb.core.smoothed`, :mod:`smoothdp_nb.core.release`) or
:mod:`smoothdp_nb.core.runtime`.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
