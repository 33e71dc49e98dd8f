"""Spec errors and where they are: the key, its line in the TOML text, the message.

:class:`SpecError` names the key and its line; the helpers here find the
line of a key in the source text, turn a core validator's exception into a
SpecError at the key it concerns, and map the core's parameter names back
to spec keys for errors raised while running.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import ParamSpec, TypeVar

from smoothdp_nb.core.runtime.budget import ComputationTooLarge

__all__ = [
    "SpecError",
    "core_check",
    "without_name",
    "line_of",
    "locate",
    "key_lines",
    "spec_line",
    "key_of_core_error",
    "core_message",
    "PARAM_KEYS",
]

P = ParamSpec("P")
R = TypeVar("R")


class SpecError(ValueError):
    """A key or value of a spec is invalid.

    Attributes
    ----------
    key : str or None
        The dotted key (``"mechanism.eta"``), when the error is about one key.
    line : int or None
        1-based line of the key in the TOML text, when known.
    """

    def __init__(self, message: str, key: str | None = None, line: int | None = None, near: str | None = None):
        self.key = key
        self.line = line
        self.near = near  # a key whose line to show when ``key`` itself is missing from the spec
        self.message = message
        super().__init__(self._text())

    def _text(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        prefix = f"{self.key}{where}: " if self.key else (f"line {self.line}: " if self.line else "")
        return prefix + self.message

    def with_line(self, line: int | None) -> SpecError:
        """The same error, located at ``line``."""
        self.line = line
        self.args = (self._text(),)
        return self


def core_check(key: str | None, check: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Run a core validator (or constructor); its TypeError/ValueError becomes a SpecError at ``key``.

    The spec layer checks values with the core's own validators
    (:mod:`smoothdp_nb.core.numerics.validation`), so that nothing passes the spec only to
    fail in the core.
    """
    try:
        return check(*args, **kwargs)
    except SpecError:
        raise
    except (TypeError, ValueError) as exc:
        raise SpecError(without_name(str(exc), key), key) from None


def without_name(message: str, key: str | None) -> str:
    """Drop the leading parameter name of a core message (the SpecError prefix names the key)."""
    if key and message.startswith(key + " "):
        return message[len(key) + 1 :]
    return message


def line_of(text: str | None, key: str | None) -> int | None:
    """Best-effort 1-based line where ``key`` (dotted; last part searched) is assigned."""
    if not text or not key:
        return None
    parts = [re.sub(r"\[\d+\]$", "", part) for part in key.split(".")]
    name = parts[-1]
    q = "[\"']?"  # a key may be spelled quoted: "values" = [...]
    # assigned (key = ...), or given by dotted keys (key.sub = ...)
    pat = re.compile(r"(^|[\s{,;])" + q + re.escape(name) + q + r"\s*[=.]")
    if len(parts) == 1:  # a top-level key may also be a [table] or an [[array of tables]]
        header = re.compile(r"^\s*\[\[?\s*" + q + re.escape(name) + q + r"\s*[\].]")
        for i, ln in enumerate(text.splitlines(), 1):
            if header.search(ln) or (pat.search(ln) and not ln.strip().startswith("[")):
                return i
        return None
    section = parts[0] if len(parts) > 1 else None
    in_section = section is None
    lines = text.splitlines()
    for i, ln in enumerate(lines, 1):
        s = ln.strip()
        if section is not None and s.startswith("["):
            in_section = s.strip("[] ") == section
        if section is not None and not in_section and not re.search(re.escape(section) + r"\s*=", ln):
            continue
        if pat.search(ln):
            return i
    if section is not None:  # the table itself, e.g. a missing key inside it
        for i, ln in enumerate(lines, 1):
            if re.search(r"^\s*\[\s*" + re.escape(section) + r"\s*\]|" + re.escape(section) + r"\s*=", ln):
                return i
    return None


def locate(text: str | None, err: SpecError) -> int | None:
    """The line of an error's key, else of the key it is near, else of ``compute``."""
    for key in (err.key, err.near, "compute"):
        line = line_of(text, key)
        if line is not None:
            return line
    return None


def key_lines(text: str | None, doc: Mapping[str, object]) -> dict[str, int]:
    """Line of every top-level key and of every key of a table, in the source text."""
    if text is None:
        return {}
    keys = [k for k in doc] + [f"{k}.{sub}" for k, v in doc.items() if isinstance(v, Mapping) for sub in v]
    return {k: ln for k in keys if (ln := line_of(text, k)) is not None}


def spec_line(lines: Mapping[str, int], *keys: str | None) -> int | None:
    """Line of the first of ``keys`` (the key itself, else its top-level part) in the source, else of compute."""
    for key in (*keys, "compute"):
        if not key:
            continue
        plain = re.sub(r"\[\d+\]", "", key)
        for candidate in (plain, plain.split(".")[0]):
            if candidate in lines:
                return int(lines[candidate])
    return None


#: the core's parameter names -> spec keys (where they differ)
PARAM_KEYS = {
    "hist": "histogram",
    "ns": "n",
    "T": "mechanism.T",
    "eta": "mechanism.eta",
    "noise_epsilon": "mechanism.noise_epsilon",
    "mechanism": "mechanism",
    "family": "noise",
    "alpha": "gamma",
    "s": "gamma",
    "c": "shape",
    "d": "shape",
    "sigma": "shape",
    "lattice": "bounds",
}


def key_of_core_error(exc: BaseException, doc: Mapping[str, object]) -> str | None:
    """The spec key a core error is about: the parameter it names (or a refusal's ``parameter``)."""
    name = getattr(exc, "parameter", None)
    if name is None:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", str(exc))
        name = m.group(1) if m else None
    if name == "x":  # the released data
        return next((k for k in ("data", "values", "csv") if k in doc), None)
    key = PARAM_KEYS.get(name or "", name)
    if key and (key in doc or key.split(".")[0] in doc):
        return key
    if isinstance(exc, (ComputationTooLarge, MemoryError)):  # the key that sets the size of the computation
        size = next((k for k in ("n", "histogram", "dataset", "values", "data", "csv", "gamma") if k in doc), None)
        if size is not None:
            return size
    return "compute" if "compute" in doc else None


def core_message(exc: BaseException) -> str:
    """The message of a core error as a spec error shows it."""
    if isinstance(exc, MemoryError):
        return f"the computation ran out of memory ({exc or 'MemoryError'}); use smaller sizes"
    if isinstance(exc, ComputationTooLarge):
        return f"refused before starting: {exc}"
    return f"{exc}"
