"""The sampling average of *Smoothed Differential Privacy*: the mechanism and its count tables.

:mod:`.mechanism` is :class:`~.mechanism.SamplingAverage`; :mod:`.count_tables` the exact
leave-one-out count tables of Algorithm 3; :mod:`.sums` the count-and-sum tables;
:mod:`.pairs` the search over (removed value, replacement) pairs.

May import: the mechanism protocol (:mod:`smoothdp_nb.core.smoothed.mechanisms.base`), the sample
size (:mod:`smoothdp_nb.core.smoothed.mechanisms.size`), the numerics and the runtime.

References
----------
.. [1] Liu, A., Wang, Y.-X. and Xia, L. "Smoothed Differential Privacy." TMLR (2023).
"""
