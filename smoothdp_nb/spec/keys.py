"""The one table of spec keys: what each key means, where it belongs, what it accepts.

Every other description of the spec is generated from :data:`TABLE`: the
validators (:mod:`.convert` dispatches on a key's ``kind`` and reads its range,
choices, aliases and conditions from here), :data:`KEYS` and
:data:`MECHANISM_KEYS`, the private keys that reports redact, the magic's
docstring (``%%smoothdp?``), the docs page of spec keys and the command
line's help (:func:`keys_help`; renderers in :mod:`.reference`).

This module imports neither numpy nor pandas, so that ``--help`` stays fast.
Vocabularies owned elsewhere are looked up when they are needed, never
copied here: the noise families come from
:func:`smoothdp_nb.core.release.noise.family_names` and
:func:`smoothdp_nb.core.release.noise.canonical_family` at validation time, so a
family registered after import is accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "Key",
    "Computation",
    "TABLE",
    "COMPUTATIONS",
    "COMPUTATION_INFO",
    "KEYS",
    "MECHANISM_KEYS",
    "BUDGET_KEYS",
    "PRIVATE_KEYS",
    "PROFILE_DATASETS",
    "PI_DATASETS",
    "METHODS",
    "MECHANISM_KINDS",
    "QUERIES",
    "EXECUTORS",
    "SCHEDULER_SCHEMES",
    "MAX_RANGE",
    "key_for",
    "keys_of",
    "choices_of",
    "either",
    "noise_families",
    "canonical_noise",
]

COMPUTATIONS = ("profile", "smoothed", "sweep", "release", "noise")
PROFILE_DATASETS = ("us-elections", "us-2020-districts")
PI_DATASETS = ("us-2020-districts", "us-elections-history")
METHODS = ("exact", "monte-carlo")
MECHANISM_KINDS = ("sampling", "noisy-sampling")
QUERIES = ("median", "trimmed_mean", "mean")
#: ``executor = ...`` values: where Monte Carlo chunks and sweep points run
EXECUTORS = ("dask", "processes", "threads")
#: schemes of a Dask scheduler reachable over TCP (checked before a client is made)
SCHEDULER_SCHEMES = ("tcp", "tls", "ws", "wss")
#: Largest number of grid points a range table may produce.
MAX_RANGE = 10_000


def noise_families() -> tuple[str, ...]:
    """The registered noise families, asked of the core at call time."""
    from smoothdp_nb.core.release.noise import (
        family_names,  # deferred: the registry loads numpy and scipy; the key table stays light
    )

    return tuple(family_names())


def canonical_noise(name: str) -> str:
    """The canonical family of a name or alias (the core's one alias table); ValueError if none."""
    from smoothdp_nb.core.release.noise import (
        canonical_family,  # deferred: the registry loads numpy and scipy; the key table stays light
    )

    return canonical_family(name)


Choices = tuple[str, ...] | Callable[[], tuple[str, ...]]
Aliases = Mapping[str, str] | Callable[[str], str]
Default = str | float | bool | tuple[str, ...] | None


@dataclass(frozen=True)
class Key:
    """One key of the spec, for the computations in ``computes``.

    Attributes
    ----------
    name : str
        The key as written in TOML (``"eta"`` for ``mechanism.eta``).
    computes : tuple of str
        The computations that accept it.
    kind : str
        The converter that checks and converts its value (:mod:`.convert`):
        ``number``, ``integer``, ``boolean``, ``choice``, ``values`` (number,
        list or range), ``sizes``, ``text``, or a key-specific one
        (``mechanism``, ``histogram``, ``pi``, ...).
    doc : str
        One line: what the value is (it completes "is required: ...").
    lo, hi : float or None
        Allowed range; ``lo_open``/``hi_open`` exclude the ends.
    choices : tuple of str or callable
        Allowed values of a ``choice`` (a callable is asked at call time).
    aliases : mapping or callable
        Other spellings: a table, or a function returning the canonical name.
    default : optional
        Value used when the key is left out (shown in the help).
    required : bool
        Whether the computation needs it.
    only_with : (key, values) or None
        The key is used only when ``key`` has one of ``values``.
    table : str
        ``"mechanism"`` for the keys of the mechanism table, else ``""``.
    private : bool
        It holds the released records: reports show a placeholder.
    """

    name: str
    computes: tuple[str, ...]
    kind: str
    doc: str
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: Choices = ()
    aliases: Aliases = field(default_factory=lambda: MappingProxyType({}))
    default: Default = None
    required: bool = False
    only_with: tuple[str, tuple[str, ...]] | None = None
    table: str = ""
    private: bool = False

    @property
    def dotted(self) -> str:
        """``mechanism.eta`` for a table key, else the name."""
        return f"{self.table}.{self.name}" if self.table else self.name


@dataclass(frozen=True)
class Computation:
    """One value of ``compute``: what it does and what it returns."""

    name: str
    doc: str
    result: str
    notes: str = ""


COMPUTATION_INFO: dict[str, Computation] = {
    c.name: c
    for c in (
        Computation(
            "profile",
            "privacy profile delta_eps(x) of a mechanism on one or several databases",
            "smoothdp_nb.core.smoothed.reports.ProfileResult",
            "give histogram (with optional labels) or dataset (with optional years)",
        ),
        Computation(
            "smoothed",
            "smoothed delta over a set Pi of distributions (Liu, Wang, Xia, Smoothed DP, Definition 3)",
            "smoothdp_nb.core.smoothed.delta.SmoothedResult",
            "results are the same on every executor",
        ),
        Computation(
            "sweep",
            "smoothed delta over several database sizes, with exponential fits",
            "smoothdp_nb.core.smoothed.delta.SmoothedCurve",
            "n is a list or a range, rounded to integers, duplicates dropped",
        ),
        Computation(
            "release",
            "smooth-sensitivity release of a column (Nissim, Raskhodnikova, Smith 2007)",
            "smoothdp_nb.core.release.reports.ReleaseReport",
            "give one data source: data (with column for a DataFrame), values, or csv with column",
        ),
        Computation(
            "noise",
            "noise std per unit of smooth sensitivity (Hladik and Tetek, Smooth Sensitivity Revisited, Figure 1)",
            "smoothdp_nb.core.release.reports.NoiseComparison",
        ),
    )
}

ALL = COMPUTATIONS
MECH = ("profile", "smoothed", "sweep")
SMOOTHED = ("smoothed", "sweep")
MC = ("method", ("monte-carlo",))

#: Every key of the spec, in the order the help lists them.
TABLE: tuple[Key, ...] = (
    Key(
        "compute",
        ALL,
        "choice",
        "the computation; inferred from the other keys when left out and unambiguous",
        choices=COMPUTATIONS,
        aliases=MappingProxyType(
            {"smoothed-delta": "smoothed", "noise-comparison": "noise", "privacy-profile": "profile"}
        ),
    ),
    Key("title", ALL, "text", "a title for reports"),
    Key(
        "mechanism",
        MECH,
        "mechanism",
        "a table with eta or T (see the mechanism keys), or the name of a Mechanism in the namespace",
        required=True,
    ),
    Key(
        "epsilon",
        MECH,
        "values",
        "the epsilon grid",
        lo=0.0,
        required=True,
    ),
    Key("histogram", ("profile",), "histogram", "counts like [60, 40], or a list of them [[60, 40], [55, 45]]"),
    Key("labels", ("profile",), "labels", "a list of labels, one per inline histogram"),
    Key(
        "dataset",
        ("profile",),
        "choice",
        "a dataset of histograms (us-elections: labels = years; us-2020-districts: labels = districts)",
        choices=PROFILE_DATASETS,
        aliases=MappingProxyType({"us-elections-history": "us-elections"}),
    ),
    Key("years", ("profile",), "years", "election years of dataset = 'us-elections' (a year or a list)", 1920, 2020),
    Key(
        "target_delta",
        ("profile",),
        "values",
        "target deltas: adds each database's smallest epsilon meeting them (epsilon may then be left out)",
        lo=0.0,
        hi=1.0,
        lo_open=True,
    ),
    Key("n", ("smoothed",), "integer", "the database size", lo=1, required=True),
    Key(
        "n",
        ("sweep",),
        "sizes",
        "the database sizes (rounded to integers, duplicates dropped)",
        lo=1,
        required=True,
    ),
    Key(
        "pi",
        SMOOTHED,
        "pi",
        "a list of probability vectors, a dataset (us-2020-districts, us-elections-history) or the name of a variable",
        required=True,
    ),
    Key(
        "method",
        SMOOTHED,
        "choice",
        "exact, or monte-carlo (a confidence interval from sampled databases)",
        choices=METHODS,
        aliases=MappingProxyType({"monte_carlo": "monte-carlo", "mc": "monte-carlo", "montecarlo": "monte-carlo"}),
        default="exact",
    ),
    Key("trials", SMOOTHED, "integer", "number of Monte Carlo trials", lo=1, only_with=MC),
    Key(
        "confidence",
        SMOOTHED,
        "number",
        "confidence of the interval",
        0.0,
        1.0,
        lo_open=True,
        hi_open=True,
        only_with=MC,
    ),
    Key("candidates", SMOOTHED, "integer", "candidate compositions searched", lo=1, only_with=MC),
    Key("rng", SMOOTHED, "integer", "random seed", lo=0, only_with=MC),
    Key(
        "budget",
        SMOOTHED,
        "number",
        "seconds an exact computation may take (finite); estimated before it starts",
        lo=0.0,
        lo_open=True,
        only_with=("method", ("exact",)),
    ),
    Key("executor", SMOOTHED, "choice", "where the work runs (same results on each)", choices=EXECUTORS),
    Key(
        "scheduler",
        SMOOTHED,
        "scheduler",
        "address [scheme://]host:port of a running Dask scheduler, e.g. 'tcp://127.0.0.1:8786'",
        only_with=("executor", ("dask",)),
    ),
    Key(
        "workers",
        SMOOTHED,
        "workers",
        "processes or threads (default 2; at most the CPUs this process may use unless scheduler is given)",
        only_with=("executor", EXECUTORS),
    ),
    Key("data", ("release",), "name", "the name of a DataFrame, Series or array in the namespace"),
    Key("column", ("release",), "column", "the column to release (with data or csv)"),
    Key(
        "values",
        ("release",),
        "records",
        "the records, an inline list of numbers (never echoed: reports show their count)",
        private=True,
    ),
    Key("csv", ("release",), "path", "a CSV file (relative to the spec's directory), with column"),
    Key(
        "query",
        ("release",),
        "choice",
        "the statistic",
        choices=QUERIES,
        aliases=MappingProxyType({"trimmed-mean": "trimmed_mean", "trimmed": "trimmed_mean"}),
        default="median",
    ),
    Key("epsilon", ("release",), "number", "the privacy parameter epsilon", lo=0.0, lo_open=True, required=True),
    Key("gamma", ("release",), "number", "the smoothing parameter (default: data-independent)", lo=0.0, lo_open=True),
    Key(
        "noise",
        ("release",),
        "choice",
        "the noise family",
        choices=noise_families,
        aliases=canonical_noise,
        default="polyplace",
    ),
    Key("bounds", ("release",), "bounds", "[low, high], data-independent limits of the data", required=True),
    Key(
        "delta",
        ("release",),
        "number",
        "delta (required by families with an (epsilon, delta) guarantee, e.g. noise = 'laplace')",
        0.0,
        1.0,
        True,
        True,
    ),
    Key("shape", ("release",), "number", "shape parameter of the noise", lo=0.0, lo_open=True),
    Key(
        "trim",
        ("release",),
        "trim",
        "records trimmed at each end: a count (checked against the data) or a fraction",
        0.0,
        0.5,
        hi_open=True,
        only_with=("query", ("trimmed_mean",)),
    ),
    Key("rng", ("release",), "integer", "random seed: for experiments only, leave out for real releases", lo=0),
    Key("lattice", ("release",), "lattice", "output step, a power of two in the bounds' range"),
    Key(
        "diagnostics",
        ("release",),
        "boolean",
        "true: add the data-dependent diagnostics (not private)",
        default=False,
    ),
    Key(
        "budget",
        ("release",),
        "budget",
        "a curator's budget the release is charged to (see the budget keys): refused before the data is read "
        "if it would exceed it",
    ),
    Key("epsilon", ("noise",), "number", "the privacy parameter epsilon", lo=0.0, lo_open=True, required=True),
    Key("gamma", ("noise",), "values", "the smoothing parameters", lo=0.0, lo_open=True, required=True),
    Key(
        "delta",
        ("noise",),
        "number",
        "delta (required when a family with an (epsilon, delta) guarantee, e.g. laplace, is among the families)",
        0.0,
        1.0,
        True,
        True,
    ),
    Key(
        "families",
        ("noise",),
        "families",
        "the noise families to compare",
        choices=noise_families,
        aliases=canonical_noise,
        default=("polyplace", "student_t", "cauchy", "laplace"),
    ),
    Key("reference", ("noise",), "boolean", "true: add the global-sensitivity Laplace line", default=False),
    # the mechanism table
    Key(
        "kind",
        MECH,
        "choice",
        "the mechanism (noisy-sampling is implied by noise_epsilon)",
        choices=MECHANISM_KINDS,
        aliases=MappingProxyType(
            {"noisy": "noisy-sampling", "sampling-histogram": "sampling", "noisy-sampling-histogram": "noisy-sampling"}
        ),
        default="sampling",
        table="mechanism",
    ),
    Key(
        "eta",
        MECH,
        "rate",
        'sampling rate (give eta or T); text such as "0.998" keeps it exact',
        0.0,
        1.0,
        lo_open=True,
        table="mechanism",
    ),
    Key("T", MECH, "integer", "sample size (give eta or T)", lo=1, table="mechanism"),
    Key(
        "replace",
        MECH,
        "boolean",
        "sample with replacement",
        default=False,
        only_with=("kind", ("sampling",)),
        table="mechanism",
    ),
    Key(
        "noise_epsilon",
        MECH,
        "number",
        "epsilon of the noise added to the sampled histogram",
        lo=0.0,
        lo_open=True,
        only_with=("kind", ("noisy-sampling",)),
        table="mechanism",
    ),
    Key("repeat", MECH, "integer", "k independent runs on the same database", 1, 10**6, table="mechanism"),
    # the budget table
    Key(
        "odometer",
        ("release",),
        "name",
        "the name of a PrivacyOdometer in the namespace, shared with earlier releases (give odometer or epsilon)",
        table="budget",
    ),
    Key(
        "epsilon",
        ("release",),
        "number",
        "epsilon of a new budget for this release (give odometer or epsilon)",
        lo=0.0,
        lo_open=True,
        table="budget",
    ),
    Key("delta", ("release",), "number", "delta of a new budget", 0.0, 1.0, hi_open=True, default=0.0, table="budget"),
    Key(
        "concentrated_delta",
        ("release",),
        "number",
        "the part of delta a new budget reserves for zCDP releases (default: delta / 2)",
        0.0,
        1.0,
        hi_open=True,
        table="budget",
    ),
)


def keys_of(compute: str, table: str = "") -> tuple[Key, ...]:
    """The keys of ``compute`` (of its ``table``), in table order."""
    return tuple(k for k in TABLE if compute in k.computes and k.table == table)


def key_for(compute: str, name: str, table: str = "") -> Key:
    """The row of ``name`` for ``compute``; KeyError if it has none."""
    for k in TABLE:
        if k.name == name and compute in k.computes and k.table == table:
            return k
    raise KeyError(f"{table + '.' if table else ''}{name} is not a key of compute = {compute!r}")


def either(values: tuple[str, ...]) -> str:
    """``'a'``, ``'a' or 'b'``, ``'a', 'b' or 'c'``: allowed values in a sentence."""
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]


def choices_of(key: Key) -> tuple[str, ...]:
    """The allowed values of a ``choice`` key, asked of their registry now."""
    return key.choices() if callable(key.choices) else key.choices


KEYS: dict[str, tuple[str, ...]] = {c: tuple(k.name for k in keys_of(c)) for c in COMPUTATIONS}
MECHANISM_KEYS: tuple[str, ...] = tuple(k.name for k in keys_of("profile", "mechanism"))
BUDGET_KEYS: tuple[str, ...] = tuple(k.name for k in keys_of("release", "budget"))
#: The keys of each computation that hold the private data.  Reports show a placeholder instead.
PRIVATE_KEYS: dict[str, tuple[str, ...]] = {
    c: names for c in COMPUTATIONS if (names := tuple(k.name for k in keys_of(c) if k.private))
}
