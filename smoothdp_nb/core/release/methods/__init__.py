"""Data-dependent release methods other than smooth sensitivity, each exact on the output lattice.

:mod:`.base` holds the shared parts (the data rounded to the lattice, the exact samplers, the
:class:`~.base.MethodRelease` result and the :class:`~.base.ReleaseMethod` protocol);
:mod:`.exponential` is the exponential mechanism with the rank utility; :mod:`.inverse_sensitivity`
the inverse sensitivity mechanism and the bound for unbiased mechanisms;
:mod:`.propose_test_release` propose-test-release; :mod:`.stability` the distance-to-stability
release; :mod:`.registry` the table of method names; :mod:`.run` validates, pads and runs a method
and gives its exact law.

May import: :mod:`smoothdp_nb.core.numerics`, :mod:`smoothdp_nb.core.runtime` and the release
modules below :mod:`..smooth_sensitivity` (:mod:`..lattice`, :mod:`..timing`, :mod:`..noise`,
:mod:`..sensitivity`).  Never :mod:`..smooth_sensitivity` itself (it imports this folder).
"""
