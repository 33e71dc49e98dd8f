"""The sampling histogram M_H of *Smoothed Differential Privacy*, with its noisy variant and winner.

:mod:`.mechanism` is :class:`~.mechanism.SamplingHistogram` (two categories in closed form, more
through the grid path of :mod:`.grid`, Algorithm 2); :mod:`.noisy` is
:class:`~.noisy.NoisySamplingHistogram`; :mod:`.winner` the winner of a sampled election in
closed form; :mod:`.tail_bound` a proven bound on the two-category profile over a whole range of
histograms at once (hypergeometric Chernoff tails), for the exact engine's windowed certificate.

May import: the mechanism protocol, post-processing, the sample size, the numerics and the runtime.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
