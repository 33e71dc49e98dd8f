"""The numerical core of smoothdp_nb: the two halves of the product above the numerics they share.

* :mod:`.smoothed` -- the half that **measures**: smoothed differential privacy of mechanisms
  without additive noise (the mechanism protocol and its implementations, privacy profiles,
  Algorithm 1 and Monte Carlo, accounting).
* :mod:`.release` -- the half that **releases**: statistics with data-dependent noise (smooth
  sensitivity, the noise families, exact lattice sampling).
* :mod:`.numerics` -- what both stand on: certified enclosures, log-pmfs, divergences,
  privacy-loss distributions, the hull, intervals, input checks.
* :mod:`.runtime` -- plumbing: CPUs, executors, sweeps, budgets, progress, the renderer registry.
* :mod:`.data` -- the shipped election tables.

May import: numpy, scipy, pandas, mpmath, python-flint, threadpoolctl, tqdm; never the layers
above it. Imports point downward only: the halves import the numerics and the runtime, never each other;
nothing here imports IPython, ipywidgets or Altair, so the core serves scripts, tests and other
libraries. The public API is re-exported, and declared once, by the top-level package :mod:`smoothdp_nb`.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
