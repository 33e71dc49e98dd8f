"""Validation of a parsed spec: the table's rows, then the rules between keys.

Every key is converted by :func:`~smoothdp_nb.spec.convert.convert` from its
row of :data:`~smoothdp_nb.spec.keys.TABLE` (kind, range, choices, aliases,
``required``, ``only_with``); what is written here is only what one row
cannot say: which keys exclude each other, the values that need other keys
(a histogram's size against the mechanism's ``T``, a noise calibration), and
the few kinds that need that context.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from smoothdp_nb.core.numerics.hull import reduce_to_vertices
from smoothdp_nb.core.numerics.validation import as_bounds, as_decimal_text, as_histograms, is_real, kind_of
from smoothdp_nb.core.release.lattice import check_lattice
from smoothdp_nb.core.release.noise import calibrate, get_family
from smoothdp_nb.core.release.smooth_sensitivity import default_gamma
from smoothdp_nb.core.runtime.budget import cap_workers
from smoothdp_nb.core.smoothed.mechanisms import Mechanism, NoisySamplingHistogram, SamplingHistogram
from smoothdp_nb.core.smoothed.mechanisms.composed import repeat
from smoothdp_nb.spec.convert import GENERIC_KINDS, check_keys, convert, integer, number, text
from smoothdp_nb.spec.errors import SpecError, core_check, without_name
from smoothdp_nb.spec.keys import (
    BUDGET_KEYS,
    COMPUTATIONS,
    KEYS,
    MECHANISM_KEYS,
    PI_DATASETS,
    PROFILE_DATASETS,
    SCHEDULER_SCHEMES,
    either,
    key_for,
    keys_of,
)

__all__ = ["validate", "infer_compute", "mechanism_from_table", "check_mechanism", "scheduler_address", "SCHEDULER"]


def _row(doc: Mapping[str, Any], compute: str, name: str, table: str = "") -> Any:
    """The converted value of ``name`` (required keys must be there; others must be checked for first)."""
    key = key_for(compute, name, table)
    if name not in doc:
        if key.required:
            raise SpecError(f"is required for compute = {compute!r}: {key.doc}", key.dotted, near="compute")
        return key.default
    return convert(key, doc[name]) if key.kind in GENERIC_KINDS else doc[name]


def _conditions(doc: Mapping[str, Any], seen: Mapping[str, Any], compute: str, table: str = "") -> None:
    """Every ``only_with`` of the table: a key used without the value it needs is an error."""
    for key in keys_of(compute, table):
        if key.only_with is None or key.name not in doc:
            continue
        other, allowed = key.only_with
        value = seen.get(other)
        if value is None:
            raise SpecError(f"needs {other} = {either(allowed)}", key.dotted)
        if value not in allowed:
            raise SpecError(f"is only used with {other} = {either(allowed)}", key.dotted)


def infer_compute(doc: Mapping[str, Any]) -> str:
    """The computation the keys of ``doc`` imply, when ``compute`` is left out."""
    if "histogram" in doc or "dataset" in doc:
        return "profile"
    if "pi" in doc:
        n = doc.get("n")
        return "sweep" if isinstance(n, (list, tuple, Mapping)) else "smoothed"
    if any(k in doc for k in ("column", "values", "csv", "data", "bounds", "query")):
        return "release"
    if "families" in doc or ("gamma" in doc and "epsilon" in doc):
        return "noise"
    raise SpecError(f"is required: one of {', '.join(repr(c) for c in COMPUTATIONS)}", "compute")


def mechanism_from_table(v: Mapping[str, Any]) -> Mechanism:
    """The mechanism a ``[mechanism]`` table describes."""
    check_keys("mechanism", v, MECHANISM_KEYS)
    kind_key = key_for("profile", "kind", "mechanism")
    kind = convert(kind_key, v.get("kind", "noisy-sampling" if "noise_epsilon" in v else kind_key.default))
    _conditions(v, {"kind": kind}, "profile", "mechanism")
    if ("eta" in v) == ("T" in v):
        raise SpecError("give exactly one of eta (a sampling rate in (0, 1]) or T (a sample size >= 1)", "mechanism")
    eta = _rate(v["eta"]) if "eta" in v else None
    size = _row(v, "profile", "T", "mechanism") if "T" in v else None
    if kind == "noisy-sampling":
        if "noise_epsilon" not in v:
            raise SpecError(
                "is required for kind = 'noisy-sampling' (a number > 0)", "mechanism.noise_epsilon", near="mechanism"
            )
        ne = _row(v, "profile", "noise_epsilon", "mechanism")
        mech: Mechanism = core_check("mechanism", NoisySamplingHistogram, eta, T=size, noise_epsilon=ne)
    else:
        replace = _row(v, "profile", "replace", "mechanism")
        mech = core_check("mechanism", SamplingHistogram, eta, T=size, replace=replace)
    if "repeat" not in v:
        return mech

    return repeat(mech, _row(v, "profile", "repeat", "mechanism"))


def _rate(eta: Any) -> Any:
    """``mechanism.eta``: a number in (0, 1], or its exact decimal text (plain ASCII digits)."""
    row = key_for("profile", "eta", "mechanism")
    if isinstance(eta, str):
        rate = core_check("mechanism.eta", as_decimal_text, eta, "mechanism.eta")
        if not 0 < rate <= 1:
            raise SpecError(f"must be a sampling rate with 0 < eta <= 1, got {eta!r}", "mechanism.eta")
    else:
        number("mechanism.eta", eta, lo=row.lo, hi=row.hi, lo_open=row.lo_open, hi_open=row.hi_open)
    return eta


def check_mechanism(mech: Mechanism, p: Mapping[str, Any]) -> None:
    """The sizes the spec asks for are ones the mechanism runs on (e.g. ``T <= n``)."""
    if "hists" in p:
        for size in np.unique(p["hists"].sum(axis=1)):
            core_check("histogram", mech.sample_size, int(size))
    for size in p.get("ns", [p["n"]] if "n" in p else []):
        core_check("n", mech.sample_size, size)


def validate(doc: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Check ``doc`` and convert its values; the computation and its parameters."""
    compute = convert(key_for("profile", "compute"), doc["compute"]) if "compute" in doc else infer_compute(doc)
    check_keys(None, doc, KEYS[compute], context=f"for compute = {compute!r}")
    if "title" in doc:
        convert(key_for(compute, "title"), doc["title"])
    p: dict[str, Any] = {}
    if compute in ("profile", "smoothed", "sweep"):
        mech = _row(doc, compute, "mechanism")
        if isinstance(mech, str):
            p["mechanism"] = text("mechanism", mech, "the name of a Mechanism in the namespace")
        elif isinstance(mech, Mapping):
            p["mechanism"] = mechanism_from_table(mech)
        else:
            raise SpecError(
                "must be a table, e.g. [mechanism] eta = 0.998, or mechanism = {eta = 0.998} "
                f"(keys: {', '.join(MECHANISM_KEYS)}), or the name of a Mechanism in the namespace, got {mech!r}",
                "mechanism",
            )
        if compute == "profile" and "target_delta" in doc and "epsilon" not in doc:
            p["epsilon"] = np.empty(0)
        else:
            p["epsilon"] = _row(doc, compute, "epsilon")
    if compute == "profile":
        _validate_profile(doc, p)
    elif compute in ("smoothed", "sweep"):
        _validate_smoothed(doc, p, compute)
    elif compute == "release":
        _validate_release(doc, p)
    else:
        _validate_noise(doc, p)
    if compute in ("profile", "smoothed", "sweep") and not isinstance(p["mechanism"], str):
        check_mechanism(p["mechanism"], p)  # a named mechanism is checked when it is resolved
    return compute, p


def _validate_profile(doc: Mapping[str, Any], p: dict[str, Any]) -> None:
    if "target_delta" in doc:
        p["target_delta"] = _row(doc, "profile", "target_delta")
    if ("histogram" in doc) == ("dataset" in doc):
        raise SpecError(
            "give exactly one of histogram (counts like [60, 40] or [[60, 40], [55, 45]]) "
            f"or dataset (one of {', '.join(repr(d) for d in PROFILE_DATASETS)})",
            "histogram" if "histogram" in doc else "dataset",
        )
    if "histogram" in doc:
        h = doc["histogram"]
        if not isinstance(h, list) or not h:
            got = "an empty list" if isinstance(h, list) else kind_of(h)  # the counts are data: not echoed
            raise SpecError(f"must be a list of counts or a list of lists of counts, got {got}", "histogram")
        hists, _ = core_check("histogram", as_histograms, h, "histogram")
        p["hists"] = hists
        p["source"] = "inline"
        if "labels" in doc:
            lab = doc["labels"]
            if not isinstance(lab, list) or len(lab) != len(hists):
                raise SpecError(f"must be a list of {len(hists)} label(s), one per histogram, got {lab!r}", "labels")
            p["labels"] = list(lab)
        if "years" in doc:
            raise SpecError("is only for dataset = 'us-elections'", "years")
        return
    ds = _row(doc, "profile", "dataset")
    if "labels" in doc:
        raise SpecError("is only for inline histograms (a dataset brings its own labels)", "labels")
    p["dataset"] = ds
    p["source"] = ds
    if "years" in doc:
        if ds != "us-elections":
            raise SpecError("is only for dataset = 'us-elections'", "years")
        p["years"] = _row(doc, "profile", "years")


def _validate_smoothed(doc: Mapping[str, Any], p: dict[str, Any], compute: str) -> None:
    if compute == "smoothed" and isinstance(doc.get("n"), (list, Mapping)):
        raise SpecError("must be one integer >= 1 for compute = 'smoothed'; use compute = 'sweep' for several n", "n")
    p["n" if compute == "smoothed" else "ns"] = _row(doc, compute, "n")
    pi = _row(doc, compute, "pi")
    if isinstance(pi, str):
        p["pi"] = pi.strip()  # a dataset or a namespace name: resolved in run_spec
    elif isinstance(pi, list) and pi:
        rows = pi if isinstance(pi[0], list) else [pi]
        arr = []
        for i, row in enumerate(rows):
            if not isinstance(row, list) or len(row) < 2:
                raise SpecError(f"every distribution needs >= 2 probabilities, got {row!r}", f"pi[{i}]")
            vals = [number(f"pi[{i}]", x, lo=0.0, hi=1.0) for x in row]
            if abs(sum(vals) - 1.0) > 1e-9:
                raise SpecError(f"probabilities must sum to 1, got sum {sum(vals):.12g}", f"pi[{i}]")
            arr.append(vals)
        if len({len(r) for r in arr}) != 1:
            raise SpecError("all distributions must have the same number of categories", "pi")
        p["pi"] = np.array(arr, dtype=float)
        core_check("pi", reduce_to_vertices, p["pi"])  # the core's own checks of Pi
    else:
        raise SpecError(
            f"must be a list of probability vectors, a dataset ({', '.join(repr(d) for d in PI_DATASETS)}) "
            f"or the name of a variable, got {pi!r}",
            "pi",
        )
    p["method"] = _row(doc, compute, "method")
    if "executor" in doc:
        p["executor"] = _row(doc, compute, "executor")
    _conditions(doc, p, compute)
    p["options"] = {
        k: _row(doc, compute, k) for k in ("trials", "confidence", "candidates", "rng", "budget") if k in doc
    }
    if "scheduler" in doc:
        p["scheduler"] = scheduler_address(doc["scheduler"])
    if "workers" in doc:
        # a local pool gets at most the CPUs this process may use; an external scheduler places work itself
        p["workers"] = core_check("workers", cap_workers, doc["workers"], "workers", external="scheduler" in doc)


SCHEDULER = re.compile(
    r"(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
    r":(?P<port>[0-9]{1,5})/?"
)


def scheduler_address(v: object) -> str:
    """``[scheme://]host:port`` with a TCP scheme and a port in 1..65535, else a SpecError at ``scheduler``."""
    example = "e.g. 'tcp://127.0.0.1:8786'"
    if not isinstance(v, str) or not v.strip():
        raise SpecError(f"must be a scheduler address, {example}, got {v!r}", "scheduler")
    m = SCHEDULER.fullmatch(v.strip())
    if m is None:
        raise SpecError(f"must be an address [scheme://]host:port, {example}, got {v.strip()!r}", "scheduler")
    scheme = (m["scheme"] or "tcp").lower()
    if scheme not in SCHEDULER_SCHEMES:
        raise SpecError(
            f"scheme must be one of {', '.join(SCHEDULER_SCHEMES)}, got {scheme!r} ({example})", "scheduler"
        )
    if not 1 <= int(m["port"]) <= 65535:
        raise SpecError(f"port must be in 1..65535, got {m['port']} ({example})", "scheduler")
    return f"{scheme}://{m['host']}:{int(m['port'])}"


def _validate_release(doc: Mapping[str, Any], p: dict[str, Any]) -> None:
    sources = [k for k in ("data", "values", "csv") if k in doc]
    if len(sources) != 1:
        raise SpecError(
            "give exactly one data source: data (a variable name) with column, values (a list of numbers) "
            "or csv (a file path) with column",
            sources[1] if len(sources) > 1 else "data",
        )
    src = sources[0]
    if src == "values":
        vals = doc["values"]
        # the records are never echoed, not even a refused one: messages give position and type
        if not isinstance(vals, list) or not vals:
            got = "an empty list" if isinstance(vals, list) else kind_of(vals)
            raise SpecError(f"must be a non-empty list of numbers, got {got}", "values")
        for i, v in enumerate(vals):
            if not is_real(v) or not np.isfinite(float(v)):
                raise SpecError(f"must be a finite number, got {kind_of(v)}", f"values[{i}]")
        p["values"] = np.array(vals, dtype=float)
        if "column" in doc:
            raise SpecError("is only used with data or csv", "column")
    else:
        p[src] = text(src, doc[src], f"a {'variable name' if src == 'data' else 'file path'} (a string)")
        if "column" in doc:
            if not isinstance(doc["column"], (str, int)) or isinstance(doc["column"], bool):
                raise SpecError(f"must be a column name, got {doc['column']!r}", "column")
            p["column"] = doc["column"]
        elif src == "csv":
            raise SpecError("is required with csv: the column to release", "column", near="csv")
    p["query"] = _row(doc, "release", "query")
    p["epsilon"] = _row(doc, "release", "epsilon")
    p["noise"] = _row(doc, "release", "noise")
    b = _row(doc, "release", "bounds")
    if not isinstance(b, list) or len(b) != 2:
        raise SpecError(f"must be [low, high] with finite low < high, got {b!r}", "bounds")
    p["bounds"] = core_check("bounds", as_bounds, b, "bounds")
    for name in ("gamma", "delta", "shape"):
        if name in doc:
            p[name] = _row(doc, "release", name)
    if "delta" not in doc and _needs_delta(p["noise"]):
        raise SpecError(f"is required for noise = {p['noise']!r} (0 < delta < 1)", "delta", near="noise")
    _check_calibration(doc, p)
    _conditions(doc, p, "release")
    if "trim" in doc:
        t, row = doc["trim"], key_for("release", "trim")
        if isinstance(t, int) and not isinstance(t, bool):  # a count (at most (n - 1) / 2, checked with the data)
            p["trim"] = integer("trim", t, lo=int(row.lo or 0))
        else:  # a fraction
            p["trim"] = number("trim", t, lo=row.lo, hi=row.hi, lo_open=row.lo_open, hi_open=row.hi_open)
    if "rng" in doc:
        p["rng"] = _row(doc, "release", "rng")
    if "lattice" in doc:  # a power of two in the bounds' range: checked by the core's check_lattice
        try:
            p["lattice"] = check_lattice(doc["lattice"], p["bounds"])
        except (TypeError, ValueError) as err:
            raise SpecError(str(err).removeprefix("lattice "), "lattice") from None
    if "diagnostics" in doc:
        p["diagnostics"] = _row(doc, "release", "diagnostics")
    if "budget" in doc:
        p["budget"] = budget_from_table(doc["budget"])


def budget_from_table(v: object) -> dict[str, Any]:
    """The ``[budget]`` table: ``odometer`` (a name in the namespace) or ``epsilon`` (and delta) of a new budget."""
    if not isinstance(v, Mapping):
        raise SpecError(
            "must be a table, e.g. [budget] odometer = 'odo' (a PrivacyOdometer in the namespace), or "
            f"[budget] epsilon = 1.0 (keys: {', '.join(BUDGET_KEYS)}), got {v!r}",
            "budget",
        )
    check_keys("budget", v, BUDGET_KEYS)
    if ("odometer" in v) == ("epsilon" in v):
        raise SpecError(
            "give exactly one of odometer (the name of a PrivacyOdometer in the namespace) or epsilon (a new "
            "budget for this release)",
            "budget",
        )
    if "odometer" in v:
        if "delta" in v or "concentrated_delta" in v:
            raise SpecError("is only used with epsilon (a new budget): the odometer has its own", "budget.delta")
        return {"odometer": text("budget.odometer", v["odometer"], "the name of a PrivacyOdometer (a string)")}
    out = {name: _row(v, "release", name, "budget") for name in ("epsilon", "delta")}
    if "concentrated_delta" in v:
        out["concentrated_delta"] = _row(v, "release", "concentrated_delta", "budget")
        if out["concentrated_delta"] > out["delta"]:
            raise SpecError(
                f"must be at most budget.delta = {out['delta']:g}, got {out['concentrated_delta']:g}",
                "budget.concentrated_delta",
            )
    return out


def _needs_delta(family: str) -> bool:
    """Whether the registered noise family guarantees (epsilon, delta) and so needs ``delta``."""
    return get_family(family).needs_delta


def _check_calibration(doc: Mapping[str, Any], p: dict[str, Any]) -> None:
    """The core's calibration checks gamma's range for the family, the shape and delta."""
    delta = p.get("delta") if _needs_delta(p["noise"]) else None
    gamma = p["gamma"] if "gamma" in p else core_check("epsilon", default_gamma, p["noise"], p["epsilon"], delta=delta)
    try:
        calibrate(p["noise"], p["epsilon"], gamma, delta=delta, shape=p.get("shape"))
    except (TypeError, ValueError) as exc:
        name = str(exc).split(" ", 1)[0]
        key = (
            name if name in ("gamma", "shape", "delta") and name in doc else ("gamma" if "gamma" in doc else "epsilon")
        )
        raise SpecError(without_name(str(exc), name), key) from None


def _validate_noise(doc: Mapping[str, Any], p: dict[str, Any]) -> None:
    p["epsilon"] = _row(doc, "noise", "epsilon")
    p["gamma"] = _row(doc, "noise", "gamma")
    p["families"] = _row(doc, "noise", "families")
    if "families" not in doc:
        p["families"] = list(p["families"])
    if "delta" in doc:
        p["delta"] = _row(doc, "noise", "delta")
    elif needing := [f for f in p["families"] if _needs_delta(f)]:
        raise SpecError(
            f"is required when {needing[0]!r} is among the families (0 < delta < 1, e.g. 1e-5)",
            "delta",
            near="families",
        )
    p["reference"] = _row(doc, "noise", "reference")
