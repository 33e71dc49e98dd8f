"""The registry of noise families: the one table of names, aliases and labels.

Every place that names a family -- :func:`~smoothdp_nb.core.release.noise.calibrate`,
:func:`~smoothdp_nb.release`, the lattice sampler, the spec, the panels, the
charts -- asks this registry at call time, so a family registered here (also
one defined outside the package) is usable everywhere.  A family declares its
own aliases; a spelling is matched ignoring case, ``-`` and spaces.
"""

from __future__ import annotations

import itertools
import threading

from smoothdp_nb.core.release.noise.base import NoiseFamily

__all__ = [
    "RESERVED_NAMES",
    "canonical_family",
    "families",
    "family_aliases",
    "family_names",
    "get_family",
    "register_family",
    "unregister_family",
]

#: names that mean something else where families are listed (the global-sensitivity reference of the std table)
RESERVED_NAMES = frozenset({"laplace_global"})

_LOCK = threading.Lock()
_FAMILIES: dict[str, NoiseFamily] = {}  # canonical name -> family, in registration (display) order
_KEYS: dict[str, str] = {}  # normalised name or alias -> canonical name


def _normalise(text: str) -> str:
    return text.lower().replace("-", "_").replace(" ", "_")


def register_family(family: NoiseFamily) -> NoiseFamily:
    """Add ``family`` to the registry (after the families already there, in display order).

    Parameters
    ----------
    family : NoiseFamily
        An instance of a concrete subclass of
        :class:`~smoothdp_nb.core.release.noise.base.NoiseFamily` with the default
        (identity) hash: calibrations are cached per family object.

    Returns
    -------
    NoiseFamily
        ``family`` itself.

    Raises
    ------
    TypeError
        If ``family`` is not a NoiseFamily, or its name, label or aliases are not strings.
    ValueError
        If its name is not canonical (lower case, words joined by ``_``), or its
        name, an alias or its label is already taken (by another family or a
        reserved name such as ``laplace_global``).
    """
    if not isinstance(family, NoiseFamily):
        raise TypeError(f"family must be a NoiseFamily instance, got {type(family).__name__}")
    name, label = getattr(family, "name", None), getattr(family, "label", None)
    aliases = family.aliases
    if not isinstance(name, str) or not isinstance(label, str) or not label:
        raise TypeError(f"a noise family needs a str name and a non-empty str label, got {name!r}, {label!r}")
    if not name or _normalise(name) != name:
        raise ValueError(f"family name must be lower case with words joined by '_', got {name!r}")
    if not isinstance(aliases, tuple) or not all(isinstance(a, str) and a for a in aliases):
        raise TypeError(f"aliases of family {name!r} must be a tuple of non-empty str, got {aliases!r}")
    keys = [name] + [_normalise(a) for a in aliases]
    with _LOCK:
        for key in keys:
            if key in RESERVED_NAMES:
                raise ValueError(f"noise family {name!r}: {key!r} is a reserved name")
            if key in _KEYS:
                raise ValueError(
                    f"noise family {name!r}: the name or alias {key!r} is already taken by family {_KEYS[key]!r}"
                )
        if len(set(keys)) != len(keys):
            raise ValueError(f"noise family {name!r}: its name and aliases repeat a spelling ({keys!r})")
        for other in _FAMILIES.values():
            if other.label == label:
                raise ValueError(f"noise family {name!r}: the label {label!r} is already used by {other.name!r}")
        _FAMILIES[name] = family
        for key in keys:
            _KEYS[key] = name
    return family


def unregister_family(name: str) -> NoiseFamily:
    """Remove a family (by name or alias) and its aliases; returns it.  Meant for tests and plug-ins."""
    key = canonical_family(name)
    with _LOCK:
        family = _FAMILIES.pop(key)
        for k in [k for k, v in _KEYS.items() if v == key]:
            del _KEYS[k]
    return family


def families() -> tuple[NoiseFamily, ...]:
    """The registered families, in display order."""
    return tuple(_FAMILIES.values())


def family_names() -> tuple[str, ...]:
    """Canonical names of the noise families, in display order."""
    return tuple(_FAMILIES)


def family_aliases() -> dict[str, str]:
    """Every lower-case spelling of every name and alias -> canonical name.

    Each separator between words may be ``_``, ``-`` or a space, in any mix:
    exactly the lower-case words :func:`canonical_family` accepts, as a table
    for vocabularies that look a lower-cased word up (the spec).
    """
    out: dict[str, str] = {}
    for key, name in _KEYS.items():
        words = key.split("_")
        for seps in itertools.product("_- ", repeat=len(words) - 1):
            out[words[0] + "".join(sep + word for sep, word in zip(seps, words[1:], strict=True))] = name
    return out


def canonical_family(family: object) -> str:
    """The canonical name of a noise family given its name or an alias.

    Case, hyphens and spaces are ignored ("Generalized-Cauchy" is "cauchy").

    Raises
    ------
    TypeError
        If ``family`` is not a string.
    ValueError
        If ``family`` names no family; the message lists the allowed names.
    """
    if not isinstance(family, str):
        raise TypeError(f"family must be a string, one of {family_names()}, got {type(family).__name__}")
    name = _KEYS.get(_normalise(family))
    if name is None:
        raise ValueError(f"family must be one of {family_names()}, got {family!r}")
    return name


def get_family(family: object) -> NoiseFamily:
    """The registered family named ``family`` (a name or an alias; see :func:`canonical_family`)."""
    return _FAMILIES[canonical_family(family)]
