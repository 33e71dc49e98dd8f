"""Algorithm 1 of *Smoothed Differential Privacy*, exactly and certified, and Monte Carlo.

:mod:`.exact` computes the profile of every histogram and combines them (:mod:`.binary` for two
categories and two hull vertices, :mod:`.general` for any), with the binomial laws of
:mod:`.binomial`, the data-dependent plan of :mod:`.schedule`, proven pruning in :mod:`.pruning`
and the proven error bound of :mod:`.error_bound`; :mod:`.window` certifies the answer from the
profiles of only the databases that matter when the mechanism bounds its profile over ranges
(the sampling histogram at the size of an electorate); :mod:`.monte_carlo` draws databases instead;
:mod:`.chunks` cuts the work into calls and shares it with a helper thread, :mod:`.remote` runs those
calls on an executor (a process pool, a Dask cluster); :mod:`.cost` and
:mod:`.estimate` price a run before it starts; :mod:`.options` names the keyword arguments passed
on to the smoothed delta; :mod:`.results` holds :class:`~.results.SmoothedResult`.

May import: :mod:`smoothdp_nb.core.smoothed.mechanisms`, :mod:`smoothdp_nb.core.smoothed.profiles`,
the numerics and the runtime.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
