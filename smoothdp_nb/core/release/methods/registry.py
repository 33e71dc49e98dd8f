"""The registry of data-dependent release methods: names, aliases and the method objects.

``"smooth-sensitivity"`` is :func:`~smoothdp_nb.core.release.smooth_sensitivity.release`'s own
path (noise families of :mod:`..noise`); the four others are the method objects of this folder.
A spelling is matched ignoring case, ``_``/``-`` and spaces; ``"ism"``, ``"ptr"`` and
``"distance-to-stability"`` are accepted aliases.
"""

from __future__ import annotations

from smoothdp_nb.core.release.methods.base import ReleaseMethod
from smoothdp_nb.core.release.methods.exponential import ExponentialMechanism
from smoothdp_nb.core.release.methods.inverse_sensitivity import InverseSensitivityMechanism
from smoothdp_nb.core.release.methods.propose_test_release import ProposeTestRelease
from smoothdp_nb.core.release.methods.stability import StabilityRelease

__all__ = ["DEFAULT_METHOD", "METHODS", "canonical_method", "get_method", "method_label"]

#: the default: noise scaled to the smooth sensitivity
DEFAULT_METHOD = "smooth-sensitivity"

_OBJECTS: dict[str, ReleaseMethod] = {
    m.name: m for m in (ExponentialMechanism(), InverseSensitivityMechanism(), ProposeTestRelease(), StabilityRelease())
}

#: every method ``release(..., method=...)`` accepts, in display order
METHODS: tuple[str, ...] = (DEFAULT_METHOD, *_OBJECTS)

_ALIASES = {
    "smooth-sensitivity": DEFAULT_METHOD,
    "smooth": DEFAULT_METHOD,
    "exponential": "exponential",
    "exponential-mechanism": "exponential",
    "inverse-sensitivity": "inverse-sensitivity",
    "ism": "inverse-sensitivity",
    "propose-test-release": "propose-test-release",
    "ptr": "propose-test-release",
    "stability": "stability",
    "distance-to-stability": "stability",
}

_LABELS = {DEFAULT_METHOD: "smooth sensitivity", **{k: v.label for k, v in _OBJECTS.items()}}


def canonical_method(method: object) -> str:
    """The registered name of ``method`` (a TypeError / ValueError listing the allowed names otherwise)."""
    allowed = ", ".join(map(repr, METHODS))
    if not isinstance(method, str):
        raise TypeError(f"method must be one of {allowed}, got {type(method).__name__}")
    key = method.strip().lower().replace("_", "-").replace(" ", "-")
    if key not in _ALIASES:
        raise ValueError(f"method must be one of {allowed}, got {method!r}")
    return _ALIASES[key]


def get_method(method: object) -> ReleaseMethod:
    """The method object of a data-dependent method other than smooth sensitivity."""
    name = canonical_method(method)
    if name == DEFAULT_METHOD:
        raise ValueError("smooth-sensitivity releases are made by release() itself, not by a method object")
    return _OBJECTS[name]


def method_label(method: object) -> str:
    """A short human-readable name of the method (for tables and charts)."""
    return _LABELS[canonical_method(method)]
