"""TOML in and out: parse a spec, keep the lines of its keys, write it back without private values."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from smoothdp_nb.spec.errors import SpecError, key_lines, locate
from smoothdp_nb.spec.keys import COMPUTATIONS, PRIVATE_KEYS
from smoothdp_nb.spec.validate import validate

__all__ = ["Spec", "parse_toml", "parse_spec", "redact", "to_toml", "data_placeholder", "default_title"]


@dataclass(frozen=True)
class Spec:
    """A validated spec: the computation and its converted parameters.

    Attributes
    ----------
    compute : str
        One of :data:`~smoothdp_nb.spec.keys.COMPUTATIONS`.
    params : dict
        Validated, converted parameters (numpy arrays for grids, a mechanism
        object, ...); names that refer to the namespace (``mechanism``,
        ``pi``, ``data``) stay strings until :func:`~smoothdp_nb.spec.run_spec`
        resolves them.
    title : str
    raw : dict
        The parsed spec with every private field
        (:data:`~smoothdp_nb.spec.keys.PRIVATE_KEYS`: inline release data,
        ``values``) replaced by a placeholder that gives only its count
        (:func:`data_placeholder`).  Reports echo ``raw`` or ``text``.
    text : str
        ``raw`` written out as TOML (:func:`to_toml`): what reports show as the
        spec.  It is rendered from the parsed, redacted dict, never from the
        spec's own text, so no comment, string or layout of the source can
        carry a private value into a report.
    lines : dict
        1-based line in the source text of every top-level key and of every
        key of a table (``"mechanism.eta"``); empty for a dict.  Errors found
        while running name their line from it: the source text itself is not
        kept.
    """

    compute: str
    params: dict[str, Any]
    title: str
    raw: dict[str, Any] = field(repr=False)
    text: str = field(default="", repr=False)
    lines: dict[str, int] = field(default_factory=dict, repr=False)


def parse_toml(text: str) -> dict[str, Any]:
    """Parse TOML text; syntax errors become :class:`SpecError` with the line."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib quotes the offending character ("Found invalid character '7'"): it may be part of a record
        msg = re.sub(r"\s*(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")(?=\s*\(at )", "", str(exc))
        m = re.search(r"line (\d+)", msg)
        # "at end of document": the last non-blank line
        last = max((i for i, ln in enumerate(text.splitlines(), 1) if ln.strip()), default=1)
        raise SpecError(f"invalid TOML: {msg}", None, int(m.group(1)) if m else last) from None


def parse_spec(spec: str | Mapping[str, object]) -> Spec:
    """Validate a spec (TOML text or dict) without running it.

    The keys and what they accept: :func:`~smoothdp_nb.spec.keys_help`.

    Parameters
    ----------
    spec : str or mapping
        TOML text or the equivalent dict.

    Returns
    -------
    Spec

    Raises
    ------
    SpecError
        For invalid TOML, unknown keys and invalid values (with key and line).
    """
    if isinstance(spec, str):
        text: str | None = spec
        doc = parse_toml(spec)
    elif isinstance(spec, Mapping):
        text, doc = None, dict(spec)
    else:
        raise SpecError(f"a spec must be TOML text or a dict, got {type(spec).__name__}")
    if not doc:
        raise SpecError(
            f"the spec is empty: start with compute = one of {', '.join(repr(c) for c in COMPUTATIONS)}", "compute"
        )
    try:
        compute, params = validate(doc)
    except SpecError as err:
        if err.line is None:
            err.with_line(locate(text, err))
        raise
    title = doc.get("title") or default_title(compute, params)
    lines = key_lines(text, doc)
    raw = redact(doc, compute, params)
    return Spec(compute=compute, params=params, title=title, raw=raw, text=to_toml(raw), lines=lines)


def redact(doc: Mapping[str, object], compute: str, params: Mapping[str, object]) -> dict[str, object]:
    """``doc`` with every private key of ``compute`` (:data:`PRIVATE_KEYS`) replaced by its placeholder."""
    out = dict(doc)
    for key in PRIVATE_KEYS.get(compute, ()):
        if key in out:
            out[key] = data_placeholder(params[key] if key in params else out[key])
    return out


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(s: str) -> str:
    """A TOML basic string: quotes, backslashes and every control character escaped."""
    out = []
    for ch in s:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(k: object) -> str:
    k = str(k)
    return k if _BARE_KEY.fullmatch(k) else _toml_string(k)


def _toml_value(v: object) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        x = float(v)
        return "nan" if x != x else ("inf" if x == np.inf else ("-inf" if x == -np.inf else repr(x)))
    if isinstance(v, str):
        return _toml_string(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, np.ndarray):
        return _toml_value(v.tolist())
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    # an object handed over in a dict spec: its type only (its text could hold anything)
    return _toml_string(f"<{type(v).__name__}>")


def to_toml(doc: Mapping[str, object]) -> str:
    """``doc`` written out as TOML: plain keys first, then one ``[table]`` per table.

    Everything is rendered from the values, so the output holds exactly what ``doc`` holds (strings
    are escaped, tables and arrays of tables are written inline); ``tomllib.loads(to_toml(doc))``
    gives ``doc`` back for every parsed spec.
    """
    plain = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in doc.items() if not isinstance(v, Mapping)]
    tables = [
        f"\n[{_toml_key(k)}]\n" + "\n".join(f"{_toml_key(sk)} = {_toml_value(sv)}" for sk, sv in v.items())
        for k, v in doc.items()
        if isinstance(v, Mapping)
    ]
    return "\n".join(plain + tables).lstrip("\n") + "\n"


def data_placeholder(values: object) -> str:
    """``"<n private values, not shown>"``: what reports echo for inline release data.

    Only the count is kept.  n is public here: the releases' neighbouring databases differ in the
    value of one record (Hamming distance 1 at fixed n, as in Nissim, Raskhodnikova and Smith's
    smooth sensitivity), so every neighbour has the same n and the release itself reports it.
    Under add/remove neighbours n would be private and this placeholder would have to go.  No hash
    or other function of the values: a deterministic digest would let anyone who sees the report
    confirm a guessed dataset.

    References
    ----------
    Nissim, Raskhodnikova, Smith 2007, "Smooth sensitivity and sampling in private data analysis".
    """
    return f"<{np.asarray(values).size} private values, not shown>"


def default_title(compute: str, p: Mapping[str, Any]) -> str:
    """The title of a spec that gives none (a named mechanism is shown by its name)."""
    mech = p.get("mechanism")
    shown = mech if isinstance(mech, str) else repr(mech)
    if compute == "profile":
        return f"Privacy profile of {shown} ({p['source']})"
    if compute == "smoothed":
        return f"Smoothed delta of {shown}, n = {p['n']}"
    if compute == "sweep":
        return f"Smoothed delta of {shown} over n = {p['ns'][0]}..{p['ns'][-1]}"
    if compute == "release":
        return f"Smooth-sensitivity release ({p['query']}, epsilon = {p['epsilon']:g})"
    return f"Noise comparison at epsilon = {p['epsilon']:g}"
