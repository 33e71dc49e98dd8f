"""The spec's reference, rendered from the key table (:mod:`.keys`) and nothing else.

Three renderings of the same rows: plain text for the command line's help
(:func:`keys_help`), reStructuredText for the magic's docstring
(:func:`keys_rst`, what ``%%smoothdp?`` prints and the docs page renders),
and Markdown for the docs page of spec keys (:func:`keys_markdown`).

Imports neither numpy nor pandas.  Keys whose values come from a registry
(the noise families) list the registered names, which imports the core's
noise module; ``registries=False`` names the function that lists them
instead and imports nothing.
"""

from __future__ import annotations

import textwrap

from smoothdp_nb.spec.keys import COMPUTATION_INFO, COMPUTATIONS, MAX_RANGE, Key, choices_of, either, keys_of

__all__ = ["RULES", "value_form", "describe", "keys_help", "keys_rst", "keys_markdown"]

#: Rules that hold for every key (rendered after the keys).
RULES = (
    'Numbers are numbers: strings (even "0.5"), bools, NaN and infinities are refused wherever a number '
    'is expected; the one string form is the exact sampling rate eta = "0.998" (plain ASCII decimals).',
    "A range table {start, stop, num, log} gives num evenly spaced values (geometric when log = true), "
    f"at most {MAX_RANGE}.",
    "Every computation that can be large is estimated (time and memory) before it starts and refused when over budget.",
    "compute may be left out when the other keys make it unambiguous.  Unknown keys are errors naming the "
    "key, the allowed keys, the closest one and the line.",
    "A name (mechanism, pi, data) refers to a variable of the notebook's namespace: the %%smoothdp magic "
    "has one, the command line has none.",
)


def _num(x: float) -> str:
    return f"{x:g}"


def _range(key: Key) -> str:
    lo, hi = key.lo, key.hi
    if lo is not None and hi is not None:
        return f"in {'(' if key.lo_open else '['}{_num(lo)}, {_num(hi)}{')' if key.hi_open else ']'}"
    if lo is not None:
        return f"{'>' if key.lo_open else '>='} {_num(lo)}"
    if hi is not None:
        return f"{'<' if key.hi_open else '<='} {_num(hi)}"
    return ""


def _registry_note(key: Key) -> str:
    return "a registered noise family (listed by smoothdp_nb.core.release.noise.family_names())"


def _choices(key: Key, registries: bool) -> str:
    if callable(key.choices) and not registries:
        return _registry_note(key)
    return "one of " + ", ".join(choices_of(key))


def value_form(key: Key, registries: bool = True) -> str:
    """What the value of ``key`` looks like, from its kind and range (empty for key-specific kinds)."""
    rng = _range(key)
    if key.kind == "number":
        return f"a number {rng}".strip()
    if key.kind == "integer":
        return f"an integer {rng}".strip()
    if key.kind == "values":
        return "a number, a list or a range {start, stop, num, log}" + (f"; each {rng}" if rng else "")
    if key.kind == "sizes":
        return "a list or a range {start, stop, num, log} of integers" + (f" {rng}" if rng else "")
    if key.kind == "years":
        return f"integers {rng}"
    if key.kind == "boolean":
        return "true or false"
    if key.kind == "choice":
        return _choices(key, registries)
    if key.kind == "families":
        return "a list; each " + _choices(key, registries)
    if key.kind in ("text", "name", "path"):
        return "a string"
    if key.kind == "trim":
        return f"an integer >= {_num(key.lo or 0)}, or a number {rng}"
    if key.kind == "rate":
        return f"a number {rng}, or its decimal text"
    return ""


def _facts(key: Key, registries: bool) -> list[str]:
    facts = []
    form = value_form(key, registries)
    if form:
        facts.append(form)
    if key.default is not None:
        default = key.default
        shown = ", ".join(default) if isinstance(default, tuple) else str(default).lower()
        facts.append(f"default {shown}")
    if key.only_with is not None:
        other, values = key.only_with
        facts.append(f"only with {other} = {either(values)}")
    return facts


def describe(key: Key, registries: bool = True) -> str:
    """One line: the key's doc, then its value form, default and condition."""
    return "; ".join([key.doc, *_facts(key, registries)])


def _sections(compute: str | None) -> list[tuple[str, str, str, tuple[Key, ...]]]:
    """(compute, doc, notes, keys) per computation, then the mechanism table."""
    if compute is not None and compute not in COMPUTATIONS:
        raise ValueError(f"compute must be None or one of {', '.join(COMPUTATIONS)}, got {compute!r}")
    wanted = COMPUTATIONS if compute is None else (compute,)
    out = []
    for c in wanted:
        info = COMPUTATION_INFO[c]
        notes = "; ".join(n for n in (info.notes, f"result: {info.result}") if n)
        out.append((c, info.doc, notes, tuple(k for k in keys_of(c) if k.name not in ("compute", "title"))))
    for table in TABLES:  # a table's section has no compute: its first field is empty, its keys say the table
        rows = next((keys_of(c, table) for c in wanted if keys_of(c, table)), ())
        if rows:
            out.append(("", f"the {table} table: [{table}] or {table} = {{...}}", "", rows))
    return out


#: the tables of keys a spec may hold, in the order the reference shows them
TABLES = ("mechanism", "budget")


def _table_of(keys: tuple[Key, ...]) -> str:
    return keys[0].table if keys else ""


def _common() -> tuple[Key, ...]:
    return tuple(k for k in keys_of("profile") if k.name in ("compute", "title"))


def keys_help(compute: str | None = None, *, registries: bool = True, width: int = 100) -> str:
    """The spec keys as plain text, for an ``argparse`` epilog (``RawDescriptionHelpFormatter``).

    Parameters
    ----------
    compute : str, optional
        Only this computation's keys (and the mechanism table if it has one).
    registries : bool
        List the registered noise families (imports the core's noise module);
        False names the function that lists them and imports nothing.
    width : int
        Wrap lines at this width.
    """
    lines = ["Spec keys (TOML; * = required):", ""]

    def row(key: Key) -> None:
        name = key.name + ("*" if key.required else "")
        lines.extend(
            textwrap.wrap(
                describe(key, registries),
                width=width,
                initial_indent=f"  {name:<15} ",
                subsequent_indent=" " * 18,
                break_on_hyphens=False,
            )
        )

    for c, doc, notes, keys in _sections(compute):
        head = f'compute = "{c}": {doc}' if c else f"{_table_of(keys).capitalize()} keys, {doc}:"
        lines.extend(textwrap.wrap(head, width=width, subsequent_indent="  ", break_on_hyphens=False))
        if notes:
            lines.extend(textwrap.wrap(notes, width=width, initial_indent="  ", subsequent_indent="  "))
        for key in keys:
            row(key)
        lines.append("")
    lines.append("Every computation:")
    for key in _common():
        row(key)
    lines.append("")
    for rule in RULES:
        lines.extend(textwrap.wrap(rule, width=width, initial_indent="- ", subsequent_indent="  "))
    return "\n".join(lines) + "\n"


def _rst_literal(text: str) -> str:
    return f"``{text}``"


def _sentence(text: str) -> str:
    return text[0].upper() + text[1:] + "."


def keys_rst(*, registries: bool = True, width: int = 88) -> str:
    """The spec keys as reStructuredText definition lists (the magic's docstring includes it)."""
    out: list[str] = []

    def wrap(text: str, indent: str = "") -> list[str]:
        return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)

    def rows(keys: tuple[Key, ...]) -> None:
        for key in keys:
            out.append(_rst_literal(key.name) + (" (required)" if key.required else ""))
            out.extend(wrap(describe(key, registries) + ".", "    "))
        out.append("")

    for c, doc, notes, keys in _sections(None):
        t = _table_of(keys)
        title = f'``compute = "{c}"``' if c else f"{t.capitalize()} table (``[{t}]`` or ``{t} = {{...}}``)"
        out += [title, "-" * len(title)]
        out += wrap(_sentence(doc) + (f"  {_sentence(notes)}" if notes else ""))
        out.append("")
        rows(keys)
    title = "Every computation"
    out += [title, "-" * len(title)]
    rows(_common())
    for rule in RULES:
        out += textwrap.wrap(rule, width=width, initial_indent="* ", subsequent_indent="  ", break_on_hyphens=False)
    return "\n".join(out) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def keys_markdown(*, registries: bool = True) -> str:
    """The spec keys as a Markdown page (MyST): one table per computation, then the mechanism table."""
    out = [
        "# Spec keys",
        "",
        "<!-- Generated from smoothdp_nb/spec/keys.py by smoothdp_nb.spec.keys_markdown(): do not edit. -->",
        "",
        "A spec is TOML (a `%%smoothdp` cell, or a file for `python -m smoothdp_nb run`): `compute` names the",
        "computation, the other keys are its parameters. Required keys are marked **required**.",
        "",
    ]
    for c, doc, notes, keys in _sections(None):
        title = f'## `compute = "{c}"`' if c else f"## {_table_of(keys).capitalize()} table"
        out += [title, "", doc[0].upper() + doc[1:] + ".", ""]
        if notes:
            out += [notes[0].upper() + notes[1:] + ".", ""]
        out += ["| key | value |", "| --- | --- |"]
        for key in keys:
            name = f"`{key.name}`" + (" **required**" if key.required else "")
            out.append(f"| {name} | {_md_cell(describe(key, registries))} |")
        out.append("")
    out += ["## Every computation", "", "| key | value |", "| --- | --- |"]
    out += [f"| `{k.name}` | {_md_cell(describe(k, registries))} |" for k in _common()]
    out += ["", "## Rules", ""]
    out += [f"- {rule}" for rule in RULES]
    return "\n".join(out) + "\n"
