"""The half that releases: a statistic with data-dependent noise, private in floating point.

:mod:`.sensitivity` computes local and smooth sensitivity; :mod:`.noise` is the registry of noise
families (one module per distribution, each with its calibration and exact tail);
:mod:`.lattice` samples a release exactly on a data-independent power-of-two lattice with proven
enclosures; :mod:`.smooth_sensitivity` is :func:`~.smooth_sensitivity.release` itself;
:mod:`.timing` pads every phase of a release to a deadline computed from public inputs only;
:mod:`.reports` holds the result objects a spec or a panel shows; :mod:`.odometer` is a curator's
privacy budget, which composes a series of releases and refuses one that would exceed it.
:mod:`.reports` holds the result objects a spec or a panel shows; :mod:`.methods` the other
data-dependent methods (exponential, inverse sensitivity, propose-test-release, stability), each
exact on the lattice; :mod:`.compare` their exact laws side by side; :mod:`.leak` the exact privacy
loss of noise scaled to the local sensitivity; :mod:`.exercises` the exercises on them, checked
against the exact values.

May import: :mod:`smoothdp_nb.core.numerics` and :mod:`smoothdp_nb.core.runtime`. Never the
smoothed half.
"""
