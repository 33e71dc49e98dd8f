"""One computation described in TOML: the key table, validation and execution.

The ``%%smoothdp`` magic and ``python -m smoothdp_nb run`` both go through
:func:`run_spec`, so a spec that works in a notebook works in a script and
its errors read the same in both places.  The keys are described once, in
:mod:`.keys`; :func:`keys_help` prints them.

Modules: :mod:`.keys` (the key table; imports neither numpy nor pandas),
:mod:`.reference` (its renderings: :func:`keys_help`, :func:`keys_markdown`,
:func:`keys_rst`), :mod:`.convert` (value checkers generated from the table),
:mod:`.validate` (the rules between keys), :mod:`.parsing` (TOML in and out,
redaction), :mod:`.data` (datasets, CSV files, namespace variables),
:mod:`.running` (executors and runners), :mod:`.errors` (:class:`SpecError`
and where an error is).  Everything but the table and its renderings is
imported on first use, so ``import smoothdp_nb.spec.keys`` stays light.

May import: the core; never the display layer, the panels, the reports or the command line
(a spec runs in a script without Altair).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from smoothdp_nb.spec.keys import (
    COMPUTATIONS,
    EXECUTORS,
    KEYS,
    MAX_RANGE,
    MECHANISM_KEYS,
    MECHANISM_KINDS,
    METHODS,
    PI_DATASETS,
    PRIVATE_KEYS,
    PROFILE_DATASETS,
    QUERIES,
    SCHEDULER_SCHEMES,
    TABLE,
    Key,
    noise_families,
)
from smoothdp_nb.spec.reference import keys_help, keys_markdown, keys_rst

if TYPE_CHECKING:
    from smoothdp_nb.spec.errors import SpecError
    from smoothdp_nb.spec.parsing import Spec, data_placeholder, parse_spec, parse_toml, redact, to_toml
    from smoothdp_nb.spec.running import run_spec

__all__ = [
    "SpecError",
    "Spec",
    "parse_spec",
    "run_spec",
    "parse_toml",
    "to_toml",
    "redact",
    "data_placeholder",
    "keys_help",
    "keys_markdown",
    "keys_rst",
    "Key",
    "TABLE",
    "KEYS",
    "MECHANISM_KEYS",
    "PRIVATE_KEYS",
    "COMPUTATIONS",
    "PI_DATASETS",
    "PROFILE_DATASETS",
    "METHODS",
    "MECHANISM_KINDS",
    "QUERIES",
    "EXECUTORS",
    "SCHEDULER_SCHEMES",
    "MAX_RANGE",
]

_LAZY = {
    "SpecError": "errors",
    "Spec": "parsing",
    "parse_spec": "parsing",
    "parse_toml": "parsing",
    "to_toml": "parsing",
    "redact": "parsing",
    "data_placeholder": "parsing",
    "run_spec": "running",
}


def __getattr__(name: str) -> object:
    if name == "NOISE_FAMILIES":  # the registry's families now, never a copy frozen at import
        return noise_families()
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | {"NOISE_FAMILIES"})
