"""The half that measures: smoothed differential privacy of mechanisms without additive noise.

:mod:`.mechanisms` holds the protocol :class:`~.mechanisms.Mechanism` and its implementations
(the sampling histogram, the sampling average, finite mechanisms, composition, post-processing);
:mod:`.profiles` the database-dependent privacy profiles and DP deltas built on them;
:mod:`.engines` Algorithm 1 (exact, certified) and Monte Carlo; :mod:`.accounting` inverse curves,
Rényi views and privacy-loss-distribution exports; :mod:`.delta` the public entry points
:func:`~.delta.smoothed_delta` and :func:`~.delta.smoothed_epsilon`; :mod:`.quantized` quantized
noise laws and the continuous limit of the sampling average; :mod:`.reports` the result object of
a privacy profile.

Inside this folder a module imports only those before it in the chain mechanisms -> profiles ->
engines -> accounting -> delta -> reports; :mod:`.quantized` stands on the mechanisms and the profiles
(mechanisms -> profiles -> quantized). May import :mod:`smoothdp_nb.core.numerics` and :mod:`smoothdp_nb.core.runtime`;
never the release half.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
